//! `Commit`: everything one fetch changes, applied as one atomic sled batch under the store's
//! commit lock — new URLs checked against the seen set and queued (origins get ids on first
//! sight), the fetched queue entry removed, the page and its path set stored, errors recorded.

use std::collections::HashMap;
use std::sync::Arc;

use super::frontier::encode_segment;
use super::pages;
use super::recrawl::{change_key, pending_key, RevisitSlot};
use super::seen::SeenBatch;
use super::site_index::SiteIndexBatch;
use super::{
    encode, key, ChangeRecord, Consumed, ErrorKind, ErrorRecord, GoneRecord, OriginRecord,
    PageMeta, PageRecord, PendingChange, QueueEntry, Store, StoreError, SEGMENT_ENTRIES,
};
use crate::dom::Dom;

/// A page ready to store; bytes are compressed by `new` (outside the commit lock).
pub struct NewPage {
    pub id: u64,
    pub meta: PageMeta,
    /// xxh3 of the body bytes: a second page of the same site with the same body is a duplicate.
    content: u64,
    /// The HTML as [`pages::html_part`] or [`pages::html_part_deflated`] makes it.
    html_part: Vec<u8>,
    dom_lz4: Vec<u8>,
    paths: Vec<u8>,
}

impl NewPage {
    pub fn new(id: u64, meta: PageMeta, html: &[u8], dom: &Dom, paths: &[u64]) -> NewPage {
        NewPage::with_html_part(id, meta, html, pages::html_part(html), dom, paths)
    }

    /// This page with `bytes` as its stored DOM (tests: a DOM of an earlier encoding).
    #[cfg(test)]
    pub(crate) fn with_dom_bytes(mut self, bytes: &[u8]) -> NewPage {
        self.dom_lz4 = lz4_flex::compress_prepend_size(bytes);
        self
    }

    /// [`NewPage::new`] with the HTML kept as `raw`, its raw deflate ending on a sync flush
    /// (`warc::write::Deflated::raw`): the crawl's WARC record holds the same bytes, so the
    /// body is compressed once ([`pages::html_part_deflated`]).
    pub fn new_deflated(
        id: u64,
        meta: PageMeta,
        html: &[u8],
        raw: &[u8],
        dom: &Dom,
        paths: &[u64],
    ) -> NewPage {
        let part = pages::html_part_deflated(html.len(), raw);
        NewPage::with_html_part(id, meta, html, part, dom, paths)
    }

    fn with_html_part(
        id: u64,
        meta: PageMeta,
        html: &[u8],
        html_part: Vec<u8>,
        dom: &Dom,
        paths: &[u64],
    ) -> NewPage {
        let mut p = Vec::with_capacity(paths.len() * 8);
        for x in paths {
            p.extend_from_slice(&x.to_le_bytes());
        }
        NewPage {
            id,
            content: xxhash_rust::xxh3::xxh3_64(html),
            meta,
            html_part,
            dom_lz4: lz4_flex::compress_prepend_size(&dom.to_bytes()),
            paths: p,
        }
    }

    /// xxh3 of the body bytes.
    pub fn content_hash(&self) -> u64 {
        self.content
    }

    /// Compressed size (for progress).
    pub fn stored_bytes(&self) -> usize {
        self.html_part.len() + self.dom_lz4.len() + self.paths.len()
    }
}

#[derive(Default)]
pub struct Commit {
    /// The origin keys of `discovered` and `requeued`, each once: a page's links are mostly
    /// on a few origins, and a key per link was ~50 bytes a URL.
    origins: Vec<String>,
    /// Index into `origins` by key.
    origin_at: HashMap<String, u32>,
    /// (index into `origins`, entry): queued only if the URL was never seen.
    discovered: Vec<(u32, QueueEntry)>,
    /// URLs entered in the seen set without being queued (pages imported as fetched).
    seen_only: Vec<String>,
    /// (index into `origins`, entry): queued regardless of the seen set (retries).
    requeued: Vec<(u32, QueueEntry)>,
    /// Queue entries this fetch consumed.
    done: Vec<(u32, u64)>,
    page: Option<NewPage>,
    errors: Vec<(String, ErrorRecord)>,
    /// Revisit slots this fetch consumed.
    revisits_done: Vec<RevisitSlot>,
    /// Stored pages whose metadata is rewritten (a 304 moves `fetched_at_ms`).
    metas: Vec<(u64, PageMeta)>,
    /// A stored page replaced by new bytes, with the xxh3 of the body it replaces.
    replacement: Option<(NewPage, u64)>,
    changes: Vec<ChangeRecord>,
    /// Gone marks set (`Some`) or cleared (`None`).
    gone: Vec<(u64, Option<GoneRecord>)>,
}

