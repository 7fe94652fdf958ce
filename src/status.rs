//! A data directory's status report: pages per host, queue sizes, errors by kind, when the crawl
//! last ran. Read from an open store ([`StatusReport::from_store`]) or, while a crawl holds the
//! store (sled lets one process open it), from the snapshot the crawl writes to
//! `DATA/status.json` every few seconds ([`write_snapshot`]). A report read from a closed store
//! is kept in the same file with the store's stamp, and shown again while the store has not
//! been opened since ([`closed_report`]). [`report`] picks the right one for a data directory;
//! `thresher status` prints it, and a crawl run (`run`) writes the snapshot.
//!
//! Owns: the report's fields, their reading from the store, the snapshot file. Uses `store`,
//! `crawl` (site keys, `OriginWait`, the live figures), `output` (the atomic write) and
//! `progress` (`human_bytes`); never imports `run` or `cmd`.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::crawl::stats::{CrawlStats, OriginWait};
use crate::store::{ErrorKind, RedesignRecord, RunInfo, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("{0} does not exist (no crawl has used it)")]
    Missing(std::path::PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot read the running crawl's snapshot {path}: {message}")]
    Snapshot {
        path: std::path::PathBuf,
        message: String,
    },
}

/// The report on the data directory `data`, its store opened with a page cache of `cache_bytes`
/// (`store.cache_bytes`); the running crawl's snapshot when a crawl holds the store, the kept
/// report when the store is unchanged since it was read ([`closed_report`]).
pub fn report(data: &Path, cache_bytes: u64) -> Result<StatusReport, StatusError> {
    if !data.exists() {
        return Err(StatusError::Missing(data.to_path_buf()));
    }
    if let Some(report) = closed_report(data) {
        return Ok(report);
    }
    match Store::open_existing(data, cache_bytes) {
        Ok(store) => {
            let report = StatusReport::from_store(&store)?;
            let stamp = store.stamp()?;
            // Closed first, so the log file is as the next `status` will find it (a writer
            // opening the store in between flushes a new stamp: the kept report is then stale).
            drop(store);
            if let Err(e) = keep_closed_report(data, report.clone(), stamp) {
                tracing::debug!("cannot keep the report in {SNAPSHOT}: {e}");
            }
            Ok(report)
        }
        Err(StoreError::Locked { .. }) => {
            let path = data.join(SNAPSHOT);
            let text = std::fs::read_to_string(&path).map_err(|e| StatusError::Snapshot {
                path: path.clone(),
                message: e.to_string(),
            })?;
            serde_json::from_str(&text).map_err(|e| StatusError::Snapshot {
                path,
                message: e.to_string(),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Bytes of the files directly in `dir` (a data directory's store: sled's log and the marker;
/// page files live in a subdirectory).
pub fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Store meta key: the origins the last run left waiting or set aside.
pub const WAITING_META: &str = "waiting";

/// The file a running crawl writes its report to, in the data directory.
pub const SNAPSHOT: &str = "status.json";

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostRow {
    pub host: String,
    pub pages: u64,
    pub bytes: u64,
    /// URLs queued for the next run.
    pub queued: u64,
    /// URLs kept beyond the host's page budget (`crawl.max_pages_per_host`): a run with a
    /// larger budget fetches them.
    #[serde(default)]
    pub over_budget: u64,
    pub errors: u64,
    /// Template clusters of the host's last clustering.
    #[serde(default)]
    pub clusters: u64,
    /// Pages with cleaned text.
    #[serde(default)]
    pub cleaned: u64,
    /// Template eras: 1, plus one per redesign a recrawl found (`redesigns`).
    #[serde(default)]
    pub eras: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StatusReport {
    pub generated_at_ms: u64,
    /// True when written by a running crawl.
    pub live: bool,
    pub last_run: Option<RunInfo>,
    pub hosts: Vec<HostRow>,
    /// URLs queued for the next run (those over budget apart).
    pub queued: u64,
    /// URLs of hosts over their page budget, and how many hosts, and the budget they reached
    /// (the largest, if runs used several).
    #[serde(default)]
    pub over_budget: u64,
    #[serde(default)]
    pub over_budget_hosts: u64,
    #[serde(default)]
    pub budget: u64,
    pub pages: u64,
    /// URLs that ended without a page, by kind (skips marked by `ErrorKind::is_skip`).
    pub errors_by_kind: Vec<(ErrorKind, u64)>,
    pub store_bytes: u64,
    /// Origins waiting (robots.txt unreachable, backing off) or set aside, with why and until
    /// when.
    #[serde(default)]
    pub waiting: Vec<OriginWait>,
    /// Hosts and waiting origins left out of a running crawl's snapshot (it lists the busiest
    /// `LIVE_ROWS` of each: a crawl of 100,000 origins wrote 67 MB every 5 s).
    #[serde(default)]
    pub hosts_more: u64,
    #[serde(default)]
    pub waiting_more: u64,
    /// The last `crawl --recrawl`, when there was one.
    #[serde(default)]
    pub recrawl: Option<RecrawlReport>,
    /// Redesigns recrawls found, per host (oldest first): each starts a template era.
    #[serde(default)]
    pub redesigns: Vec<(String, RedesignRecord)>,
    /// The closed store this report was read from, as it was when the report was kept
    /// ([`keep_closed_report`]); none in a running crawl's snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<ClosedStore>,
}

/// A closed store as a kept report saw it: while its marker records the same flush stamp and
/// sled's log file has the same size and modification time, nothing has opened or changed the
/// store since, and `status` shows the report without opening sled (cold, opening took 4.9 s
/// at 1M pages). A damaged or replaced log file does not match, so `status` opens the store
/// and reports the damage.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClosedStore {
    pub stamp: u64,
    pub db_bytes: u64,
    pub db_modified_ns: u64,
}

/// What the last recrawl found (docs/recrawl.md).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RecrawlReport {
    pub started_at_ms: u64,
    /// Stored pages it queued for a revisit.
    pub queued: u64,
    /// Revisits still waiting in the queue.
    pub left: u64,
    /// Change records since it started, by kind name (`unchanged`, `template-churn`,
    /// `content-changed`, `gone`, `failed`).
    pub kinds: Vec<(String, u64)>,
    /// Replaced pages whose kind waits for their site's end-of-crawl pass.
    pub pending: u64,
    /// Pages marked gone (by this or an earlier recrawl).
    pub gone_total: u64,
}

/// Hosts, and waiting origins, a running crawl's snapshot lists.
pub const LIVE_ROWS: usize = 1000;

impl StatusReport {
    /// Read everything from an open store.
    pub fn from_store(store: &Store) -> Result<StatusReport, StoreError> {
        let mut hosts: HashMap<String, HostRow> = HashMap::new();
        let mut redesigned = Vec::new();
        for (site, c) in store.sites() {
            let row = hosts.entry(site.clone()).or_default();
            row.host = site;
            row.pages = c.pages;
            row.bytes = c.bytes;
            let status = store.site_status(&row.host)?;
            row.clusters = status.clusters;
            row.cleaned = status.cleaned;
            let redesigns = store.redesigns(&row.host)?;
            row.eras = 1 + redesigns.len() as u64;
            redesigned.extend(redesigns.into_iter().map(|r| (row.host.clone(), r)));
        }
        let lengths = store.queue_lengths()?;
        let over = store.over_budget()?;
        let (mut queued, mut over_budget) = (0, 0);
        for o in store.origins() {
            let n = lengths.get(&o.id).copied().unwrap_or(0);
            let host = url::Url::parse(&o.key)
                .map(|u| crate::crawl::url::site_key(&u))
                .unwrap_or(o.key);
            let row = hosts.entry(host.clone()).or_default();
            // A host the last run left over budget: what its queues hold is over budget.
            if over.contains_key(&host) {
                over_budget += n;
                row.over_budget += n;
            } else {
                queued += n;
                row.queued += n;
            }
            row.host = host;
        }
        let mut kinds: HashMap<ErrorKind, u64> = HashMap::new();
        for e in store.errors() {
            let (url, rec) = e?;
            let skip = rec.kind.is_skip();
            *kinds.entry(rec.kind).or_default() += 1;
            // A host's errors leave the skips out, as the crawl's progress does.
            if let (false, Ok(u)) = (skip, url::Url::parse(&url)) {
                let host = crate::crawl::url::site_key(&u);
                let row = hosts.entry(host.clone()).or_default();
                row.host = host;
                row.errors += 1;
            }
        }
        let mut hosts: Vec<HostRow> = hosts.into_values().collect();
        hosts.sort_by(|a, b| (b.pages, &a.host).cmp(&(a.pages, &b.host)));
        let mut errors_by_kind: Vec<(ErrorKind, u64)> = kinds.into_iter().collect();
        errors_by_kind.sort_by(|a, b| (b.1, &a.0).cmp(&(a.1, &b.0)));
        Ok(StatusReport {
            closed: None,
            generated_at_ms: crate::store::now_ms(),
            live: false,
            last_run: store.get_meta("last_run")?,
            pages: hosts.iter().map(|h| h.pages).sum(),
            hosts,
            queued,
            over_budget,
            over_budget_hosts: over.len() as u64,
            budget: over.values().map(|r| r.budget).max().unwrap_or(0),
            errors_by_kind,
            store_bytes: store.size_on_disk(),
            waiting: store
                .get_meta::<Vec<OriginWait>>(WAITING_META)?
                .unwrap_or_default(),
            hosts_more: 0,
            waiting_more: 0,
            recrawl: recrawl_report(store)?,
            redesigns: {
                redesigned.sort_by(|a, b| (&a.0, a.1.at_ms).cmp(&(&b.0, b.1.at_ms)));
                redesigned
            },
        })
    }

    /// The snapshot a running crawl can give from its live figures, without scanning the store
    /// (`store_bytes`: [`dir_size`] of its data directory).
    pub fn live(stats: &CrawlStats, run: RunInfo, store_bytes: u64) -> StatusReport {
        let (busiest, hosts_total) = (stats.busiest(LIVE_ROWS), stats.host_count());
        let (waiting, waiting_total) = stats.waits_first(LIVE_ROWS);
        let hosts: Vec<HostRow> = busiest
            .into_iter()
            .map(|(host, h)| HostRow {
                host,
                pages: h.fetched,
                bytes: h.bytes,
                queued: h.queued,
                over_budget: h.over_budget,
                errors: h.errors,
                clusters: h.clusters,
                cleaned: h.cleaned,
                // A running crawl does not read the store's redesign records.
                eras: 0,
            })
            .collect();
        StatusReport {
            generated_at_ms: crate::store::now_ms(),
            live: true,
            last_run: Some(run),
            pages: stats.stored.load(std::sync::atomic::Ordering::Relaxed),
            queued: stats.queued.load(std::sync::atomic::Ordering::Relaxed),
            over_budget: stats.over_budget.load(std::sync::atomic::Ordering::Relaxed),
            over_budget_hosts: stats.over_budget_hosts() as u64,
            budget: stats.page_budget.load(std::sync::atomic::Ordering::Relaxed),
            errors_by_kind: stats.failures(),
            store_bytes,
            hosts_more: (hosts_total - hosts.len()) as u64,
            waiting_more: (waiting_total - waiting.len()) as u64,
            recrawl: None,
            redesigns: Vec::new(),
            closed: None,
            hosts,
            waiting,
        }
    }

    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        if self.live {
            let _ = writeln!(
                s,
                "A crawl is running; snapshot taken {}.",
                ago(self.generated_at_ms)
            );
        }
        match &self.last_run {
            None => s.push_str("Last run: never\n"),
            Some(r) => {
                let end = if r.ended_at_ms > 0 {
                    format!("ended {}", ago(r.ended_at_ms))
                } else if r.state == "running" && !self.live {
                    "did not record its end (killed?)".to_string()
                } else {
                    "still running".to_string()
                };
                let _ = writeln!(
                    s,
                    "Last run: started {}, {end}; state {}; {} pages fetched",
                    ago(r.started_at_ms),
                    if r.state == "running" && !self.live {
                        "killed"
                    } else {
                        &r.state
                    },
                    r.pages_fetched
                );
            }
        }
        let _ = writeln!(
            s,
            "Pages stored: {}   queued: {}   hosts: {}   store on disk: {}",
            self.pages,
            self.queued,
            self.hosts.len(),
            crate::progress::human_bytes(self.store_bytes)
        );
        if self.over_budget_hosts > 0 {
            let _ = writeln!(
                s,
                "Over budget: {} URLs of {} hosts that reached crawl.max_pages_per_host ({}); \
                 not queued: a run with a larger budget fetches them",
                self.over_budget, self.over_budget_hosts, self.budget
            );
        }
        if !self.hosts.is_empty() {
            let _ = writeln!(
                s,
                "\n{:<40} {:>8} {:>10} {:>8} {:>8} {:>7} {:>8} {:>8}",
                "host", "pages", "bytes", "queued", "over", "errors", "clusters", "cleaned"
            );
            for h in &self.hosts {
                let _ = writeln!(
                    s,
                    "{:<40} {:>8} {:>10} {:>8} {:>8} {:>7} {:>8} {:>8}",
                    h.host,
                    h.pages,
                    crate::progress::human_bytes(h.bytes),
                    h.queued,
                    h.over_budget,
                    h.errors,
                    h.clusters,
                    h.cleaned
                );
            }
            if self.hosts_more > 0 {
                let _ = writeln!(s, "… and {} more hosts", self.hosts_more);
            }
        }
        if !self.waiting.is_empty() {
            let _ = writeln!(
                s,
                "\nOrigins waiting or set aside (their URLs stay queued):"
            );
            for w in &self.waiting {
                let _ = writeln!(s, "  {}", w.line());
            }
            if self.waiting_more > 0 {
                let _ = writeln!(s, "  … and {} more origins", self.waiting_more);
            }
        }
        if let Some(r) = &self.recrawl {
            let _ = writeln!(
                s,
                "\nLast recrawl: started {}; {} pages queued, {} still to revisit; {} marked \
                 gone in all",
                ago(r.started_at_ms),
                r.queued,
                r.left,
                r.gone_total
            );
            for (k, n) in &r.kinds {
                let _ = writeln!(s, "  {k:<28} {n:>8}");
            }
            if r.pending > 0 {
                let _ = writeln!(
                    s,
                    "  {:<28} {:>8}  (changed bytes; kind decided by the end-of-crawl pass)",
                    "pending", r.pending
                );
            }
        }
        if !self.redesigns.is_empty() {
            let _ = writeln!(s, "\nTemplate eras (redesigns found by recrawls):");
            let mut era: HashMap<&str, u64> = HashMap::new();
            for (host, r) in &self.redesigns {
                let n = era.entry(host).or_insert(1);
                *n += 1;
                let _ = writeln!(
                    s,
                    "  {host}: era {n} from {}: {} of {} replaced pages with a new structure; \
                     clusters {:?} -> {:?}",
                    ago(r.at_ms),
                    r.pages,
                    r.replaced,
                    r.old_clusters,
                    r.new_clusters
                );
            }
        }
        if !self.errors_by_kind.is_empty() {
            let _ = writeln!(s, "\nURLs not stored, by kind:");
            for (k, n) in &self.errors_by_kind {
                let skip = if k.is_skip() { "  (skipped)" } else { "" };
                let _ = writeln!(s, "  {:<28} {n:>8}{skip}", k.name());
            }
        }
        s
    }
}

/// The last recrawl's counts, if a recrawl ever ran.
fn recrawl_report(store: &Store) -> Result<Option<RecrawlReport>, StoreError> {
    let Some(run) = store.get_meta::<crate::store::RecrawlRun>("recrawl")? else {
        return Ok(None);
    };
    let (counts, pending) = store.change_counts(run.started_at_ms)?;
    Ok(Some(RecrawlReport {
        started_at_ms: run.started_at_ms,
        queued: run.queued,
        left: store.revisit_lengths()?.values().sum(),
        kinds: counts
            .into_iter()
            .map(|(k, n)| (k.name().to_string(), n))
            .collect(),
        pending,
        gone_total: store.gone_ids()?.len() as u64,
    }))
}

fn ago(ms: u64) -> String {
    let now = crate::store::now_ms();
    let secs = now.saturating_sub(ms) / 1000;
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    format!(
        "{} ({} ago)",
        humantime::format_rfc3339_seconds(t),
        humantime::format_duration(std::time::Duration::from_secs(secs))
    )
}

/// sled's log file in `data`: its size and modification time.
fn db_file(data: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(data.join("db")).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((meta.len(), u64::try_from(modified.as_nanos()).ok()?))
}

/// Keep `report`, read from the store in `data` at flush stamp `stamp`, in `DATA/status.json`
/// for the next `status` ([`closed_report`]).
pub fn keep_closed_report(
    data: &Path,
    mut report: StatusReport,
    stamp: u64,
) -> std::io::Result<()> {
    let (db_bytes, db_modified_ns) = db_file(data)
        .ok_or_else(|| std::io::Error::other("the store's db file has no size or time"))?;
    report.closed = Some(ClosedStore {
        stamp,
        db_bytes,
        db_modified_ns,
    });
    write_snapshot(data, &report)
}

/// The report kept in `DATA/status.json` when the store is still as it was then (see
/// [`ClosedStore`]; every open of the store flushes a new stamp first, so a later writer, even
/// one killed before its own flush, makes it stale). None otherwise: no file, a running
/// crawl's snapshot, another stamp, or a changed log file.
pub fn closed_report(data: &Path) -> Option<StatusReport> {
    let text = std::fs::read(data.join(SNAPSHOT)).ok()?;
    let report: StatusReport = serde_json::from_slice(&text).ok()?;
    let kept = report.closed.as_ref()?;
    let same = !report.live
        && crate::store::marker_stamp(data) == Some(kept.stamp)
        && db_file(data) == Some((kept.db_bytes, kept.db_modified_ns));
    same.then_some(report)
}

/// Write `report` to `DATA/status.json` atomically (`output::write_atomic`).
pub fn write_snapshot(data: &Path, report: &StatusReport) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(report).map_err(std::io::Error::other)?;
    crate::output::write_atomic(&data.join(SNAPSHOT), &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: the live `status` of a running crawl said "Last run: never" and "0 B", and
    /// listed no errors.
    #[test]
    fn live_status_shows_the_running_crawl_its_store_and_its_errors() {
        let stats = CrawlStats::default();
        stats.count_failure("a.example", ErrorKind::Http(404));
        stats.count_failure("a.example", ErrorKind::Duplicate);
        let run = RunInfo {
            started_at_ms: crate::store::now_ms(),
            ended_at_ms: 0,
            state: "running".into(),
            pages_fetched: 3,
        };
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("db"), vec![0u8; 4096]).expect("write");
        let text = StatusReport::live(&stats, run, dir_size(dir.path())).render();
        assert!(!text.contains("never"), "{text}");
        assert!(text.contains("still running"), "{text}");
        assert!(text.contains("store on disk: 4.1 KB"), "{text}");
        assert!(text.contains("http-404"), "{text}");
        assert!(
            text.contains("duplicate") && text.contains("(skipped)"),
            "{text}"
        );
    }

    #[test]
    fn live_status_shows_urls_over_budget_apart_from_the_queue() {
        let stats = CrawlStats::default();
        stats.queued.store(2, std::sync::atomic::Ordering::Relaxed);
        stats
            .over_budget
            .store(9, std::sync::atomic::Ordering::Relaxed);
        stats
            .page_budget
            .store(10, std::sync::atomic::Ordering::Relaxed);
        stats.host("a.example", |h| {
            h.queued = 2;
            h.over_budget = 4
        });
        stats.host("b.example", |h| h.over_budget = 5);
        let report = StatusReport::live(&stats, RunInfo::default(), 0);
        assert_eq!((report.queued, report.over_budget), (2, 9));
        assert_eq!((report.over_budget_hosts, report.budget), (2, 10));
        let text = report.render();
        assert!(text.contains("queued: 2"), "{text}");
        assert!(
            text.contains(
                "Over budget: 9 URLs of 2 hosts that reached crawl.max_pages_per_host (10)"
            ),
            "{text}"
        );
    }
}
