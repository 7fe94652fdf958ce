//! The procedural universe on a `TestServer`: one origin per site (a port each on 127.0.0.1, or
//! one port across loopback addresses: `Addressing`), each answering every
//! target from `Universe` at request time (pages, robots.txt, sitemap index and chunks, 404s),
//! with the server's per-request log off and `Counters` instead: pages served, distinct pages
//! (a bitset, one bit per page), bytes, other requests, and the time of the last page request
//! and of the first one after a mark (resume timing).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Universe;
use crate::support::{Body, Endpoint, Reply, Site, TestServer};

/// What the universe's origins served, counted without a per-request log.
pub struct Counters {
    start: Instant,
    pages_per_origin: usize,
    /// Page requests answered with a page (200).
    pub pages: AtomicU64,
    /// Distinct pages served at least once.
    pub unique: AtomicU64,
    /// robots.txt and sitemap requests.
    pub meta: AtomicU64,
    /// Requests for anything the universe does not serve (404).
    pub missing: AtomicU64,
    /// Body bytes of pages served.
    pub bytes: AtomicU64,
    seen: Vec<AtomicU64>,
    /// Milliseconds from `start` to the last page request (+1, so 0 = none yet).
    last_page_ms: AtomicU64,
    armed: AtomicBool,
    /// Milliseconds from `start` to the first page request after `arm` (+1, 0 = none yet).
    first_after_arm_ms: AtomicU64,
    /// The same, per origin.
    origin_first_after_arm_ms: Vec<AtomicU64>,
    /// Distinct pages served, per origin.
    origin_unique: Vec<AtomicU64>,
}

impl Counters {
    fn new(origins: usize, pages: usize) -> Counters {
        let bits = origins * pages;
        Counters {
            start: Instant::now(),
            pages_per_origin: pages,
            pages: AtomicU64::new(0),
            unique: AtomicU64::new(0),
            meta: AtomicU64::new(0),
            missing: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            seen: (0..bits.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            last_page_ms: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            first_after_arm_ms: AtomicU64::new(0),
            origin_first_after_arm_ms: (0..origins).map(|_| AtomicU64::new(0)).collect(),
            origin_unique: (0..origins).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn page_served(&self, origin: usize, page: usize, len: usize) {
        let now = self.start.elapsed().as_millis() as u64 + 1;
        self.pages.fetch_add(1, Relaxed);
        self.bytes.fetch_add(len as u64, Relaxed);
        let bit = origin * self.pages_per_origin + page;
        let mask = 1u64 << (bit % 64);
        if self.seen[bit / 64].fetch_or(mask, Relaxed) & mask == 0 {
            self.unique.fetch_add(1, Relaxed);
            self.origin_unique[origin].fetch_add(1, Relaxed);
        }
        self.last_page_ms.fetch_max(now, Relaxed);
        if self.armed.load(Relaxed) {
            let _ = self
                .first_after_arm_ms
                .compare_exchange(0, now, Relaxed, Relaxed);
            let _ =
                self.origin_first_after_arm_ms[origin].compare_exchange(0, now, Relaxed, Relaxed);
        }
    }

    /// The instant the counters count from.
    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn pages(&self) -> u64 {
        self.pages.load(Relaxed)
    }

    /// When the last page request arrived (`None`: none yet).
    pub fn last_page_at(&self) -> Option<Instant> {
        match self.last_page_ms.load(Relaxed) {
            0 => None,
            ms => Some(self.start + Duration::from_millis(ms - 1)),
        }
    }

    /// From now on, note the first page request (see `first_after_arm`), overall and per
    /// origin.
    pub fn arm(&self) {
        self.first_after_arm_ms.store(0, Relaxed);
        for o in &self.origin_first_after_arm_ms {
            o.store(0, Relaxed);
        }
        self.armed.store(true, Relaxed);
    }

    /// When origin `i`'s first page request after `arm` arrived (`None`: none yet).
    #[allow(dead_code)] // used by the cluster takeover benchmark only
    pub fn origin_first_after_arm(&self, i: usize) -> Option<Instant> {
        match self.origin_first_after_arm_ms[i].load(Relaxed) {
            0 => None,
            ms => Some(self.start + Duration::from_millis(ms - 1)),
        }
    }

    /// Distinct pages origin `i` has served.
    #[allow(dead_code)] // not every benchmark including this module uses it
    pub fn origin_unique(&self, i: usize) -> u64 {
        self.origin_unique[i].load(Relaxed)
    }

    /// When the first page request after `arm` arrived (`None`: none yet).
    pub fn first_after_arm(&self) -> Option<Instant> {
        match self.first_after_arm_ms.load(Relaxed) {
            0 => None,
            ms => Some(self.start + Duration::from_millis(ms - 1)),
        }
    }
}

/// Where the universe's origins listen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    /// 127.0.0.1, a port per origin (`http://127.0.0.1:PORT/`).
    Ports,
    /// One port, an address per origin across 127.0.0.0/8 (`http://127.1.0.1:PORT/`, …: see
    /// [`loopback_ip`]), so every origin is a host of its own, as in a broad crawl.
    Loopback,
}

/// The loopback address of origin `i` with [`Addressing::Loopback`]: 127.1.0.1, 127.1.0.2, …,
/// 127.1.0.254, 127.1.1.1, … (no .0 or .255 in the last byte), 16,510,464 addresses in all.
pub fn loopback_ip(i: usize) -> std::net::IpAddr {
    const PER_B: usize = 254;
    let c = 1 + i % PER_B;
    let b = (i / PER_B) % 256;
    let a = 1 + i / (PER_B * 256);
    assert!(a <= 255, "origin {i} beyond 127.0.0.0/8");
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, a as u8, b as u8, c as u8))
}

