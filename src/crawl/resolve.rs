//! Host names to addresses, for the whole crawl: one cache that the scheduler reads to key
//! per-server politeness (`crawl::servers`) and that the HTTP client connects through
//! ([`ClientResolver`]), so the address a request is limited by is the address it goes to.
//! `fetch.resolve` overrides a name's addresses (as curl's `--resolve`); other names go to the
//! system resolver, bounded by `fetch.connect_timeout`. Answers are kept for [`TTL`], failures
//! for [`FAILURE_TTL`], and the cache holds at most [`MAX_NAMES`] names (the oldest go first).

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::time::Instant;

use crate::config::FetchConfig;

/// How long a name's addresses are used before it is looked up again (the system resolver
/// does not say a record's TTL; five minutes is short enough to follow a move, long enough
/// that a site's requests do not each wait for a lookup).
pub const TTL: Duration = Duration::from_secs(300);
/// How long a failed lookup is remembered: an origin backing off after it asks again at most
/// this often, and the HTTP client fails its request at once meanwhile.
pub const FAILURE_TTL: Duration = Duration::from_secs(30);
/// Names the cache holds. The scheduler keeps each origin's address itself, so the cache
/// only needs the names requests are being made to now; past this, the oldest entries go.
pub const MAX_NAMES: usize = 16_384;

/// Why a name has no address.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("cannot resolve {host}: {message}")]
    Failed { host: String, message: String },
    #[error("cannot resolve {host}: no answer within {timeout:?}")]
    Timeout { host: String, timeout: Duration },
    #[error("cannot resolve {0}: no address")]
    NoAddress(String),
}

/// The addresses of a name, in the order the system (or the override) gave them: the first is
/// the one the HTTP client tries first, and the one per-server politeness keys by.
pub type Addresses = Arc<[IpAddr]>;

