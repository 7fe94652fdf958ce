//! Dev-only: does every Markdown file carry the words of its plain text? For each
//! `TEXT/<site>/<page>.txt` beside `MD/<site>/<page>.md` (two `thresher clean` outputs of the
//! same pages, `--format text` and `--format markdown`), the Markdown is parsed with
//! pulldown-cmark (tables and math on) and the words of the text it renders (image alt text
//! aside, as the plain text has none) are compared with the plain text's, in order. Prints the
//! pages, how many agree and the first pages that do not; exits 1 when any does not.
//!
//!   cargo run --release --example markdown_check -- [--all] TEXT MD [TEXT MD]...
//!
//! `--all` prints every page that does not agree, not only the first 20.

use std::path::Path;

#[path = "../tests/support/commonmark.rs"]
mod commonmark;

use commonmark::{rendered_words, words};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.first().is_some_and(|a| a == "--all");
    if all {
        args.remove(0);
    }
    if args.is_empty() || args.len() % 2 != 0 {
        eprintln!("usage: markdown_check [--all] TEXT MD [TEXT MD]...");
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
                let (want, got) = (words(&text), rendered_words(&markdown));
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
    for d in differ.iter().take(if all { usize::MAX } else { 20 }) {
        println!("  {d}");
    }
    if agree != pages {
        std::process::exit(1);
    }
}