/// Serve `universe` on a server of its own (a runtime with `threads` workers): origin `i` of
/// the server is site `i` of the universe.
pub fn serve(universe: Arc<Universe>, threads: usize) -> (TestServer, Arc<Counters>) {
    serve_at(universe, threads, Addressing::Ports)
}

/// [`serve`] with the origins at `addressing`.
pub fn serve_at(
    universe: Arc<Universe>,
    threads: usize,
    addressing: Addressing,
) -> (TestServer, Arc<Counters>) {
    serve_with(universe, threads, Duration::ZERO, addressing)
}

/// [`serve`], each reply held back `latency` before its status line (a latency-bound universe:
/// what a far-away web costs a crawler, without the CPU to match).
#[allow(dead_code)] // used by the cluster benchmark only
pub fn serve_with_latency(
    universe: Arc<Universe>,
    threads: usize,
    latency: Duration,
) -> (TestServer, Arc<Counters>) {
    serve_with(universe, threads, latency, Addressing::Ports)
}

fn serve_with(
    universe: Arc<Universe>,
    threads: usize,
    latency: Duration,
    addressing: Addressing,
) -> (TestServer, Arc<Counters>) {
    let spec = universe.spec().clone();
    let server = match addressing {
        Addressing::Ports => TestServer::background(spec.origins, threads),
        Addressing::Loopback => {
            let mut server = TestServer::background(0, threads);
            let ips: Vec<_> = (0..spec.origins).map(loopback_ip).collect();
            server.add_origins_on_one_port(&ips);
            server
        }
    };
    let counters = Arc::new(Counters::new(spec.origins, spec.pages));
    for (i, origin) in server.origins().iter().enumerate() {
        origin.set_logging(false);
        let (u, c, base) = (universe.clone(), counters.clone(), origin.base());
        let endpoint = Endpoint::dynamic(move |target| {
            let reply = respond(&u, &c, i, &base, target);
            if latency.is_zero() {
                reply
            } else {
                Endpoint::slow_first_byte(latency, reply)
            }
        });
        origin.serve(Site::new().prefix("/", endpoint));
    }
    (server, counters)
}