/// A URL that went into a queue: where, not what (the entry is in the store). One per URL, so it
/// stays small: a page of 230,000 links gave back a copy of every entry and a copy of its
/// origin's key per URL (about 300 bytes each, 70 MB for the page).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enqueued {
    pub origin_id: u32,
    /// Shared by every URL of the origin in one commit.
    pub origin_key: Arc<str>,
    pub seq: u64,
}

#[derive(Debug, Default)]
pub struct CommitOutcome {
    pub enqueued: Vec<Enqueued>,
    /// The page was stored (false when another URL already stored the same page).
    pub page_stored: bool,
    /// The page's body is byte-for-byte that of this already stored page of its site: it was
    /// recorded as a `duplicate`, not stored again.
    pub duplicate_of: Option<u64>,
}

impl Commit {
    pub fn new() -> Commit {
        Commit::default()
    }

    /// Queue `entry` in `origin`'s queue unless its URL was seen before.
    pub fn discover(&mut self, origin: String, entry: QueueEntry) -> &mut Self {
        let at = self.origin_index(origin);
        self.discovered.push((at, entry));
        self
    }

    /// Enter `url` in the seen set without queueing it: its page is had another way (imported
    /// from WARC files), so no link to it queues it later.
    pub fn seen(&mut self, url: String) -> &mut Self {
        self.seen_only.push(url);
        self
    }

    /// Queue `entry` again at the tail of its origin's queue (a retry).
    pub fn requeue(&mut self, origin: String, entry: QueueEntry) -> &mut Self {
        let at = self.origin_index(origin);
        self.requeued.push((at, entry));
        self
    }

    /// `origin`'s index in `origins`, added on first sight (the last one is checked first:
    /// a page's links come in runs of one origin).
    fn origin_index(&mut self, origin: String) -> u32 {
        if let Some(last) = self.origins.last() {
            if *last == origin {
                return (self.origins.len() - 1) as u32;
            }
        }
        match self.origin_at.get(&origin) {
            Some(&at) => at,
            None => {
                let at = self.origins.len() as u32;
                self.origins.push(origin.clone());
                self.origin_at.insert(origin, at);
                at
            }
        }
    }

    /// The distinct origin keys this commit queues URLs on (one per origin, not per URL).
    pub fn origin_keys(&self) -> usize {
        self.origins.len()
    }

    /// How many URLs `discover` was given so far.
    pub fn discovered_len(&self) -> usize {
        self.discovered.len()
    }

    /// The discovered URLs as a commit of their own, to apply first; this commit keeps the
    /// rest (its origin keys too, for the URLs still to come).
    pub fn take_discovered(&mut self) -> Commit {
        Commit {
            origins: self.origins.clone(),
            discovered: std::mem::take(&mut self.discovered),
            ..Commit::default()
        }
    }

    /// The queue entry `(origin id, seq)` is consumed.
    pub fn done(&mut self, origin: u32, seq: u64) -> &mut Self {
        self.done.push((origin, seq));
        self
    }

    pub fn page(&mut self, page: NewPage) -> &mut Self {
        self.page = Some(page);
        self
    }

    /// The page this commit stores, if any.
    pub fn new_page(&self) -> Option<&NewPage> {
        self.page.as_ref()
    }

    pub fn error(&mut self, url: String, record: ErrorRecord) -> &mut Self {
        self.errors.push((url, record));
        self
    }

    /// The revisit `slot` is consumed.
    pub fn revisit_done(&mut self, slot: RevisitSlot) -> &mut Self {
        self.revisits_done.push(slot);
        self
    }

