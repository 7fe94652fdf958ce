//! Importing WARC files into a crawl (`crawl --import-warc`, docs/warc.md "Reading them back
//! into a crawl"): each HTML response they hold within the crawl's scope is stored as a page this
//! crawl fetched (parsed, its links queued, handed to inline learning), after the URLs of every
//! response in them have entered the seen set, so the crawl goes on fetching only what the
//! files lack. A cluster partition's next owner is to rebuild a partition from its log the same
//! way (docs/cluster.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::fetch::{is_html_type, looks_like_html, Response, KEPT_HEADERS};
use super::url as urls;
use super::worker::{self, CrawlEvent, Ctx, EventSink, StoredPage, Verdict, WorkerError};
use crate::store::{Commit, Enqueued, QueueEntry, StoreError, DISCOVER_BATCH};
use crate::warc::{self, HttpResponse, Record};

/// Told of the URLs an import queues (a running crawl's scheduler must hear of them; one that
/// starts after the import reads its queues from the store).
pub type Queued = Arc<dyn Fn(Vec<Enqueued>) + Send + Sync>;

/// Pages parsed at once: enough to keep every core busy (the CPU permit inside bounds the parse).
const IN_FLIGHT: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read WARC input {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: no WARC files (*.warc, *.warc.gz) in this directory")]
    Empty { path: PathBuf },
    #[error(
        "an import of WARC files into this data directory was interrupted ({0}): run the crawl \
         again with the same --import-warc to finish it (the URLs it had not stored yet are \
         marked seen and would not be fetched)"
    )]
    Interrupted(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Worker(#[from] WorkerError),
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub files: usize,
    /// `response` records read (any status).
    pub responses: u64,
    /// Pages stored.
    pub pages: u64,
    /// HTML responses whose page the store already had (an import run again).
    pub already: u64,
    /// Redirects whose target was queued.
    pub redirects: u64,
    /// Responses out of the crawl's scope, not HTML, or of another status: not stored.
    pub skipped: u64,
    /// Records that could not be read (reported and skipped).
    pub problems: u64,
    pub elapsed: Duration,
    /// Shutdown was asked for before every record was read: run the crawl again with the same
    /// `--import-warc` to finish.
    pub interrupted: bool,
}

/// The WARC files `paths` name: files as given, directories' `*.warc` and `*.warc.gz` sorted by
/// name (a crawl's own files sort in the order they were written).
pub fn warc_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for path in paths {
        let read = |source| ImportError::Read {
            path: path.clone(),
            source,
        };
        if !path.is_dir() {
            std::fs::metadata(path).map_err(read)?;
            files.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".warc") || name.ends_with(".warc.gz")
            })
            .collect();
        if found.is_empty() {
            return Err(ImportError::Empty { path: path.clone() });
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// The store's note of an import under way (its inputs), removed when it completes: a crawl
/// resumed without `--import-warc` after an interrupted import is refused ([`check_finished`]).
const IMPORT_META: &str = "import_in_progress";

/// `Err(Interrupted)` when an import into `store` was started and not finished.
pub fn check_finished(store: &crate::store::Store) -> Result<(), ImportError> {
    match store.get_meta::<Option<Vec<String>>>(IMPORT_META)? {
        Some(Some(inputs)) => Err(ImportError::Interrupted(inputs.join(", "))),
        _ => Ok(()),
    }
}

/// Import `files` into `ctx`'s store, telling `events` of each page stored. Records are read
/// on a blocking thread and parsed as the crawl parses pages (at most `IN_FLIGHT` bodies
/// wait in memory); a problem record is logged, counted and skipped.
pub async fn import(
    ctx: &Arc<Ctx>,
    files: &[PathBuf],
    events: Option<&EventSink>,
    shutdown: &CancellationToken,
    queued: Option<Queued>,
) -> Result<ImportSummary, ImportError> {
    let started = Instant::now();
    let inputs: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    ctx.store.put_meta(IMPORT_META, &Some(inputs))?;
    let (tx, mut rx) = tokio::sync::mpsc::channel(IN_FLIGHT);
    let reader = {
        let ctx = ctx.clone();
        let files = files.to_vec();
        let queued = queued.clone();
        tokio::task::spawn_blocking(move || read(&ctx, &files, &tx, queued.as_ref()))
    };
    let mut pages = 0;
    let mut parsing: JoinSet<Result<worker::Processed, WorkerError>> = JoinSet::new();
    let mut stored =
        |joined: Result<Result<worker::Processed, WorkerError>, tokio::task::JoinError>| {
            let processed = joined.map_err(|e| WorkerError::Panic(e.to_string()))??;
            if let Some(q) = &queued {
                q(processed.enqueued);
            }
            if let Verdict::Stored { site, page_id } = processed.verdict {
                pages += 1;
                if let Some(events) = events {
                    events(CrawlEvent::Stored(StoredPage { site, page_id }));
                }
            }
            Ok::<(), ImportError>(())
        };
    let interrupted = loop {
        let next = tokio::select! {
            _ = shutdown.cancelled() => None,
            next = rx.recv() => next,
        };
        let Some((url, resp)) = next else {
            break shutdown.is_cancelled();
        };
        while parsing.len() >= IN_FLIGHT {
            let joined = parsing
                .join_next()
                .await
                .expect("invariant: tasks are running");
            stored(joined)?;
        }
        parsing.spawn(worker::store_response(ctx.clone(), url, 0, resp));
    };
    // The pages handed out are stored whatever happens; the reader stops at its next send.
    drop(rx);
    while let Some(joined) = parsing.join_next().await {
        stored(joined)?;
    }
    let mut summary = reader
        .await
        .map_err(|e| WorkerError::Panic(e.to_string()))??;
    summary.pages = pages;
    summary.elapsed = started.elapsed();
    summary.interrupted = interrupted;
    if !interrupted {
        ctx.store.put_meta(IMPORT_META, &None::<Vec<String>>)?;
    }
    Ok(summary)
}

/// The reading side of [`import`]: every response's URL into the seen set, then the files read
/// again, each page to store sent on `tx`; the counts (but pages stored).
fn read(
    ctx: &Ctx,
    files: &[PathBuf],
    tx: &tokio::sync::mpsc::Sender<(Url, Response)>,
    queued: Option<&Queued>,
) -> Result<ImportSummary, ImportError> {
    let mut summary = ImportSummary {
        files: files.len(),
        ..ImportSummary::default()
    };
    // First every response's URL into the seen set, so that no page's link queues a URL whose
    // response comes later in the files. A 429 or 5xx is left to fetch again.
    let mut seen = Commit::new();
    let mut marked = 0;
    for file in files {
        // Counted in the second reading.
        let mut uncounted = ImportSummary::default();
        for_each_response(file, &mut uncounted, &mut |url, record, _| {
            // The status line is all this reading needs: the body is decoded in the second.
            let status = warc::http_status(&record.block).ok();
            if !status.is_some_and(|s| s == 429 || s >= 500) && ctx.scope.check(&url).is_ok() {
                seen.seen(url.to_string());
                marked += 1;
            }
            if marked >= DISCOVER_BATCH {
                ctx.store.commit(std::mem::take(&mut seen))?;
                marked = 0;
            }
            Ok(!tx.is_closed())
        })?;
    }
    ctx.store.commit(seen)?;

    for file in files {
        let mut redirects = Commit::new();
        for_each_response(file, &mut summary, &mut |url, record, summary| {
            let http = match warc::parse_http_response(&record.block, MAX_BODY) {
                Ok(h) => Some(h),
                Err(e) => {
                    tracing::warn!(file = %file.display(), offset = record.offset, %url, "WARC import: {e}");
                    summary.problems += 1;
                    None
                }
            };
            let Some(http) = http.filter(|_| ctx.scope.check(&url).is_ok()) else {
                summary.skipped += 1;
                return Ok(true);
            };
            if (300..400).contains(&http.status) {
                let target = http
                    .header("Location")
                    .and_then(|l| urls::normalize(&url, l))
                    .filter(|t| ctx.scope.check(t).is_ok());
                match target {
                    Some(t) => {
                        redirects
                            .discover(urls::origin_key(&t), QueueEntry::page(t.to_string(), 0));
                        summary.redirects += 1;
                    }
                    None => summary.skipped += 1,
                }
                return Ok(true);
            }
            if !(200..300).contains(&http.status) || !is_html(&http) {
                summary.skipped += 1;
                return Ok(true);
            }
            if ctx.store.page(urls::page_id(&url))?.is_some() {
                summary.already += 1;
                return Ok(true);
            }
            // A send fails when the receiving side stopped (shutdown, or an error that is the
            // import's): read no further.
            Ok(tx
                .blocking_send((url, response(http, warc_date(&record))))
                .is_ok())
        })?;
        let out = ctx.store.commit(redirects)?;
        if let Some(q) = queued {
            q(out.enqueued);
        }
        if tx.is_closed() {
            break;
        }
    }
    Ok(summary)
}

/// Call `f` with each `response` record of `file` and its target URL (normalised as the crawl
/// normalises); `summary` counts the responses and the records that cannot be read. `f` returns
/// whether to read on.
fn for_each_response(
    file: &Path,
    summary: &mut ImportSummary,
    f: &mut dyn FnMut(Url, Record, &mut ImportSummary) -> Result<bool, ImportError>,
) -> Result<(), ImportError> {
    let reader = warc::open(file).map_err(|source| ImportError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    for record in reader {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(file = %file.display(), "WARC import: {e}");
                summary.problems += 1;
                continue;
            }
        };
        if record.warc_type().as_deref() != Some("response") {
            continue;
        }
        let Some(url) = target(&record) else {
            tracing::warn!(file = %file.display(), offset = record.offset, "WARC import: a response without an http(s) WARC-Target-URI; skipped");
            summary.problems += 1;
            continue;
        };
        summary.responses += 1;
        if !f(url, record, summary)? {
            break;
        }
    }
    Ok(())
}