/// A latency-bound universe served, with what a crawl of it needs: its seeds file and a bench
/// config in a directory of its own (the cluster benchmarks).
#[allow(dead_code)] // used by the cluster benchmarks only
pub struct Served {
    pub server: TestServer,
    pub counters: Arc<Counters>,
    pub dir: tempfile::TempDir,
    pub seeds: Vec<String>,
    pub seeds_file: std::path::PathBuf,
    pub config: std::path::PathBuf,
}

/// Serve `origins` × `pages` pages of ~`page_kb` KB (universe seed `seed`), each reply after
/// `latency_ms`.
#[allow(dead_code)] // used by the cluster benchmarks only
pub fn served(origins: usize, pages: usize, page_kb: usize, latency_ms: u64, seed: u64) -> Served {
    let universe = Arc::new(Universe::new(super::Spec {
        origins,
        pages,
        page_bytes: page_kb * 1000,
        seed,
    }));
    let (server, counters) = serve_with_latency(universe, 2, Duration::from_millis(latency_ms));
    let dir = tempfile::tempdir().expect("tmp");
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let seeds_file = crate::support::write_seeds(dir.path(), &seeds);
    let config =
        crate::support::write_config(dir.path(), &crate::support::bench_config(pages, Some(true)));
    Served {
        server,
        counters,
        dir,
        seeds,
        seeds_file,
        config,
    }
}

/// `thresher crawl` of a served universe, no crawl delay, `concurrency` requests in flight, its
/// data and output under `dir` (the caller adds its flags, output and spawns it).
#[allow(dead_code)] // used by the cluster benchmarks only
pub fn crawl_command(
    seeds_file: &std::path::Path,
    config: &std::path::Path,
    dir: &std::path::Path,
    concurrency: usize,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_thresher"));
    cmd.args(["crawl", "--quiet", "--delay", "0ms"])
        .args(["--concurrency", &concurrency.to_string()])
        .arg("--seeds")
        .arg(seeds_file)
        .arg("--config")
        .arg(config)
        .arg("--data")
        .arg(dir.join("data"))
        .arg("--out")
        .arg(dir.join("out"));
    cmd
}

/// The reply to `target` on origin `i` (whose base URL is `base`).
fn respond(u: &Universe, c: &Counters, i: usize, base: &str, target: &str) -> Endpoint {
    let meta = |body: Option<String>, xml: bool| {
        c.meta.fetch_add(1, Relaxed);
        match (body, xml) {
            (Some(b), true) => Endpoint::typed("application/xml", b),
            (Some(b), false) => Endpoint::text(b),
            (None, _) => Endpoint::not_found(),
        }
    };
    match target {
        "/robots.txt" => return meta(Some(u.robots(base)), false),
        "/sitemap.xml" => return meta(Some(u.sitemap_index(base)), true),
        _ => {}
    }
    if let Some(k) = target
        .strip_prefix("/sitemap-")
        .and_then(|t| t.strip_suffix(".xml"))
    {
        let chunk = k.parse().ok().filter(|_| !k.starts_with('+'));
        return meta(chunk.and_then(|k| u.sitemap_chunk(i, base, k)), true);
    }
    match u.page_number(i, target) {
        Some(page) => {
            let html = super::markup::render(u, i, page);
            c.page_served(i, page, html.len());
            // Validators as a static server sends them: the test server answers a matching
            // conditional GET with a 304 (a recrawl's figures, docs/recrawl.md).
            let etag = format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(html.as_bytes()));
            Reply::new(200, "text/html; charset=utf-8", Body::full(html))
                .header("etag", &etag)
                .header("last-modified", "Mon, 01 Jan 2024 00:00:00 GMT")
                .into()
        }
        None => {
            c.missing.fetch_add(1, Relaxed);
            Endpoint::not_found()
        }
    }
}
