//! The only code that touches sled. One tree, key spaces by prefix, so that everything one
//! fetch changes (page, links seen and queued, its queue entry removed) commits in one atomic
//! batch: a kill -9 loses at most the fetches in flight.
//!
//! Owns: sled, the key layout (the table below is its only copy) and the damage stamp. Imports
//! only `dom` and `output`: other modules' state (a robots cache, a clustering state) is stored
//! through serde without `store` knowing its type, so it never imports `crawl`, `template` or
//! anything above (docs/design.md, "The store").
//!
//! Damage: sled recovers a truncated or overwritten log silently to an older state (or to an
//! empty one), and may panic on some damage. So every `flush` bumps a stamp in the store and then
//! writes it to `DATA/thresher-store.json` (beside sled's files); an open that finds the store's
//! stamp behind the file's, or no thresher data under a marker, or a sled panic, is
//! `StoreError::Damaged`, with what to do. Commands that only read a store (`status`, `export`,
//! `inspect`) open it with [`Store::open_existing`], which never creates one.
//!
//! Page bytes: each page's raw HTML and DOM (lz4) and its path set are appended to the page
//! files beside sled's (`pages.rs`), and sled keeps where they are; `flush` makes them durable
//! before sled's log, and the marker records the last file's length, so a page file cut short
//! is damage too.
//!
//! Key layout (integers big-endian, so scans come out in order):
//!
//! | key                             | value                         |
//! |---------------------------------|-------------------------------|
//! | `M` name                        | meta: schema, runs, stamp     |
//! | `o` origin key                  | `OriginRecord`                |
//! | `f` origin id u32 · seq u64     | queue segment: the origin's entries from seq on (FIFO) |
//! | `w` origin id u32               | `Consumed`: which of its queue entries are done |
//! | `s` bucket u16 (URL hash's top) | URL hashes u64, sorted — the seen set |
//! | `p` page id u64                 | `PageRecord`: `PageMeta`, and where the page's HTML, DOM and path set are in `DATA/pages/` |
//! | `B` page id                     | `PageRef` (before schema 7; read only by the upgrade) |
//! | `L` page file u32               | u64: bytes of that file no page refers to any more |
//! | `h` page id                     | raw HTML, lz4 (before schema 6; read, never written) |
//! | `d` site · 0x00 · page id       | `Dom` bytes, lz4 (likewise)   |
//! | `x` site · 0x00 · page id       | path set, u64 little-endian (likewise) |
//! | `S` site · 0x00 · level u8 · bucket u16 | page ids u64, sorted — a site's pages (`site_index.rs`) |
//! | `n` site                        | `SiteCounters`                |
//! | `N` site                        | `SiteStatus`: pages with text, clusters |
//! | `e` URL                         | `ErrorRecord`                 |
//! | `r` origin key                  | robots cache (crawl's type)   |
//! | `c` site                        | clustering state (template's) |
//! | `k` site                        | `SiteClusters` (latest)       |
//! | `D` site · 0x00 · level u8 · bucket u16 | (body xxh3, page id) u64 pairs, sorted by hash (`site_index.rs`) |
//! | `t` page id                     | `TextHead` (cluster, xxh3 of the text, model, byline) · `CleanRecord` lz4 (`texts.rs`) |
//! | `T`, `F`, `b` page id           | text sum, model, byline (before schema 7; read only by the upgrade) |
//! | `v` origin u32 · class u8 · fetched ms u64 · page id | `QueueEntry` (revisit queue) |
//! | `C` at ms u64 · page id         | `ChangeRecord` (append-only)  |
//! | `P` site · 0x00 · page id       | `PendingChange`               |
//! | `G` page id                     | `GoneRecord`                  |
//! | `E` site · 0x00 · at ms u64     | `RedesignRecord` (append-only)|
//! | `O` site · 0x00 · page id       | era u32 — a page of an earlier template era, its text kept |
//! | `U` site                        | `OverBudgetRecord`: the site reached its page budget (`budget.rs`) |

mod budget;
mod commit;
mod frontier;
pub mod pages;
pub mod records;
pub mod recrawl;
mod seen;
mod site_index;
mod texts;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::Serialize;

pub use budget::OverBudgetRecord;
pub use commit::{Commit, CommitOutcome, Enqueued, NewPage, DISCOVER_BATCH};
pub use frontier::{Consumed, SEGMENT_ENTRIES};
pub use records::*;
pub use recrawl::{class, EraUpdate, RevisitSlot};
pub use texts::CleanBatch;

/// Bump when a record's encoding changes; `open` refuses other versions except 1 to 8, which it
/// upgrades (2: queue entries in per-origin segments, `frontier.rs`; 3: the seen set as buckets
/// of URL hashes, `seen.rs`; 4: DOMs and path sets keyed by site, `upgrade_site_keys_v3`; 5: a
/// `SiteStatus` per site, `upgrade_site_status_v4`; 6: new pages' HTML, DOM and path set in
/// page files, `pages.rs` — nothing to upgrade: older pages' inline values are read as before;
/// 7: a page's metadata and page reference in one value, `upgrade_pages_v6`, and its text,
/// text sum, byline and model in one, `texts.rs`; 8: a site's pages and body hashes in buckets,
/// `site_index.rs`; 9: a new DOM encoding, `dom::tree::ENCODING` — nothing rewritten: a page's
/// DOM and path set of an earlier encoding are made again from its HTML when read).
pub const SCHEMA_VERSION: u32 = 9;

/// sled writes its log to disk this often (ms).
pub const FLUSH_EVERY_MS: u64 = 200;

/// The file beside sled's that marks a thresher store and holds the stamp of its last flush.
pub const MARKER: &str = "thresher-store.json";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "data directory {dir} is damaged: {reason}. Its records cannot be trusted: move it aside \
         (mv {dir} {dir}.damaged) and run the crawl again to start afresh, or restore it from a \
         backup; cleaned text already written stays where it is"
    )]
    Damaged { dir: PathBuf, reason: String },
    #[error("{dir} is not a thresher data directory (no store in it; `crawl --data` makes one)")]
    NotAStore { dir: PathBuf },
    #[error("cannot write {path}: {source}")]
    Marker {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("data directory {dir} is in use by another thresher process (or was left locked)")]
    Locked { dir: PathBuf },
    #[error("data directory {dir}: {source}")]
    Open { dir: PathBuf, source: sled::Error },
    #[error("store: {0}")]
    Sled(#[from] sled::Error),
    #[error("page files in {dir}: {source}")]
    PageFile {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("store: corrupt value under key {key:?}: {message}")]
    Corrupt { key: String, message: String },
    #[error(
        "data directory {dir} has schema version {found}; this thresher reads version {expected}"
    )]
    Schema {
        dir: PathBuf,
        found: u32,
        expected: u32,
    },
}