/// The largest body read from a record (a live fetch's cap is `fetch.max_body_bytes`; a WARC
/// may hold larger pages, which `clean --warc` reads up to the same size).
const MAX_BODY: usize = 16 << 20;

/// A record's `WARC-Target-URI` as the crawl's URL form, if http(s).
fn target(record: &Record) -> Option<Url> {
    let url = Url::parse(record.target_uri()?).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    urls::normalize_url(url)
}

/// A record's `WARC-Date` (now when missing or unreadable): the page's `fetched_at`.
fn warc_date(record: &Record) -> SystemTime {
    record
        .header("WARC-Date")
        .and_then(|d| humantime::parse_rfc3339_weak(d).ok())
        .unwrap_or_else(SystemTime::now)
}

/// HTML by its Content-Type, or by its first bytes when it has none (as a live fetch decides).
fn is_html(http: &HttpResponse) -> bool {
    match http.header("Content-Type") {
        Some(ct) => is_html_type(ct),
        None => looks_like_html(&http.body),
    }
}

/// The response as a live fetch gives it to the page's processing.
fn response(http: HttpResponse, fetched_at: SystemTime) -> Response {
    Response {
        status: http.status,
        content_type: http.header("Content-Type").map(str::to_string),
        kept_headers: KEPT_HEADERS
            .iter()
            .filter_map(|&h| http.header(h).map(|v| (h.to_string(), v.to_string())))
            .collect(),
        body: http.body,
        truncated: false,
        headers_at: Instant::now(),
        fetched_at,
    }
}
