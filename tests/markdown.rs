//! Markdown output: `clean --format markdown`, `crawl --format markdown` and `export --format
//! markdown` / `--fields …,markdown` on fixture sites of our own (a documentation site and a
//! blog). Every Markdown file parses with a real CommonMark reader (pulldown-cmark) and the text
//! it renders carries exactly the words of the plain text of the same page; the structures the
//! pages hold (headings, nested lists, tables, code, formulas, emphasis, links, images, quotes)
//! come out as Markdown.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::export::read_jsonl;
use crate::support::commonmark::{rendered_words, words};
use crate::support::{thresher_bin, write_config, write_seeds, Endpoint, TestServer};

const TOPICS: [&str; 4] = ["widgets", "gadgets", "sprockets", "flanges"];
const VERBS: [&str; 4] = ["install", "configure", "upgrade", "remove"];

/// The site's chrome around `body`: the same navigation and footer on every page.
fn chrome(title: &str, canonical: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title>\
         <link rel=canonical href=\"{canonical}\"></head><body>\
         <header><nav><a href=/>Home</a> <a href=/docs/>Docs</a> <a href=/blog/>Blog</a> \
         <a href=/about>About us</a> <a href=/contact>Contact</a></nav></header>\
         <main>{body}</main>\
         <footer><p>Copyright Example Docs. All rights reserved.</p>\
         <p><a href=/privacy>Privacy</a> <a href=/terms>Terms</a></p></footer></body></html>"
    )
}

/// Documentation page `i`: an anchored heading, prose with emphasis, inline code, a link and an
/// inline formula, a nested list, a table with a pipe in a cell and a line break, Python code
/// with indentation and a tab, and a display formula.
fn docs_page(i: usize) -> String {
    let (topic, verb) = (TOPICS[i % 4], VERBS[i % 4]);
    let body = format!(
        "<article><h1 id=top><a href=\"#top\">How to {verb} {topic}</a></h1>\
         <p>Before you {verb} the {topic}, read this page {i} twice: it is <em>short</em> and \
         <strong>important</strong>. Call <code>{verb}_{topic}()</code> from the \
         <a href=\"/docs/{topic}/api\">{topic} interface</a> whenever the value \
         <math alttext=\"x_{i}^2\"><msubsup><mi>x</mi><mn>{i}</mn><mn>2</mn></msubsup></math> \
         grows past the limit of the {topic} store.</p>\
         <h2 id=steps>Steps for {topic}<a class=headerlink href=\"#steps\">¶</a></h2>\
         <ul><li>Unpack the {topic} archive number {i}\
         <ul><li>Check the {topic} checksum</li><li>Keep the {topic} manifest</li></ul></li>\
         <li>Run the {verb} script for {topic}</li></ul>\
         <h2>Options of {topic}</h2>\
         <table><thead><tr><th>Option {i}</th><th>Meaning for {topic}</th></tr></thead>\
         <tbody><tr><td>{topic} | fast</td><td>either {topic} or fast</td></tr>\
         <tr><td>--{verb}</td><td>first {topic} line<br>second {topic} line</td></tr></tbody>\
         </table>\
         <h2>Example for {topic}</h2>\
         <pre><code class=\"language-python\">def {verb}_{topic}(x):\n\tif x &gt; {i}:\n        \
         return [{i}, 2]\n    return []</code></pre>\
         <p>The total number of {topic} follows from the formula below, for page {i}.</p>\
         <math display=block alttext=\"\\sum_{{k=1}}^{{n}} k_{i} = \\frac{{n(n+1)}}{{2}}\">\
         <mi>s</mi></math></article>"
    );
    chrome(
        &format!("{verb} {topic}"),
        &format!("https://docs.example/docs/{topic}/{i}"),
        &body,
    )
}

/// Blog post `i`: emphasis, links, an image with alt text, a quote.
fn blog_page(i: usize) -> String {
    let (topic, verb) = (TOPICS[(i + 1) % 4], VERBS[(i + 2) % 4]);
    let body = format!(
        "<article><h1>Why we {verb} {topic} on day {i}</h1>\
         <p>On day {i} the team decided to {verb} every <em>single</em> one of the {topic}, \
         as the <a href=\"https://elsewhere.example/{topic}\">vendor guide</a> suggests for \
         installations of this size and age.</p>\
         <blockquote><p>Nobody regrets the day they chose to {verb} old {topic}, said the \
         engineer on call that week.</p></blockquote>\
         <p>We will write again once the {topic} have settled, with numbers for day {i} and \
         the weeks after it. <img src=\"/img/{topic}-{i}.png\" alt=\"A chart of {topic} over \
         time\"></p></article>"
    );
    chrome(
        &format!("{verb} {topic}"),
        &format!("https://docs.example/blog/{i}"),
        &body,
    )
}

