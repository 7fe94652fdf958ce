//! `TestServer`: origins on 127.0.0.1:0 (one port = one origin; `start_on` binds other loopback
//! addresses such as 127.0.0.2 for a second *host*; `add_origins_on_one_port` puts many hosts at
//! loopback addresses on one shared port), each serving a `Site` and logging every
//! request server-side: arrival time (tokio `Instant`, so paused time applies, and wall clock),
//! method, target, Host, User-Agent, status, connection. From the log: counts per target, gaps
//! between request starts, peak in-flight requests and connections. `Origin::set_logging(false)`
//! keeps only the counters (a million-request benchmark). Dropping the server stops every origin
//! and closes their connections.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use hyper::body::Incoming;
use hyper::header::{HOST, USER_AGENT};
use hyper::{HeaderMap, Request};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::conn::{accept_loop, InFlight, Listening};
use super::endpoint::{Endpoint, Site};

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Hit {
    /// Arrival order across the whole `TestServer`.
    pub seq: u64,
    /// Arrival (after the request head was read). A tokio `Instant`: under `time::pause()` it
    /// is virtual time, like the crawler's own clock.
    pub at: Instant,
    pub wall: SystemTime,
    pub method: String,
    /// Path and query exactly as requested.
    pub target: String,
    /// The Host header (e.g. `127.0.0.1:40123`, or `localhost:40123` for an out-of-scope alias).
    pub host: Option<String>,
    pub user_agent: Option<String>,
    pub headers: HeaderMap,
    /// `None` for a tarpit (no status was ever sent).
    pub status: Option<u16>,
    /// Which TCP connection (per origin, from 0) carried the request.
    pub conn: u64,
    /// The server handed over the response's last byte (false: tarpit, reset, client gone, or
    /// still streaming).
    pub completed: bool,
}

impl Hit {
    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// State shared by every origin of one server.
pub(super) struct Shared {
    pub(super) token: CancellationToken,
    /// Bumped on every hit, so waiters wake up.
    changed: watch::Sender<u64>,
    seq: AtomicU64,
}

struct Route {
    endpoint: Endpoint,
    hits: AtomicUsize,
}

#[derive(Default)]
struct Routes {
    exact: HashMap<String, Arc<Route>>,
    prefixes: Vec<(String, Arc<Route>)>,
}

#[derive(Default)]
struct Log {
    hits: Vec<Hit>,
    counts: HashMap<String, usize>,
}

pub(super) struct OriginInner {
    addr: SocketAddr,
    pub(super) shared: Arc<Shared>,
    routes: RwLock<Routes>,
    fallback: RwLock<Endpoint>,
    latency: Mutex<Duration>,
    log: Mutex<Log>,
    /// `false`: requests are counted (`unlogged`), not logged.
    logging: AtomicBool,
    unlogged: AtomicUsize,
    pub(super) in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    connections: AtomicU64,
    bytes_served: AtomicU64,
}

impl OriginInner {
    /// The endpoint for `target` and how many earlier hits its route had.
    pub(super) fn lookup(&self, target: &str) -> (Endpoint, usize) {
        let routes = self.routes.read().expect("routes lock");
        let path = target.split('?').next().unwrap_or(target);
        let route = routes
            .exact
            .get(target)
            .or_else(|| routes.exact.get(path))
            .or_else(|| {
                routes
                    .prefixes
                    .iter()
                    .filter(|(p, _)| target.starts_with(p.as_str()))
                    .max_by_key(|(p, _)| p.len())
                    .map(|(_, r)| r)
            });
        match route {
            Some(r) => (r.endpoint.clone(), r.hits.fetch_add(1, Ordering::SeqCst)),
            None => (self.fallback.read().expect("fallback lock").clone(), 0),
        }
    }