pub(crate) mod key {
    pub const META: u8 = b'M';
    pub const ORIGIN: u8 = b'o';
    /// Schema 1's queue, one key per entry: read only by the upgrade to schema 2.
    pub const QUEUE: u8 = b'q';
    pub const FRONTIER: u8 = b'f';
    pub const CONSUMED: u8 = b'w';
    pub const SEEN: u8 = b's';
    pub const PAGE: u8 = b'p';
    /// Schema 1–5: a page's raw HTML, DOM and path set inline (schema 6 writes a `PAGE_BYTES`
    /// reference).
    pub const HTML: u8 = b'h';
    pub const DOM: u8 = b'd';
    /// Before schema 7: a page's `PageRef` (now in its `PageRecord`).
    pub const PAGE_BYTES: u8 = b'B';
    /// Per page file, its dead bytes (replaced pages'): what compaction reads.
    pub const PAGE_FILE: u8 = b'L';
    pub const PATHS: u8 = b'x';
    pub const SITE_PAGE: u8 = b'S';
    pub const SITE: u8 = b'n';
    pub const ERROR: u8 = b'e';
    pub const ROBOTS: u8 = b'r';
    pub const CLUSTERS: u8 = b'c';
    pub const CLEANED: u8 = b't';
    /// Before schema 7: a text's cluster and hash (now in its `t` value, as are `BYLINE`
    /// and `CLEAN_MODEL`).
    pub const CLEAN_SUM: u8 = b'T';
    pub const SITE_CLUSTERS: u8 = b'k';
    pub const BYLINE: u8 = b'b';
    pub const CONTENT: u8 = b'D';
    pub const REVISIT: u8 = b'v';
    pub const CHANGE: u8 = b'C';
    pub const PENDING: u8 = b'P';
    pub const GONE: u8 = b'G';
    pub const REDESIGN: u8 = b'E';
    pub const OLD_ERA: u8 = b'O';
    /// Before schema 7: the fingerprint of the end-of-crawl model that wrote the page's text.
    pub const CLEAN_MODEL: u8 = b'F';
    /// Per site: how many of its pages have cleaned text, and its clusters (`SiteStatus`), kept
    /// as texts and clusters are stored, so `status` reads a record per site, not every page.
    pub const SITE_STATUS: u8 = b'N';
    /// Per site over its page budget: `OverBudgetRecord` (`budget.rs`).
    pub const OVER_BUDGET: u8 = b'U';

    pub fn bytes(prefix: u8, rest: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(1 + rest.len());
        k.push(prefix);
        k.extend_from_slice(rest);
        k
    }

    pub fn page(prefix: u8, id: u64) -> Vec<u8> {
        bytes(prefix, &id.to_be_bytes())
    }

    /// Schema 1's queue keys of `origin`.
    pub fn queue_prefix(origin: u32) -> Vec<u8> {
        bytes(QUEUE, &origin.to_be_bytes())
    }

    /// The queue segment of `origin` whose first entry has sequence number `first`.
    pub fn frontier(origin: u32, first: u64) -> Vec<u8> {
        let mut k = Vec::with_capacity(13);
        k.push(FRONTIER);
        k.extend_from_slice(&origin.to_be_bytes());
        k.extend_from_slice(&first.to_be_bytes());
        k
    }

    pub fn consumed(origin: u32) -> Vec<u8> {
        bytes(CONSUMED, &origin.to_be_bytes())
    }

    pub fn page_file(id: u32) -> Vec<u8> {
        bytes(PAGE_FILE, &id.to_be_bytes())
    }

    /// `prefix` · site · 0x00 · page id: a site's records next to each other, so that reading
    /// one site's pages touches its own tree nodes, not nodes shared with every other site (page
    /// ids are URL hashes: keyed by id alone, one site's DOMs were spread over the whole tree).
    pub fn of_site(prefix: u8, site: &str, id: u64) -> Vec<u8> {
        let mut k = Vec::with_capacity(site.len() + 10);
        k.push(prefix);
        k.extend_from_slice(site.as_bytes());
        k.push(0);
        k.extend_from_slice(&id.to_be_bytes());
        k
    }
}

/// State the commit lock protects: origin ids and per-site counters, mirrored from sled.
#[derive(Debug, Default)]
struct Registry {
    origins: HashMap<String, OriginRecord>,
    /// What each origin's queue has consumed (absent: nothing yet).
    consumed: HashMap<u32, Consumed>,
    next_origin_id: u32,
    sites: HashMap<String, SiteCounters>,
    /// The seen set's buckets the commits have used (`seen::SeenMirror`).
    seen: seen::SeenMirror,
}

/// What [`Store::compact_page_files`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compacted {
    pub files_removed: u64,
    pub pages_moved: u64,
    /// The removed files' bytes (the moved pages' bytes went to the last file).
    pub bytes_freed: u64,
}

/// One record kind's share of the store ([`Store::bytes_by_kind`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindBytes {
    /// The key prefix (`p` page metadata, `B` where a page's bytes are, … as in the module's
    /// table).
    pub prefix: char,
    pub keys: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
}

pub struct Store {
    dir: PathBuf,
    db: sled::Db,
    tree: sled::Tree,
    registry: Mutex<Registry>,
    /// Held while a `SiteStatus` is read, changed and written with what changed it.
    site_status: Mutex<()>,
    pages: pages::PageFiles,
    /// The store was written before schema 9: pages may hold DOMs and path sets of an earlier
    /// parse, which are read by parsing their HTML again ([`Store::dom_at`]).
    older_doms: bool,
}

