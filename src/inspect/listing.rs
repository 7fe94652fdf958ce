//! The text `thresher inspect` prints: the host, its clusters largest first with sample pages,
//! and what the report shows.

use std::fmt::Write as _;
use std::path::Path;

use super::marks::State;
use super::report::{era_lines, plural, Check, Report};

/// The stdout listing: the host, its clusters largest first, and what the report shows.
pub fn listing(r: &Report, path: &Path) -> String {
    let mut s = String::new();
    let kind = match r.final_pages {
        Some(n) => format!("final clustering of {n} pages"),
        None => "interim clustering: the crawl has not finished".to_string(),
    };
    let _ = writeln!(
        s,
        "{}: {}, {} ({}, {kind})",
        r.host,
        plural(r.site_pages as usize, "page"),
        plural(r.clusters.len(), "cluster"),
        r.detector
    );
    if r.unclustered > 0 {
        let _ = writeln!(s, "{} pages not clustered yet", r.unclustered);
    }
    for line in era_lines(r) {
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(
        s,
        "\n{:>7} {:>7} {:>9}  sample pages",
        "cluster", "pages", "template"
    );
    for c in &r.clusters {
        for (k, p) in c.samples.iter().enumerate() {
            let head = if k == 0 {
                format!("{:>7} {:>7} {:>9}", c.id, c.pages, c.template_paths)
            } else {
                String::new()
            };
            let title = p.title.as_deref().map(one_line).unwrap_or_default();
            let _ = writeln!(s, "{head:<25}  {}  {title}", p.url);
        }
        if c.samples.is_empty() {
            let _ = writeln!(s, "{:>7} {:>7} {:>9}", c.id, c.pages, c.template_paths);
        }
    }
    let p = &r.page;
    let count = |st: State| p.blocks.iter().filter(|b| b.state == st).count();
    let _ = writeln!(
        s,
        "\nReport: {}\nPage shown: {} (cluster {}): {} template, {} dropped, {} kept blocks; {}",
        path.display(),
        p.url,
        p.cluster,
        count(State::Template),
        count(State::Dropped),
        count(State::Kept),
        match p.check {
            Check::Matches => "the kept blocks are the stored cleaned text",
            Check::NoCleanedText => "no cleaned text stored for it yet",
            Check::Differs { .. } => "the stored cleaned text differs (see the report)",
        }
    );
    s
}

/// `s` on one line, at most 80 characters (titles can hold newlines and run long).
fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(80) {
        None => flat,
        Some((at, _)) => format!("{}…", &flat[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_list_on_one_short_line() {
        assert_eq!(one_line(" a\n b "), "a b");
        assert_eq!(one_line(&"é".repeat(90)).chars().count(), 81);
    }
}
