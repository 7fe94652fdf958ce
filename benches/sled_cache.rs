//! sled's memory against its cache setting (`store.cache_bytes`), alone: N iterations of the
//! keys a crawl's commit writes per page (page metadata 230 bytes, page reference 40, a site
//! page key, a content key), one batch each, with sled configured as `Store::open` does, and
//! the process's RSS every 100,000 iterations. docs/benchmarks.md, "Memory".
//!
//!     cargo bench --bench sled_cache -- CACHE_MIB ITERATIONS [no-drain]
//!
//! Each batch is followed by the store's drain of sled's deferred frees
//! (`thresher::store::reclaim_deferred`), unless `no-drain`.

use std::time::Instant;

fn rss_mb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let cache_mib: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(4);
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(600_000);
    let drain = args.get(2).map(String::as_str) != Some("no-drain");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = sled::Config::new()
        .path(dir.path())
        .cache_capacity(cache_mib << 20)
        .flush_every_ms(Some(thresher::store::FLUSH_EVERY_MS))
        .open()
        .expect("sled opens");
    let tree = db.open_tree("t").expect("a tree");
    let started = Instant::now();
    let meta = vec![7u8; 230];
    let reference = vec![3u8; 40];
    println!("cache_mib\titerations\trss_mb\tseconds\tdisk_mb");
    for i in 0..n {
        let site = format!("site{:03}.example:80", i % 200);
        let mut b = sled::Batch::default();
        let key = |prefix: u8, rest: &[u8]| [&[prefix][..], rest].concat();
        b.insert(key(b'p', &i.to_be_bytes()), meta.clone());
        b.insert(key(b'B', &i.to_be_bytes()), reference.clone());
        let site_key =
            |prefix: u8, n: u64| [&[prefix][..], site.as_bytes(), &[0], &n.to_be_bytes()].concat();
        b.insert(site_key(b'S', i), &[][..]);
        b.insert(
            site_key(b'D', i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            &i.to_be_bytes()[..],
        );
        tree.apply_batch(b).expect("batch applies");
        if drain {
            thresher::store::reclaim_deferred();
        }
        if (i + 1) % 100_000 == 0 {
            println!(
                "{cache_mib}\t{}\t{}\t{:.1}\t{}",
                i + 1,
                rss_mb(),
                started.elapsed().as_secs_f64(),
                db.size_on_disk().unwrap_or(0) >> 20
            );
        }
    }
}