/// Collections of sled's deferred frees a write is followed by ([`reclaim_deferred`]).
/// Each collects at most 8 bags of 64 frees; a commit of a page's links leaves a few bags.
const RECLAIM_STEPS: usize = 16;

/// Run the frees sled deferred. Every sled write copies the node it changes and defers freeing
/// the old copy to crossbeam-epoch's default collector, which frees at most 8 bags of them per
/// 128 pins of any thread; a write-heavy store produced garbage faster than that, so it
/// piled up with no bound (the frontier benchmark's 1,000,000 URLs: peak RSS 424–610 MB
/// without this, ~90 MB with it; docs/benchmarks.md, "Memory"). Public for
/// `benches/sled_cache.rs`, which measures sled as the store drives it.
pub fn reclaim_deferred() {
    for _ in 0..RECLAIM_STEPS {
        crossbeam_epoch::pin().flush();
    }
}

impl Store {
    /// Write `batch` atomically, then free what the write replaced: the one way the store
    /// writes a batch.
    fn apply(&self, batch: sled::Batch) -> Result<(), StoreError> {
        self.tree.apply_batch(batch)?;
        reclaim_deferred();
        Ok(())
    }

    /// Write one key, then free what the write replaced.
    fn insert_one(&self, k: impl AsRef<[u8]>, v: impl Into<sled::IVec>) -> Result<(), StoreError> {
        self.tree.insert(k.as_ref(), v)?;
        reclaim_deferred();
        Ok(())
    }

    /// Open (or create) the store in `dir`, with sled's page cache bounded to `cache_bytes`.
    /// A store just closed by this or another process keeps its lock until sled's flusher
    /// thread exits (up to one flush interval), so a lock conflict is retried for a moment.
    pub fn open(dir: &Path, cache_bytes: u64) -> Result<Store, StoreError> {
        Store::open_mode(dir, cache_bytes, true)
    }

    /// Open the store in `dir` for a command that only reads it: `NotAStore` when `dir` holds
    /// none (nothing is created there).
    pub fn open_existing(dir: &Path, cache_bytes: u64) -> Result<Store, StoreError> {
        let has = |name: &str| dir.join(name).exists();
        if !(has(MARKER) || (has("conf") && has("db"))) {
            return Err(StoreError::NotAStore {
                dir: dir.to_path_buf(),
            });
        }
        Store::open_mode(dir, cache_bytes, false)
    }

