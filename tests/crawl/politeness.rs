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
    crawl(
        &dirs,
        &seeds,
        "[crawl]\ndelay = \"100ms\"\nconcurrency = 8\n",
    )
    .await;
    let mut windows = Vec::new();
    for i in 0..3 {
        let o = server.origin(i);
        let log = o.log();
        windows.push((log[0].at, log[log.len() - 1].at));
        assert_eq!(o.max_in_flight(), 1, "origin {i}: one request at a time");
        assert_eq!(
            o.pairs_closer_than(Duration::from_millis(100)),
            0,
            "origin {i}: gaps {:?}",
            o.gaps()
        );
    }
    // Origins run in parallel: each origin's first request comes before every other origin's
    // last one (an order, not a duration, so a loaded machine cannot fail it; one origin after
    // another would put origin 2's first request after origin 0's last).
    for (i, a) in windows.iter().enumerate() {
        for (j, b) in windows.iter().enumerate() {
            assert!(
                i == j || a.0 < b.1,
                "origins {i} and {j} did not overlap: {windows:?}"
            );
        }
    }
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

/// CPU seconds this process has used (user + system), from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name (which ends at the last ')'): utime is 14th, stime 15th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_loop_does_not_spin_at_the_concurrency_cap() {
    // Broke: with every concurrency slot taken and origins due, the loop's wake-up time was in
    // the past, so it spun at 100% CPU until a request finished.
    let server = TestServer::start(3);
    let mut seeds = Vec::new();
    for i in 0..3 {
        let site = NewsSite::generate(&SiteSpec::small(60 + i as u64, 12));
        server.origin(i).serve(site.site());
        server.origin(i).set_latency(Duration::from_millis(40));
        seeds.push(server.origin(i).url("/"));
    }
    let dirs = Dirs::new();
    let (cpu, wall) = (cpu_seconds(), std::time::Instant::now());
    crawl(&dirs, &seeds, "[crawl]\nconcurrency = 1\n").await;
    let (cpu, wall) = (cpu_seconds() - cpu, wall.elapsed().as_secs_f64());
    assert!(wall > 1.0, "the crawl waits on latency: {wall:.2}s");
    assert!(
        cpu < 0.5 * wall,
        "{cpu:.2}s CPU over {wall:.2}s: the loop spins"
    );
}

/// Of the origins due, the site that started first goes first: with room for two requests at a
/// time, the first two sites take both until one of them is done, and the last site starts only
/// after the first is finished (round-robin over due origins would start every site at once and
/// bring them all to their end together, so no site's text could be written while crawling).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sites_are_crawled_in_waves_the_first_started_first() {
    const SITES: usize = 6;
    let server = TestServer::start(SITES);
    let mut seeds = Vec::new();
    for o in server.origins() {
        for path in ["/", "/p0", "/p1", "/p2", "/p3", "/p4"] {
            o.mount(
                path,
                crate::support::Endpoint::html(format!(
                    "<html><body><p>page {path} of {}</p></body></html>",
                    o.base()
                )),
            );
            seeds.push(o.url(path));
        }
    }
    let dirs = Dirs::new();
    crawl(
        &dirs,
        &seeds,
        "[crawl]\ndelay = \"0ms\"\nconcurrency = 2\nper_origin_concurrency = 1\n",
    )
    .await;
    let windows: Vec<_> = server
        .origins()
        .iter()
        .map(|o| {
            let log = o.log();
            assert!(log.len() >= 6, "{}: {} requests", o.base(), log.len());
            (log[0].at, log[log.len() - 1].at)
        })
        .collect();
    let first_started = windows.iter().map(|w| w.0).min().expect("sites");
    let first = windows
        .iter()
        .find(|w| w.0 == first_started)
        .expect("the first site");
    let last_started = windows.iter().map(|w| w.0).max().expect("sites");
    assert!(
        last_started > first.1,
        "the last site started before the first was done: {windows:?}"
    );
}
