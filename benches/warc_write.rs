//! The WARC record writer alone (docs/warc.md, "Figures"): the records `crawl --warc-out` makes
//! per page — digests, heads, a `response` and a `request` record each gzipped as its own member
//! (`crawl::archive::Archive::capture`) — timed on the crawl benchmark's pages, without the
//! crawl around them. Prints ms per page (median of the rounds) and bytes per page; the flate2
//! backend is the one this build links (`flate2` default miniz_oxide, or the `zlib-rs`
//! feature). `--raw` also times the bare compressors on the same bytes.
//!
//! It also times what the crawl does per page with the archive on, the store's copy of the HTML
//! included: lz4 for the store and a capture that gzips the body (before), against one raw
//! deflate kept by both and a capture that splices it in (`Body::Deflated`).
//!
//! cargo bench --bench warc_write -- [--pages 400 --page-kb 50 --rounds 9 --raw]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::time::SystemTime;

use clap::Parser;

use support::Universe;
use thresher::crawl::archive::{Archive, Body};
use thresher::crawl::fetch::Exchange;

#[derive(Debug, Parser)]
#[command(name = "warc-write-bench")]
struct Args {
    /// Pages (from origins of 200 pages each, as the crawl benchmark's).
    #[arg(long, default_value_t = 400)]
    pages: usize,
    /// Average page size in KB.
    #[arg(long, default_value_t = 50)]
    page_kb: usize,
    /// Rounds over all pages; the median round is reported.
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// Also time the bare gzip of each page at level 1, by flate2's streaming encoder.
    #[arg(long)]
    raw: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// This thread's CPU time in ms: the machine is shared, and CPU time is what another process
/// taking the cores does not add to (wall time did, ±50 % between rounds).
fn cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; no other precondition.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

/// A response's status line and headers, typical of the universe server's, in front of the
/// body in the timed block digests.
const HTTP_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
content-length: 51200\r\ndate: Thu, 26 Nov 2026 19:00:00 GMT\r\n\r\n";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args = Args::parse();
    let origins = args.pages.div_ceil(200);
    let universe = Universe::generate(origins, 200, args.page_kb * 1000);
    let pages: Vec<(url::Url, Vec<u8>)> = universe
        .sites
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.pages.iter().map(move |p| {
                let url = format!("http://site{i}.example{}", p.path);
                (url.parse().expect("URL"), p.html().to_vec())
            })
        })
        .take(args.pages)
        .collect();
    let html: usize = pages.iter().map(|(_, b)| b.len()).sum();
    let dir = tempfile::tempdir().expect("tmp");
    let toml = format!("[crawl]\nwarc_dir = {:?}\n", dir.path().join("warc"));
    let config = thresher::config::Config::from_toml_str(&toml, std::path::Path::new("bench.toml"))
        .expect("config");
    let (archive, _) = Archive::open(&config)
        .expect("archive")
        .expect("warc_dir set");
    let exchange = |len: usize| Exchange {
        started: SystemTime::now(),
        version: "HTTP/1.1",
        request_version: "HTTP/1.1",
        request_headers: vec![
            ("accept", "*/*".into()),
            ("user-agent", "thresher/0.1 (+bench)".into()),
            ("accept-encoding", "gzip,deflate,br".into()),
            ("host", "site0.example".into()),
        ],
        status: 200,
        reason: "OK".into(),
        headers: vec![
            ("content-type".into(), b"text/html; charset=utf-8".to_vec()),
            ("content-length".into(), len.to_string().into_bytes()),
            ("date".into(), b"Mon, 01 Jan 2024 00:00:00 GMT".to_vec()),
            ("etag".into(), b"\"0123456789abcdef\"".to_vec()),
        ],
        remote_ip: Some([127, 0, 0, 1].into()),
    };
    let exchanges: Vec<Exchange> = pages.iter().map(|(_, b)| exchange(b.len())).collect();

    let mut per_page = Vec::new();
    let mut out_bytes = 0;
    for _ in 0..args.rounds {
        let t = cpu_ms();
        let mut bytes = 0;
        for ((url, body), x) in pages.iter().zip(&exchanges) {
            let c = archive.capture(url, x, Body::Whole(body));
            bytes += c.bytes();
            std::hint::black_box(&c);
        }
        per_page.push((cpu_ms() - t) / pages.len() as f64);
        out_bytes = bytes;
    }
    println!(
        "capture (digests + response and request records, gzip level 1): {:.4} ms CPU/page median of {} rounds (min {:.4}, max {:.4}); {} pages, {:.1} KB HTML/page, {:.0} B written/page ({:.3} of the HTML)",
        median(per_page.clone()),
        args.rounds,
        per_page.iter().copied().fold(f64::MAX, f64::min),
        per_page.iter().copied().fold(0.0, f64::max),
        pages.len(),
        html as f64 / pages.len() as f64 / 1e3,
        out_bytes as f64 / pages.len() as f64,
        out_bytes as f64 / html as f64,
    );
    // What the crawl does per page with the archive on, the store's copy of the HTML included:
    // before, lz4 of the HTML for the store and a capture that gzips the body again; now, one
    // raw deflate kept by both and a capture that splices it in.
    let mut twice = Vec::new();
    let mut once = Vec::new();
    let mut once_bytes = 0;
    for _ in 0..args.rounds {
        let t = cpu_ms();
        for ((url, body), x) in pages.iter().zip(&exchanges) {
            std::hint::black_box(lz4_flex::compress_prepend_size(body));
            std::hint::black_box(archive.capture(url, x, Body::Whole(body)));
        }
        twice.push((cpu_ms() - t) / pages.len() as f64);
        let t = cpu_ms();
        let mut bytes = 0;
        for ((url, body), x) in pages.iter().zip(&exchanges) {
            let d = archive.deflate(body);
            let c = archive.capture(url, x, Body::Deflated(body, &d));
            bytes += c.bytes();
            std::hint::black_box((&c, &d));
        }
        once.push((cpu_ms() - t) / pages.len() as f64);
        once_bytes = bytes;
    }
    println!(
        "store + archive: lz4 of the HTML + capture {:.4} ms CPU/page; compressed once (deflate kept by both + spliced capture) {:.4} ms CPU/page (medians); {:.0} B written/page",
        median(twice),
        median(once),
        once_bytes as f64 / pages.len() as f64,
    );
    if args.raw {
        let mut gz_ms = Vec::new();
        let mut sha_ms = Vec::new();
        let mut pair_ms = Vec::new();
        for _ in 0..args.rounds {
            let t = cpu_ms();
            for (_, body) in &pages {
                let mut gz = flate2::write::GzEncoder::new(
                    Vec::with_capacity(body.len() / 3),
                    flate2::Compression::fast(),
                );
                gz.write_all(body).expect("to memory");
                std::hint::black_box(gz.finish().expect("to memory"));
            }
            gz_ms.push((cpu_ms() - t) / pages.len() as f64);
            let t = cpu_ms();
            for (_, body) in &pages {
                std::hint::black_box(thresher::warc::write::sha1_digest(&[body]));
            }
            sha_ms.push((cpu_ms() - t) / pages.len() as f64);
            let t = cpu_ms();
            for (_, body) in &pages {
                std::hint::black_box(thresher::warc::sha1x2::sha1_two(
                    &[body],
                    &[HTTP_HEAD, body],
                ));
            }
            pair_ms.push((cpu_ms() - t) / pages.len() as f64);
        }
        println!(
            "raw: gzip level 1 of the page {:.4} ms CPU/page; sha1 of the page {:.4} ms CPU/page; \
             the payload's and the block's sha1 side by side {:.4} ms CPU/page (medians)",
            median(gz_ms),
            median(sha_ms),
            median(pair_ms)
        );
    }
    drop(archive);
}