    /// Rewrite a stored page's metadata (its page, text and path set stay).
    pub fn meta(&mut self, id: u64, meta: PageMeta) -> &mut Self {
        self.metas.push((id, meta));
        self
    }

    /// Replace the stored page `page.id` (whose body hashed to `old_content`) by `page`: its
    /// text comparison waits in a `PendingChange` until its site's end-of-crawl pass.
    pub fn replace(&mut self, page: NewPage, old_content: u64) -> &mut Self {
        self.replacement = Some((page, old_content));
        self
    }

    /// Append a record to the change log.
    pub fn change(&mut self, record: ChangeRecord) -> &mut Self {
        self.changes.push(record);
        self
    }

    /// Mark a page gone (`Some`) or no longer gone (`None`).
    pub fn gone(&mut self, id: u64, record: Option<GoneRecord>) -> &mut Self {
        self.gone.push((id, record));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.discovered.is_empty()
            && self.seen_only.is_empty()
            && self.requeued.is_empty()
            && self.done.is_empty()
            && self.page.is_none()
            && self.errors.is_empty()
            && self.revisits_done.is_empty()
            && self.metas.is_empty()
            && self.replacement.is_none()
            && self.changes.is_empty()
            && self.gone.is_empty()
    }
}

/// Discovered URLs applied per sled batch. A page with 230,000 links, 100,000 seeds or a
/// 50,000-URL sitemap was one batch of that many seen-set and queue keys, which sled holds in
/// memory several times over (~9 KB per URL, 2.1 GB for one page).
pub const DISCOVER_BATCH: usize = 4096;

impl Store {
    /// The already stored page of `page`'s site whose body is byte-for-byte `page`'s (another
    /// URL's): committing `page` records it as that page's `duplicate`. The WARC archive asks
    /// before the commit, holding its own lock across both, so its revisit records and the
    /// store's verdicts agree.
    pub fn twin_of(&self, page: &NewPage) -> Result<Option<u64>, StoreError> {
        SiteIndexBatch::default().twin(&self.tree, &page.meta.site, page.content, page.id)
    }

    /// Apply `commit`: atomically when it discovers at most [`DISCOVER_BATCH`] URLs. Beyond that,
    /// the discovered URLs go first in batches of that size, then the rest of the commit (page,
    /// consumed entry, errors) with the last batch. A crash between them leaves the new URLs
    /// queued and seen and the page not stored: it is fetched again and finds its links seen,
    /// so nothing is lost and nothing is queued twice.
    pub fn commit(&self, mut commit: Commit) -> Result<CommitOutcome, StoreError> {
        let mut early = Vec::new();
        if commit.discovered.len() > DISCOVER_BATCH {
            // Exactly what can come back, not a doubling vector's slack.
            early.reserve_exact(commit.discovered.len() + commit.requeued.len());
        }
        while commit.discovered.len() > DISCOVER_BATCH {
            let chunk: Vec<(u32, QueueEntry)> = commit.discovered.drain(..DISCOVER_BATCH).collect();
            let out = self.commit_once(&Commit {
                origins: commit.origins.clone(),
                discovered: chunk,
                ..Commit::default()
            })?;
            early.extend(out.enqueued);
        }
        let mut out = self.commit_once(&commit)?;
        if !early.is_empty() {
            early.append(&mut out.enqueued);
            out.enqueued = early;
        }
        Ok(out)
    }

    /// One atomic batch under the commit lock: the queues, the consumed entries, the records,
    /// the page; applied at once, and only then the registry (the in-memory mirror of the
    /// origins, consumed entries, site counters and seen buckets) follows.
    fn commit_once(&self, commit: &Commit) -> Result<CommitOutcome, StoreError> {
        let mut reg = self.lock();
        let mut batch = sled::Batch::default();
        let mut outcome = CommitOutcome::default();
        let mut appends = Appends::new(reg.next_origin_id);
        let seen = self.stage_queues(&reg, commit, &mut appends, &mut batch, &mut outcome)?;
        let consumed = self.stage_consumed(&reg, commit, &mut batch)?;
        self.stage_records(commit, &mut batch)?;
        let site_update = self.stage_page(&reg, commit, &mut batch, &mut outcome)?;
        appends.write_origins(&mut batch);
        self.apply(batch)?;

        // The registry follows the store only once the batch is applied.
        seen.keep(&mut reg.seen);
        appends.publish(&mut reg);
        reg.consumed.extend(consumed);
        if let Some((site, counters)) = site_update {
            reg.sites.insert(site, counters);
        }
        Ok(outcome)
    }

