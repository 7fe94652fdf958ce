//! The values the store keeps, as serde types encoded with postcard. Changing a field's type or
//! order changes the on-disk format: bump `SCHEMA_VERSION` in `store/mod.rs` when you do.

use serde::{Deserialize, Serialize};

/// What a queued URL is fetched for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntryKind {
    Page,
    /// A sitemap, or (read the same way) an RSS/Atom feed.
    Sitemap,
    /// A stored page fetched again by `crawl --recrawl`, with a conditional GET. Appended last,
    /// so entries written before it existed decode as they did.
    Revisit,
}

/// A URL waiting in its origin's queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueEntry {
    /// Normalised absolute URL.
    pub url: String,
    /// Link hops from a seed.
    pub depth: u32,
    pub kind: EntryKind,
    /// Failed transient attempts so far.
    pub attempts: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// The first URL of the redirect chain that led here, if any.
    pub via: Option<String>,
}

impl QueueEntry {
    pub fn page(url: String, depth: u32) -> QueueEntry {
        QueueEntry {
            url,
            depth,
            kind: EntryKind::Page,
            attempts: 0,
            redirects: 0,
            via: None,
        }
    }
}

/// An origin (scheme, host, port) the crawl has queued URLs for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginRecord {
    pub id: u32,
    /// `https://example.com:8443`
    pub key: String,
    /// Sequence number the next queued URL gets (queue keys are `(id, seq)`).
    pub next_seq: u64,
}

/// A stored page under `p` (schema 7): its metadata and where its HTML, DOM and path set are
/// in the page files (`None`: a page stored inline, before schema 6). Before schema 7 these
/// were two keys, `p` (the metadata alone) and `B`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PageRecord {
    /// First, so that reading it alone (`Store::page_ref`, every DOM and path set read) skips
    /// the metadata's strings.
    pub at: Option<super::pages::PageRef>,
    pub meta: PageMeta,
}

/// A stored page's metadata (its HTML, DOM and path set are in the page files).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageMeta {
    /// Final URL (after redirects).
    pub url: String,
    /// The URL first queued, when redirects led elsewhere.
    pub requested: Option<String>,
    /// `host` or `host:port` (templates are learned per site).
    pub site: String,
    pub status: u16,
    pub content_type: Option<String>,
    /// Headers worth keeping: ETag, Last-Modified, Content-Language, X-Robots-Tag, Date.
    pub headers: Vec<(String, String)>,
    /// Unix milliseconds.
    pub fetched_at_ms: u64,
    pub depth: u32,
    /// Body bytes as received (after content decoding).
    pub body_bytes: u64,
    pub encoding: String,
    pub title: Option<String>,
    /// The parser dropped part of a hostile page (too deep, too many nodes, too slow).
    pub truncated: bool,
}

/// Why a URL ended without a stored page: one typed list for the crawl's counts, its progress
/// and summary, `status` and the store's error records, so they cannot disagree. Stored as its
/// short stable name (`http-404`, `timeout`, …), the same bytes as the plain strings before it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// A final HTTP status (4xx, or a 5xx / 429 whose retries ran out).
    Http(u16),
    Connect,
    TimeoutFirstByte,
    Timeout,
    TooLarge,
    /// The connection failed while the body was read.
    Body,
    Request,
    BadEncoding,
    BadUrl,
    RedirectInvalid,
    RedirectLoop,
    RedirectLimit,
    RedirectOutOfScope,
    /// A sitemap that could not be read.
    Sitemap,
    /// A bug while fetching or parsing one page (its URL stays queued).
    Panic,
    /// Skipped, not failed: robots.txt disallows it.
    RobotsDisallowed,
    /// Skipped: not HTML.
    NotHtml,
    /// Skipped: byte-identical to a stored page.
    Duplicate,
    /// A name written by another version of thresher.
    Other(String),
}

