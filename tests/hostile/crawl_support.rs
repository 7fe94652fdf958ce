//! Helpers of the crawl-side hostile tests: a crawl on a thread and runtime of its own, so a
//! scheduler that spins (never yields) fails the test at its time bound instead of hanging it;
//! a port where nothing listens; healthy generated sites.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use thresher::crawl::stats::CrawlStats;
use thresher::crawl::{self, CrawlSummary, RunOptions};
use tokio_util::sync::CancellationToken;

use crate::crawl::Dirs;
use crate::support::{NewsSite, Origin, SiteSpec};

/// What a bounded crawl hands back.
pub struct Ran {
    pub summary: CrawlSummary,
    pub stats: Arc<CrawlStats>,
}

/// Run a crawl of `seeds` in `dirs` (test BASE config, then `toml`) on its own thread and
/// runtime; panic if it has not ended within `limit`. A scheduler stuck in a loop that never
/// yields cannot be stopped from inside its runtime, so the thread is left behind then (the
/// test process ends anyway).
pub fn crawl_bounded(dirs: &Dirs, seeds: &[String], toml: &str, limit: Duration) -> Ran {
    let config = Arc::new(dirs.config(toml));
    std::fs::create_dir_all(dirs.data()).expect("data dir");
    let seeds: Vec<url::Url> = seeds.iter().map(|s| s.parse().expect("seed URL")).collect();
    let stats = Arc::new(CrawlStats::default());
    let (tx, rx) = mpsc::channel();
    let data = dirs.data();
    let thread_stats = stats.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("crawl runtime");
        let summary = runtime.block_on(async move {
            let store = Arc::new(
                thresher::store::Store::open(&data, 8 << 20).expect("open the crawl's store"),
            );
            crawl::run(
                config,
                store,
                &seeds,
                CancellationToken::new(),
                thread_stats,
                None,
                RunOptions::default(),
            )
            .await
            .expect("the crawl itself must not fail")
        });
        let _ = tx.send(summary);
    });
    match rx.recv_timeout(limit) {
        Ok(summary) => Ran { summary, stats },
        Err(_) => panic!(
            "the crawl did not end within {limit:?} (frozen?); progress: stored {}, in flight {}, \
             errors {}",
            stats.stored.load(std::sync::atomic::Ordering::Relaxed),
            stats.in_flight.load(std::sync::atomic::Ordering::Relaxed),
            stats.errors.load(std::sync::atomic::Ordering::Relaxed),
        ),
    }
}

/// `http://127.0.0.1:PORT/` where nothing listens (a port bound, then released).
pub fn dead_origin() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/")
}

/// Serve a generated healthy site of `pages` pages on `o`; returns it for checks.
pub fn healthy(o: &Origin, seed: u64, pages: usize) -> NewsSite {
    let site = NewsSite::generate(&SiteSpec::small(seed, pages));
    o.serve(site.site());
    site
}

/// Every reachable page of `site` was requested exactly once from `o` (robots.txt aside).
pub fn assert_fully_crawled(site: &NewsSite, o: &Origin) {
    if let Err(e) = site.check_fetched_once(o, &["/robots.txt"]) {
        panic!("{} not fully crawled:\n{e}", o.base());
    }
}