    /// The queue side of a commit: discovered URLs not seen before, and requeued entries,
    /// appended to their origins' queues (segments of `SEGMENT_ENTRIES`); the seen set's new
    /// entries. Returns the seen set's batch, kept in the registry once the batch is applied.
    fn stage_queues<'c>(
        &self,
        reg: &super::Registry,
        commit: &'c Commit,
        appends: &mut Appends<'c>,
        batch: &mut sled::Batch,
        outcome: &mut CommitOutcome,
    ) -> Result<SeenBatch, StoreError> {
        let mut seen = SeenBatch::default();
        seen.load(
            &self.tree,
            Some(&reg.seen),
            commit
                .discovered
                .iter()
                .map(|(_, e)| e.url.as_str())
                .chain(commit.seen_only.iter().map(String::as_str)),
        )?;
        for (at, entry) in &commit.discovered {
            let origin = commit.origins[*at as usize].as_str();
            if !seen.insert(&self.tree, &entry.url)? {
                continue;
            }
            outcome.enqueued.push(appends.push(reg, origin, entry));
        }
        for url in &commit.seen_only {
            seen.insert(&self.tree, url)?;
        }
        seen.write(batch);
        for (at, entry) in &commit.requeued {
            let origin = commit.origins[*at as usize].as_str();
            outcome.enqueued.push(appends.push(reg, origin, entry));
        }
        appends.write_segments(batch);
        Ok(seen)
    }

    /// Consumed entries: their origins' `Consumed` records, and the segments now all done.
    /// Returns the records, kept in the registry once the batch is applied.
    fn stage_consumed(
        &self,
        reg: &super::Registry,
        commit: &Commit,
        batch: &mut sled::Batch,
    ) -> Result<HashMap<u32, Consumed>, StoreError> {
        let mut consumed: HashMap<u32, Consumed> = HashMap::new();
        for &(origin, seq) in &commit.done {
            let c = consumed
                .entry(origin)
                .or_insert_with(|| reg.consumed.get(&origin).cloned().unwrap_or_default());
            c.insert(seq);
        }
        for (&origin, c) in &consumed {
            batch.insert(key::consumed(origin), encode(c));
            self.drop_consumed_segments(origin, c, batch)?;
        }
        Ok(consumed)
    }

    /// The records a commit writes as they are: errors, finished revisits, pages' new
    /// metadata, change records and gone marks.
    fn stage_records(&self, commit: &Commit, batch: &mut sled::Batch) -> Result<(), StoreError> {
        for (url, rec) in &commit.errors {
            batch.insert(key::bytes(key::ERROR, url.as_bytes()), encode(rec));
        }
        for slot in &commit.revisits_done {
            batch.remove(slot.key());
        }
        for (id, meta) in &commit.metas {
            let record = PageRecord {
                meta: meta.clone(),
                at: self.page_ref(*id)?,
            };
            batch.insert(key::page(key::PAGE, *id), encode(&record));
        }
        for rec in &commit.changes {
            batch.insert(change_key(rec.at_ms, rec.page_id), encode(rec));
        }
        for (id, mark) in &commit.gone {
            match mark {
                Some(rec) => batch.insert(key::page(key::GONE, *id), encode(rec)),
                None => batch.remove(key::page(key::GONE, *id)),
            }
        }
        Ok(())
    }

    /// The page side of a commit: a replaced page (a recrawl's new bytes), and a new page —
    /// stored with its site's counters and indexes, or recorded as a duplicate of its site's
    /// page with the same body. Returns the site's counters, kept in the registry once the
    /// batch is applied.
    fn stage_page(
        &self,
        reg: &super::Registry,
        commit: &Commit,
        batch: &mut sled::Batch,
        outcome: &mut CommitOutcome,
    ) -> Result<Option<(String, super::SiteCounters)>, StoreError> {
        let mut site_update = None;
        // The site indexes' buckets this commit changes (a replaced page and a new page of one
        // site may share one).
        let mut index = SiteIndexBatch::default();
        if let Some((page, old_content)) = &commit.replacement {
            site_update = Some(self.replace_page(reg, batch, &mut index, page, *old_content)?);
        }
        if let Some(page) = &commit.page {
            if let Some(twin) = index.twin(&self.tree, &page.meta.site, page.content, page.id)? {
                let rec = ErrorRecord {
                    kind: ErrorKind::Duplicate,
                    message: format!("same content as page {twin:016x}"),
                    at_ms: page.meta.fetched_at_ms,
                    attempts: 1,
                };
                batch.insert(
                    key::bytes(key::ERROR, page.meta.url.as_bytes()),
                    encode(&rec),
                );
                outcome.duplicate_of = Some(twin);
            } else if !self.tree.contains_key(key::page(key::PAGE, page.id))? {
                let mut counters = reg.sites.get(&page.meta.site).cloned().unwrap_or_default();
                self.put_page_records(batch, &mut index, counters.pages, page)?;
                index.add_page(&self.tree, &page.meta.site, counters.pages, page.id)?;
                counters.pages += 1;
                counters.bytes += page.meta.body_bytes;
                batch.insert(
                    key::bytes(key::SITE, page.meta.site.as_bytes()),
                    encode(&counters),
                );
                site_update = Some((page.meta.site.clone(), counters));
                outcome.page_stored = true;
            }
        }
        index.write(batch);
        Ok(site_update)
    }

    /// The batch entries that replace a stored page by `page` (a recrawl found new bytes): its
    /// records overwritten, its content key moved, its site's byte count adjusted, and a
    /// `PendingChange` kept for the text comparison (the first one's old text and path set
    /// stay when the page changes again before its site's end-of-crawl pass).
    fn replace_page(
        &self,
        reg: &super::Registry,
        batch: &mut sled::Batch,
        index: &mut SiteIndexBatch,
        page: &NewPage,
        old_content: u64,
    ) -> Result<(String, super::SiteCounters), StoreError> {
        let site = &page.meta.site;
        let old_meta = self.page(page.id)?;
        let pending = match self.pending_change(site, page.id)? {
            Some(p) => PendingChange {
                url: page.meta.url.clone(),
                at_ms: page.meta.fetched_at_ms,
                ..p
            },
            None => PendingChange {
                url: page.meta.url.clone(),
                at_ms: page.meta.fetched_at_ms,
                old_hash: self.cleaned_sum(page.id)?.map(|(_, h)| h),
                old_paths: self.path_set(site, page.id)?.unwrap_or_default(),
            },
        };
        batch.insert(pending_key(site, page.id), encode(&pending));
        index.remove_body(&self.tree, site, old_content, page.id)?;
        if let Some(old) = self.page_ref(page.id)? {
            let dead = self.dead_bytes(old.file)? + old.len();
            batch.insert(key::page_file(old.file), &dead.to_be_bytes()[..]);
        }
        let mut counters = reg.sites.get(site).cloned().unwrap_or_default();
        self.put_page_records(batch, index, counters.pages, page)?;
        self.uncertify(batch, page.id)?;
        // A page stored before schema 6 had its bytes inline.
        batch.remove(key::page(key::HTML, page.id));
        batch.remove(key::of_site(key::DOM, site, page.id));
        batch.remove(key::of_site(key::PATHS, site, page.id));
        batch.remove(key::page(key::GONE, page.id));
        match old_meta {
            Some(old) => {
                counters.bytes =
                    counters.bytes.saturating_sub(old.body_bytes) + page.meta.body_bytes;
            }
            None => {
                index.add_page(&self.tree, site, counters.pages, page.id)?;
                counters.pages += 1;
                counters.bytes += page.meta.body_bytes;
            }
        }
        batch.insert(key::bytes(key::SITE, site.as_bytes()), encode(&counters));
        Ok((site.clone(), counters))
    }
}