impl ErrorKind {
    /// The short stable name shown in counts and kept in the store.
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        use std::borrow::Cow::Borrowed;
        match self {
            ErrorKind::Http(code) => format!("http-{code}").into(),
            ErrorKind::Other(name) => name.clone().into(),
            ErrorKind::Connect => Borrowed("connect"),
            ErrorKind::TimeoutFirstByte => Borrowed("timeout-first-byte"),
            ErrorKind::Timeout => Borrowed("timeout"),
            ErrorKind::TooLarge => Borrowed("too-large"),
            ErrorKind::Body => Borrowed("body"),
            ErrorKind::Request => Borrowed("request"),
            ErrorKind::BadEncoding => Borrowed("bad-encoding"),
            ErrorKind::BadUrl => Borrowed("bad-url"),
            ErrorKind::RedirectInvalid => Borrowed("redirect-invalid"),
            ErrorKind::RedirectLoop => Borrowed("redirect-loop"),
            ErrorKind::RedirectLimit => Borrowed("redirect-limit"),
            ErrorKind::RedirectOutOfScope => Borrowed("redirect-out-of-scope"),
            ErrorKind::Sitemap => Borrowed("sitemap"),
            ErrorKind::Panic => Borrowed("panic"),
            ErrorKind::RobotsDisallowed => Borrowed("robots-disallowed"),
            ErrorKind::NotHtml => Borrowed("not-html"),
            ErrorKind::Duplicate => Borrowed("duplicate"),
        }
    }

    /// The kind named `name` (`Other` for a name this version does not know).
    pub fn parse(name: &str) -> ErrorKind {
        const NAMED: [ErrorKind; 17] = [
            ErrorKind::Connect,
            ErrorKind::TimeoutFirstByte,
            ErrorKind::Timeout,
            ErrorKind::TooLarge,
            ErrorKind::Body,
            ErrorKind::Request,
            ErrorKind::BadEncoding,
            ErrorKind::BadUrl,
            ErrorKind::RedirectInvalid,
            ErrorKind::RedirectLoop,
            ErrorKind::RedirectLimit,
            ErrorKind::RedirectOutOfScope,
            ErrorKind::Sitemap,
            ErrorKind::Panic,
            ErrorKind::RobotsDisallowed,
            ErrorKind::NotHtml,
            ErrorKind::Duplicate,
        ];
        if let Some(code) = name.strip_prefix("http-").and_then(|c| c.parse().ok()) {
            return ErrorKind::Http(code);
        }
        NAMED
            .into_iter()
            .find(|k| k.name() == name)
            .unwrap_or_else(|| ErrorKind::Other(name.to_string()))
    }

    /// Skipped by choice (robots.txt, not HTML, a duplicate), not an error: counted apart.
    pub fn is_skip(&self) -> bool {
        matches!(
            self,
            ErrorKind::RobotsDisallowed | ErrorKind::NotHtml | ErrorKind::Duplicate
        )
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ErrorKind, D::Error> {
        let name = String::deserialize(d)?;
        Ok(ErrorKind::parse(&name))
    }
}

/// A URL that ended without a stored page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorRecord {
    pub kind: ErrorKind,
    pub message: String,
    pub at_ms: u64,
    pub attempts: u32,
}

/// A page's cleaned text as the template engine last produced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleanRecord {
    /// Cluster index in the site's clustering that produced the text.
    pub cluster: u32,
    pub text: String,
    pub updated_at_ms: u64,
}

/// What a page's byline said when the template engine last cleaned it (`template::byline`):
/// an author and a publication date (`YYYY-MM-DD`) read from the short lines the cleaner
/// dropped. Kept under its own key so that `CleanRecord`'s encoding (and the schema) stays as
/// it was: a store written before bylines were read simply has none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BylineRecord {
    pub author: Option<String>,
    pub published: Option<String>,
}

impl BylineRecord {
    pub fn is_empty(&self) -> bool {
        self.author.is_none() && self.published.is_none()
    }
}

/// A site's latest clustering (what `inspect` shows and the final pass records).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteClusters {
    /// The detector that made it (`text-max`, `node-hash`, …).
    pub detector: String,
    /// The site's page count when the end-of-crawl pass made this clustering; 0 while it is
    /// an interim (incremental) one.
    pub final_pages: u64,
    pub clusters: Vec<ClusterSummary>,
    pub updated_at_ms: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSummary {
    /// The id `CleanRecord::cluster` refers to.
    pub id: u32,
    /// Page ids, ascending.
    pub members: Vec<u64>,
    /// Template path hashes, sorted.
    pub template: Vec<u64>,
}

