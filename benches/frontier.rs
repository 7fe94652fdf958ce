//! Frontier memory: queue N URLs (default 1,000,000) across many origins through the store's
//! real commit path (seen-set check + per-origin queue), then report peak RSS and time.
//!
//!   cargo bench --bench frontier -- [--urls 1000000] [--origins 1000] [--cache-mb N]
//!
//! The goal: RSS after queueing 1,000,000 URLs stays under 300 MB (queues live in sled).
//! The process runs as the crawl does: the binary's allocator (jemalloc with its options,
//! `thresher::memory::jemalloc`) and freed heap given back every few seconds, sled's cache the
//! configured default unless `--cache-mb`. (With glibc, its default arenas alone took this
//! figure from ~105 to ~390 MB; capped, ~105.)

use std::time::Instant;

use thresher::config::Config;
use thresher::memory;
use thresher::store::{Commit, QueueEntry, Store};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[export_name = "_rjem_malloc_conf"]
static JEMALLOC_CONF: &[u8; 86] = memory::jemalloc::CONF;

fn main() {
    memory::enable_release(memory::jemalloc::purge);
    let urls = arg("--urls", 1_000_000);
    let origins = arg("--origins", 1000);
    let cache = match arg("--cache-mb", 0) {
        0 => Config::default().store.cache_bytes,
        mb => mb << 20,
    };
    let mut trims = memory::Periodic::new(memory::RELEASE_EVERY);
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path(), cache).expect("open store");
    let started = Instant::now();
    let batch = 500;
    let mut queued = 0u64;
    let mut i = 0u64;
    while i < urls {
        let mut c = Commit::new();
        for j in i..(i + batch).min(urls) {
            let o = j % origins;
            // Realistic lengths: ~70-byte URLs.
            let url =
                format!("https://www.site-{o:05}.example.com/articles/2024/{j:09}/some-slug-here");
            c.discover(
                format!("https://www.site-{o:05}.example.com"),
                QueueEntry::page(url, 1),
            );
        }
        queued += store.commit(c).expect("commit").enqueued.len() as u64;
        trims.tick();
        i += batch;
    }
    store.flush().expect("flush");
    let secs = started.elapsed().as_secs_f64();
    let lengths = store.queue_lengths().expect("scan");
    let total: u64 = lengths.values().sum();
    println!(
        "queued {queued} URLs ({total} in store, {} origins) in {secs:.1}s ({:.0} URLs/s); \
         RSS now {} MB, peak {} MB; store on disk {} MB (sled cache {} MB)",
        lengths.len(),
        queued as f64 / secs,
        status_kb("VmRSS") / 1024,
        status_kb("VmHWM") / 1024,
        store.size_on_disk() >> 20,
        cache >> 20
    );
}