impl Store {
    /// The batch entries of a stored page's own records (new, or replacing the old ones): its
    /// body hash in the site's index (`pages`: the site's page count), metadata, and where its
    /// HTML, DOM and path set are (appended to the page files now, before the batch that refers
    /// to them). A new page is added to its site's pages by the caller; a replaced page's text
    /// loses its model fingerprint too (`replace_page`).
    fn put_page_records(
        &self,
        batch: &mut sled::Batch,
        index: &mut SiteIndexBatch,
        pages: u64,
        page: &NewPage,
    ) -> Result<(), StoreError> {
        let site = &page.meta.site;
        let at = self
            .pages
            .append(&page.html_part, &page.dom_lz4, &page.paths)
            .map_err(|e| self.page_file_error(e))?;
        index.set_body(&self.tree, site, pages, page.content, page.id)?;
        let record = PageRecord {
            meta: page.meta.clone(),
            at: Some(at),
        };
        batch.insert(key::page(key::PAGE, page.id), encode(&record));
        Ok(())
    }
}

/// The queue appends of one commit: the origins it touches (a new origin gets the next id), and
/// per origin the entries appended, in order.
struct Appends<'c> {
    touched: Vec<OriginRecord>,
    /// Index into `touched` by origin key (a linear search made a commit of n new origins, such
    /// as the seeds, quadratic).
    at: HashMap<String, usize>,
    /// `touched[i].key`, shared by the `Enqueued` of its URLs.
    keys: Vec<Arc<str>>,
    entries: Vec<Vec<&'c QueueEntry>>,
    next_origin_id: u32,
}

