//! The figures of a running crawl: `CrawlStats`, atomics and small maps the scheduler, the
//! workers and the learner bump (cheap on the hot path), per-host `HostStats`, and `OriginWait`,
//! why an origin is not being fetched right now. `progress` renders them, the live status
//! snapshot and the run's summary read them; nothing here draws or prints.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::store::ErrorKind;

/// Per-host figures for the "busiest hosts" lines.
#[derive(Clone, Debug, Default)]
pub struct HostStats {
    pub fetched: u64,
    /// Body bytes received.
    pub bytes: u64,
    pub queued: u64,
    /// URLs it keeps beyond its page budget (`crawl.max_pages_per_host`), not counted in
    /// `queued`.
    pub over_budget: u64,
    pub errors: u64,
    /// Transient failures queued again.
    pub retries: u64,
    pub clusters: u64,
    pub cleaned: u64,
}

/// Why an origin is not being fetched right now (robots.txt unreachable, backing off after a
/// 429, set aside): shown by progress, `status` and the summary, so a crawl never waits silently.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginWait {
    /// The origin (`http://host:port`).
    pub origin: String,
    /// What it waits for, e.g. `robots.txt unreachable: connection refused; retry 2/3`.
    pub reason: String,
    /// When it is tried again (Unix ms); `None`: set aside for the rest of this run.
    pub until_ms: Option<u64>,
    /// URLs it keeps queued.
    pub queued: u64,
}

impl OriginWait {
    /// `http://a:1 — robots.txt unreachable: …; retry 2/3 at 12:04:31 UTC (1 URL queued)`.
    pub fn line(&self) -> String {
        let when = match self.until_ms {
            Some(ms) => format!(" at {}", clock(ms)),
            None => String::new(),
        };
        let urls = if self.queued == 1 { "URL" } else { "URLs" };
        format!(
            "{} — {}{when} ({} {urls} queued)",
            self.origin, self.reason, self.queued
        )
    }
}

/// `12:04:31 UTC` for a Unix-ms time (the date too when it is not today).
pub fn clock(ms: u64) -> String {
    let secs = ms / 1000;
    let today = crate::store::now_ms() / 1000 / 86_400;
    let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if secs / 86_400 == today {
        format!("{h:02}:{m:02}:{s:02} UTC")
    } else {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(secs);
        humantime::format_rfc3339_seconds(t).to_string()
    }
}

/// The hosts a run left over their page budget (`crawl.max_pages_per_host`), with the URLs each
/// keeps queued: most first, then by name. The summary shows the first few and counts the rest
/// ([`OverBudget::top`]); the store keeps them all for `status` and the next run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverBudget {
    /// The run's `crawl.max_pages_per_host`.
    pub budget: u64,
    pub hosts: Vec<(String, u64)>,
}

impl OverBudget {
    /// From per-host counts, in the order the summary shows them.
    pub fn new(budget: u64, hosts: impl IntoIterator<Item = (String, u64)>) -> OverBudget {
        let mut hosts: Vec<(String, u64)> = hosts.into_iter().collect();
        hosts.sort_by(|a, b| (b.1, &a.0).cmp(&(a.1, &b.0)));
        OverBudget { budget, hosts }
    }

    /// URLs over budget, across hosts.
    pub fn urls(&self) -> u64 {
        self.hosts.iter().map(|(_, n)| n).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// The `n` hosts with the most URLs over budget, and how many hosts are left out.
    pub fn top(&self, n: usize) -> (&[(String, u64)], usize) {
        let shown = &self.hosts[..n.min(self.hosts.len())];
        (shown, self.hosts.len() - shown.len())
    }
}

#[derive(Debug, Default)]
pub struct CrawlStats {
    /// Responses received (any status; a timeout or a refused connection is not one).
    pub fetched: AtomicU64,
    /// Pages stored.
    pub stored: AtomicU64,
    /// URLs waiting in queues (those of hosts over their page budget apart).
    pub queued: AtomicU64,
    /// URLs of hosts that reached their page budget (`crawl.max_pages_per_host`): kept in the
    /// store for a run with a larger budget, never fetched by this one.
    pub over_budget: AtomicU64,
    /// The run's `crawl.max_pages_per_host` (0: none), which `over_budget` is counted against.
    pub page_budget: AtomicU64,
    pub in_flight: AtomicU64,
    /// Body bytes received.
    pub bytes: AtomicU64,
    /// URLs that ended in an error (skips apart).
    pub errors: AtomicU64,
    /// URLs skipped by choice: robots.txt disallows them, not HTML, duplicates.
    pub skipped: AtomicU64,
    /// Transient failures (429/503, 5xx, timeouts, resets, robots.txt unreachable) to be
    /// tried again.
    pub retries: AtomicU64,
    /// Pages whose cleaned text is on disk.
    pub cleaned: AtomicU64,
    /// Templates (clusters) learned, across hosts.
    pub templates: AtomicU64,
    /// Sites whose final template pass ran while the crawl went on (the crawl was done with
    /// them): their text is final.
    pub sites_final: AtomicU64,
    /// Sites the crawl is done with whose final pass has not run yet (inline learning keeps
    /// it; the scheduler starts no new site while it is high, so text keeps up with fetching).
    pub passes_waiting: AtomicU64,
    /// Turns of the scheduler's loop (each wakes for a finished job, a due origin or shutdown)
    /// and dispatches of due origins: a waiting crawl that sleeps keeps both small; a spinning
    /// scheduler makes them explode (regression tests read them).
    pub loop_turns: AtomicU64,
    pub dispatches: AtomicU64,
    /// Recrawl: stored pages fetched again, and what they gave — 304 Not Modified, the same
    /// bytes again, new bytes (re-parsed; template churn or new content is decided once their
    /// text is final), gone (404/410, moved), failed.
    pub revisits: AtomicU64,
    pub not_modified: AtomicU64,
    pub same_bytes: AtomicU64,
    pub replaced: AtomicU64,
    pub gone: AtomicU64,
    pub revisit_failed: AtomicU64,
    hosts: Mutex<HashMap<String, HostStats>>,
    /// URLs that ended without a page, by kind (the one count progress, the live status and
    /// the run's summary read).
    failures: Mutex<BTreeMap<ErrorKind, u64>>,
    /// Origins waiting or set aside, by origin key.
    waits: Mutex<BTreeMap<String, OriginWait>>,
}

impl CrawlStats {
    /// A URL of `site` ended without a page, for `kind`.
    pub fn count_failure(&self, site: &str, kind: ErrorKind) {
        if kind.is_skip() {
            self.skipped.fetch_add(1, Relaxed);
        } else {
            self.errors.fetch_add(1, Relaxed);
            self.host(site, |h| h.errors += 1);
        }
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        *failures.entry(kind).or_default() += 1;
    }

