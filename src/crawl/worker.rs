//! One dispatched job, from request to commit: fetch a page, sitemap or robots.txt, turn the
//! response into a `Commit` (page + path set + newly discovered links, or a retry, or an error
//! record) and apply it. Parsing is CPU work: it runs on the blocking pool behind a semaphore
//! sized to the cores, and the `Rc` DOM never crosses an `.await`. With the WARC archive on,
//! each response's records are written just before its commit, under the archive's lock
//! (`commit_archived`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::Url;

use super::archive::{Archive, Body, Original};
use super::fetch::{
    Accept, Ask, Exchange, FetchError, FetchErrorKind, Fetcher, Outcome, Overflow, Response,
    Validators,
};
use super::robots::{may_follow_redirect, RobotsEntry, RobotsFetch};
use super::scope::Scope;
use super::{sitemap, url as urls};
use crate::config::Config;
use crate::dom;
use crate::store::Enqueued;
use crate::store::{
    now_ms, ChangeKind, ChangeRecord, Commit, CommitOutcome, EntryKind, ErrorKind, ErrorRecord,
    GoneRecord, NewPage, PageMeta, QueueEntry, RevisitSlot, Store, StoreError, DISCOVER_BATCH,
};
use crate::warc::files::WarcWriteError;
use crate::warc::write::unix_ms;
use crate::warc::write::Deflated;

/// A page the crawl stored (for inline template learning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredPage {
    pub site: String,
    pub page_id: u64,
}

/// What the crawl tells inline template learning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CrawlEvent {
    /// A page was stored (new, or a recrawl replaced its bytes).
    Stored(StoredPage),
    /// The site has nothing left to fetch in this run: every origin of it has an empty queue,
    /// is over its budget or set aside, and none of its requests or pages is in flight. Its
    /// pages are all stored (their `Stored` events came first). New links to it from other
    /// sites can still give it work later; it is then told of again when that work is done.
    SiteDone(String),
}

/// Told of every page the crawl stores and every site it is done with (inline template
/// learning listens here).
pub type EventSink = Arc<dyn Fn(CrawlEvent) + Send + Sync>;

/// [`Partitioned::hand_on`]: links (URL, crawl depth) for other partitions.
pub type HandOn = Arc<dyn Fn(Vec<(String, u32)>) + Send + Sync>;
/// Whether two sites are in one partition.
pub type SamePartition = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;
/// Commit a fetch's records to its site's partition log: `Ok(false)` when fenced.
pub type LogRecords = Arc<dyn Fn(&str, Vec<u8>) -> Result<bool, String> + Send + Sync>;

/// A cluster worker's part in the crawl (`crawl --cluster`, docs/cluster.md): which sites it
/// may crawl now, where each fetch's records are committed first, and where links to other
/// partitions go. `None` on one machine.
#[derive(Clone)]
pub struct Partitioned {
    /// Whether this worker holds `site`'s partition now (the scheduler dispatches only those).
    pub owns: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    /// Whether sites `a` and `b` are in one partition: a link from a page of `a` to `b` stays
    /// in this crawl's frontier (a new owner re-derives it from the page), else it is handed on.
    pub same_partition: SamePartition,
    /// Commit a fetch's WARC records (gzip members) to the log of `site`'s partition, before
    /// the store commit: `Ok(false)` when the partition is another worker's now (fenced).
    pub log: LogRecords,
    /// Links for other partitions, with the crawl depth each would be queued at here, handed
    /// to their owners.
    pub hand_on: HandOn,
    /// A request, or a fetched page's processing, started for `site`…
    pub started: Arc<dyn Fn(&str) + Send + Sync>,
    /// …and is over (committed, dropped or failed).
    pub settled: Arc<dyn Fn(&str) + Send + Sync>,
}

/// What the workers share.
pub struct Ctx {
    pub config: Arc<Config>,
    pub store: Arc<Store>,
    pub fetcher: Fetcher,
    pub scope: Scope,
    /// Bounds parse work in flight to the number of cores.
    pub cpu: Arc<Semaphore>,
    /// The WARC archive (`crawl.warc_dir`), when on.
    pub archive: Option<Arc<Archive>>,
    /// This run is a recrawl: sitemaps found in sitemap indexes are read again even when seen,
    /// and sitemap `<lastmod>` and feed entries move stored pages up the revisit queue.
    pub recrawl: bool,
    /// The cluster worker's hooks (`crawl --cluster`); `None` on one machine.
    pub partitioned: Option<Partitioned>,
}

/// Where a dispatched entry waits in the store until its commit consumes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The origin's FIFO queue, at this sequence number.
    Queue(u64),
    /// The revisit queue.
    Revisit(RevisitSlot),
}

impl Commit {
    /// The entry at `slot` of origin `origin_id` is consumed.
    fn consume(&mut self, origin_id: u32, slot: Slot) -> &mut Self {
        match slot {
            Slot::Queue(seq) => self.done(origin_id, seq),
            Slot::Revisit(r) => self.revisit_done(r),
        }
    }
}

pub enum Job {
    Robots {
        origin_id: u32,
        origin: Url,
        /// The cached entry being refreshed (kept in force while the file is unreachable).
        previous: Option<RobotsEntry>,
    },
    Entry {
        origin_id: u32,
        slot: Slot,
        entry: QueueEntry,
        /// The origin's last request as far as the scheduler knows (`Ask::close`).
        last: bool,
    },
}

