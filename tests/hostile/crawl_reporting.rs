//! Issue 10, medium: "progress and status disagree and hide the cause of waiting": "errors 0"
//! through retries and robots.txt waits; "Crawled N responses" counted timeouts; the kinds
//! were plain strings counted in three places. Kinds are one typed enum now
//! (`store::ErrorKind`), counted once in `CrawlStats`, which progress, the live status and the
//! run's summary read; `status` reads the same kinds back from the store.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::crawl_support::{crawl_bounded, dead_origin, healthy};
use crate::crawl::Dirs;
use crate::support::{Endpoint, TestServer};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn timeouts_are_not_counted_as_responses() {
    let server = TestServer::background(1, 2);
    let o = server.origin(0);
    o.mount(
        "/",
        Endpoint::html(
            "<html><body><a href=\"/slow\">slow</a> <a href=\"/ok\">ok</a></body></html>",
        ),
    );
    o.mount(
        "/ok",
        Endpoint::html("<html><body><p>fine</p></body></html>"),
    );
    o.mount(
        "/slow",
        Endpoint::slow_first_byte(Duration::from_secs(5), Endpoint::not_found()),
    );
    let dirs = Dirs::new();
    let toml = "[fetch]\nfirst_byte_timeout = \"300ms\"\nmax_retries = 0\n";
    let ran = crawl_bounded(&dirs, &[o.url("/")], toml, LIMIT);
    // `/` and `/ok` answered; `/slow` never did.
    assert_eq!(ran.summary.fetched, 2, "{:?}", ran.summary);
    assert_eq!(ran.stats.fetched.load(Relaxed), 2);
    assert_eq!(ran.summary.errors, 1, "{:?}", ran.summary);
    assert!(
        ran.summary
            .errors_by_kind
            .iter()
            .any(|(k, _)| *k == "timeout-first-byte"),
        "{:?}",
        ran.summary
    );
}

#[test]
fn a_robots_txt_wait_counts_as_a_retry_not_as_nothing() {
    let server = TestServer::background(1, 1);
    let a = server.origin(0);
    healthy(a, 41, 5);
    let dead = dead_origin();
    let dirs = Dirs::new();
    let toml = "[robots]\nerror_retry = \"100ms\"\nunreachable_retries = 2\n";
    let ran = crawl_bounded(&dirs, &[dead, a.url("/")], toml, LIMIT);
    // Two retries of the dead origin's robots.txt, then it is set aside (no more retries).
    assert_eq!(ran.summary.retries, 2, "{:?}", ran.summary);
    assert_eq!(ran.stats.retries.load(Relaxed), 2);
    assert_eq!(ran.summary.set_aside.len(), 1, "{:?}", ran.summary);
}

/// Every kind the run counted is what `status` reads from the store, and progress, summary
/// and status agree on the totals (errors apart from skips).
#[test]
fn progress_summary_and_status_count_the_same_failures() {
    let server = TestServer::background(1, 2);
    let o = server.origin(0);
    let links = ["/gone", "/gone2", "/img", "/copy", "/private/x", "/ok"]
        .iter()
        .map(|p| format!("<a href=\"{p}\">{p}</a> "))
        .collect::<String>();
    let home = format!("<html><body><p>home page</p>{links}</body></html>");
    o.mount("/", Endpoint::html(home.clone()));
    o.mount("/copy", Endpoint::html(home));
    o.mount(
        "/robots.txt",
        Endpoint::text("User-agent: *\nDisallow: /private/\n"),
    );
    o.mount("/gone", Endpoint::not_found());
    o.mount("/gone2", Endpoint::status(410));
    o.mount("/img", Endpoint::typed("image/png", "\u{89}PNG"));
    o.mount(
        "/ok",
        Endpoint::html("<html><body><p>fine</p></body></html>"),
    );
    let dirs = Dirs::new();
    let ran = crawl_bounded(&dirs, &[o.url("/")], "", LIMIT);

    let counted: BTreeMap<String, u64> = ran
        .stats
        .failures()
        .into_iter()
        .map(|(k, n)| (k.name().into_owned(), n))
        .collect();
    let expected: BTreeMap<String, u64> = [
        ("http-404", 1),
        ("http-410", 1),
        ("not-html", 1),
        ("duplicate", 1),
        ("robots-disallowed", 1),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(counted, expected, "progress");
    let summarised: BTreeMap<String, u64> = ran
        .summary
        .errors_by_kind
        .iter()
        .map(|(k, n)| (k.name().into_owned(), *n))
        .collect();
    assert_eq!(summarised, expected, "summary");
    let status = thresher::status::report(&dirs.data(), 8 << 20).expect("status");
    let stored: BTreeMap<String, u64> = status
        .errors_by_kind
        .iter()
        .map(|(k, n)| (k.name().into_owned(), *n))
        .collect();
    assert_eq!(stored, expected, "status");

    assert_eq!(ran.summary.errors, 2, "{:?}", ran.summary);
    assert_eq!(ran.summary.skipped, 3, "{:?}", ran.summary);
    assert_eq!(ran.stats.errors.load(Relaxed), 2, "progress errors");
    assert_eq!(ran.stats.skipped.load(Relaxed), 3, "progress skipped");
    let host_errors: u64 = status.hosts.iter().map(|h| h.errors).sum();
    assert_eq!(host_errors, 2, "status per host leaves the skips out");
}