/// A lookup of a name's addresses (the system's, or a test's own).
pub type Lookup =
    Arc<dyn Fn(String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> + Send + Sync>;

pub struct Resolver {
    overrides: HashMap<String, Addresses>,
    timeout: Duration,
    lookup: Lookup,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    names: HashMap<String, (Result<Addresses, ResolveError>, Instant)>,
    /// Names in the order they were stored, to drop the oldest past `MAX_NAMES` (an entry
    /// stored again is in here twice; the stale one is skipped when it comes up).
    order: VecDeque<(String, Instant)>,
}

impl Resolver {
    /// `fetch.resolve`'s overrides over the system resolver, lookups bounded by
    /// `fetch.connect_timeout`.
    pub fn new(cfg: &FetchConfig) -> Resolver {
        let mut overrides: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (host, ip) in &cfg.resolve {
            overrides.entry(host.clone()).or_default().push(*ip);
        }
        Resolver {
            overrides: overrides
                .into_iter()
                .map(|(h, ips)| (h, ips.into()))
                .collect(),
            timeout: cfg.connect_timeout,
            lookup: Arc::new(|host| Box::pin(system_lookup(host))),
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The same, with `lookup` in place of the system resolver (tests: a name that fails
    /// without asking any DNS server).
    pub fn with_lookup(mut self, lookup: Lookup) -> Resolver {
        self.lookup = lookup;
        self
    }

    /// `host`'s addresses: an IP literal is its own, an override comes next, then the cache,
    /// then a lookup (its answer or failure cached).
    pub async fn lookup(&self, host: &str) -> Result<Addresses, ResolveError> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(Arc::from([ip]));
        }
        let host = host.to_ascii_lowercase();
        if let Some(ips) = self.overrides.get(&host) {
            return Ok(ips.clone());
        }
        let now = Instant::now();
        if let Some(hit) = self.cached(&host, now) {
            return hit;
        }
        let answer = match tokio::time::timeout(self.timeout, (self.lookup)(host.clone())).await {
            Err(_) => Err(ResolveError::Timeout {
                host: host.clone(),
                timeout: self.timeout,
            }),
            Ok(Err(e)) => Err(ResolveError::Failed {
                host: host.clone(),
                message: e.to_string(),
            }),
            Ok(Ok(ips)) if ips.is_empty() => Err(ResolveError::NoAddress(host.clone())),
            Ok(Ok(ips)) => Ok(Addresses::from(ips)),
        };
        let ttl = if answer.is_ok() { TTL } else { FAILURE_TTL };
        self.store(host, answer.clone(), Instant::now() + ttl);
        answer
    }

    fn cached(&self, host: &str, now: Instant) -> Option<Result<Addresses, ResolveError>> {
        let cache = self
            .cache
            .lock()
            .expect("invariant: the cache lock is never poisoned");
        match cache.names.get(host) {
            Some((answer, expires)) if *expires > now => Some(answer.clone()),
            _ => None,
        }
    }

    fn store(&self, host: String, answer: Result<Addresses, ResolveError>, expires: Instant) {
        let mut cache = self
            .cache
            .lock()
            .expect("invariant: the cache lock is never poisoned");
        cache.order.push_back((host.clone(), expires));
        cache.names.insert(host, (answer, expires));
        while cache.names.len() > MAX_NAMES {
            let Some((old, at)) = cache.order.pop_front() else {
                break;
            };
            // Only the entry this position stored: a name stored again since is newer.
            if cache.names.get(&old).is_some_and(|(_, e)| *e == at) {
                cache.names.remove(&old);
            }
        }
        // Stale positions (names stored again) are dropped once they are most of the queue.
        if cache.order.len() > 2 * MAX_NAMES {
            let Cache { names, order } = &mut *cache;
            order.retain(|(h, at)| names.get(h).is_some_and(|(_, e)| e == at));
        }
    }

    /// Names in the cache (tests).
    pub fn cached_names(&self) -> usize {
        self.cache
            .lock()
            .expect("invariant: the cache lock is never poisoned")
            .names
            .len()
    }
}

async fn system_lookup(host: String) -> std::io::Result<Vec<IpAddr>> {
    let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
    let mut ips: Vec<IpAddr> = Vec::new();
    for a in addrs {
        if !ips.contains(&a.ip()) {
            ips.push(a.ip());
        }
    }
    Ok(ips)
}

/// The HTTP client's resolver: the crawl's [`Resolver`], so requests connect to the address
/// the scheduler limited them by, and `fetch.resolve` applies to every request.
#[derive(Clone)]
pub struct ClientResolver(pub Arc<Resolver>);

impl reqwest::dns::Resolve for ClientResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = self.0.clone();
        Box::pin(async move {
            let ips = resolver.lookup(name.as_str()).await?;
            // Port 0: the client puts the URL's port (or the scheme's) in its place.
            let addrs: Vec<SocketAddr> = ips.iter().map(|&ip| SocketAddr::new(ip, 0)).collect();
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    fn counting(answer: Option<IpAddr>) -> (Lookup, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let lookup: Lookup = Arc::new(move |_host| {
            c.fetch_add(1, SeqCst);
            Box::pin(async move {
                match answer {
                    Some(ip) => Ok(vec![ip]),
                    None => Err(std::io::Error::other("no such host")),
                }
            })
        });
        (lookup, calls)
    }

    fn config(resolve: &[(&str, &str)]) -> FetchConfig {
        let mut cfg = crate::config::Config::default().fetch;
        cfg.resolve = resolve
            .iter()
            .map(|(h, ip)| (h.to_string(), ip.parse().unwrap()))
            .collect();
        cfg
    }

    #[tokio::test(start_paused = true)]
    async fn answers_are_cached_for_the_ttl_and_failures_for_less() {
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let (lookup, calls) = counting(Some(ip));
        let r = Resolver::new(&config(&[])).with_lookup(lookup);
        assert_eq!(&*r.lookup("Example.test").await.unwrap(), &[ip]);
        assert_eq!(&*r.lookup("example.test").await.unwrap(), &[ip]);
        assert_eq!(calls.load(SeqCst), 1, "the second lookup is the cache's");
        tokio::time::advance(TTL).await;
        r.lookup("example.test").await.unwrap();
        assert_eq!(calls.load(SeqCst), 2, "looked up again after the TTL");

        let (lookup, calls) = counting(None);
        let r = Resolver::new(&config(&[])).with_lookup(lookup);
        let e = r.lookup("gone.test").await.unwrap_err();
        assert!(e.to_string().contains("gone.test"), "{e}");
        assert_eq!(r.lookup("gone.test").await.unwrap_err(), e);
        assert_eq!(calls.load(SeqCst), 1, "a failure is cached too");
        tokio::time::advance(FAILURE_TTL).await;
        r.lookup("gone.test").await.unwrap_err();
        assert_eq!(calls.load(SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn overrides_and_ip_literals_need_no_lookup() {
        let (lookup, calls) = counting(None);
        let cfg = config(&[("a.test", "127.0.0.1"), ("a.test", "::1")]);
        let r = Resolver::new(&cfg).with_lookup(lookup);
        let a = r.lookup("a.test").await.unwrap();
        assert_eq!(a.len(), 2, "every override of a name, in order");
        assert_eq!(a[0], "127.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(
            &*r.lookup("[::1]").await.unwrap(),
            &["::1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            &*r.lookup("10.1.2.3").await.unwrap(),
            &["10.1.2.3".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(calls.load(SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lookup_that_never_answers_times_out() {
        let lookup: Lookup = Arc::new(|_| Box::pin(std::future::pending()));
        let mut cfg = config(&[]);
        cfg.connect_timeout = Duration::from_secs(3);
        let r = Resolver::new(&cfg).with_lookup(lookup);
        let e = r.lookup("slow.test").await.unwrap_err();
        assert!(matches!(e, ResolveError::Timeout { .. }), "{e}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_cache_is_bounded_and_drops_the_oldest() {
        let (lookup, calls) = counting(Some("192.0.2.1".parse().unwrap()));
        let r = Resolver::new(&config(&[])).with_lookup(lookup);
        for i in 0..MAX_NAMES + 10 {
            r.lookup(&format!("h{i}.test")).await.unwrap();
        }
        assert_eq!(r.cached_names(), MAX_NAMES);
        let before = calls.load(SeqCst);
        r.lookup(&format!("h{}.test", MAX_NAMES + 9)).await.unwrap();
        assert_eq!(calls.load(SeqCst), before, "the newest is kept");
        r.lookup("h0.test").await.unwrap();
        assert_eq!(calls.load(SeqCst), before + 1, "the oldest went");
    }
}
