//! `--check`: what a finished long or broad crawl must have done (the CI checks in `.ci/run`):
//! the crawler ended well; every page within each site's budget was fetched (and, without a
//! kill -9, fetched once), stored and cleaned; each site's text files are exactly its
//! index.tsv's rows; the export has a line per page; the crawler's output does not grow with
//! the number of sites; the peak RSS stayed under the bound. Findings are aggregated (counts
//! and a few examples), never a line per site.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use super::universe::serve::Counters;
use super::{per_site, Args, Paths, Summary};

/// The most lines the crawler may print (`--quiet`, with its learner summary; twice that with a
/// kill -9 and restart): its summary aggregates, so a crawl of 2,000 sites prints no more than
/// one of 20.
pub const MAX_CRAWLER_LINES: usize = 40;

/// Examples shown of a finding that concerns many sites.
const EXAMPLES: usize = 3;

/// What `--check` finds wrong with a finished run (empty: nothing).
pub fn check(
    args: &Args,
    paths: &Paths,
    bin: &Path,
    counters: &Counters,
    s: &Summary,
) -> Vec<String> {
    let mut bad = Vec::new();
    let per_site = per_site(args) as u64;
    let expected = s.expected_pages;
    if s.crawler_exit.last().is_none_or(|e| e != "exit code 0") {
        bad.push(format!("the crawler ended with {:?}", s.crawler_exit));
    }
    if s.unique_pages != expected {
        bad.push(format!(
            "{} unique pages fetched of {expected} within the budget",
            s.unique_pages
        ));
    }
    let off: Vec<String> = (0..args.origins)
        .map(|i| (i, counters.origin_unique(i)))
        .filter(|&(_, n)| n != per_site)
        .map(|(i, n)| format!("site {i}: {n}"))
        .collect();
    if !off.is_empty() {
        bad.push(format!(
            "{} sites did not give exactly {per_site} distinct pages ({}{})",
            off.len(),
            off[..off.len().min(EXAMPLES)].join(", "),
            more(off.len())
        ));
    }
    if args.kill_at.is_none() && s.duplicate_fetches > 0 {
        bad.push(format!(
            "{} pages fetched more than once (no kill -9 in this run)",
            s.duplicate_fetches
        ));
    }
    match status(bin, &paths.data) {
        None => bad.push("`thresher status --json` failed on the final store".into()),
        Some(r) => {
            let cleaned: u64 = r.hosts.iter().map(|h| h.cleaned).sum();
            if r.pages != expected || cleaned != expected || r.queued != 0 {
                bad.push(format!(
                    "status: {} pages stored, {cleaned} cleaned, {} queued; want {expected}, \
                     {expected}, 0",
                    r.pages, r.queued
                ));
            }
        }
    }
    let (texts, mismatched) = texts_against_indexes(&paths.out);
    if !mismatched.is_empty() {
        bad.push(format!(
            "{} sites' text files differ from their index.tsv ({}{})",
            mismatched.len(),
            mismatched[..mismatched.len().min(EXAMPLES)].join("; "),
            more(mismatched.len())
        ));
    }
    if texts != expected {
        bad.push(format!("{texts} text files written of {expected} pages"));
    }
    if !args.no_export && s.export_lines != Some(expected) {
        bad.push(format!(
            "export: {:?} lines for {expected} pages",
            s.export_lines
        ));
    }
    let runs = s.crawler_exit.len().max(1);
    if s.crawler_log_lines > MAX_CRAWLER_LINES * runs {
        bad.push(format!(
            "the crawler printed {} lines for {} sites (at most {} a run): output grows with \
             the sites",
            s.crawler_log_lines, args.origins, MAX_CRAWLER_LINES
        ));
    }
    if let Some(max) = args.max_rss_mb.filter(|&m| s.peak_rss_mb > m) {
        bad.push(format!(
            "peak RSS {:.0} MB over --max-rss-mb {max:.0}",
            s.peak_rss_mb
        ));
    }
    bad
}

fn more(n: usize) -> String {
    if n > EXAMPLES {
        format!(", … and {} more", n - EXAMPLES)
    } else {
        String::new()
    }
}

/// `thresher status --json` on the final store.
fn status(bin: &Path, data: &Path) -> Option<thresher::status::StatusReport> {
    let out = Command::new(bin)
        .args(["status", "--json", "--data"])
        .arg(data)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    serde_json::from_slice(&out.stdout).ok()
}

/// The text files under `out`, and the sites whose text files are not exactly the pages their
/// `index.tsv` lists (a header line, then page id TAB URL per text file).
fn texts_against_indexes(out: &Path) -> (u64, Vec<String>) {
    let mut texts = 0u64;
    let mut mismatched = Vec::new();
    for site in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let dir = site.path();
        let stems: BTreeSet<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|f| f.path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
            .collect();
        let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap_or_default();
        let rows: BTreeSet<String> = index
            .lines()
            .skip(1)
            .filter_map(|l| Some(l.split_once('\t')?.0.to_string()))
            .collect();
        if rows != stems || index.lines().count() != stems.len() + 1 {
            mismatched.push(format!(
                "{}: {} text files, index.tsv lists {} ({} lines)",
                dir.display(),
                stems.len(),
                rows.len(),
                index.lines().count()
            ));
        }
        texts += stems.len() as u64;
    }
    (texts, mismatched)
}
