//! Dev-only: does every Markdown file carry the words of its plain text? For each
//! `TEXT/<site>/<page>.txt` beside `MD/<site>/<page>.md` (two `thresher clean` outputs of the
//! same pages, `--format text` and `--format markdown`), the Markdown is parsed with
//! pulldown-cmark (tables and math on) and the words of the text it renders (image alt text
//! aside, as the plain text has none) are compared with the plain text's, in order. Prints the
//! pages, how many agree and the first pages that do not; exits 1 when any does not.
//!
//!   cargo run --release --example markdown_check -- TEXT MD [TEXT MD]...

use std::path::Path;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The words of a text: maximal runs of letters and digits, lowercased, in order.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The text a CommonMark reader renders from `markdown` (text, code and math; not alt text),
/// a space at each block's end.
fn rendered(markdown: &str) -> String {
    let mut out = String::new();
    let mut in_image = 0;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_MATH) {
        match event {
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image -= 1,
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t)
                if in_image == 0 =>
            {
                out.push_str(&t)
            }
            // Inline markup ends inside a word (`*over*charged`); blocks and cells end words.
            Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link,
            ) => {}
            Event::SoftBreak | Event::HardBreak | Event::End(_) => out.push(' '),
            _ => {}
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.len() % 2 != 0 {
        eprintln!("usage: markdown_check TEXT MD [TEXT MD]...");
        std::process::exit(2);
    }
    let (mut pages, mut agree, mut missing) = (0usize, 0usize, 0usize);
    let mut differ: Vec<String> = Vec::new();
    for pair in args.chunks(2) {
        let (text_dir, md_dir) = (Path::new(&pair[0]), Path::new(&pair[1]));
        let mut sites: Vec<_> = std::fs::read_dir(text_dir)
            .unwrap_or_else(|e| panic!("{}: {e}", text_dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.is_dir())
            .collect();
        sites.sort();
        for site in sites {
            let name = site.file_name().expect("a site directory").to_owned();
            let mut files: Vec<_> = std::fs::read_dir(&site)
                .expect("a site directory")
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                .collect();
            files.sort();
            for txt in files {
                pages += 1;
                let md = md_dir
                    .join(&name)
                    .join(txt.with_extension("md").file_name().expect("a file"));
                let Ok(markdown) = std::fs::read_to_string(&md) else {
                    missing += 1;
                    differ.push(format!("{}: no Markdown file", md.display()));
                    continue;
                };
                let text = std::fs::read_to_string(&txt).expect("a text file");
                let (want, got) = (words(&text), words(&rendered(&markdown)));
                if want == got {
                    agree += 1;
                } else {
                    let at = want.iter().zip(&got).take_while(|(a, b)| a == b).count();
                    differ.push(format!(
                        "{}: words differ at {at}: text {:?}, Markdown {:?}",
                        md.display(),
                        &want[at..(at + 5).min(want.len())],
                        &got[at..(at + 5).min(got.len())]
                    ));
                }
            }
        }
    }
    println!("pages {pages}, Markdown with the text's words {agree}, no Markdown {missing}");
    for d in differ.iter().take(20) {
        println!("  {d}");
    }
    if agree != pages {
        std::process::exit(1);
    }
}
