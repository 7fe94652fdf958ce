//! Read an export back: the JSON Lines a `thresher export` writes (plain, `.gz` or `.zst`), one
//! record per cleaned page, into a struct of the columns this program wants.
//!
//!   thresher export --data thresher-data --out corpus.jsonl.zst
//!   cargo run --release --example read_export -- corpus.jsonl.zst
//!
//! Columns an export leaves out (`--fields`) or leaves null read as `None` here; the README's
//! "Export schema" lists them all.

use std::io::{BufRead, BufReader, Read};

use serde::Deserialize;

/// The columns this program reads (any subset of the export's, by name).
#[derive(Debug, Deserialize)]
struct Page {
    id: String,
    url: String,
    host: String,
    title: Option<String>,
    lang: Option<String>,
    published: Option<String>,
    /// The id of the earlier page this one duplicates (`--dedup mark`).
    dup_of: Option<String>,
    text: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: read_export CORPUS.jsonl[.gz|.zst]  (what `thresher export` wrote)");
        std::process::exit(2);
    };
    let file = std::fs::File::open(&path)?;
    let name = path.to_string_lossy();
    let reader: Box<dyn Read> = if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else if name.ends_with(".zst") {
        Box::new(zstd::Decoder::new(file)?)
    } else {
        Box::new(file)
    };

    let (mut pages, mut words, mut duplicates) = (0u64, 0u64, 0u64);
    let mut langs = std::collections::BTreeMap::<String, u64>::new();
    for (n, line) in BufReader::new(reader).lines().enumerate() {
        let page: Page =
            serde_json::from_str(&line?).map_err(|e| format!("{name}, line {}: {e}", n + 1))?;
        pages += 1;
        words += page.text.split_whitespace().count() as u64;
        duplicates += u64::from(page.dup_of.is_some());
        *langs
            .entry(page.lang.unwrap_or_else(|| "?".into()))
            .or_default() += 1;
        if pages <= 5 {
            let first = page.text.lines().next().unwrap_or("");
            println!(
                "{} {} [{}] {:?} ({})\n    {first}",
                page.id,
                page.url,
                page.host,
                page.title.unwrap_or_default(),
                page.published.as_deref().unwrap_or("no date"),
            );
        }
    }
    println!("{pages} pages, {words} words of cleaned text, {duplicates} marked as duplicates");
    println!("by language: {langs:?}");
    Ok(())
}