/// The files under `dir/site` with `extension`, by stem.
fn files(dir: &Path, site: &str, extension: &str) -> BTreeMap<String, String> {
    std::fs::read_dir(dir.join(site))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(site).display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// `thresher clean` of `site` into `out` with `args` (the format, settings).
fn clean(site: &Path, out: &Path, args: &[&str]) {
    let o = Command::new(thresher_bin())
        .args(["clean", "-q"])
        .args(args)
        .arg("--out")
        .arg(out)
        .arg(site)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Markdown and text of the same pages carry the same words, and the Markdown parses.
fn assert_same_words(text: &BTreeMap<String, String>, markdown: &BTreeMap<String, String>) {
    assert_eq!(
        text.keys().collect::<Vec<_>>(),
        markdown.keys().collect::<Vec<_>>()
    );
    for (stem, md) in markdown {
        assert_eq!(
            rendered_words(md),
            words(&text[stem]),
            "{stem}: Markdown\n{md}\nplain text\n{}",
            text[stem]
        );
    }
}

#[test]
fn clean_markdown_keeps_the_docs_structure_and_the_words_of_the_text() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("docs.example");
    std::fs::create_dir(&site).unwrap();
    for i in 0..4 {
        std::fs::write(site.join(format!("d{i}.html")), docs_page(i)).unwrap();
    }
    clean(&site, &tmp.path().join("txt"), &["--format", "text"]);
    clean(&site, &tmp.path().join("md"), &["--format", "markdown"]);
    let text = files(&tmp.path().join("txt"), "docs.example", "txt");
    let md = files(&tmp.path().join("md"), "docs.example", "md");
    assert_eq!(text.len(), 4);
    assert_same_words(&text, &md);
    for i in 0..4 {
        let (topic, verb) = (TOPICS[i % 4], VERBS[i % 4]);
        let (t, m) = (&text[&format!("d{i}")], &md[&format!("d{i}")]);
        for chaff in ["About us", "Copyright", "Privacy"] {
            assert!(
                !t.contains(chaff) && !m.contains(chaff),
                "d{i} kept {chaff}"
            );
        }
        // Plain text: the code's lines verbatim (tab kept), a row on one line, the nested list
        // indented, the anchored heading whole.
        let code = format!(
            "def {verb}_{topic}(x):\n\tif x > {i}:\n        return [{i}, 2]\n    return []\n"
        );
        assert!(t.contains(&code), "d{i} code:\n{t}");
        assert!(
            t.contains(&format!("{topic} | fast | either {topic} or fast")),
            "d{i} row:\n{t}"
        );
        assert!(
            t.contains(&format!("\n  Check the {topic} checksum\n")),
            "d{i} nested item:\n{t}"
        );
        assert!(
            t.contains(&format!("\nSteps for {topic}¶\n")),
            "d{i} heading:\n{t}"
        );
        // Markdown: the same as Markdown constructs.
        assert!(
            m.contains(&format!("```python\n{code}```")),
            "d{i} fenced code:\n{m}"
        );
        assert!(
            m.contains(&format!("## Steps for {topic}¶\n")),
            "d{i} ATX heading:\n{m}"
        );
        assert!(
            m.contains(&format!("| {topic} \\| fast | either {topic} or fast |")),
            "d{i} table row with an escaped pipe:\n{m}"
        );
        assert!(
            m.contains(&format!("first {topic} line<br>second {topic} line")),
            "d{i} cell line break:\n{m}"
        );
        assert!(
            m.contains(&format!("  - Check the {topic} checksum")),
            "d{i} nested list:\n{m}"
        );
        assert!(m.contains(&format!("${{x_{i}^2}}$")) || m.contains(&format!("$x_{i}^2$")));
        assert!(m.contains("$$\n\\sum_{k=1}^{n}") || m.contains("$$\\sum_{k=1}^{n}"));
        assert!(
            m.contains(&format!(
                "[{topic} interface](https://docs.example/docs/{topic}/api)"
            )),
            "d{i} absolute link:\n{m}"
        );
        assert!(
            m.contains("*short*") && m.contains("**important**"),
            "d{i}:\n{m}"
        );
        assert!(m.contains(&format!("`{verb}_{topic}()`")), "d{i}:\n{m}");
    }
}

#[test]
fn crawl_and_export_write_markdown_with_the_words_of_the_text() {
    let server = TestServer::background(1, 1);
    let origin = server.origin(0);
    let mut links = String::new();
    for i in 0..4 {
        origin.mount(&format!("/blog/{i}"), Endpoint::html(blog_page(i)));
        links.push_str(&format!("<a href=/blog/{i}>post {i}</a> "));
    }
    origin.mount("/", Endpoint::html(format!("<p>{links}</p>")));
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let seeds = write_seeds(dir.path(), &[origin.url("/")]);
    let crawl = Command::new(thresher_bin())
        .current_dir(dir.path())
        .args(["crawl", "--quiet", "--format", "markdown", "--data"])
        .arg(dir.path().join("data"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--config")
        .arg(&config)
        .arg("--seeds")
        .arg(&seeds)
        .output()
        .unwrap();
    assert!(
        crawl.status.success(),
        "{}",
        String::from_utf8_lossy(&crawl.stderr)
    );
    let site = origin.host_port().replace(':', "_");
    let crawled = files(&dir.path().join("out"), &site, "md");
    assert!(files(&dir.path().join("out"), &site, "txt").is_empty());

    let export = |args: &[&str]| {
        let o = Command::new(thresher_bin())
            .arg("export")
            .arg("--data")
            .arg(dir.path().join("data"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let (text_dir, md_dir) = (dir.path().join("text"), dir.path().join("md"));
    export(&["--format", "text", "--out", text_dir.to_str().unwrap()]);
    export(&["--format", "markdown", "--out", md_dir.to_str().unwrap()]);
    let jsonl = dir.path().join("pages.jsonl");
    export(&[
        "--fields",
        "id,text,markdown",
        "--out",
        jsonl.to_str().unwrap(),
    ]);
    let text = files(&text_dir, &site, "txt");
    let md = files(&md_dir, &site, "md");
    assert_eq!(md, crawled, "export writes what the crawl wrote");
    assert_same_words(&text, &md);
    let rows = read_jsonl(&jsonl);
    assert_eq!(rows.len(), text.len());
    for row in rows {
        let id = row["id"].as_str().unwrap();
        assert_eq!(row["markdown"].as_str().unwrap(), md[id]);
        assert_eq!(row["text"].as_str().unwrap(), text[id]);
    }
    let posts: Vec<&String> = md.values().filter(|m| m.contains("vendor guide")).collect();
    assert_eq!(posts.len(), 4, "{md:#?}");
    for m in posts {
        assert!(
            m.contains("> Nobody regrets the day"),
            "a quote as a quote:\n{m}"
        );
        assert!(m.contains("*single*"), "{m}");
        assert!(
            m.contains("[vendor guide](https://elsewhere.example/"),
            "{m}"
        );
        assert!(
            m.contains("![A chart of ") && m.contains("](https://docs.example/img/"),
            "an image with its alt text, absolute against the canonical URL:\n{m}"
        );
    }

    // The same store exported without links and images: their text stays, their markup goes.
    let bare_dir = dir.path().join("bare");
    export(&[
        "--format",
        "markdown",
        "--set",
        "markdown.links=false",
        "--set",
        "markdown.images=false",
        "--out",
        bare_dir.to_str().unwrap(),
    ]);
    let bare = files(&bare_dir, &site, "md");
    assert_same_words(&text, &bare);
    for m in bare.values().filter(|m| m.contains("vendor guide")) {
        assert!(!m.contains("](") && !m.contains("!["), "{m}");
        assert!(
            m.contains("> Nobody regrets the day") && m.contains("*single*"),
            "{m}"
        );
    }
}

#[test]
fn clean_writes_markdown_without_images_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("docs.example");
    std::fs::create_dir(&site).unwrap();
    for i in 0..3 {
        std::fs::write(site.join(format!("p{i}.html")), blog_page(i)).unwrap();
    }
    let out = dir.path().join("out");
    let args = ["--format", "markdown", "--set", "markdown.images=false"];
    clean(&site, &out, &args);
    let md = files(&out, "docs.example", "md");
    assert_eq!(md.len(), 3);
    for m in md.values() {
        assert!(
            m.contains("[vendor guide](https://elsewhere.example/"),
            "{m}"
        );
        assert!(!m.contains("!["), "{m}");
    }
}
