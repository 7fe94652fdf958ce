//! Resume: a crawl stopped part way (cancelled, or its task dropped) and started again on the
//! same data directory fetches every page exactly once and stores every reachable page.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{crawl, crawl_until, stored_urls, Dirs};
use crate::support::{NewsSite, SiteSpec, TestServer};

fn reachable_urls(site: &NewsSite, o: &crate::support::Origin) -> BTreeSet<String> {
    site.reachable().iter().map(|p| o.url(p)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_crawl_resumes_fetching_each_page_once() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let site = NewsSite::generate(&SiteSpec::small(7, 60));
    o.serve(site.site());
    o.set_latency(Duration::from_millis(20));
    let dirs = Dirs::new();
    let seeds = vec![o.url("/")];

    let token = CancellationToken::new();
    let run = crawl_until(&dirs, &seeds, "", token.clone());
    let stopper = async {
        server
            .wait_until(Duration::from_secs(20), |s| s.total_hits() >= 20)
            .await;
        token.cancel();
    };
    let (summary, ()) = tokio::join!(run, stopper);
    assert!(summary.interrupted, "{summary:?}");
    let after_first = o.total_hits();
    assert!(after_first < site.reachable().len(), "stopped part way");

    let summary = crawl(&dirs, &seeds, "").await;
    assert!(!summary.interrupted);
    site.check_fetched_once(o, &["/robots.txt"]).unwrap();
    assert_eq!(o.hits("/robots.txt"), 1);
    let stored = stored_urls(&dirs.store());
    let missing: Vec<_> = reachable_urls(&site, o)
        .difference(&stored)
        .cloned()
        .collect();
    assert!(missing.is_empty(), "not stored: {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_crawl_task_resumes_and_repeats_only_what_was_in_flight() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let site = NewsSite::generate(&SiteSpec::small(11, 60));
    o.serve(site.site());
    o.set_latency(Duration::from_millis(20));
    let dirs = std::sync::Arc::new(Dirs::new());
    let seeds = vec![o.url("/")];

    let task = {
        let (dirs, seeds) = (dirs.clone(), seeds.clone());
        tokio::spawn(async move { crawl(&dirs, &seeds, "").await })
    };
    server
        .wait_until(Duration::from_secs(20), |s| s.total_hits() >= 25)
        .await;
    task.abort();
    let _ = task.await;
    let log_at_abort = o.log();

    crawl(&dirs, &seeds, "").await;
    let stored = stored_urls(&dirs.store());
    let missing: Vec<_> = reachable_urls(&site, o)
        .difference(&stored)
        .cloned()
        .collect();
    assert!(missing.is_empty(), "not stored: {missing:?}");
    // Only the fetch in flight (one per origin) and the one being committed may repeat.
    let last_two: Vec<String> = log_at_abort
        .iter()
        .rev()
        .take(2)
        .map(|h| h.target.clone())
        .collect();
    for (target, n) in o.duplicates() {
        assert!(
            n == 2 && last_two.contains(&target),
            "{target} fetched {n} times; in flight at the stop: {last_two:?}"
        );
    }
}