    /// Log a request's arrival and count it in flight until the returned guard drops.
    pub(super) fn record(
        self: &Arc<Self>,
        req: &Request<Incoming>,
        target: String,
        conn: u64,
        status: Option<u16>,
    ) -> InFlight {
        let header = |name| {
            req.headers()
                .get(name)
                .map(|v: &hyper::header::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into())
        };
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if !self.logging.load(Ordering::Relaxed) {
            self.unlogged.fetch_add(1, Ordering::Relaxed);
            // No log entry: `completed` finds no hit at this index.
            return InFlight(self.clone(), usize::MAX);
        }
        let index = {
            let mut log = self.log.lock().expect("log lock");
            *log.counts.entry(target.clone()).or_default() += 1;
            let hit = Hit {
                seq: self.shared.seq.fetch_add(1, Ordering::SeqCst),
                at: Instant::now(),
                wall: SystemTime::now(),
                method: req.method().to_string(),
                target,
                host: header(HOST),
                user_agent: header(USER_AGENT),
                headers: req.headers().clone(),
                status,
                conn,
                completed: false,
            };
            log.hits.push(hit);
            log.hits.len() - 1
        };
        self.shared.changed.send_modify(|n| *n += 1);
        InFlight(self.clone(), index)
    }

    pub(super) fn completed(&self, index: usize) {
        if let Some(hit) = self.log.lock().expect("log lock").hits.get_mut(index) {
            hit.completed = true;
        }
    }

    pub(super) fn latency(&self) -> Duration {
        *self.latency.lock().expect("latency lock")
    }

    pub(super) fn new_connection(&self) -> u64 {
        self.connections.fetch_add(1, Ordering::SeqCst)
    }

