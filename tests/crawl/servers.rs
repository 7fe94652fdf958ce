//! Politeness per server: host names that resolve to one address and port (name-based shared
//! hosting, a CDN edge) share `crawl.per_ip_concurrency` and its start spacing, while each
//! origin keeps its own rules. `fetch.resolve` maps many names to a local test origin, as
//! curl's `--resolve` would; the origin's server-side log says what it saw, whichever name
//! each request was for.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use thresher::crawl::resolve::{Lookup, Resolver};
use thresher::crawl::RunOptions;

use super::{crawl, crawl_with, stored_urls, Dirs};
use crate::support::{NewsSite, Origin, SiteSpec, TestServer};

/// `n` host names for origin `o`'s one socket, serving a small site under each: the seeds,
/// and the `fetch.resolve` entries that send the names to 127.0.0.1.
fn names_on(o: &Origin, prefix: &str, n: usize, pages: usize) -> (Vec<String>, Vec<String>) {
    let spec = SiteSpec {
        sections: 1,
        orphans: 0,
        ..SiteSpec::small(7, pages)
    };
    o.serve(NewsSite::generate(&spec).site());
    let names: Vec<String> = (0..n).map(|i| format!("{prefix}{i}.test")).collect();
    let seeds = names.iter().map(|h| o.url_as(h, "/")).collect();
    let resolve = names.iter().map(|h| format!("\"{h}:127.0.0.1\"")).collect();
    (seeds, resolve)
}

/// A `[fetch]` section with `resolve` set to `entries`, then `more` of its keys.
fn fetch_section(entries: &[String], more: &str) -> String {
    format!("[fetch]\nresolve = [{}]\n{more}", entries.join(", "))
}

/// Stored pages by host name.
fn pages_by_host(dirs: &Dirs) -> BTreeMap<String, usize> {
    let mut by = BTreeMap::new();
    for u in stored_urls(&dirs.store()) {
        let host = url::Url::parse(&u).unwrap().host_str().unwrap().to_string();
        *by.entry(host).or_default() += 1;
    }
    by
}