#[derive(Debug)]
pub enum Verdict {
    /// A page was stored.
    Stored { site: String, page_id: u64 },
    /// Done without a page (redirect followed, noindex, not HTML, sitemap read, duplicate).
    Done,
    /// Done with an error record.
    Failed { kind: ErrorKind },
    /// Queued again after a transient failure; the origin should back off.
    Retry {
        retry_after: Option<Duration>,
        /// What failed (`HTTP 429`, `connect failed: …`), for progress and status.
        cause: String,
    },
    /// robots.txt was read (or could not be: `failure` says why).
    Robots {
        entry: RobotsEntry,
        failure: Option<String>,
    },
    /// The request succeeded; parsing and storing follow as a separate task (`Processing`).
    Processing,
    /// A recrawl fetched a stored page again and recorded what it found, without a new page
    /// to learn from (304 or the same bytes, gone, failed).
    Revisited { kind: ChangeKind },
    /// A recrawl replaced a stored page by new bytes (the learner cleans it again; its change
    /// kind is decided once its text is final).
    Replaced { site: String, page_id: u64 },
}

/// Parsing and committing a fetched page: runs after its request has finished, so the origin's
/// next request need not wait for it.
pub type Processing = futures::future::BoxFuture<'static, Result<Processed, WorkerError>>;

/// What processing a fetched page did.
pub struct Processed {
    pub verdict: Verdict,
    pub enqueued: Vec<crate::store::Enqueued>,
}