impl<'c> Appends<'c> {
    fn new(next_origin_id: u32) -> Appends<'c> {
        Appends {
            touched: Vec::new(),
            at: HashMap::new(),
            keys: Vec::new(),
            entries: Vec::new(),
            next_origin_id,
        }
    }

    /// Append `entry` to `origin`'s queue (known to `reg`, or new).
    fn push(&mut self, reg: &super::Registry, origin: &str, entry: &'c QueueEntry) -> Enqueued {
        let at = match self.at.get(origin).copied() {
            Some(i) => i,
            None => {
                let rec = reg.origins.get(origin).cloned().unwrap_or_else(|| {
                    self.next_origin_id += 1;
                    OriginRecord {
                        id: self.next_origin_id - 1,
                        key: origin.to_string(),
                        next_seq: 0,
                    }
                });
                self.at.insert(origin.to_string(), self.touched.len());
                self.keys.push(Arc::from(rec.key.as_str()));
                self.touched.push(rec);
                self.entries.push(Vec::new());
                self.touched.len() - 1
            }
        };
        let rec = &mut self.touched[at];
        let seq = rec.next_seq;
        rec.next_seq += 1;
        self.entries[at].push(entry);
        Enqueued {
            origin_id: rec.id,
            origin_key: self.keys[at].clone(),
            seq,
        }
    }

    /// The appended entries as queue segments.
    fn write_segments(&self, batch: &mut sled::Batch) {
        for (rec, entries) in self.touched.iter().zip(&self.entries) {
            let first = rec.next_seq - entries.len() as u64;
            for (i, chunk) in entries.chunks(SEGMENT_ENTRIES).enumerate() {
                let at = first + (i * SEGMENT_ENTRIES) as u64;
                batch.insert(key::frontier(rec.id, at), encode_segment(chunk));
            }
        }
    }

    /// The touched origins' records (their next sequence numbers).
    fn write_origins(&self, batch: &mut sled::Batch) {
        for rec in &self.touched {
            batch.insert(key::bytes(key::ORIGIN, rec.key.as_bytes()), encode(rec));
        }
    }

    /// The touched origins into the registry, once the batch is applied.
    fn publish(self, reg: &mut super::Registry) {
        reg.next_origin_id = self.next_origin_id;
        for rec in self.touched {
            reg.origins.insert(rec.key.clone(), rec);
        }
    }
}
