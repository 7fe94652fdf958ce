//! Dev-only measure of bylines as metadata (never product code; docs/export.md, "Bylines"): on
//! saved sites (`DATASET/<site>/*.html`), runs the engine `thresher clean` runs and compares the
//! author and date each page's byline gives (`template::byline`) with what its markup states
//! (`corpus::meta`, what `export` writes first).
//!
//!   cargo run --release --example byline_dev -- DATASET... [--wrong]
//!
//! Per dataset: pages; per field, pages whose markup states it, pages whose byline gives it,
//! pages with both, how many of those agree, and coverage (pages with a byline value and no
//! markup value). Agreement: dates compared as `YYYY-MM-DD` (markup date-times cut to their
//! date); names lower-cased, punctuation to spaces, whitespace collapsed, and a match when one
//! contains the other (`Ann Lee` vs `Ann Lee, CNN`). `--wrong` lists each disagreement.

use std::path::{Path, PathBuf};

use thresher::corpus::meta::stated;
use thresher::dom::{charset::decode_html, meta::scan, parse_bytes};
use thresher::template::{clean_site, Algorithm, Renders};

#[derive(Default)]
struct Field {
    markup: u32,
    byline: u32,
    both: u32,
    agree: u32,
    covered: u32,
}

impl Field {
    fn add(
        &mut self,
        markup: Option<&str>,
        byline: Option<&str>,
        same: impl Fn(&str, &str) -> bool,
    ) -> bool {
        self.markup += u32::from(markup.is_some());
        self.byline += u32::from(byline.is_some());
        match (markup, byline) {
            (Some(m), Some(b)) => {
                self.both += 1;
                let ok = same(m, b);
                self.agree += u32::from(ok);
                ok
            }
            (None, Some(_)) => {
                self.covered += 1;
                true
            }
            _ => true,
        }
    }

    fn cells(&self) -> String {
        let rate = if self.both == 0 {
            "–".to_string()
        } else {
            format!("{:.2}", f64::from(self.agree) / f64::from(self.both))
        };
        format!(
            "{} | {} | {} | {} ({rate}) | {}",
            self.markup, self.byline, self.both, self.agree, self.covered
        )
    }
}

fn norm_name(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn same_name(m: &str, b: &str) -> bool {
    let (m, b) = (norm_name(m), norm_name(b));
    !m.is_empty() && !b.is_empty() && (m.contains(&b) || b.contains(&m))
}

fn same_date(m: &str, b: &str) -> bool {
    m.get(..10) == b.get(..10)
}

fn dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dataset directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wrong = args.iter().any(|a| a == "--wrong");
    println!("| dataset | pages | author: markup | byline | both | agree (rate) | coverage | published: markup | byline | both | agree (rate) | coverage |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for dataset in args.iter().filter(|a| !a.starts_with("--")) {
        let (mut pages, mut author, mut published) = (0, Field::default(), Field::default());
        for site in dirs(Path::new(dataset)).into_iter().filter(|p| p.is_dir()) {
            let files: Vec<PathBuf> = dirs(&site)
                .into_iter()
                .filter(|p| p.extension().is_some_and(|x| x == "html"))
                .collect();
            let mut doms = Vec::new();
            let mut markup = Vec::new();
            for f in &files {
                let bytes = std::fs::read(f).expect("page");
                markup.push(stated(
                    &scan(&decode_html(&bytes, None).text),
                    "http://page.invalid/",
                ));
                doms.push(parse_bytes(&bytes, None).dom);
            }
            let result = clean_site(&doms, Algorithm::default(), Renders::Text);
            for ((f, m), b) in files.iter().zip(&markup).zip(&result.bylines) {
                pages += 1;
                let a_ok = author.add(m.author.as_deref(), b.author.as_deref(), same_name);
                let p_ok = published.add(m.published.as_deref(), b.published.as_deref(), same_date);
                if wrong && !(a_ok && p_ok) {
                    println!(
                        "  {}: author {:?} vs byline {:?}; published {:?} vs byline {:?}",
                        f.strip_prefix(dataset).unwrap_or(f).display(),
                        m.author,
                        b.author,
                        m.published,
                        b.published
                    );
                }
            }
        }
        let name = Path::new(dataset)
            .file_name()
            .map_or_else(|| dataset.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "| {name} | {pages} | {} | {} |",
            author.cells(),
            published.cells()
        );
    }
}