/// Counters kept per site.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteCounters {
    pub pages: u64,
    pub bytes: u64,
}

/// What `status` shows of a site's cleaning, kept as texts and clusters are stored (key `N`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteStatus {
    /// Pages with cleaned text (a page keeps its text once it has one).
    pub cleaned: u64,
    /// Clusters of the site's latest clustering.
    pub clusters: u64,
}

/// What the last runs did, for `thresher status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    pub started_at_ms: u64,
    /// 0 while running or when the run was killed.
    pub ended_at_ms: u64,
    /// `finished`, `interrupted`, `running` (a run that never recorded its end was killed).
    pub state: String,
    pub pages_fetched: u64,
}

/// What a recrawl found when it fetched a stored page again (docs/recrawl.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ChangeKind {
    /// A 304 Not Modified, or a 200 whose bytes equal the stored page's.
    Unchanged,
    /// New bytes, the same cleaned text: only template or boilerplate moved.
    TemplateChurn,
    /// New bytes and new cleaned text.
    ContentChanged,
    /// 404 or 410 (or a redirect elsewhere): the page is no longer at its URL.
    Gone,
    /// No usable answer (a final error, a status that is neither a page nor gone): the stored
    /// page stays as it was.
    Failed,
}

impl ChangeKind {
    pub const ALL: [ChangeKind; 5] = [
        ChangeKind::Unchanged,
        ChangeKind::TemplateChurn,
        ChangeKind::ContentChanged,
        ChangeKind::Gone,
        ChangeKind::Failed,
    ];

    /// The kind's stable name, as `thresher changes` prints it.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Unchanged => "unchanged",
            ChangeKind::TemplateChurn => "template-churn",
            ChangeKind::ContentChanged => "content-changed",
            ChangeKind::Gone => "gone",
            ChangeKind::Failed => "failed",
        }
    }
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One page's outcome in one recrawl (the append-only change log, `thresher changes`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeRecord {
    pub url: String,
    pub page_id: u64,
    pub kind: ChangeKind,
    /// When the page was fetched again (Unix ms).
    pub at_ms: u64,
    /// xxh3 of the page's cleaned text before and after (`None`: it had none).
    pub old_hash: Option<u64>,
    pub new_hash: Option<u64>,
}

/// A site's redesign, found by a recrawl (`learn::eras`): most of the pages it fetched again with
/// new bytes came back with a different page structure, and its template was learned again.
/// Each record starts a template era; the first crawl is era 1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedesignRecord {
    /// When its site's end-of-crawl pass found it (Unix ms).
    pub at_ms: u64,
    /// Pages whose structure changed (path-set Jaccard of old and new below
    /// `learn::eras::SAME_STRUCTURE`), of `replaced` pages replaced by new bytes.
    pub pages: u64,
    pub replaced: u64,
    /// Clusters of the site before (holding those pages as they were, when known) and after.
    pub old_clusters: Vec<u32>,
    pub new_clusters: Vec<u32>,
}

/// A stored page replaced by new bytes whose cleaned text is not final yet: the end-of-crawl
/// pass of its site compares the new text with `old_hash` and writes the `ChangeRecord`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingChange {
    pub url: String,
    pub at_ms: u64,
    pub old_hash: Option<u64>,
    /// The path set the site's clustering last saw for the page (what the learner removes
    /// before it adds the new one).
    pub old_paths: Vec<u64>,
}

/// A stored page that answered 404/410 (or moved away) on a recrawl. Its page, text and
/// output file are kept: history is not lost; `thresher changes` tells an index to drop it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoneRecord {
    pub at_ms: u64,
    pub status: u16,
}

/// The last `crawl --recrawl` (meta `recrawl`), for `status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecrawlRun {
    pub started_at_ms: u64,
    /// Pages fetched before this were queued again.
    pub cutoff_ms: u64,
    /// Pages queued for a revisit.
    pub queued: u64,
}

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
