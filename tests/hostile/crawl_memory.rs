//! Issue 10, "memory per discovered URL ~9 KB": what a huge page's discovered URLs cost on their
//! way to the store (figures: benches/hostile/crawl_figures.sh, docs/robustness.md).

use std::sync::Arc;

use thresher::store::{Commit, QueueEntry, Store, DISCOVER_BATCH};

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