    pub(super) fn served(&self, n: usize) {
        self.bytes_served.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// One origin (scheme http, 127.0.0.1 or another loopback address, its own port). Cheap to clone.
#[derive(Clone)]
pub struct Origin {
    inner: Arc<OriginInner>,
}

impl Origin {
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    pub fn port(&self) -> u16 {
        self.inner.addr.port()
    }

    /// `127.0.0.1:PORT`: the Host header a client sends for `base()`.
    pub fn host_port(&self) -> String {
        self.inner.addr.to_string()
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// `http://127.0.0.1:PORT{target}`; `target` starts with `/`.
    pub fn url(&self, target: &str) -> String {
        debug_assert!(
            target.starts_with('/'),
            "target must start with /: {target}"
        );
        format!("http://{}{target}", self.inner.addr)
    }

    /// The same socket under another host name, e.g. `url_as("localhost", "/x")`: a different
    /// host (out of scope for a crawl seeded with `url`) that still reaches this origin, so a
    /// scope leak shows up in the log (with that Host header). `localhost` reaches only
    /// origins on 127.0.0.1.
    pub fn url_as(&self, host: &str, target: &str) -> String {
        format!("http://{host}:{}{target}", self.port())
    }

    /// Serve `site` (replacing what was mounted before; hit counts of routes restart).
    pub fn serve(&self, site: Site) {
        let mut routes = self.inner.routes.write().expect("routes lock");
        *routes = Routes::default();
        Self::add(&mut routes, site);
    }

    /// Add `site`'s routes to what is served.
    pub fn extend(&self, site: Site) {
        Self::add(&mut self.inner.routes.write().expect("routes lock"), site);
    }

    /// Serve `endpoint` at `target` (exact path, or path and query).
    pub fn mount(&self, target: &str, endpoint: impl Into<Endpoint>) {
        self.extend(Site::new().route(target, endpoint));
    }

    fn add(routes: &mut Routes, site: Site) {
        let route = |endpoint| {
            Arc::new(Route {
                endpoint,
                hits: AtomicUsize::new(0),
            })
        };
        for (target, endpoint) in site.routes {
            routes.exact.insert(target, route(endpoint));
        }
        for (prefix, endpoint) in site.prefixes {
            routes.prefixes.retain(|(p, _)| *p != prefix);
            routes.prefixes.push((prefix, route(endpoint)));
        }
    }

    /// `false`: count requests only (`total_hits`, in-flight, bytes), keep no per-request log,
    /// so a long benchmark's server stays small; the log-based queries then see no requests.
    /// Default `true`.
    pub fn set_logging(&self, on: bool) {
        self.inner.logging.store(on, Ordering::Relaxed);
    }

    /// What unmatched targets get (default: a 404 page).
    pub fn set_fallback(&self, endpoint: Endpoint) {
        *self.inner.fallback.write().expect("fallback lock") = endpoint;
    }

    /// Added before every response of this origin (a slow origin). Default zero.
    pub fn set_latency(&self, latency: Duration) {
        *self.inner.latency.lock().expect("latency lock") = latency;
    }

    /// Requests for exactly this target (path and query as sent).
    pub fn hits(&self, target: &str) -> usize {
        let log = self.inner.log.lock().expect("log lock");
        log.counts.get(target).copied().unwrap_or(0)
    }

    /// Requests for any of these spellings of one resource (e.g. `/~u`, `/%7Eu`, `/%7eu`).
    pub fn hits_any(&self, targets: &[&str]) -> usize {
        targets.iter().map(|t| self.hits(t)).sum()
    }

    /// Requests whose path (query ignored) starts with `prefix`.
    pub fn hits_prefix(&self, prefix: &str) -> usize {
        let log = self.inner.log.lock().expect("log lock");
        log.counts
            .iter()
            .filter(|(t, _)| t.starts_with(prefix))
            .map(|(_, n)| n)
            .sum()
    }

    /// Count per target.
    pub fn hit_counts(&self) -> BTreeMap<String, usize> {
        let log = self.inner.log.lock().expect("log lock");
        log.counts.iter().map(|(t, n)| (t.clone(), *n)).collect()
    }

    /// Targets requested more than once, with their counts.
    pub fn duplicates(&self) -> BTreeMap<String, usize> {
        let mut counts = self.hit_counts();
        counts.retain(|_, n| *n > 1);
        counts
    }

    /// Every request so far, logged or (with `set_logging(false)`) only counted.
    pub fn total_hits(&self) -> usize {
        self.inner.log.lock().expect("log lock").hits.len()
            + self.inner.unlogged.load(Ordering::Relaxed)
    }

    /// Every request so far, in arrival order.
    pub fn log(&self) -> Vec<Hit> {
        self.inner.log.lock().expect("log lock").hits.clone()
    }

    /// The requests for exactly this target, in arrival order.
    pub fn requests_to(&self, target: &str) -> Vec<Hit> {
        let log = self.inner.log.lock().expect("log lock");
        log.hits
            .iter()
            .filter(|h| h.target == target)
            .cloned()
            .collect()
    }

    /// Gaps between consecutive request starts (arrival order).
    pub fn gaps(&self) -> Vec<Duration> {
        self.gaps_where(|_| true)
    }

    /// Gaps between consecutive starts of the requests that satisfy `keep` (e.g. all but
    /// `/robots.txt`).
    pub fn gaps_where(&self, keep: impl Fn(&Hit) -> bool) -> Vec<Duration> {
        let log = self.inner.log.lock().expect("log lock");
        let times: Vec<Instant> = log.hits.iter().filter(|h| keep(h)).map(|h| h.at).collect();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The smallest gap between two consecutive request starts (`None` with < 2 requests).
    pub fn min_gap(&self) -> Option<Duration> {
        self.gaps().into_iter().min()
    }

    /// How many consecutive pairs of requests started closer than `delay`.
    pub fn pairs_closer_than(&self, delay: Duration) -> usize {
        self.gaps().into_iter().filter(|g| *g < delay).count()
    }

    /// Targets with a request whose response never completed (tarpits, resets, and requests
    /// the client abandoned — e.g. in flight when a crawl was killed: a resumed crawl may
    /// fetch those again).
    pub fn incomplete(&self) -> Vec<String> {
        let log = self.inner.log.lock().expect("log lock");
        log.hits
            .iter()
            .filter(|h| !h.completed)
            .map(|h| h.target.clone())
            .collect()
    }

    /// Requests in flight right now.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// The most requests ever in flight at once on this origin (a polite crawler keeps it at 1).
    pub fn max_in_flight(&self) -> usize {
        self.inner.max_in_flight.load(Ordering::SeqCst)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.inner.connections.load(Ordering::SeqCst)
    }

    /// Response body bytes handed to the connections (before any gzip a fixture applied itself).
    pub fn bytes_served(&self) -> u64 {
        self.inner.bytes_served.load(Ordering::Relaxed)
    }

    /// Wait until `done(self)` holds, re-checking after every request to the server; `false`
    /// when `timeout` passes first.
    pub async fn wait_until(&self, timeout: Duration, done: impl Fn(&Origin) -> bool) -> bool {
        wait(&self.inner.shared, timeout, || done(self)).await
    }
}

async fn wait(shared: &Shared, timeout: Duration, done: impl Fn() -> bool) -> bool {
    let mut changed = shared.changed.subscribe();
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        match tokio::time::timeout_at(deadline, changed.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return done(),
        }
    }
}

/// A set of origins. Dropping it stops them all (and a background runtime, if it owns one).
pub struct TestServer {
    origins: Vec<Origin>,
    shared: Arc<Shared>,
    handle: tokio::runtime::Handle,
    /// `Some` when the server runs on its own runtime (`background`).
    runtime: Option<tokio::runtime::Runtime>,
}

impl TestServer {
    /// `n` origins on 127.0.0.1, served by tasks on the current tokio runtime (so
    /// `tokio::time::pause()` in the test applies to the server's delays and timestamps too).
    /// Panics outside a runtime: use `background` there.
    pub fn start(n: usize) -> TestServer {
        let handle = tokio::runtime::Handle::try_current()
            .expect("TestServer::start needs a tokio runtime; use TestServer::background");
        let mut server = TestServer::empty(handle, None);
        for _ in 0..n {
            server.add_origin("127.0.0.1");
        }
        server
    }

    /// One origin per address, e.g. `["127.0.0.1", "127.0.0.2"]` for two different hosts.
    pub fn start_on(ips: &[&str]) -> TestServer {
        let mut server = TestServer::start(0);
        for ip in ips {
            server.add_origin(ip);
        }
        server
    }

    /// `n` origins on 127.0.0.1 served by a runtime of its own with `threads` workers: for sync
    /// code, for a test whose own runtime blocks (e.g. waiting on a child process), and for the
    /// benchmark (which runs the crawler as another process).
    pub fn background(n: usize, threads: usize) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("test-server")
            .enable_all()
            .build()
            .expect("build the test server's runtime");
        let mut server = TestServer::empty(runtime.handle().clone(), None);
        server.runtime = Some(runtime);
        for _ in 0..n {
            server.add_origin("127.0.0.1");
        }
        server
    }

    fn empty(handle: tokio::runtime::Handle, runtime: Option<tokio::runtime::Runtime>) -> Self {
        TestServer {
            origins: Vec::new(),
            shared: Arc::new(Shared {
                token: CancellationToken::new(),
                changed: watch::Sender::new(0),
                seq: AtomicU64::new(0),
            }),
            handle,
            runtime,
        }
    }

    /// Start one more origin on `ip` (port chosen by the OS).
    pub fn add_origin(&mut self, ip: &str) -> Origin {
        let ip: IpAddr = ip.parse().expect("an IP address");
        let std_listener =
            std::net::TcpListener::bind((ip, 0)).expect("bind a test origin on a free port");
        let addr = std_listener.local_addr().expect("listener address");
        let inner = self.new_origin(addr);
        self.listen(std_listener, Listening::One(inner.clone()));
        let origin = Origin { inner };
        self.origins.push(origin.clone());
        origin
    }

    /// Start an origin at each of `ips` (loopback addresses, e.g. 127.1.0.1, 127.1.0.2, …),
    /// all on ONE port chosen by the OS: a single listener on 0.0.0.0 hands each connection to
    /// the origin at the address it was made to, and closes connections from outside loopback.
    /// Many hosts without a socket each (on Linux all of 127.0.0.0/8 is local; binding each
    /// address would take a descriptor per origin). Returns the new origins, in `ips` order.
    pub fn add_origins_on_one_port(&mut self, ips: &[IpAddr]) -> Vec<Origin> {
        assert!(
            ips.iter().all(IpAddr::is_loopback),
            "origins on one port must be at loopback addresses"
        );
        let std_listener = std::net::TcpListener::bind((std::net::Ipv4Addr::UNSPECIFIED, 0))
            .expect("bind the shared port");
        let port = std_listener.local_addr().expect("listener address").port();
        let origins: Vec<Origin> = ips
            .iter()
            .map(|&ip| Origin {
                inner: self.new_origin(SocketAddr::new(ip, port)),
            })
            .collect();
        let by_address = origins
            .iter()
            .map(|o| (o.addr().ip(), o.inner.clone()))
            .collect();
        self.listen(std_listener, Listening::ByAddress(by_address));
        self.origins.extend(origins.iter().cloned());
        origins
    }

    /// Serve `std_listener`'s connections on the server's runtime.
    fn listen(&self, std_listener: std::net::TcpListener, to: Listening) {
        std_listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let _enter = self.handle.enter();
        let listener =
            tokio::net::TcpListener::from_std(std_listener).expect("register the listener");
        self.handle
            .spawn(accept_loop(listener, self.shared.token.clone(), to));
    }

    fn new_origin(&self, addr: SocketAddr) -> Arc<OriginInner> {
        Arc::new(OriginInner {
            addr,
            shared: self.shared.clone(),
            routes: RwLock::new(Routes::default()),
            fallback: RwLock::new(Endpoint::not_found()),
            latency: Mutex::new(Duration::ZERO),
            log: Mutex::new(Log::default()),
            logging: AtomicBool::new(true),
            unlogged: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            connections: AtomicU64::new(0),
            bytes_served: AtomicU64::new(0),
        })
    }

    pub fn origin(&self, i: usize) -> &Origin {
        &self.origins[i]
    }

    pub fn origins(&self) -> &[Origin] {
        &self.origins
    }

    /// The origin serving `url`'s address (any host name that reaches it counts).
    pub fn origin_for(&self, url: &str) -> Option<&Origin> {
        let u = url::Url::parse(url).ok()?;
        let port = u.port_or_known_default()?;
        let host = u.host_str()?;
        self.origins.iter().find(|o| {
            o.port() == port
                && (host == "localhost"
                    || host.trim_matches(['[', ']']) == o.addr().ip().to_string())
        })
    }

    /// Requests for `url` exactly: its origin (by address), its target, and its host name (the
    /// Host header), so `origin.url_as("localhost", …)` is told apart from `origin.url(…)`.
    pub fn hits_url(&self, url: &str) -> usize {
        let Ok(u) = url::Url::parse(url) else {
            return 0;
        };
        let Some(origin) = self.origin_for(url) else {
            return 0;
        };
        let target = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        };
        let host = match u.port() {
            Some(p) => format!("{}:{p}", u.host_str().unwrap_or("")),
            None => u.host_str().unwrap_or("").to_string(),
        };
        origin
            .requests_to(&target)
            .iter()
            .filter(|h| {
                h.host
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case(&host))
            })
            .count()
    }

    pub fn total_hits(&self) -> usize {
        self.origins.iter().map(Origin::total_hits).sum()
    }

    /// Wait until `done(self)` holds, re-checking after every request; `false` on timeout.
    pub async fn wait_until(&self, timeout: Duration, done: impl Fn(&TestServer) -> bool) -> bool {
        wait(&self.shared, timeout, || done(self)).await
    }

    /// Stop accepting and close every connection now (also done on drop).
    pub fn stop(&self) {
        self.shared.token.cancel();
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shared.token.cancel();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
