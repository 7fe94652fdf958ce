//! The lines `thresher crawl` prints when a run ends: what the learner did, what an import
//! stored, the crawl's summary (with the origins set aside and how to resume), and what a
//! recrawl found.

use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

use crate::cli::CrawlArgs;
use crate::crawl::stats::CrawlStats;
use crate::crawl::{self, CrawlSummary};
use crate::learn::LearnSummary;
use crate::progress::human_bytes;
use crate::run::RecrawlChanges;
use crate::status::dir_size;

/// What the recrawl found, one line: requests answered 304 and the other kinds (template churn
/// and new content once the end-of-crawl pass settled the text).
pub(super) fn recrawl_line(stats: &CrawlStats, changes: &RecrawlChanges) -> String {
    let kinds: Vec<String> = changes
        .counts
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let mut line = format!(
        "Recrawl: {} pages revisited, {} answered 304 Not Modified, {} the same bytes, {} new \
         bytes; by kind: {}",
        stats.revisits.load(Relaxed),
        stats.not_modified.load(Relaxed),
        stats.same_bytes.load(Relaxed),
        stats.replaced.load(Relaxed),
        if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds.join(", ")
        }
    );
    if changes.pending > 0 {
        line.push_str(&format!(
            "; {} changed pages wait for the end-of-crawl pass to settle their text",
            changes.pending
        ));
    }
    line.push('.');
    line
}

/// What the template learner did, one line.
pub(super) fn learn_line(l: &LearnSummary) -> String {
    format!(
        "Templates: {} incremental steps ({} page cleanings, {:.1}s), final passes of {} sites \
         while crawling ({:.1}s) and of {} sites at the end ({:.1}s): {} pages cleaned, {} kept \
         from the same model; {} files written.",
        l.steps,
        l.interim_cleans,
        l.interim_time.as_secs_f64(),
        l.done_sites,
        l.done_time.as_secs_f64(),
        l.final_sites,
        l.final_time.as_secs_f64(),
        l.final_cleans,
        l.final_reused,
        l.pages_written
    )
}

/// Set-aside origins the run's summary names; the rest are counted (a run over 200,000 dead
/// origins printed 200,000 lines).
const SUMMARY_ORIGINS: usize = 20;
/// Hosts over their page budget the summary names (most URLs first); the rest are counted (a
/// broad crawl leaves every one of its sites over budget).
const SUMMARY_OVER_BUDGET: usize = 5;