    fn open_mode(dir: &Path, cache_bytes: u64, create: bool) -> Result<Store, StoreError> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1500);
        loop {
            // sled panics on some damage to its files: a damaged store, not a crash.
            OPENING.with(|o| o.set(true));
            let attempt = std::panic::catch_unwind(|| Store::open_once(dir, cache_bytes, create));
            OPENING.with(|o| o.set(false));
            let attempt = attempt.unwrap_or_else(|panic| {
                let reason = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("sled failed reading it");
                Err(StoreError::Damaged {
                    dir: dir.to_path_buf(),
                    reason: format!("reading it failed ({reason})"),
                })
            });
            match attempt {
                Err(StoreError::Locked { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    fn open_once(dir: &Path, cache_bytes: u64, create: bool) -> Result<Store, StoreError> {
        let marker = read_marker(dir)?;
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(cache_bytes)
            // Bounds what a kill -9 can lose: commits newer than this are the only ones at risk.
            .flush_every_ms(Some(FLUSH_EVERY_MS))
            .open()
            .map_err(|e| match e {
                sled::Error::Io(ref io)
                    if io.kind() == std::io::ErrorKind::WouldBlock
                        || io.to_string().contains("lock") =>
                {
                    StoreError::Locked {
                        dir: dir.to_path_buf(),
                    }
                }
                sled::Error::Corruption { .. } | sled::Error::Unsupported(_) => {
                    StoreError::Damaged {
                        dir: dir.to_path_buf(),
                        reason: e.to_string(),
                    }
                }
                source => StoreError::Open {
                    dir: dir.to_path_buf(),
                    source,
                },
            })?;
        let tree = db.open_tree("thresher")?;
        let mut store = Store {
            dir: dir.to_path_buf(),
            db,
            tree,
            registry: Mutex::new(Registry::default()),
            site_status: Mutex::new(()),
            pages: pages::PageFiles::new(dir),
            older_doms: false,
        };
        store.check_stamp(marker.stamp)?;
        store.check_page_files(marker.last_page_file)?;
        let found = store.check_schema(create)?;
        store.load_registry()?;
        // Before schema 9 DOMs were parsed otherwise: marked once, for good (pages of that
        // time stay in the store), before the schema says 9.
        let older = key::bytes(key::META, b"older-doms");
        if found <= 8 {
            store.insert_one(older.clone(), &[1])?;
        }
        store.older_doms = store.tree.contains_key(&older)?;
        if found < SCHEMA_VERSION {
            tracing::info!(
                dir = %dir.display(),
                "upgrading the store from schema {found} to {SCHEMA_VERSION}: every page's \
                 records are read and rewritten once (a 1M-page store: about 2 minutes); \
                 cut short, it goes on at the next open"
            );
            // First: the upgrades after it read pages and texts as schema 7 keeps them.
            if found <= 6 {
                store.upgrade_pages_v6()?;
                store.upgrade_texts_v6()?;
            }
            if found <= 7 {
                store.upgrade_site_index_v7()?;
            }
            if found == 1 {
                store.upgrade_queue_v1()?;
            }
            if found <= 2 {
                store.upgrade_seen_v2()?;
            }
            if found <= 3 {
                store.upgrade_site_keys_v3()?;
            }
            if found <= 4 {
                store.upgrade_site_status_v4()?;
            }
            // 5 → 6 changes nothing stored: older pages keep their inline bytes; 8 → 9 neither
            // (older DOMs are parsed again from their HTML when read, `older_doms`).
            store.insert_one(
                key::bytes(key::META, b"schema"),
                &SCHEMA_VERSION.to_be_bytes(),
            )?;
        }
        // Every open starts a new stamp before its caller writes anything (a schema upgrade
        // above changes the layout, not what a report counts): a report of the store at an
        // earlier stamp (`status`'s closed report) is then known stale, even when this process
        // is killed before its own last flush.
        store.flush()?;
        Ok(store)
    }

    /// The store must hold at least the stamp its marker file recorded at the last flush.
    fn check_stamp(&self, marker: Option<u64>) -> Result<(), StoreError> {
        let Some(expected) = marker else {
            return Ok(());
        };
        let has_schema = self.tree.contains_key(key::bytes(key::META, b"schema"))?;
        let found = self.stamp()?;
        let reason = if !has_schema {
            Some(format!(
                "{MARKER} says it holds a store, but sled's files hold no thresher records \
                 (overwritten or truncated?)"
            ))
        } else if found < expected {
            Some(format!(
                "it holds fewer records than when it was last saved (stamp {found}, {MARKER} \
                 says {expected}): its files were truncated or overwritten"
            ))
        } else {
            None
        };
        match reason {
            Some(reason) => Err(StoreError::Damaged {
                dir: self.dir.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// The page file last appended to at the last flush must still hold what it held then
    /// (compaction never removes that file before a flush names a later one).
    fn check_page_files(&self, expected: Option<(u32, u64)>) -> Result<(), StoreError> {
        let Some((id, len)) = expected else {
            return Ok(());
        };
        let found = self.pages.files().map_err(|e| self.page_file_error(e))?;
        let held = found.iter().find(|(f, _)| *f == id).map(|&(_, l)| l);
        let reason = match held {
            Some(l) if l >= len => return Ok(()),
            Some(l) => format!("holds {l} bytes, {MARKER} says {len}: it was truncated"),
            None => "is missing".to_string(),
        };
        Err(StoreError::Damaged {
            dir: self.dir.clone(),
            reason: format!(
                "its page file {} {reason}",
                self.pages.dir().join(format!("{id:06}.pages")).display()
            ),
        })
    }

    /// Bytes in the page files.
    pub fn page_file_bytes(&self) -> Result<u64, StoreError> {
        self.pages
            .total_bytes()
            .map_err(|e| self.page_file_error(e))
    }

    fn page_file_error(&self, source: std::io::Error) -> StoreError {
        StoreError::PageFile {
            dir: self.pages.dir().to_path_buf(),
            source,
        }
    }

    /// The stamp of the store's last flush (every open flushes): what `marker_stamp` reads
    /// while nothing has been written since.
    pub fn stamp(&self) -> Result<u64, StoreError> {
        Ok(self
            .get_meta::<u64>("stamp")
            .unwrap_or(None)
            .unwrap_or_default())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Start a new page file past `bytes` (at least 1) from now on; [`pages::FILE_BYTES`] by
    /// default.
    pub fn set_page_file_bytes(&mut self, bytes: u64) {
        self.pages.file_bytes = bytes.max(1);
    }

    /// The store's schema: [`SCHEMA_VERSION`], or an older one it is upgraded from (once the
    /// registry is loaded).
    fn check_schema(&self, create: bool) -> Result<u32, StoreError> {
        let k = key::bytes(key::META, b"schema");
        match self.tree.get(&k)? {
            None if !create => Err(StoreError::NotAStore {
                dir: self.dir.clone(),
            }),
            None => {
                self.insert_one(k, &SCHEMA_VERSION.to_be_bytes())?;
                Ok(SCHEMA_VERSION)
            }
            Some(v) => {
                let found =
                    u32::from_be_bytes(v.as_ref().try_into().map_err(|_| StoreError::Corrupt {
                        key: "Mschema".into(),
                        message: "not a u32".into(),
                    })?);
                if (1..=SCHEMA_VERSION).contains(&found) {
                    Ok(found)
                } else {
                    Err(StoreError::Schema {
                        dir: self.dir.clone(),
                        found,
                        expected: SCHEMA_VERSION,
                    })
                }
            }
        }
    }

    fn load_registry(&self) -> Result<(), StoreError> {
        let mut reg = self.lock();
        for item in self.tree.scan_prefix([key::ORIGIN]) {
            let (k, v) = item?;
            let rec: OriginRecord = decode(&k, &v)?;
            reg.next_origin_id = reg.next_origin_id.max(rec.id + 1);
            reg.origins.insert(rec.key.clone(), rec);
        }
        for item in self.tree.scan_prefix([key::CONSUMED]) {
            let (k, v) = item?;
            let id: [u8; 4] = k[1..].try_into().map_err(|_| corrupt(&k, "consumed key"))?;
            reg.consumed.insert(u32::from_be_bytes(id), decode(&k, &v)?);
        }
        for item in self.tree.scan_prefix([key::SITE]) {
            let (k, v) = item?;
            let site = String::from_utf8_lossy(&k[1..]).into_owned();
            reg.sites.insert(site, decode(&k, &v)?);
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        // A panic while holding the lock leaves plain data behind; keep going with it.
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Write everything to disk now, page files first, then record the new stamp and the page
    /// files' length in the marker file (see the module doc: a store found behind its marker
    /// was damaged).
    pub fn flush(&self) -> Result<(), StoreError> {
        let stamp = self.stamp()? + 1;
        self.put_meta("stamp", &stamp)?;
        // What the last page file holds now is durable after `sync` (a rotation syncs the
        // file it closes).
        let last = self.pages.last().map_err(|e| self.page_file_error(e))?;
        self.pages.sync().map_err(|e| self.page_file_error(e))?;
        self.db.flush()?;
        let mut marker =
            serde_json::json!({ "store": "thresher", "schema": SCHEMA_VERSION, "stamp": stamp });
        if let Some((id, len)) = last {
            marker["last_page_file"] = serde_json::json!([id, len]);
        }
        let path = self.dir.join(MARKER);
        crate::output::write_atomic(&path, marker.to_string().as_bytes())
            .map_err(|source| StoreError::Marker { path, source })
    }

    /// sled's files and the page files.
    pub fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0) + self.page_file_bytes().unwrap_or(0)
    }

    // ---- meta -------------------------------------------------------------------------------

    pub fn get_meta<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, StoreError> {
        self.get(&key::bytes(key::META, name.as_bytes()))
    }

    pub fn put_meta<T: Serialize>(&self, name: &str, value: &T) -> Result<(), StoreError> {
        self.put(&key::bytes(key::META, name.as_bytes()), value)
    }

    // ---- origins and queues -----------------------------------------------------------------

    /// Every known origin.
    pub fn origins(&self) -> Vec<OriginRecord> {
        let mut v: Vec<OriginRecord> = self.lock().origins.values().cloned().collect();
        v.sort_by_key(|o| o.id);
        v
    }

    // ---- pages ------------------------------------------------------------------------------

    pub fn page(&self, id: u64) -> Result<Option<PageMeta>, StoreError> {
        Ok(self.page_record(id)?.map(|r| r.meta))
    }

    /// The page's metadata with where its bytes are.
    pub(crate) fn page_record(&self, id: u64) -> Result<Option<PageRecord>, StoreError> {
        self.get(&key::page(key::PAGE, id))
    }

    pub fn has_page(&self, id: u64) -> Result<bool, StoreError> {
        Ok(self.tree.contains_key(key::page(key::PAGE, id))?)
    }

    /// Raw HTML as fetched.
    pub fn html(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let k = key::page(key::HTML, id);
        match self.part_at(self.page_ref(id)?.as_ref(), pages::Part::Html, &k)? {
            None => Ok(None),
            Some(part) => pages::html_of_part(&part)
                .map(Some)
                .map_err(|e| corrupt(&k, e)),
        }
    }

    /// The parsed page (`site`: the page's, `PageMeta::site`).
    pub fn dom(&self, site: &str, id: u64) -> Result<Option<crate::dom::Dom>, StoreError> {
        self.dom_at(site, id, self.page_ref(id)?.as_ref())
    }

    /// [`Store::dom`] through `at`, the page's reference as [`Store::page_ref`] gave it (`None`:
    /// a page stored inline before schema 6). A caller that reads many pages of a site more
    /// than once (the end-of-crawl pass) reads each page's `p` record once: every `p` read
    /// pulls a leaf of the whole tree into sled's cache.
    pub fn dom_at(
        &self,
        site: &str,
        id: u64,
        at: Option<&pages::PageRef>,
    ) -> Result<Option<crate::dom::Dom>, StoreError> {
        let k = key::of_site(key::DOM, site, id);
        match self.lz4_part_at(at, pages::Part::Dom, &k)? {
            None => Ok(None),
            Some(bytes) => match crate::dom::Dom::from_bytes(&bytes) {
                Ok(mut dom) => {
                    // Where the page was fetched is its record's, not part of the stored DOM.
                    dom.address = self.page(id)?.map(|meta| meta.url);
                    Ok(Some(dom))
                }
                Err(crate::dom::tree::DomBytesError::Older) => self.parse_again(id, &k).map(Some),
                Err(e) => Err(corrupt(&k, e)),
            },
        }
    }

    /// Page `id`'s DOM parsed again from its stored HTML, as the crawl parses a response: what
    /// a page stored before the DOM's encoding changed reads as (`dom::tree::ENCODING`; the
    /// store is not rewritten, a recrawl or new page stores the new encoding).
    fn parse_again(&self, id: u64, k: &[u8]) -> Result<crate::dom::Dom, StoreError> {
        let (Some(meta), Some(html)) = (self.page(id)?, self.html(id)?) else {
            return Err(corrupt(
                k,
                "a DOM stored by an earlier version, and no HTML to parse again",
            ));
        };
        let mut parsed = crate::dom::parse_bytes(&html, meta.content_type.as_deref());
        parsed.locate(&meta.url);
        Ok(parsed.dom)
    }

    /// The page's DOM path set (sorted u64 hashes; `site`: the page's).
    pub fn path_set(&self, site: &str, id: u64) -> Result<Option<Vec<u64>>, StoreError> {
        self.path_set_at(site, id, self.page_ref(id)?.as_ref())
    }

    /// [`Store::path_set`] through `at`, as [`Store::dom_at`].
    pub fn path_set_at(
        &self,
        site: &str,
        id: u64,
        at: Option<&pages::PageRef>,
    ) -> Result<Option<Vec<u64>>, StoreError> {
        if self.older_doms && self.dom_is_older(site, id, at)? {
            return Ok(self.dom_at(site, id, at)?.map(|d| d.path_set()));
        }
        let bytes = self.part_at(at, pages::Part::Paths, &key::of_site(key::PATHS, site, id))?;
        Ok(bytes.map(|v| {
            v.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("invariant: chunks of 8")))
                .collect()
        }))
    }

    /// Whether page `id`'s stored DOM is of an earlier encoding (its path set too, then: the
    /// parse that made them differs from today's).
    fn dom_is_older(
        &self,
        site: &str,
        id: u64,
        at: Option<&pages::PageRef>,
    ) -> Result<bool, StoreError> {
        let k = key::of_site(key::DOM, site, id);
        Ok(self
            .lz4_part_at(at, pages::Part::Dom, &k)?
            .is_some_and(|b| !b.starts_with(&crate::dom::tree::ENCODING)))
    }

    /// Sites with their counters, by name.
    pub fn sites(&self) -> Vec<(String, SiteCounters)> {
        let mut v: Vec<(String, SiteCounters)> = self
            .lock()
            .sites
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    pub fn site_counters(&self, site: &str) -> SiteCounters {
        self.lock().sites.get(site).cloned().unwrap_or_default()
    }

    /// Every stored page id with its metadata, in page-id order.
    pub fn pages(&self) -> impl Iterator<Item = Result<(u64, PageMeta), StoreError>> + '_ {
        self.tree.scan_prefix([key::PAGE]).map(|item| {
            let (k, v) = item?;
            let id = u64::from_be_bytes(k[1..].try_into().map_err(|_| corrupt(&k, "page key"))?);
            let record: PageRecord = decode(&k, &v)?;
            Ok((id, record.meta))
        })
    }

    // ---- errors -----------------------------------------------------------------------------

    pub fn errors(&self) -> impl Iterator<Item = Result<(String, ErrorRecord), StoreError>> + '_ {
        self.tree.scan_prefix([key::ERROR]).map(|item| {
            let (k, v) = item?;
            Ok((
                String::from_utf8_lossy(&k[1..]).into_owned(),
                decode(&k, &v)?,
            ))
        })
    }

    // ---- per-origin and per-site blobs owned by other layers ---------------------------------

    pub fn robots<T: DeserializeOwned>(&self, origin: &str) -> Result<Option<T>, StoreError> {
        self.get(&key::bytes(key::ROBOTS, origin.as_bytes()))
    }

    pub fn put_robots<T: Serialize>(&self, origin: &str, value: &T) -> Result<(), StoreError> {
        self.put(&key::bytes(key::ROBOTS, origin.as_bytes()), value)
    }

    /// The clustering state of a site, as the template layer encoded it.
    pub fn clusters_raw(&self, site: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_lz4(&key::bytes(key::CLUSTERS, site.as_bytes()))
    }

    pub fn put_clusters_raw(&self, site: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.insert_one(
            key::bytes(key::CLUSTERS, site.as_bytes()),
            lz4_flex::compress_prepend_size(bytes),
        )?;
        Ok(())
    }

    pub fn site_clusters(&self, site: &str) -> Result<Option<SiteClusters>, StoreError> {
        let k = key::bytes(key::SITE_CLUSTERS, site.as_bytes());
        match self.get_lz4(&k)? {
            None => Ok(None),
            Some(bytes) => decode(&k, &bytes).map(Some),
        }
    }

    /// The site's latest clusters, and their number in its `SiteStatus`, in one batch.
    pub fn put_site_clusters(&self, site: &str, value: &SiteClusters) -> Result<(), StoreError> {
        let _held = self.hold_site_status();
        let mut batch = sled::Batch::default();
        batch.insert(
            key::bytes(key::SITE_CLUSTERS, site.as_bytes()),
            lz4_flex::compress_prepend_size(&encode(value)),
        );
        let status = SiteStatus {
            clusters: value.clusters.len() as u64,
            ..self.site_status(site)?
        };
        batch.insert(
            key::bytes(key::SITE_STATUS, site.as_bytes()),
            encode(&status),
        );
        self.apply(batch)?;
        Ok(())
    }

    /// How many of the site's pages have cleaned text, and its clusters: one record read, where
    /// counting them read every page's flag (`status` on a 1M-page store).
    pub fn site_status(&self, site: &str) -> Result<SiteStatus, StoreError> {
        Ok(self
            .get(&key::bytes(key::SITE_STATUS, site.as_bytes()))?
            .unwrap_or_default())
    }

    fn hold_site_status(&self) -> std::sync::MutexGuard<'_, ()> {
        self.site_status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Number of stored pages (sum of the sites' counters).
    pub fn page_count(&self) -> u64 {
        self.lock().sites.values().map(|c| c.pages).sum()
    }

    // ---- helpers ----------------------------------------------------------------------------

    fn get<T: DeserializeOwned>(&self, k: &[u8]) -> Result<Option<T>, StoreError> {
        match self.tree.get(k)? {
            None => Ok(None),
            Some(v) => decode(k, &v).map(Some),
        }
    }

    fn put<T: Serialize>(&self, k: &[u8], value: &T) -> Result<(), StoreError> {
        self.insert_one(k, encode(value))?;
        Ok(())
    }

    /// Schema 6 → 7, pages: each page's `p` (`PageMeta`) and `B` (`PageRef`, absent for a page
    /// stored inline before schema 6) become one `p` value (`PageRecord`), `UPGRADE_PAGES`
    /// pages per atomic batch. A page done reads as a whole `PageRecord` (a `PageMeta` alone
    /// never does: its first byte, the URL's length, is no `Option` tag), so an interrupted
    /// upgrade skips it at the next open.
    fn upgrade_pages_v6(&self) -> Result<(), StoreError> {
        const UPGRADE_PAGES: usize = 4096;
        let mut pages = self.tree.scan_prefix([key::PAGE]).peekable();
        while pages.peek().is_some() {
            let mut batch = sled::Batch::default();
            for item in pages.by_ref().take(UPGRADE_PAGES) {
                let (k, v) = item?;
                if matches!(postcard::take_from_bytes::<PageRecord>(&v), Ok((_, rest)) if rest.is_empty())
                {
                    continue;
                }
                let id =
                    u64::from_be_bytes(k[1..].try_into().map_err(|_| corrupt(&k, "page key"))?);
                let bk = key::page(key::PAGE_BYTES, id);
                let at = match self.tree.get(&bk)? {
                    None => None,
                    Some(b) => Some(decode(&bk, &b)?),
                };
                let record = PageRecord {
                    meta: decode(&k, &v)?,
                    at,
                };
                batch.insert(k, encode(&record));
                batch.remove(bk);
            }
            self.apply(batch)?;
        }
        // `B` keys of no page (none are written without one) go too.
        self.remove_prefix(key::PAGE_BYTES)
    }

    /// The page ids of every `prefix` · page id key, read in one pass over the keys.
    fn page_ids(&self, prefix: u8) -> Result<std::collections::HashSet<u64>, StoreError> {
        let mut ids = std::collections::HashSet::new();
        for k in self.tree.scan_prefix([prefix]).keys() {
            if let Ok(b) = <[u8; 8]>::try_from(&k?[1..]) {
                ids.insert(u64::from_be_bytes(b));
            }
        }
        Ok(ids)
    }

    /// Remove every key starting with `prefix`, a bounded batch at a time (what an upgrade
    /// leaves of a key kind it retired).
    fn remove_prefix(&self, prefix: u8) -> Result<(), StoreError> {
        const KEYS_PER_BATCH: usize = 4096;
        loop {
            let mut batch = sled::Batch::default();
            let mut n = 0;
            for k in self.tree.scan_prefix([prefix]).keys().take(KEYS_PER_BATCH) {
                batch.remove(k?);
                n += 1;
            }
            if n == 0 {
                return Ok(());
            }
            self.apply(batch)?;
        }
    }

    /// Schema 3 → 4: each page's DOM and path set move from `d`/`x` · page id to `d`/`x` · site
    /// · 0x00 · page id, `UPGRADE_PAGES` pages per atomic batch, driven by the page records (which
    /// name the site): a page already moved has no old keys, so an interrupted upgrade goes on
    /// where it stopped at the next open.
    fn upgrade_site_keys_v3(&self) -> Result<(), StoreError> {
        const UPGRADE_PAGES: usize = 1024;
        let mut pages = self.pages().peekable();
        while pages.peek().is_some() {
            let mut batch = sled::Batch::default();
            for page in pages.by_ref().take(UPGRADE_PAGES) {
                let (id, meta) = page?;
                for prefix in [key::DOM, key::PATHS] {
                    let old = key::page(prefix, id);
                    if let Some(v) = self.tree.get(&old)? {
                        batch.insert(key::of_site(prefix, &meta.site, id), v);
                        batch.remove(old);
                    }
                }
            }
            self.apply(batch)?;
        }
        Ok(())
    }

    /// Every record kind (its key prefix, as in the module's table) with its number of keys and
    /// the bytes of its keys and values, read in one pass over the whole store: what a page
    /// costs on disk by kind (`benches/store_kinds.rs`; sled's own overhead is the rest of
    /// `size_on_disk`).
    pub fn bytes_by_kind(&self) -> Result<Vec<KindBytes>, StoreError> {
        let mut kinds: std::collections::BTreeMap<u8, KindBytes> = Default::default();
        for item in self.tree.iter() {
            let (k, v) = item?;
            let Some(&prefix) = k.first() else { continue };
            let e = kinds.entry(prefix).or_insert(KindBytes {
                prefix: prefix as char,
                ..KindBytes::default()
            });
            e.keys += 1;
            e.key_bytes += k.len() as u64;
            e.value_bytes += v.len() as u64;
        }
        Ok(kinds.into_values().collect())
    }

    /// Schema 4 → 5: each site's `SiteStatus` counted from its pages' texts and its clusters, in
    /// one batch (a site's record is computed whole, so an interrupted upgrade just runs again).
    fn upgrade_site_status_v4(&self) -> Result<(), StoreError> {
        let cleaned = self.cleaned_ids()?;
        let mut batch = sled::Batch::default();
        for (site, _) in self.sites() {
            let status = SiteStatus {
                cleaned: self
                    .site_pages(&site)?
                    .iter()
                    .filter(|id| cleaned.contains(id))
                    .count() as u64,
                clusters: self
                    .site_clusters(&site)?
                    .map_or(0, |k| k.clusters.len() as u64),
            };
            batch.insert(
                key::bytes(key::SITE_STATUS, site.as_bytes()),
                encode(&status),
            );
        }
        self.apply(batch)?;
        Ok(())
    }

    /// Bytes of page file `id` no page refers to any more.
    fn dead_bytes(&self, id: u32) -> Result<u64, StoreError> {
        let k = key::page_file(id);
        Ok(match self.tree.get(&k)? {
            None => 0,
            Some(v) => u64::from_be_bytes(
                v.as_ref()
                    .try_into()
                    .map_err(|_| corrupt(&k, "dead bytes are not a u64"))?,
            ),
        })
    }

    /// Copy the live pages of each page file at least half dead (recrawls replaced its pages)
    /// to the last file, then remove it: the one job that gives back what replaced pages took.
    /// Holds the commit lock throughout (the end of a crawl runs it, when nothing commits);
    /// the moved pages' new references are flushed before any file goes, so a kill -9 at any
    /// point leaves every reference pointing at bytes that exist.
    pub fn compact_page_files(&self) -> Result<Compacted, StoreError> {
        const MOVES_PER_BATCH: usize = 1024;
        let _commits = self.lock();
        let perr = |e| self.page_file_error(e);
        let last = self.pages.last().map_err(perr)?.map(|(id, _)| id);
        let lens: HashMap<u32, u64> = self.pages.files().map_err(perr)?.into_iter().collect();
        let mut out = Compacted::default();
        let mut victims = std::collections::HashSet::new();
        let mut stale = Vec::new();
        for item in self.tree.scan_prefix([key::PAGE_FILE]) {
            let (k, v) = item?;
            let id = u32::from_be_bytes(k[1..].try_into().map_err(|_| corrupt(&k, "file key"))?);
            let dead = u64::from_be_bytes(
                v.as_ref()
                    .try_into()
                    .map_err(|_| corrupt(&k, "dead bytes are not a u64"))?,
            );
            match lens.get(&id) {
                None => stale.push(id),
                Some(&len) if Some(id) != last && dead * 2 >= len => {
                    victims.insert(id);
                }
                Some(_) => {}
            }
        }
        if victims.is_empty() && stale.is_empty() {
            return Ok(out);
        }
        let mut batch = sled::Batch::default();
        let mut in_batch = 0;
        for item in self.tree.scan_prefix([key::PAGE]) {
            let (k, v) = item?;
            let mut record: PageRecord = decode(&k, &v)?;
            let Some(r) = record.at.filter(|r| victims.contains(&r.file)) else {
                continue;
            };
            // Bytes already lost read as absent from the old file or from none.
            let html = self.pages.read(&r, pages::Part::Html).map_err(perr)?;
            let dom = self.pages.read(&r, pages::Part::Dom).map_err(perr)?;
            let paths = self.pages.read(&r, pages::Part::Paths).map_err(perr)?;
            let (Some(html), Some(dom), Some(paths)) = (html, dom, paths) else {
                continue;
            };
            record.at = Some(self.pages.append(&html, &dom, &paths).map_err(perr)?);
            batch.insert(k, encode(&record));
            out.pages_moved += 1;
            in_batch += 1;
            if in_batch == MOVES_PER_BATCH {
                self.apply(std::mem::take(&mut batch))?;
                in_batch = 0;
            }
        }
        for &id in victims.iter().chain(&stale) {
            batch.remove(key::page_file(id));
        }
        self.apply(batch)?;
        self.flush()?;
        for id in victims {
            self.pages.remove(id).map_err(perr)?;
            out.files_removed += 1;
            out.bytes_freed += lens[&id];
        }
        Ok(out)
    }

    /// Where page `id`'s HTML and DOM are in the page files (`None`: stored inline before
    /// schema 6, or no such page).
    pub fn page_ref(&self, id: u64) -> Result<Option<pages::PageRef>, StoreError> {
        let k = key::page(key::PAGE, id);
        match self.tree.get(&k)? {
            None => Ok(None),
            Some(v) => Ok(postcard::take_from_bytes(&v).map_err(|e| corrupt(&k, e))?.0),
        }
    }

    /// One part of a page's bytes as stored, through its reference `at` ([`Store::page_ref`]):
    /// from the page files, or (`None`) from the inline key `inline` of a page stored before
    /// schema 6.
    fn part_at(
        &self,
        at: Option<&pages::PageRef>,
        part: pages::Part,
        inline: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match at {
            Some(r) => self
                .pages
                .read(r, part)
                .map_err(|e| self.page_file_error(e)),
            None => Ok(self.tree.get(inline)?.map(|v| v.to_vec())),
        }
    }

    /// [`Store::part_at`] of an lz4 part (the DOM), decompressed.
    fn lz4_part_at(
        &self,
        at: Option<&pages::PageRef>,
        part: pages::Part,
        inline: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match self.part_at(at, part, inline)? {
            None => Ok(None),
            Some(v) => lz4_flex::decompress_size_prepended(&v)
                .map(Some)
                .map_err(|e| corrupt(inline, e)),
        }
    }

    fn get_lz4(&self, k: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self.tree.get(k)? {
            None => Ok(None),
            Some(v) => lz4_flex::decompress_size_prepended(&v)
                .map(Some)
                .map_err(|e| corrupt(k, e)),
        }
    }
}

/// One-operation [`CleanBatch`]es: the tests store a text, a byline or a fingerprint alone
/// (the crawl and `clean` gather a cluster's into one batch, `Store::put_clean_batch`).
#[cfg(test)]
impl Store {
    pub fn put_cleaned(&self, id: u64, record: &CleanRecord) -> Result<(), StoreError> {
        self.put_cleaned_many(&[(id, record.clone())])
    }

    /// Store several pages' cleaned text in one batch.
    pub fn put_cleaned_many(&self, records: &[(u64, CleanRecord)]) -> Result<(), StoreError> {
        let mut batch = CleanBatch::default();
        for (id, record) in records {
            let site = self.page(*id)?.map(|m| m.site).unwrap_or_default();
            batch.cleaned(&site, *id, record, None);
        }
        self.put_clean_batch(batch)
    }

    /// Record that the model with fingerprint `fingerprint` wrote the current cleaned text of
    /// each page of `ids` (stored before this call: a kill in between leaves them uncertified,
    /// which only costs a re-clean).
    pub fn put_clean_models(&self, ids: &[u64], fingerprint: u64) -> Result<(), StoreError> {
        let mut batch = CleanBatch::default();
        batch.certify(ids, fingerprint);
        self.put_clean_batch(batch)
    }

    /// Record what the page's byline says; an empty record removes the key (most pages have
    /// none, and absent keys cost nothing).
    /// A new byline is new cleaned output: the page's model fingerprint goes with it (as in
    /// [`CleanBatch::cleaned`]).
    pub fn put_byline(&self, id: u64, record: &BylineRecord) -> Result<(), StoreError> {
        let mut batch = CleanBatch::default();
        batch.byline(id, record);
        self.put_clean_batch(batch)
    }
}

thread_local! {
    /// This thread is inside `Store::open`, where a panic (sled's, on damaged files) is caught
    /// and reported as `StoreError::Damaged`.
    static OPENING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a panic on this thread now will be caught and reported as a damaged store: a
/// binary's panic hook stays quiet for it (the error says what happened).
pub fn panic_is_reported_as_damage() -> bool {
    OPENING.with(std::cell::Cell::get)
}

/// The stamp `DATA/thresher-store.json` recorded at the store's last flush, without opening
/// the store (none when there is no marker or it cannot be read).
pub fn marker_stamp(dir: &Path) -> Option<u64> {
    read_marker(dir).ok()?.stamp
}

/// What `DATA/thresher-store.json` recorded at the last flush (nothing when there is none).
#[derive(Debug, Default)]
struct Marker {
    stamp: Option<u64>,
    /// The page file last appended to, and its length (absent before schema 6, or before any).
    last_page_file: Option<(u32, u64)>,
}

fn read_marker(dir: &Path) -> Result<Marker, StoreError> {
    let path = dir.join(MARKER);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Marker::default()),
        Err(e) => {
            return Err(StoreError::Damaged {
                dir: dir.to_path_buf(),
                reason: format!("cannot read {MARKER}: {e}"),
            })
        }
    };
    let value = serde_json::from_str::<serde_json::Value>(&text).ok();
    let stamp = value.as_ref().and_then(|v| v.get("stamp")?.as_u64());
    match stamp {
        Some(stamp) => Ok(Marker {
            stamp: Some(stamp),
            last_page_file: value.as_ref().and_then(|v| {
                let pair = v.get("last_page_file")?.as_array()?;
                Some((
                    u32::try_from(pair.first()?.as_u64()?).ok()?,
                    pair.get(1)?.as_u64()?,
                ))
            }),
        }),
        None => Err(StoreError::Damaged {
            dir: dir.to_path_buf(),
            reason: format!("{MARKER} is not what thresher writes"),
        }),
    }
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("invariant: store records always serialise")
}

pub(crate) fn decode<T: DeserializeOwned>(k: &[u8], v: &[u8]) -> Result<T, StoreError> {
    postcard::from_bytes(v).map_err(|e| corrupt(k, e))
}

fn corrupt(k: &[u8], e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        key: String::from_utf8_lossy(k).into_owned(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests;

/// For other modules' tests: a page stored as the crawler stores it.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Commit, NewPage, PageMeta, Store};
    use crate::dom::parse_html;

    /// Store page `id` of `site` at `url` with `html` (its `body_bytes` recorded as given, else
    /// the HTML's length).
    pub(crate) fn store_html(
        store: &Store,
        id: u64,
        url: &str,
        site: &str,
        html: &str,
        body_bytes: Option<u64>,
    ) {
        let dom = parse_html(html).dom;
        let meta = PageMeta {
            url: url.to_string(),
            requested: None,
            site: site.into(),
            status: 200,
            content_type: Some("text/html".into()),
            headers: vec![],
            fetched_at_ms: 1,
            depth: 1,
            body_bytes: body_bytes.unwrap_or(html.len() as u64),
            encoding: "UTF-8".into(),
            title: None,
            truncated: false,
        };
        let mut c = Commit::new();
        c.page(NewPage::new(
            id,
            meta,
            html.as_bytes(),
            &dom,
            &dom.path_set(),
        ));
        assert!(store.commit(c).expect("commit").page_stored);
    }
}
