//! A stand-in crawler (reqwest + thresher's parser, breadth first, one request at a time per
//! origin, a per-origin delay counted from the end of the previous response, as Heritrix does,
//! a global concurrency cap, scope = the seeds' origins). It checks
//! the fixtures and the benchmark plumbing before the real crawler exists, and gives the
//! benchmark a reference figure (fetch + parse, nothing stored). No robots.txt, no retries.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;
use url::Url;

#[derive(Clone, Debug)]
pub struct StandinConfig {
    pub concurrency: usize,
    /// Wait between the end of one response and the next request to the same origin.
    pub delay: Duration,
    /// 0 = unlimited.
    pub max_pages: usize,
    pub user_agent: String,
}

impl Default for StandinConfig {
    fn default() -> Self {
        StandinConfig {
            concurrency: 8,
            delay: Duration::ZERO,
            max_pages: 0,
            user_agent: "thresher-standin/0".into(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct StandinReport {
    pub fetched: usize,
    pub bytes: u64,
    pub errors: usize,
}

type Origin = (String, String, u16);

/// A finished fetch: its origin, and the body size and links (or a failure).
type Fetched = (Origin, Result<(u64, Vec<Url>), ()>);

fn origin_of(u: &Url) -> Option<Origin> {
    Some((
        u.scheme().to_string(),
        u.host_str()?.to_string(),
        u.port_or_known_default()?,
    ))
}

struct OriginQueue {
    queue: VecDeque<Url>,
    busy: bool,
    next_start: Instant,
}

/// Crawl from `seeds` until the frontier is empty (or `max_pages`).
pub async fn crawl(seeds: Vec<Url>, cfg: StandinConfig) -> StandinReport {
    let client = super::client();
    let mut origins: HashMap<Origin, OriginQueue> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    for s in seeds {
        if let Some(o) = origin_of(&s) {
            if seen.insert(s.to_string()) {
                origins
                    .entry(o)
                    .or_insert_with(|| OriginQueue {
                        queue: VecDeque::new(),
                        busy: false,
                        next_start: Instant::now(),
                    })
                    .queue
                    .push_back(s);
            }
        }
    }
    let mut report = StandinReport::default();
    let mut tasks: JoinSet<Fetched> = JoinSet::new();
    let mut started = 0usize;
    loop {
        // Start every request that politeness and the caps allow.
        let now = Instant::now();
        let mut next_wake: Option<Instant> = None;
        for (key, oq) in origins.iter_mut() {
            if tasks.len() >= cfg.concurrency || (cfg.max_pages > 0 && started >= cfg.max_pages) {
                break;
            }
            if oq.busy || oq.queue.is_empty() {
                continue;
            }
            if oq.next_start > now {
                next_wake = Some(next_wake.map_or(oq.next_start, |w| w.min(oq.next_start)));
                continue;
            }
            let url = oq.queue.pop_front().expect("non-empty queue");
            oq.busy = true;
            started += 1;
            let (client, key, ua) = (client.clone(), key.clone(), cfg.user_agent.clone());
            tasks.spawn(async move { (key, fetch(&client, url, &ua).await) });
        }
        if tasks.is_empty() && next_wake.is_none() {
            break;
        }
        let joined = match next_wake {
            Some(at) if !tasks.is_empty() => tokio::select! {
                j = tasks.join_next() => j,
                _ = tokio::time::sleep_until(at) => None,
            },
            Some(at) => {
                tokio::time::sleep_until(at).await;
                None
            }
            None => tasks.join_next().await,
        };
        let Some(joined) = joined else { continue };
        let (key, result) = joined.expect("stand-in fetch task panicked");
        if let Some(oq) = origins.get_mut(&key) {
            oq.busy = false;
            oq.next_start = Instant::now() + cfg.delay;
        }
        match result {
            Err(()) => report.errors += 1,
            Ok((bytes, links)) => {
                report.fetched += 1;
                report.bytes += bytes;
                for link in links {
                    let Some(o) = origin_of(&link) else { continue };
                    let Some(oq) = origins.get_mut(&o) else {
                        continue; // out of scope: not a seed origin
                    };
                    if seen.insert(link.to_string()) {
                        oq.queue.push_back(link);
                    }
                }
            }
        }
    }
    report
}

async fn fetch(client: &reqwest::Client, url: Url, ua: &str) -> Result<(u64, Vec<Url>), ()> {
    let resp = client
        .get(url.clone())
        .header("user-agent", ua)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|_| ())?;
    if !resp.status().is_success() {
        return Err(());
    }
    let final_url = resp.url().clone();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = resp.bytes().await.map_err(|_| ())?;
    let bytes = body.len() as u64;
    if !ctype
        .as_deref()
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/html"))
    {
        return Ok((bytes, Vec::new()));
    }
    let links = tokio::task::spawn_blocking(move || {
        let parsed = thresher::dom::parse_bytes(&body, ctype.as_deref());
        if parsed.robots.nofollow {
            return Vec::new();
        }
        let base = parsed
            .base_href
            .as_deref()
            .and_then(|b| final_url.join(b).ok())
            .unwrap_or(final_url);
        parsed
            .links
            .iter()
            .filter(|l| !l.nofollow)
            .filter_map(|l| base.join(l.href.trim()).ok())
            .filter(|u| u.scheme() == "http" || u.scheme() == "https")
            .map(|mut u| {
                u.set_fragment(None);
                u
            })
            .collect()
    })
    .await
    .map_err(|_| ())?;
    Ok((bytes, links))
}
