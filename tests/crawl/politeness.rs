//! Politeness measured on the server: one request at a time per origin, the configured delay and
//! robots.txt Crawl-delay between requests, with several origins crawled in parallel.

use std::time::Duration;

use super::crawl;
use super::Dirs;
use crate::support::sites::mount_robots_rules;
use crate::support::{NewsSite, SiteSpec, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_origin_delay_holds_across_parallel_origins() {
    let server = TestServer::start(3);
    let mut seeds = Vec::new();
    for i in 0..3 {
        let site = NewsSite::generate(&SiteSpec::small(i as u64 + 1, 12));
        server.origin(i).serve(site.site());
        seeds.push(server.origin(i).url("/"));
    }
    let dirs = Dirs::new();
    let started = std::time::Instant::now();
    crawl(
        &dirs,
        &seeds,
        "[crawl]\ndelay = \"100ms\"\nconcurrency = 8\n",
    )
    .await;
    let took = started.elapsed();
    let mut requests = 0;
    for i in 0..3 {
        let o = server.origin(i);
        requests = requests.max(o.total_hits());
        assert_eq!(o.max_in_flight(), 1, "origin {i}: one request at a time");
        assert_eq!(
            o.pairs_closer_than(Duration::from_millis(100)),
            0,
            "origin {i}: gaps {:?}",
            o.gaps()
        );
    }
    // Origins run in parallel: the crawl takes about one origin's time, not three.
    let one_origin = Duration::from_millis(100) * (requests as u32 - 1);
    assert!(
        took < one_origin * 2,
        "took {took:?}, one origin needs {one_origin:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_from_robots_is_honoured() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    mount_robots_rules(o, Some(Duration::from_millis(300)));
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    assert!(o.total_hits() >= 5, "{}", o.total_hits());
    assert_eq!(
        o.pairs_closer_than(Duration::from_millis(300)),
        0,
        "gaps: {:?}",
        o.gaps()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_is_capped_by_max_crawl_delay() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    mount_robots_rules(o, Some(Duration::from_secs(30)));
    let dirs = Dirs::new();
    let started = std::time::Instant::now();
    crawl(
        &dirs,
        &[o.url("/")],
        "[crawl]\nmax_crawl_delay = \"200ms\"\n",
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(o.pairs_closer_than(Duration::from_millis(200)), 0);
}
