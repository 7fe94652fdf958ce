//! Issue 10, "memory per discovered URL ~9 KB": what a huge page's discovered URLs cost on their
//! way to the store (figures: benches/hostile/crawl_figures.sh, docs/robustness.md).

use std::sync::Arc;
use std::time::Duration;

use thresher::store::{Commit, QueueEntry, Store, DISCOVER_BATCH};

use super::crawl_support::crawl_bounded;
use crate::crawl::Dirs;
use crate::support::{Endpoint, TestServer};

/// The commit of a page's links gave back a copy of every queue entry and of its origin's key
/// per URL (about 300 bytes a URL beside the store's own copy: 70 MB for 230,000 links). What
/// comes back now is where each URL went, with one shared key per origin and store batch (of at
/// most `DISCOVER_BATCH` URLs).
#[test]
fn crawl_links_of_a_huge_page_come_back_without_copies() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), 8 << 20).unwrap();
    let n = 20_000u64;
    let mut c = Commit::new();
    for i in 0..n {
        c.discover(
            "http://big.example".into(),
            QueueEntry::page(format!("http://big.example/a{i}"), 1),
        );
    }
    c.discover(
        "http://other.example".into(),
        QueueEntry::page("http://other.example/".into(), 1),
    );
    let out = store.commit(c).unwrap();
    assert_eq!(out.enqueued.len() as u64, n + 1);
    let first = &out.enqueued[0];
    assert_eq!(&*first.origin_key, "http://big.example");
    let mut keys: Vec<&Arc<str>> = Vec::new();
    for (i, e) in out.enqueued[..n as usize].iter().enumerate() {
        assert_eq!(e.seq, i as u64, "queued in page order");
        assert_eq!(e.origin_id, first.origin_id);
        assert_eq!(e.origin_key, first.origin_key);
        if !keys.iter().any(|k| Arc::ptr_eq(k, &e.origin_key)) {
            keys.push(&e.origin_key);
        }
    }
    let batches = (n as usize).div_ceil(DISCOVER_BATCH);
    assert!(
        keys.len() <= batches,
        "{} copies of the origin key for {n} URLs: one per URL, not one per batch ({batches})",
        keys.len()
    );
    assert_eq!(
        &*out.enqueued[n as usize].origin_key,
        "http://other.example"
    );
    let lengths = store.queue_lengths().unwrap();
    assert_eq!(lengths[&first.origin_id], n);
    assert!(store.is_seen("http://big.example/a19999").unwrap());
}

/// `/` of a site: a page over `memory::HUGE_PAGE_BYTES` with `links` distinct same-site links.
fn huge_page(site: usize, links: usize) -> String {
    let mut html = format!("<!doctype html><html><head><title>Big {site}</title></head><body>\n");
    for i in 0..links {
        html.push_str(&format!("<a href=/s{site}/p{i}>p</a>\n"));
    }
    let pad = (thresher::memory::HUGE_PAGE_BYTES as usize + 1000).saturating_sub(html.len());
    html.push_str(&format!("<p>{}</p></body></html>\n", "x".repeat(pad)));
    html
}

/// Three sites whose `/` is a huge page, crawled on two cores: the pages parsed two at a time,
/// each holding its html5ever tree and its flat copy, and each page's links waited as one
/// vector of queue entries for the page's commit (the `links3` peak, issue 10). Now one huge
/// page parses at a time in the process, its links go to the store in batches while it is
/// processed, and the freed heap is given back after each.
#[test]
fn crawl_huge_pages_of_three_sites_parsed_two_at_once_with_their_links_in_one_vector() {
    let server = TestServer::background(3, 2);
    let links = 3 * DISCOVER_BATCH + 17;
    let mut seeds = Vec::new();
    for site in 0..3 {
        let o = server.origin(site);
        o.mount("/", Endpoint::html(huge_page(site, links)));
        seeds.push(o.url("/"));
    }
    let dirs = Dirs::new();
    let released = thresher::memory::releases();
    let ran = crawl_bounded(
        &dirs,
        &seeds,
        "[crawl]\nmax_pages = 3\n",
        Duration::from_secs(120),
    );
    assert_eq!(ran.summary.stored, 3, "{:?}", ran.summary);
    assert_eq!(
        thresher::memory::huge_parses_at_once(),
        1,
        "huge pages parsed one at a time"
    );
    assert!(
        thresher::memory::releases() >= released + 3,
        "the heap given back after each huge page"
    );
    let store = dirs.store();
    let lengths = store.queue_lengths().unwrap();
    for site in 0..3 {
        let o = server.origin(site);
        let origin = store.origin_id(&o.base()).unwrap();
        assert_eq!(
            lengths[&origin], links as u64,
            "site {site}: every link queued once"
        );
        let last = o.url(&format!("/s{site}/p{}", links - 1));
        assert!(store.is_seen(&last).unwrap(), "{last}");
    }
}