    /// URLs that ended without a page this run, by kind (most first).
    pub fn failures(&self) -> Vec<(ErrorKind, u64)> {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<(ErrorKind, u64)> = failures.iter().map(|(k, n)| (k.clone(), *n)).collect();
        v.sort_by(|a, b| (b.1, &a.0).cmp(&(a.1, &b.0)));
        v
    }

    /// Record why `wait.origin` waits (replacing what it waited for before).
    pub fn set_wait(&self, wait: OriginWait) {
        let mut waits = self.waits.lock().unwrap_or_else(|p| p.into_inner());
        waits.insert(wait.origin.clone(), wait);
    }

    /// The origin no longer waits.
    pub fn clear_wait(&self, origin: &str) {
        let mut waits = self.waits.lock().unwrap_or_else(|p| p.into_inner());
        waits.remove(origin);
    }

    /// How many origins wait or are set aside (without copying the list).
    pub fn waiting(&self) -> usize {
        self.waits.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Origins waiting or set aside, by origin.
    pub fn waits(&self) -> Vec<OriginWait> {
        let waits = self.waits.lock().unwrap_or_else(|p| p.into_inner());
        waits.values().cloned().collect()
    }

    /// The first `n` origins waiting or set aside, by origin, and how many there are.
    pub fn waits_first(&self, n: usize) -> (Vec<OriginWait>, usize) {
        let waits = self.waits.lock().unwrap_or_else(|p| p.into_inner());
        (waits.values().take(n).cloned().collect(), waits.len())
    }

    /// Hosts with URLs over their page budget.
    pub fn over_budget_hosts(&self) -> usize {
        let hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        hosts.values().filter(|h| h.over_budget > 0).count()
    }

    /// Hosts seen so far.
    pub fn host_count(&self) -> usize {
        self.hosts.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn host(&self, site: &str, f: impl FnOnce(&mut HostStats)) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        f(hosts.entry(site.to_string()).or_default());
    }

    /// The `n` hosts with the most queued work, then most fetched.
    pub fn busiest(&self, n: usize) -> Vec<(String, HostStats)> {
        let hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        let order = |a: &(&String, &HostStats), b: &(&String, &HostStats)| {
            (b.1.queued, b.1.fetched, a.0).cmp(&(a.1.queued, a.1.fetched, b.0))
        };
        // Ticks ask for the top few of possibly 100,000 hosts several times a second: select
        // them in linear time and clone only those.
        let mut v: Vec<(&String, &HostStats)> = hosts.iter().collect();
        if n < v.len() {
            v.select_nth_unstable_by(n, order);
            v.truncate(n);
        }
        v.sort_by(order);
        v.into_iter().map(|(k, h)| (k.clone(), h.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busiest_orders_by_queue_then_fetched() {
        let s = CrawlStats::default();
        s.host("a", |h| h.queued = 1);
        s.host("b", |h| h.queued = 5);
        s.host("c", |h| {
            h.queued = 1;
            h.fetched = 9
        });
        let names: Vec<String> = s.busiest(2).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["b", "c"]);
    }

    #[test]
    fn over_budget_hosts_come_most_first_and_the_rest_are_counted() {
        let o = OverBudget::new(
            10,
            [
                ("b".to_string(), 3),
                ("a".to_string(), 3),
                ("c".to_string(), 9),
            ],
        );
        assert_eq!(o.urls(), 15);
        let (top, more) = o.top(2);
        assert_eq!(top, &[("c".to_string(), 9), ("a".to_string(), 3)]);
        assert_eq!(more, 1);
        assert_eq!(o.top(5).1, 0);
    }
}