/// (first, last) arrival at origin `o`.
fn window(o: &Origin) -> (tokio::time::Instant, tokio::time::Instant) {
    let log = o.log();
    (log[0].at, log[log.len() - 1].at)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_names_on_one_server_share_its_limit() {
    // Two servers: five names on the first, three on the second. With one request at a time
    // per server, neither ever sees two at once, and the two are crawled side by side.
    let server = TestServer::start(2);
    let (a, b) = (server.origin(0), server.origin(1));
    for o in [a, b] {
        // Each request holds the server a while, so requests that could overlap do.
        o.set_latency(Duration::from_millis(20));
    }
    let (mut seeds, mut resolve) = names_on(a, "a", 5, 6);
    let (seeds_b, resolve_b) = names_on(b, "b", 3, 6);
    seeds.extend(seeds_b);
    resolve.extend(resolve_b);
    let dirs = Dirs::new();
    let toml = format!(
        "{}[crawl]\nconcurrency = 8\nper_ip_concurrency = 1\n",
        fetch_section(&resolve, "")
    );
    let summary = crawl(&dirs, &seeds, &toml).await;
    assert_eq!(summary.errors, 0, "{summary:?}");
    assert_eq!(a.max_in_flight(), 1, "server a: one request at a time");
    assert_eq!(b.max_in_flight(), 1, "server b: one request at a time");
    // Every name's site was crawled whole (the same pages under each name).
    let by_host = pages_by_host(&dirs);
    assert_eq!(by_host.len(), 8, "{by_host:?}");
    let first = by_host["a0.test"];
    assert!(first > 3, "{by_host:?}");
    assert!(by_host.values().all(|&n| n == first), "{by_host:?}");
    // The names' requests went to their server, each under its own name.
    for (o, prefix, n) in [(a, "a", 5), (b, "b", 3)] {
        let hosts: std::collections::BTreeSet<String> = o
            .log()
            .iter()
            .filter_map(|h| h.host.clone())
            .map(|h| h.split(':').next().unwrap().to_string())
            .collect();
        let want = (0..n).map(|i| format!("{prefix}{i}.test")).collect();
        assert_eq!(hosts, want);
    }
    // A server waits for its own requests only: each one's first request comes before the
    // other's last (an order, not a duration).
    let (wa, wb) = (window(a), window(b));
    assert!(
        wa.0 < wb.1 && wb.0 < wa.1,
        "servers not crawled side by side"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_per_server_limit_names_on_one_server_overlap() {
    // The same names with the limit off: only per-origin politeness applies, so requests for
    // different names reach the one server at once (50 ms each, 5 names started together).
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.set_latency(Duration::from_millis(50));
    let (seeds, resolve) = names_on(o, "a", 5, 6);
    let dirs = Dirs::new();
    let toml = format!(
        "{}[crawl]\nconcurrency = 8\nper_ip_concurrency = 0\n",
        fetch_section(&resolve, "")
    );
    crawl(&dirs, &seeds, &toml).await;
    assert!(o.max_in_flight() > 1, "{}", o.max_in_flight());
    assert_eq!(pages_by_host(&dirs).len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_spaces_request_starts_and_origins_keep_their_delay() {
    // delay 600ms, per_ip_concurrency 2: at most 2 requests at once to the server, starts at
    // least 300 ms apart across the names, and 600 ms after a response between two requests
    // of one name. The server-side log is compared with half the spacing (a loaded machine
    // may delay one request's arrival more than the next one's), the per-name delay in full
    // (it counts from the response's completion, so the network only widens it).
    let server = TestServer::start(1);
    let o = server.origin(0);
    let (seeds, resolve) = names_on(o, "a", 3, 3);
    let dirs = Dirs::new();
    let toml = format!(
        "{}[crawl]\ndelay = \"600ms\"\nconcurrency = 8\nper_ip_concurrency = 2\n",
        fetch_section(&resolve, "")
    );
    crawl(&dirs, &seeds, &toml).await;
    assert!(o.total_hits() >= 9, "{}", o.total_hits());
    assert!(o.max_in_flight() <= 2, "{}", o.max_in_flight());
    assert_eq!(
        o.pairs_closer_than(Duration::from_millis(150)),
        0,
        "starts closer than the spacing: {:?}",
        o.gaps()
    );
    for i in 0..3 {
        let name = format!("a{i}.test:{}", o.port());
        let gaps = o.gaps_where(|h| h.host.as_deref() == Some(name.as_str()));
        assert!(!gaps.is_empty(), "{name}");
        assert!(
            gaps.iter().all(|g| *g >= Duration::from_millis(600)),
            "{name}: {gaps:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_does_not_resolve_backs_off_then_is_set_aside() {
    // `gone.test` has no address (a lookup that fails without asking a DNS server): its
    // origin backs off and is set aside after 10 failures in a row, each counted as a retry;
    // the crawl of the names that resolve goes on and the run ends.
    let server = TestServer::start(1);
    let o = server.origin(0);
    let (mut seeds, resolve) = names_on(o, "a", 2, 4);
    seeds.push(o.url_as("gone.test", "/"));
    let dirs = Dirs::new();
    let toml = format!(
        "{}[crawl]\nper_ip_concurrency = 1\n",
        fetch_section(
            &resolve,
            "backoff_base = \"10ms\"\nbackoff_max = \"40ms\"\n"
        )
    );
    let config = dirs.config(&toml);
    let lookup: Lookup = Arc::new(|host| {
        Box::pin(async move { Err(std::io::Error::other(format!("{host}: no such host"))) })
    });
    let options = RunOptions {
        resolver: Some(Arc::new(Resolver::new(&config.fetch).with_lookup(lookup))),
        ..RunOptions::default()
    };
    let summary = crawl_with(&dirs, &seeds, &toml, options).await;
    let gone = summary
        .set_aside
        .iter()
        .find(|w| w.origin.contains("gone.test"))
        .unwrap_or_else(|| panic!("gone.test set aside: {:?}", summary.set_aside));
    assert!(
        gone.reason.contains("cannot resolve gone.test") && gone.reason.contains("no such host"),
        "{}",
        gone.reason
    );
    assert_eq!(gone.queued, 1, "its seed stays queued: {gone:?}");
    assert!(summary.retries >= 9, "{summary:?}");
    assert!(o
        .log()
        .iter()
        .all(|h| !h.host.as_deref().unwrap_or("").starts_with("gone.test")));
    let by_host = pages_by_host(&dirs);
    assert_eq!(by_host.len(), 2, "{by_host:?}");
    assert!(by_host.values().all(|&n| n > 1), "{by_host:?}");
}
