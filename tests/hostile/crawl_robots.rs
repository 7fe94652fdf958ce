//! Issue 10, high: a hostile robots.txt stalled every origin. 120 rules `Disallow: /*aaaa…b`
//! (4,000 bytes) against 4 KB URLs cost 0.7 s of CPU per check, inside the scheduler task: two
//! healthy sites crawled beside it got 180 of 302 pages in 60 s. Matching is linear now, rules
//! are capped (`robots::MAX_RULES`, `MAX_PATTERN_LITERAL_BYTES`) and one dispatch's matching
//! work is bounded, so the other origins go on.

use std::time::Duration;

use super::crawl_support::{assert_fully_crawled, crawl_bounded, healthy};
use crate::crawl::Dirs;
use crate::support::{Endpoint, TestServer};

#[test]
fn hostile_robots_txt_does_not_stall_other_origins() {
    let server = TestServer::background(3, 1);
    let (bad, a, b) = (server.origin(0), server.origin(1), server.origin(2));
    let run = "a".repeat(4000);
    let robots: String = std::iter::once("User-agent: *\n".to_string())
        .chain((0..120).map(|i| format!("Disallow: /*{run}b{i}\n")))
        .collect();
    bad.mount("/robots.txt", Endpoint::text(robots));
    // 40 URLs of ~4 KB, none disallowed (no `b` after the run): each costs a full check.
    let links: String = (0..40)
        .map(|i| format!("<a href=\"/l{i}/{run}\">{i}</a>\n"))
        .collect();
    bad.mount(
        "/",
        Endpoint::html(format!("<!doctype html><title>links</title>{links}")),
    );
    let leaf = Endpoint::html("<!doctype html><title>leaf</title><p>leaf</p>".to_string());
    bad.extend(crate::support::Site::new().prefix("/l", leaf));
    let (site_a, site_b) = (healthy(a, 21, 150), healthy(b, 22, 150));
    let dirs = Dirs::new();
    let ran = crawl_bounded(
        &dirs,
        &[bad.url("/"), a.url("/"), b.url("/")],
        "",
        Duration::from_secs(60),
    );
    assert_fully_crawled(&site_a, a);
    assert_fully_crawled(&site_b, b);
    // The hostile origin's own pages were allowed and crawled too.
    assert_eq!(bad.hits_prefix("/l"), 40, "{:?}", bad.hit_counts().len());
    assert_eq!(ran.summary.errors, 0, "{:#?}", ran.summary);
}