pub(super) fn render_summary(
    s: &CrawlSummary,
    data: &Path,
    out_dir: &Path,
    args: &CrawlArgs,
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let _ = writeln!(
        out,
        "{} {} responses, {} pages stored, {} errors, {} skipped in {:.1}s ({:.0} pages/s).",
        if s.interrupted {
            "Interrupted after"
        } else {
            "Crawled"
        },
        s.fetched,
        s.stored,
        s.errors,
        s.skipped,
        secs,
        s.fetched as f64 / secs
    );
    for (kind, n) in &s.errors_by_kind {
        let skip = if kind.is_skip() { "  (skipped)" } else { "" };
        let _ = writeln!(out, "  {:<28} {n:>8}{skip}", kind.name());
    }
    if s.retries > 0 {
        let capped = if s.retry_after_capped > 0 {
            format!(
                " ({} with a Retry-After above fetch.max_retry_after, capped)",
                s.retry_after_capped
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{} transient failures were retried{capped}.",
            s.retries
        );
    }
    for why in &s.left_because {
        let _ = writeln!(out, "Left queued: {why}.");
    }
    let over = &s.over_budget;
    if !over.is_empty() {
        let n = over.hosts.len();
        let _ = writeln!(
            out,
            "Over budget: {} URLs of {n} {} that reached crawl.max_pages_per_host ({}), kept for \
             a run with a larger budget:",
            over.urls(),
            if n == 1 { "host" } else { "hosts" },
            over.budget
        );
        let (top, more) = over.top(SUMMARY_OVER_BUDGET);
        for (host, urls) in top {
            let _ = writeln!(out, "  {host:<40} {urls:>8} URLs");
        }
        if more > 0 {
            let _ = writeln!(
                out,
                "  … and {more} more (thresher status --data {} lists them all)",
                data.display()
            );
        }
    }
    if !s.set_aside.is_empty() {
        let urls: u64 = s.set_aside.iter().map(|w| w.queued).sum();
        let n = s.set_aside.len();
        let _ = writeln!(
            out,
            "{n} {} unreachable or set aside; {} {urls} {} queued for the next run:",
            if n == 1 { "origin" } else { "origins" },
            if n == 1 { "it keeps" } else { "they keep" },
            if urls == 1 { "URL" } else { "URLs" },
        );
        for w in s.set_aside.iter().take(SUMMARY_ORIGINS) {
            let _ = writeln!(out, "  {}", w.line());
        }
        if n > SUMMARY_ORIGINS {
            let _ = writeln!(
                out,
                "  … and {} more (thresher status --data {} lists them all)",
                n - SUMMARY_ORIGINS,
                data.display()
            );
        }
    }
    let _ = writeln!(
        out,
        "Data: {} ({} on disk); cleaned text: {}",
        data.display(),
        human_bytes(dir_size(data)),
        out_dir.display()
    );
    if s.interrupted || s.queued_left > 0 {
        let _ = writeln!(
            out,
            "{} URLs still queued. To resume: {}",
            s.queued_left,
            args.command_line()
        );
    }
    out
}

/// What `--import-warc` did, in one line.
pub(super) fn import_line(i: &crawl::import::ImportSummary) -> String {
    format!(
        "Imported from {} WARC file(s) in {:.1} s: {} responses, {} pages stored, {} already \
         stored, {} redirect targets queued, {} skipped (out of scope, not HTML or another \
         status), {} unreadable records.",
        i.files,
        i.elapsed.as_secs_f64(),
        i.responses,
        i.pages,
        i.already,
        i.redirects,
        i.skipped,
        i.problems
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::stats::OriginWait;

    /// Regression: a run ending with 200,000 origins set aside listed every one of them.
    #[test]
    fn the_summary_names_a_few_set_aside_origins_and_counts_the_rest() {
        let summary = CrawlSummary {
            set_aside: (0..25)
                .map(|i| OriginWait {
                    origin: format!("http://10.0.0.{i}:1"),
                    reason: "robots.txt unreachable: connect failed".into(),
                    until_ms: None,
                    queued: 1,
                })
                .collect(),
            ..CrawlSummary::default()
        };
        let text = render_summary(&summary, "d".as_ref(), "o".as_ref(), &args());
        assert!(
            text.contains("25 origins unreachable or set aside"),
            "{text}"
        );
        assert_eq!(
            text.matches("robots.txt unreachable").count(),
            SUMMARY_ORIGINS,
            "{text}"
        );
        assert!(text.contains("… and 5 more"), "{text}");
    }

    /// Regression: a broad crawl with `crawl.max_pages_per_host = 10` printed a line for each
    /// of its 10,000 hosts ("Left queued: max_pages_per_host (10) reached for …").
    #[test]
    fn the_summary_counts_hosts_over_budget_and_names_the_top_few() {
        let hosts =
            (0..10_000u64).map(|i| (format!("127.1.{}.{}:80", i / 250, i % 250), 100 + i % 7));
        let summary = CrawlSummary {
            over_budget: crate::crawl::stats::OverBudget::new(10, hosts),
            ..CrawlSummary::default()
        };
        let text = render_summary(&summary, "d".as_ref(), "o".as_ref(), &args());
        let urls: u64 = (0..10_000u64).map(|i| 100 + i % 7).sum();
        assert!(
            text.contains(&format!(
                "Over budget: {urls} URLs of 10000 hosts that reached crawl.max_pages_per_host (10)"
            )),
            "{text}"
        );
        assert_eq!(
            text.matches(" URLs\n").count(),
            SUMMARY_OVER_BUDGET,
            "{text}"
        );
        assert!(text.contains("… and 9995 more"), "{text}");
        assert!(text.lines().count() < 12, "{text}");
        // Most URLs first: hosts with 106.
        assert!(text.contains("     106 URLs"), "{text}");
        assert!(!text.contains("     100 URLs"), "{text}");
        assert!(!text.contains("still queued"), "{text}");
    }

    fn args() -> CrawlArgs {
        CrawlArgs {
            seeds: Some("s.txt".into()),
            settings: Default::default(),
            data: None,
            out: None,
            format: None,
            warc_out: None,
            import_warc: Vec::new(),
            cluster: None,
            max_pages: None,
            max_depth: None,
            concurrency: None,
            delay: None,
            user_agent: None,
            template: Default::default(),
            respect_robots: None,
            urls: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            allow_host: Vec::new(),
            header: Vec::new(),
            cookie: None,
            proxy: None,
            resolve: Vec::new(),
            recrawl: false,
            older_than: None,
            quiet: false,
            verbose: 0,
        }
    }
}
