//! Issue 10, medium: `429 Retry-After: 999999` silently stalled its origin for up to an hour per
//! retry (the default cap was 1 h), its other pages too, with "errors 0". The default cap is
//! 2 minutes now (`fetch.max_retry_after`), the wait is published for progress and status, and
//! retries are counted, capped ones apart.

use std::time::Duration;

use super::crawl_support::{crawl_bounded, healthy};
use crate::crawl::Dirs;
use crate::support::{Endpoint, TestServer};

#[test]
fn huge_retry_after_is_capped_by_default() {
    let c = thresher::config::Config::default();
    assert!(
        c.fetch.max_retry_after <= Duration::from_secs(120),
        "{:?}",
        c.fetch.max_retry_after
    );
}

#[test]
fn huge_retry_after_is_capped_and_counted() {
    let server = TestServer::background(2, 1);
    let (o, other) = (server.origin(0), server.origin(1));
    let site = healthy(o, 31, 12);
    let page = site.page("/").expect("home").endpoint();
    o.mount(
        "/",
        Endpoint::fail_first(1, Endpoint::retry_after(429, 999_999), page),
    );
    let other_site = healthy(other, 32, 12);
    let dirs = Dirs::new();
    let ran = crawl_bounded(
        &dirs,
        &[o.url("/"), other.url("/")],
        "[fetch]\nmax_retry_after = \"700ms\"\n",
        Duration::from_secs(60),
    );
    assert_eq!(o.hits("/"), 2, "retried once, after the capped wait");
    let gap = o.requests_to("/")[1].at - o.requests_to("/")[0].at;
    assert!(gap >= Duration::from_millis(700), "{gap:?}");
    let s = &ran.summary;
    assert_eq!((s.retries, s.retry_after_capped), (1, 1), "{s:#?}");
    assert_eq!(s.errors, 0, "{s:#?}");
    assert_eq!(
        ran.stats.retries.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    // Every page of both sites came through.
    let stored = crate::crawl::stored_urls(&dirs.store()).len();
    assert_eq!(
        stored,
        site.reachable().len() + other_site.reachable().len(),
        "{s:#?}"
    );
}