pub struct JobResult {
    pub origin_id: u32,
    /// The queue slot of a page or sitemap job (`None` for robots.txt).
    pub slot: Option<Slot>,
    pub verdict: Verdict,
    /// When the request finished (politeness counts from here).
    pub completed_at: Instant,
    pub enqueued: Vec<crate::store::Enqueued>,
    /// Body bytes received.
    pub bytes: u64,
    /// A page or sitemap request got an HTTP response (any status; not a timeout, a refused
    /// connection or a reset): what "fetched" counts.
    pub responded: bool,
    /// The response was a 429/503 or a transient failure (politeness backs off).
    pub backoff: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Warc(#[from] WarcWriteError),
    #[error("a parse task panicked: {0}")]
    Panic(String),
    /// The partition of this site is another worker's now: its fetch was not committed (its
    /// URL stays queued here, and the new owner has it).
    #[error("the partition of {0} was taken over by another worker")]
    Fenced(String),
    /// The partition log could not be written (the engine is unreachable).
    #[error("partition log: {0}")]
    Log(String),
}

/// What a spawned task hands back: always its origin (and kind), even if it panicked.
pub enum TaskOutput {
    /// A request finished; `processing`, when present, parses and stores its page.
    Request {
        origin_id: u32,
        /// `None` for a robots.txt fetch.
        kind: Option<EntryKind>,
        result: Result<JobResult, WorkerError>,
        processing: Option<Processing>,
    },
    /// A fetched page was parsed and stored (or not).
    Processed {
        origin_id: u32,
        /// The entry's kind (a revisit holds no page slot).
        kind: EntryKind,
        slot: Slot,
        result: Result<Processed, WorkerError>,
    },
    /// The origin's host name was looked up (per-server politeness needs its address before
    /// its first request).
    Resolved {
        origin_id: u32,
        result: Result<super::resolve::Addresses, super::resolve::ResolveError>,
    },
}

/// Run `job`, turning a panic into `WorkerError::Panic` so the scheduler's books stay right.
pub async fn run_task(ctx: Arc<Ctx>, job: Job) -> TaskOutput {
    use futures::FutureExt;
    let (origin_id, kind) = match &job {
        Job::Robots { origin_id, .. } => (*origin_id, None),
        Job::Entry {
            origin_id, entry, ..
        } => (*origin_id, Some(entry.kind)),
    };
    let (result, processing) = match std::panic::AssertUnwindSafe(run_job(ctx, job))
        .catch_unwind()
        .await
    {
        Ok(Ok((r, p))) => (Ok(r), p),
        Ok(Err(e)) => (Err(e), None),
        Err(p) => (Err(WorkerError::Panic(panic_message(&p))), None),
    };
    TaskOutput::Request {
        origin_id,
        kind,
        result,
        processing,
    }
}

/// Run a page's processing, panics included in the result.
pub async fn run_processing(
    origin_id: u32,
    kind: EntryKind,
    slot: Slot,
    processing: Processing,
) -> TaskOutput {
    use futures::FutureExt;
    let result = std::panic::AssertUnwindSafe(processing)
        .catch_unwind()
        .await
        .unwrap_or_else(|p| Err(WorkerError::Panic(panic_message(&p))));
    TaskOutput::Processed {
        origin_id,
        kind,
        slot,
        result,
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

pub async fn run_job(
    ctx: Arc<Ctx>,
    job: Job,
) -> Result<(JobResult, Option<Processing>), WorkerError> {
    match job {
        Job::Robots {
            origin_id,
            origin,
            previous,
        } => Ok((
            fetch_robots(&ctx, origin_id, &origin, previous.as_ref()).await?,
            None,
        )),
        Job::Entry {
            origin_id,
            slot,
            entry,
            last,
        } => run_entry(ctx, origin_id, slot, entry, last).await,
    }
}

/// A stored page a revisit fetches again: its id and record.
struct Stored {
    id: u64,
    meta: PageMeta,
}

async fn run_entry(
    ctx: Arc<Ctx>,
    origin_id: u32,
    slot: Slot,
    entry: QueueEntry,
    last: bool,
) -> Result<(JobResult, Option<Processing>), WorkerError> {
    let mut result = JobResult {
        origin_id,
        slot: Some(slot),
        verdict: Verdict::Done,
        completed_at: Instant::now(),
        enqueued: Vec::new(),
        bytes: 0,
        responded: false,
        backoff: false,
    };
    let Ok(url) = Url::parse(&entry.url) else {
        let c = failure(
            origin_id,
            slot,
            &entry,
            ErrorKind::BadUrl,
            "unparsable queued URL".into(),
        );
        result.verdict = Verdict::Failed {
            kind: ErrorKind::BadUrl,
        };
        ctx.store.commit(c)?;
        return Ok((result, None));
    };
    // A cluster worker's queue may hold a URL that another worker fetched meanwhile (this one
    // lost the partition, its next owner fetched the page, and the page came back with the
    // partition's log when this worker took it over again): consumed without a request.
    if ctx.partitioned.is_some()
        && matches!(entry.kind, EntryKind::Page)
        && ctx.store.has_page(urls::page_id(&url))?
    {
        let mut c = Commit::new();
        c.consume(origin_id, slot);
        ctx.store.commit(c)?;
        return Ok((result, None));
    }
    let cfg = &ctx.config;
    let (accept, limit) = match entry.kind {
        EntryKind::Page | EntryKind::Revisit => (Accept::Html, cfg.fetch.max_body_bytes),
        EntryKind::Sitemap => (Accept::Any, cfg.fetch.max_body_bytes.max(50 << 20)),
    };
    // A revisit sends the stored page's validators (a page no longer stored is fetched as new).
    let stored = match entry.kind {
        EntryKind::Revisit => {
            let id = urls::page_id(&url);
            ctx.store.page(id)?.map(|meta| Stored { id, meta })
        }
        _ => None,
    };
    let ask = Ask {
        validators: stored
            .as_ref()
            .map(|s| Validators::from_headers(&s.meta.headers))
            .unwrap_or_default(),
        close: last,
    };
    let (fetched, exchange) = ctx
        .fetcher
        .get_asking(&url, accept, limit, Overflow::Fail, &ask)
        .await;
    result.completed_at = Instant::now();
    result.responded = fetched.is_ok();

    let mut commit = Commit::new();
    commit.consume(origin_id, slot);
    match fetched {
        Ok(Outcome::Ok(resp)) => {
            result.bytes = resp.body.len() as u64;
            if entry.kind == EntryKind::Sitemap {
                let (c, verdict) = process_sitemap(&ctx, commit, &entry, &url, &resp);
                result.verdict = verdict;
                result.enqueued = commit_captured(&ctx, c, &url, exchange, Some(resp))
                    .await?
                    .enqueued;
                return Ok((result, None));
            }
            let mut replacing = None;
            if let Some(s) = &stored {
                let old = ctx.store.html(s.id)?.unwrap_or_default();
                if old == resp.body {
                    // Byte-identical: unchanged, as a 304 would have said; nothing to parse.
                    let kind = ChangeKind::Unchanged;
                    revisited(&ctx, &mut commit, s, kind, &resp.kept_headers, resp.status)?;
                    result.verdict = Verdict::Revisited { kind };
                    result.enqueued = commit_captured(&ctx, commit, &url, exchange, Some(resp))
                        .await?
                        .enqueued;
                    return Ok((result, None));
                }
                replacing = Some(xxhash_rust::xxh3::xxh3_64(&old));
            }
            result.verdict = Verdict::Processing;
            let processing = page_processing(ctx, commit, entry, url, resp, exchange, replacing);
            return Ok((result, Some(processing)));
        }
        Ok(Outcome::NotModified { kept_headers }) => {
            if let Some(s) = &stored {
                let kind = ChangeKind::Unchanged;
                revisited(&ctx, &mut commit, s, kind, &kept_headers, s.meta.status)?;
                result.verdict = Verdict::Revisited { kind };
            }
        }
        Ok(Outcome::Redirect { status, location }) => {
            result.verdict = redirect(&ctx, &mut commit, &entry, &url, status, &location);
            if let Some(s) = &stored {
                // The page no longer answers at its URL (its target is queued as any link).
                result.verdict = gone(&ctx, &mut commit, s, status)?;
            }
        }
        Ok(Outcome::Status { status, .. }) if stored.is_some() && matches!(status, 404 | 410) => {
            let s = stored.as_ref().expect("invariant: matched is_some");
            result.verdict = gone(&ctx, &mut commit, s, status)?;
        }
        Ok(Outcome::NotHtml { content_type }) => {
            commit.error(
                entry.url.clone(),
                record(ErrorKind::NotHtml, content_type, &entry),
            );
            result.verdict = Verdict::Failed {
                kind: ErrorKind::NotHtml,
            };
        }
        Ok(Outcome::Status {
            status,
            retry_after,
        }) => {
            (result.verdict, result.backoff) =
                status_verdict(cfg, &mut commit, &entry, &url, status, retry_after);
        }
        Err(FetchError { kind, .. }) => {
            (result.verdict, result.backoff) = error_verdict(cfg, &mut commit, &entry, &url, &kind);
        }
    }
    if let (Some(s), Verdict::Failed { .. }) = (&stored, &result.verdict) {
        // The revisit ended without an answer to judge by: the stored page stands.
        let kind = ChangeKind::Failed;
        commit.change(change_record(&ctx, s, kind, now_ms())?);
        result.verdict = Verdict::Revisited { kind };
    }
    result.enqueued = commit_captured(&ctx, commit, &url, exchange, None)
        .await?
        .enqueued;
    Ok((result, None))
}

/// The change record of a revisit that leaves the stored text as it is.
fn change_record(
    ctx: &Ctx,
    s: &Stored,
    kind: ChangeKind,
    at_ms: u64,
) -> Result<ChangeRecord, StoreError> {
    let hash = ctx.store.cleaned_sum(s.id)?.map(|(_, h)| h);
    Ok(ChangeRecord {
        url: s.meta.url.clone(),
        page_id: s.id,
        kind,
        at_ms,
        old_hash: hash,
        new_hash: if kind == ChangeKind::Gone { None } else { hash },
    })
}

/// A revisit found the stored page unchanged (304, or the same bytes): its fetch time and
/// kept headers move on (a 304 may bring a new ETag), it is no longer gone, and the change log
/// says so.
fn revisited(
    ctx: &Ctx,
    commit: &mut Commit,
    s: &Stored,
    kind: ChangeKind,
    headers: &[(String, String)],
    status: u16,
) -> Result<(), StoreError> {
    let at = now_ms();
    let mut meta = s.meta.clone();
    meta.fetched_at_ms = at;
    meta.status = status;
    for (k, v) in headers {
        match meta.headers.iter_mut().find(|(name, _)| name == k) {
            Some(slot) => slot.1.clone_from(v),
            None => meta.headers.push((k.clone(), v.clone())),
        }
    }
    commit
        .change(change_record(ctx, s, kind, at)?)
        .meta(s.id, meta)
        .gone(s.id, None);
    Ok(())
}

/// A revisit found the page gone (404/410, or moved away): marked gone and logged; its page,
/// text and file are kept.
fn gone(ctx: &Ctx, commit: &mut Commit, s: &Stored, status: u16) -> Result<Verdict, StoreError> {
    let at = now_ms();
    let kind = ChangeKind::Gone;
    commit
        .change(change_record(ctx, s, kind, at)?)
        .gone(s.id, Some(GoneRecord { at_ms: at, status }));
    Ok(Verdict::Revisited { kind })
}

/// Commit `commit`, the outcome of a GET of `url`; with the archive on, the exchange's records
/// (with `resp`'s body when it was read) are written first, on the blocking pool.
async fn commit_captured(
    ctx: &Ctx,
    commit: Commit,
    url: &Url,
    exchange: Option<Exchange>,
    resp: Option<Response>,
) -> Result<CommitOutcome, WorkerError> {
    let (Some(archive), Some(exchange)) = (ctx.archive.clone(), exchange) else {
        return Ok(ctx.store.commit(commit)?);
    };
    let store = ctx.store.clone();
    let url = url.clone();
    let partitioned = ctx.partitioned.clone();
    tokio::task::spawn_blocking(move || {
        let body = match &resp {
            Some(r) if r.truncated => Body::Cut(&r.body),
            Some(r) => Body::Whole(&r.body),
            None => Body::NotRead,
        };
        let capture = archive.capture(&url, &exchange, body);
        let site = urls::site_key(&url);
        commit_archived(
            &store,
            &archive,
            &capture,
            commit,
            logged(&partitioned, &site),
        )
    })
    .await
    .map_err(|e| WorkerError::Panic(e.to_string()))?
}

/// Write `capture` and then apply `commit` (which may be empty), holding the archive across
/// both: a page whose body the store already holds under another URL is written as a revisit
/// of that page (asked of the store under the lock, so no other commit comes between), and a
/// commit never reaches the store before its records are in the file (docs/warc.md, "Crash
/// safety").
///
/// A cluster worker (`logged`: its hooks and the fetch's site) writes the records to its file,
/// then lets the archive go while it commits them to the site's partition log (which waits for
/// the engine), then applies `commit`. So a page the log holds is in the worker's file too,
/// whenever the worker is killed; a kill after the write and before the log append leaves a
/// record whose page the partition's next owner fetches again (it was in flight). A fenced
/// append leaves the store untouched; the record stays in the file, as the request was made.
fn commit_archived(
    store: &Store,
    archive: &Archive,
    capture: &super::archive::Capture,
    commit: Commit,
    logged: Option<(&Partitioned, &str)>,
) -> Result<CommitOutcome, WorkerError> {
    let mut held = archive.lock();
    let original = match commit.new_page().map(|p| store.twin_of(p)).transpose()? {
        Some(Some(twin)) => store.page(twin)?.map(|m| Original {
            url: m.url,
            date_ms: m.fetched_at_ms,
        }),
        _ => None,
    };
    let (first, request) = held.members(capture, original.as_ref());
    held.append(&first, request)?;
    if let Some((p, site)) = logged {
        // The log append waits for the engine: made without the archive, so that other
        // partitions' commits go on meanwhile (docs/cluster.md: −37.7 % → −27.0 % against the
        // embedded crawl). A page whose twin is committed meanwhile was written as a response,
        // not a revisit.
        let records = [&first[..], request].concat();
        drop(held);
        if !(p.log)(site, records).map_err(WorkerError::Log)? {
            return Err(WorkerError::Fenced(site.to_string()));
        }
        return finish_commit(store, commit);
    }
    finish_commit(store, commit)
}

/// Apply `commit` (after its records are in the archive), unless it is empty.
fn finish_commit(store: &Store, commit: Commit) -> Result<CommitOutcome, WorkerError> {
    if commit.is_empty() {
        return Ok(CommitOutcome::default());
    }
    Ok(store.commit(commit)?)
}

/// `partitioned` with a fetch's site, for [`commit_archived`].
fn logged<'a>(
    partitioned: &'a Option<Partitioned>,
    site: &'a str,
) -> Option<(&'a Partitioned, &'a str)> {
    partitioned.as_ref().map(|p| (p, site))
}

/// Store `resp`, a response to GET `url` that was had without a request of this crawl (an
/// imported WARC record, `crawl::import`), as a fetched page at `depth` is stored: parsed,
/// its links queued, its page committed. No queue entry is consumed and nothing is archived.
pub async fn store_response(
    ctx: Arc<Ctx>,
    url: Url,
    depth: u32,
    resp: Response,
) -> Result<Processed, WorkerError> {
    let entry = QueueEntry::page(url.to_string(), depth);
    page_processing(ctx, Commit::new(), entry, url, resp, None, None).await
}

/// Parsing and committing a fetched page, as the future the scheduler runs once the request's
/// own bookkeeping is done (`Processing`).
fn page_processing(
    ctx: Arc<Ctx>,
    commit: Commit,
    entry: QueueEntry,
    url: Url,
    resp: Response,
    exchange: Option<Exchange>,
    replacing: Option<u64>,
) -> Processing {
    Box::pin(async move {
        // A huge page waits for no other huge page to be parsing, before taking a core, so
        // small pages keep parsing meanwhile (two at once were the crawl's peak).
        let huge_turn = crate::memory::huge_parse_turn(resp.body.len() as u64).await;
        let permit = ctx
            .cpu
            .clone()
            .acquire_owned()
            .await
            .expect("invariant: semaphore never closed");
        let ctx2 = ctx.clone();
        // Parse (and build the WARC records) and commit on the blocking pool (the async workers
        // stay free for I/O); the CPU permit covers that work only, so the next page parses
        // while this one waits for the store's commit lock.
        let (outcome, verdict) = tokio::task::spawn_blocking(move || {
            // With the archive on, the body is compressed once, for its record and the store.
            let deflated = ctx2.archive.as_ref().map(|a| a.deflate(&resp.body));
            let (c, verdict, early) = process_page(
                &ctx2,
                commit,
                &entry,
                &url,
                &resp,
                replacing,
                deflated.as_ref(),
            )?;
            let archived = ctx2.archive.as_ref().zip(exchange.as_ref());
            let capture = archived.map(|(a, x)| {
                let body = match &deflated {
                    Some(d) => Body::Deflated(&resp.body, d),
                    None => Body::Whole(&resp.body),
                };
                (a, a.capture(&url, x, body))
            });
            drop(deflated);
            drop(permit);
            // The parse freed the page's DOM: give that back before the next huge page parses
            // and before waiting for the commit lock (behind which other huge pages may wait).
            crate::memory::release_after(resp.body.len() as u64);
            drop(huge_turn);
            let site = urls::site_key(&url);
            let logged = logged(&ctx2.partitioned, &site);
            let committed = match capture {
                Some((archive, capture)) => {
                    commit_archived(&ctx2.store, archive, &capture, c, logged).map(|o| (o, verdict))
                }
                None => ctx2
                    .store
                    .commit(c)
                    .map(|o| (o, verdict))
                    .map_err(Into::into),
            };
            // A huge page's parse and commit freed far more than the crawl keeps (its DOM, its
            // links on their way to the queue): give it back before the next one.
            let bytes = resp.body.len() as u64;
            drop(resp);
            crate::memory::release_after(bytes);
            committed.map(|(mut outcome, verdict)| {
                if !early.is_empty() {
                    let mut all = early;
                    all.append(&mut outcome.enqueued);
                    outcome.enqueued = all;
                }
                (outcome, verdict)
            })
        })
        .await
        .map_err(|e| WorkerError::Panic(e.to_string()))??;
        let verdict = match verdict {
            Verdict::Stored { .. } if outcome.duplicate_of.is_some() => Verdict::Failed {
                kind: ErrorKind::Duplicate,
            },
            Verdict::Stored { .. } if !outcome.page_stored => Verdict::Done,
            v => v,
        };
        Ok(Processed {
            verdict,
            enqueued: outcome.enqueued,
        })
    })
}

/// The verdict on an HTTP status that is not a page, and whether the origin backs off: 429,
/// 503 and other 5xx are queued again (until their retries run out), other statuses recorded.
fn status_verdict(
    cfg: &Config,
    commit: &mut Commit,
    entry: &QueueEntry,
    url: &Url,
    status: u16,
    retry_after: Option<Duration>,
) -> (Verdict, bool) {
    let kind = ErrorKind::Http(status);
    let message = format!("HTTP {status}");
    if status == 429 || (500..600).contains(&status) {
        let verdict = retry_or_fail(cfg, commit, entry, url, kind, message, retry_after);
        return (verdict, true);
    }
    commit.error(entry.url.clone(), record(kind.clone(), message, entry));
    (Verdict::Failed { kind }, false)
}

/// The verdict on a request that got no usable response, and whether the origin backs off:
/// transient failures are queued again (until their retries run out), others recorded.
fn error_verdict(
    cfg: &Config,
    commit: &mut Commit,
    entry: &QueueEntry,
    url: &Url,
    error: &FetchErrorKind,
) -> (Verdict, bool) {
    if error.is_transient() {
        let verdict = retry_or_fail(
            cfg,
            commit,
            entry,
            url,
            error.kind(),
            error.to_string(),
            None,
        );
        return (verdict, true);
    }
    commit.error(
        entry.url.clone(),
        record(error.kind(), error.to_string(), entry),
    );
    (Verdict::Failed { kind: error.kind() }, false)
}

fn record(kind: ErrorKind, message: String, entry: &QueueEntry) -> ErrorRecord {
    ErrorRecord {
        kind,
        message,
        at_ms: now_ms(),
        attempts: entry.attempts + 1,
    }
}

fn failure(
    origin_id: u32,
    slot: Slot,
    entry: &QueueEntry,
    kind: ErrorKind,
    message: String,
) -> Commit {
    let mut c = Commit::new();
    c.consume(origin_id, slot)
        .error(entry.url.clone(), record(kind, message, entry));
    c
}

/// Queue the entry again unless it has used up its retries.
fn retry_or_fail(
    cfg: &Config,
    commit: &mut Commit,
    entry: &QueueEntry,
    url: &Url,
    kind: ErrorKind,
    message: String,
    retry_after: Option<Duration>,
) -> Verdict {
    if entry.attempts < cfg.fetch.max_retries {
        let mut again = entry.clone();
        again.attempts += 1;
        commit.requeue(urls::origin_key(url), again);
        Verdict::Retry {
            retry_after,
            cause: message,
        }
    } else {
        commit.error(entry.url.clone(), record(kind.clone(), message, entry));
        Verdict::Failed { kind }
    }
}

/// A 3xx: queue the target (its own origin's robots and politeness apply) or record why not.
fn redirect(
    ctx: &Ctx,
    commit: &mut Commit,
    entry: &QueueEntry,
    url: &Url,
    status: u16,
    location: &str,
) -> Verdict {
    let first = entry.via.clone().unwrap_or_else(|| entry.url.clone());
    let mut fail = |kind: ErrorKind, message: String| {
        commit.error(first.clone(), record(kind.clone(), message, entry));
        Verdict::Failed { kind }
    };
    let Some(target) = urls::normalize(url, location) else {
        return fail(
            ErrorKind::RedirectInvalid,
            format!("HTTP {status} to {location:?}"),
        );
    };
    if target.as_str() == entry.url || target.as_str() == first {
        return fail(
            ErrorKind::RedirectLoop,
            format!("{} redirects back to {target}", entry.url),
        );
    }
    if entry.redirects >= ctx.config.fetch.max_redirects {
        return fail(
            ErrorKind::RedirectLimit,
            format!(
                "more than {} redirects, last to {target}",
                ctx.config.fetch.max_redirects
            ),
        );
    }
    if let Err(why) = ctx.scope.check(&target) {
        return fail(ErrorKind::RedirectOutOfScope, format!("to {target}: {why}"));
    }
    if let Some(p) = &ctx.partitioned {
        if !(p.same_partition)(&urls::site_key(url), &urls::site_key(&target)) {
            (p.hand_on)(vec![(target.to_string(), entry.depth)]);
            return Verdict::Done;
        }
    }
    commit.discover(
        urls::origin_key(&target),
        QueueEntry {
            url: target.to_string(),
            depth: entry.depth,
            kind: entry.kind,
            attempts: 0,
            redirects: entry.redirects + 1,
            via: Some(first),
        },
    );
    Verdict::Done
}

/// Parse, extract links, build the page record (blocking: CPU work). `replacing`: the page is
/// a stored one a recrawl found changed, whose old body hashed to this.
///
/// A page's links go to the store in batches of [`DISCOVER_BATCH`] as they are found (the
/// returned `Enqueued`, in page order; the commit keeps the last, partial batch): a huge page's
/// links were one vector of queue entries, held until the page's own commit (230,000
/// links, ~40 MB a page, three such pages waiting for the commit lock at once). As with one big
/// commit, the URLs are queued and seen before the page is stored: a crash in between fetches
/// the page again and finds its links seen.
fn process_page(
    ctx: &Ctx,
    mut commit: Commit,
    entry: &QueueEntry,
    url: &Url,
    resp: &Response,
    replacing: Option<u64>,
    deflated: Option<&Deflated>,
) -> Result<(Commit, Verdict, Vec<Enqueued>), StoreError> {
    let mut early = Vec::new();
    // A huge page parses on a thread of its own, giving back what its `Rc` tree frees as it
    // goes: its tree, arena and links are then not spread among the store's long-lived
    // allocations, and the heap it used goes back to the OS whole (`links3`).
    let huge = resp.body.len() as u64 >= crate::memory::HUGE_PAGE_BYTES;
    let parse = || {
        let decoded = dom::charset::decode_html(&resp.body, resp.content_type.as_deref());
        let parsed = if huge {
            dom::parse::parse_html_releasing(&decoded.text, &crate::memory::release)
        } else {
            dom::parse_html(&decoded.text)
        };
        (decoded.encoding, parsed)
    };
    let (encoding, mut parsed) = if huge {
        crate::memory::on_own_heap(parse)
    } else {
        parse()
    };
    let header_robots = resp
        .kept_headers
        .iter()
        .find(|(k, _)| k == "x-robots-tag")
        .map(|(_, v)| v.as_str());
    let dom::MetaRobots { noindex, nofollow } = parsed.robots.with_header(header_robots);
    // The page record first, so the DOM is freed before the links go to the store (a huge
    // page's DOM beside the store's growth was the `links1` peak); the links are kept alone.
    let links = std::mem::take(&mut parsed.links);
    let base = parsed
        .base_href
        .as_deref()
        .and_then(|b| urls::normalize(url, b))
        .unwrap_or_else(|| url.clone());
    let site = urls::site_key(url);
    let page_id = urls::page_id(url);
    let page = (!noindex).then(|| {
        let paths = parsed.dom.path_set();
        let meta = PageMeta {
            url: url.to_string(),
            requested: entry.via.clone(),
            site: site.clone(),
            status: resp.status,
            content_type: resp.content_type.clone(),
            headers: resp.kept_headers.clone(),
            fetched_at_ms: unix_ms(resp.fetched_at),
            depth: entry.depth,
            body_bytes: resp.body.len() as u64,
            encoding: encoding.name().to_string(),
            title: parsed.dom.title(),
            truncated: parsed.truncated,
        };
        match deflated {
            Some(d) => {
                NewPage::new_deflated(page_id, meta, &resp.body, &d.raw, &parsed.dom, &paths)
            }
            None => NewPage::new(page_id, meta, &resp.body, &parsed.dom, &paths),
        }
    });
    drop(parsed);
    // The html5ever tree and the DOM are freed by now (a huge page's ~200 MB): give that back
    // before its links go to the store.
    crate::memory::release_after(resp.body.len() as u64);

    // Links for other partitions (a cluster worker's), handed to their owners.
    let mut handed = Vec::new();
    if !nofollow && entry.depth < ctx.config.crawl.max_depth {
        for link in links.iter().filter(|l| !l.nofollow) {
            let Some(target) = urls::normalize(&base, link.href) else {
                continue;
            };
            if ctx.scope.check(&target).is_err() {
                continue;
            }
            if let Some(p) = &ctx.partitioned {
                if !(p.same_partition)(&site, &urls::site_key(&target)) {
                    handed.push((target.to_string(), entry.depth + 1));
                    continue;
                }
            }
            commit.discover(
                urls::origin_key(&target),
                QueueEntry::page(target.to_string(), entry.depth + 1),
            );
            if commit.discovered_len() >= DISCOVER_BATCH {
                early.extend(ctx.store.commit(commit.take_discovered())?.enqueued);
            }
        }
    }
    drop(links);
    if let (Some(p), false) = (&ctx.partitioned, handed.is_empty()) {
        (p.hand_on)(handed);
    }
    let Some(page) = page else {
        return Ok((commit, Verdict::Done, early));
    };
    if let Some(old_content) = replacing {
        commit.replace(page, old_content);
        return Ok((commit, Verdict::Replaced { site, page_id }, early));
    }
    commit.page(page);
    Ok((commit, Verdict::Stored { site, page_id }, early))
}

fn process_sitemap(
    ctx: &Ctx,
    mut commit: Commit,
    entry: &QueueEntry,
    url: &Url,
    resp: &Response,
) -> (Commit, Verdict) {
    let max_urls = ctx.config.robots.max_sitemap_urls as usize;
    let parsed = match sitemap::parse_sitemap(
        &resp.body,
        ctx.config.fetch.max_body_bytes.max(50 << 20) as usize,
        max_urls,
    ) {
        Ok(s) => s,
        Err(e) => {
            commit.error(
                entry.url.clone(),
                record(ErrorKind::Sitemap, e.to_string(), entry),
            );
            return (
                commit,
                Verdict::Failed {
                    kind: ErrorKind::Sitemap,
                },
            );
        }
    };
    for (loc, kind, depth) in parsed
        .urls
        .iter()
        .map(|u| (u, EntryKind::Page, entry.depth + 1))
        // Nested sitemaps count as a hop, so max_depth bounds index-of-index chains.
        .chain(
            parsed
                .sitemaps
                .iter()
                .map(|u| (u, EntryKind::Sitemap, entry.depth + 1)),
        )
    {
        let Some(target) = urls::normalize(url, loc) else {
            continue;
        };
        // Sitemaps end in .xml/.gz, which the default exclude patterns drop: host-check them.
        let in_scope = match kind {
            EntryKind::Sitemap => ctx.scope.check_host(&target).is_ok(),
            EntryKind::Page | EntryKind::Revisit => ctx.scope.check(&target).is_ok(),
        };
        if !in_scope || depth > ctx.config.crawl.max_depth {
            continue;
        }
        let queued = QueueEntry {
            kind,
            ..QueueEntry::page(target.to_string(), depth)
        };
        if ctx.recrawl && kind == EntryKind::Sitemap {
            // A recrawl reads the site's sitemaps again, seen or not (bounded by max_depth).
            commit.requeue(urls::origin_key(&target), queued);
        } else {
            commit.discover(urls::origin_key(&target), queued);
        }
    }
    if ctx.recrawl {
        if let Err(e) = promote_revisits(ctx, url, &parsed) {
            tracing::warn!(%url, "recrawl: cannot reorder revisits from this sitemap: {e}");
        }
    }
    (commit, Verdict::Done)
}

/// A recrawl read a sitemap or feed: stored pages whose `<lastmod>` is newer than their fetch
/// move to the head of their origin's revisit queue, and pages a feed links to come next
/// (docs/recrawl.md, "Order").
fn promote_revisits(ctx: &Ctx, url: &Url, parsed: &sitemap::Sitemap) -> Result<(), StoreError> {
    let lastmod: std::collections::HashMap<usize, &str> = parsed
        .lastmod
        .iter()
        .map(|(i, m)| (*i, m.as_str()))
        .collect();
    for (i, loc) in parsed.urls.iter().enumerate() {
        let class = if parsed.feed {
            crate::store::class::FEED
        } else {
            match lastmod.get(&i).and_then(|m| sitemap::lastmod_ms(m)) {
                Some(_) => crate::store::class::LASTMOD,
                None => continue,
            }
        };
        let Some(target) = urls::normalize(url, loc) else {
            continue;
        };
        let id = urls::page_id(&target);
        let Some(meta) = ctx.store.page(id)? else {
            continue;
        };
        if class == crate::store::class::LASTMOD {
            let newer = lastmod
                .get(&i)
                .and_then(|m| sitemap::lastmod_ms(m))
                .is_some_and(|m| m > meta.fetched_at_ms);
            if !newer {
                continue;
            }
        }
        let Some(origin) = ctx.store.origin_id(&urls::origin_key(&target)) else {
            continue;
        };
        ctx.store.promote_revisit(RevisitSlot {
            origin,
            class,
            order: meta.fetched_at_ms,
            page: id,
        })?;
    }
    Ok(())
}

/// Fetch `origin`/robots.txt (following redirects as RFC 9309 allows) and decide the entry.
async fn fetch_robots(
    ctx: &Ctx,
    origin_id: u32,
    origin: &Url,
    previous: Option<&RobotsEntry>,
) -> Result<JobResult, WorkerError> {
    let cfg = &ctx.config;
    let mut url = origin
        .join("/robots.txt")
        .unwrap_or_else(|_| origin.clone());
    let mut hops = 0;
    let mut bytes = 0;
    let mut body = Vec::new();
    let mut failure = None;
    let fetch = loop {
        let (fetched, exchange) = ctx
            .fetcher
            .get(&url, Accept::Any, cfg.robots.max_bytes, Overflow::Truncate)
            .await;
        if exchange.is_some() {
            let resp = match &fetched {
                Ok(Outcome::Ok(r)) => Some(r.clone()),
                _ => None,
            };
            // robots.txt commits nothing: the archive is all there is to write.
            commit_captured(ctx, Commit::new(), &url, exchange, resp).await?;
        }
        match fetched {
            Ok(Outcome::Ok(resp)) => {
                bytes = resp.body.len() as u64;
                body = resp.body;
                break None;
            }
            Ok(Outcome::Redirect { status, location }) => {
                if !may_follow_redirect(hops, &cfg.robots) {
                    break Some(RobotsFetch::TooManyRedirects);
                }
                hops += 1;
                match urls::normalize(&url, &location) {
                    Some(next) => url = next,
                    None => {
                        break Some(RobotsFetch::Status {
                            code: status,
                            retry_after: None,
                        })
                    }
                }
            }
            Ok(Outcome::Status {
                status,
                retry_after,
            }) => {
                failure = Some(match retry_after {
                    Some(r) => format!("HTTP {status}, Retry-After {}s", r.as_secs()),
                    None => format!("HTTP {status}"),
                });
                break Some(RobotsFetch::Status {
                    code: status,
                    retry_after: retry_after.map(|r| r.min(cfg.fetch.max_retry_after)),
                });
            }
            Ok(Outcome::NotHtml { content_type }) => {
                failure = Some(format!("unexpected answer ({content_type})"));
                break Some(RobotsFetch::Unreachable);
            }
            // robots.txt is fetched without validators: no 304 comes back as this.
            Ok(Outcome::NotModified { .. }) => {
                break Some(RobotsFetch::Status {
                    code: 304,
                    retry_after: None,
                })
            }
            Err(e) => {
                failure = Some(e.kind.to_string());
                break Some(RobotsFetch::Unreachable);
            }
        }
    };
    let fetch = fetch.unwrap_or(RobotsFetch::Success(&body));
    let entry = RobotsEntry::from_fetch(
        fetch,
        previous,
        std::time::SystemTime::now(),
        &cfg.robots,
        &cfg.fetch.robots_token,
    );
    // Only a failure that leaves the origin waiting is one (a 4xx means "no file": allow all).
    let failure = failure.filter(|_| entry.unreachable_since.is_some());
    Ok(JobResult {
        origin_id,
        slot: None,
        verdict: Verdict::Robots { entry, failure },
        completed_at: Instant::now(),
        enqueued: Vec::new(),
        bytes,
        responded: false,
        backoff: false,
    })
}

/// A commit that consumes `(origin_id, slot)` because robots.txt disallows its URL.
pub fn disallowed(origin_id: u32, slot: Slot, entry: &QueueEntry) -> Commit {
    failure(
        origin_id,
        slot,
        entry,
        ErrorKind::RobotsDisallowed,
        "disallowed by robots.txt".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::SystemTime;

    /// A store, an archive in its own directory and a capture of one GET.
    fn archived() -> (
        tempfile::TempDir,
        Store,
        Archive,
        super::super::archive::Capture,
    ) {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = Store::open(&tmp.path().join("store"), 1 << 20).expect("store");
        let mut config = Config::default();
        config.crawl.warc_dir = Some(tmp.path().join("warc"));
        let (archive, _) = Archive::open(&config).expect("open").expect("on");
        let exchange = Exchange {
            started: SystemTime::UNIX_EPOCH + Duration::from_millis(1_500),
            version: "HTTP/1.1",
            request_version: "HTTP/1.1",
            request_headers: vec![("host", "a.example".into())],
            status: 200,
            reason: "OK".into(),
            headers: vec![("content-type".into(), b"text/html".to_vec())],
            remote_ip: None,
        };
        let url = Url::parse("http://a.example/p").expect("url");
        let capture = archive.capture(&url, &exchange, Body::Whole(b"<p>page</p>"));
        (tmp, store, archive, capture)
    }

    /// The bytes of every file in `dir` (open or finished), one after another.
    fn written(dir: &std::path::Path) -> Vec<u8> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("WARC dir")
            .flatten()
            .map(|f| f.path())
            .collect();
        files.sort();
        files
            .iter()
            .flat_map(|f| std::fs::read(f).expect("read"))
            .collect()
    }

    /// Hooks whose log append answers `accept` and records, at that moment, whether the
    /// records it was given were already in the worker's WARC file.
    fn partitioned(dir: std::path::PathBuf, accept: bool) -> (Partitioned, Arc<Mutex<Vec<bool>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log_seen = seen.clone();
        let log: LogRecords = Arc::new(move |_site, records: Vec<u8>| {
            let file = written(&dir);
            let held = file.windows(records.len()).any(|w| w == &records[..]);
            log_seen.lock().expect("lock").push(held);
            Ok(accept)
        });
        let p = Partitioned {
            owns: Arc::new(|_| true),
            same_partition: Arc::new(|_, _| true),
            log,
            hand_on: Arc::new(|_| {}),
            started: Arc::new(|_| {}),
            settled: Arc::new(|_| {}),
        };
        (p, seen)
    }

    /// Regression (a cluster test that failed now and then): the records went to the partition
    /// log first and to the worker's file after, so a kill -9 between the two left a page the
    /// next owner imported from the log in no WARC file. The file now has them before the log.
    #[test]
    fn a_kill_between_log_and_file_left_a_page_in_no_warc() {
        let (tmp, store, archive, capture) = archived();
        let (p, seen) = partitioned(tmp.path().join("warc"), true);
        commit_archived(
            &store,
            &archive,
            &capture,
            Commit::new(),
            Some((&p, "a.example")),
        )
        .expect("committed");
        assert_eq!(
            *seen.lock().expect("lock"),
            vec![true],
            "in the file before the log"
        );
    }

    /// A fenced append (the partition is another worker's) is an error, and the request that
    /// was made stays in the worker's own file.
    #[test]
    fn a_fenced_fetch_is_not_committed_and_its_records_stay_in_the_file() {
        let (tmp, store, archive, capture) = archived();
        let (p, _) = partitioned(tmp.path().join("warc"), false);
        let err = commit_archived(
            &store,
            &archive,
            &capture,
            Commit::new(),
            Some((&p, "a.example")),
        )
        .expect_err("fenced");
        assert!(
            matches!(err, WorkerError::Fenced(ref s) if s == "a.example"),
            "{err}"
        );
        assert!(written(&tmp.path().join("warc")).len() >= capture.bytes());
    }
}
