//! The store's side of `crawl --recrawl` (docs/recrawl.md): the revisit queue (per origin,
//! ordered by priority class, then by when the page was fetched), the append-only change log,
//! pages pending their text comparison, the gone marks, redesigns and the pages of earlier
//! template eras. New key spaces only: nothing an earlier version wrote changes encoding.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    decode, encode, key, ChangeKind, ChangeRecord, GoneRecord, PendingChange, QueueEntry,
    RedesignRecord,
};
use super::{Store, StoreError};

/// Priority classes of the revisit queue, most urgent first.
pub mod class {
    /// A sitemap's `<lastmod>` is newer than the page's fetch.
    pub const LASTMOD: u8 = 0;
    /// A feed of the site links to the page.
    pub const FEED: u8 = 1;
    /// Everything else, oldest fetch first.
    pub const AGE: u8 = 2;
}

/// Where one page waits in the revisit queue: `v` origin · class · order · page id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RevisitSlot {
    pub origin: u32,
    pub class: u8,
    /// The page's `fetched_at_ms` when it was queued (older first within a class).
    pub order: u64,
    pub page: u64,
}

impl RevisitSlot {
    pub(crate) fn key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(22);
        k.push(key::REVISIT);
        k.extend_from_slice(&self.origin.to_be_bytes());
        k.push(self.class);
        k.extend_from_slice(&self.order.to_be_bytes());
        k.extend_from_slice(&self.page.to_be_bytes());
        k
    }

    fn from_key(k: &[u8]) -> Option<RevisitSlot> {
        if k.len() != 22 || k[0] != key::REVISIT {
            return None;
        }
        Some(RevisitSlot {
            origin: u32::from_be_bytes(k[1..5].try_into().ok()?),
            class: k[5],
            order: u64::from_be_bytes(k[6..14].try_into().ok()?),
            page: u64::from_be_bytes(k[14..22].try_into().ok()?),
        })
    }

    /// The same page's slot in another class.
    pub fn in_class(self, class: u8) -> RevisitSlot {
        RevisitSlot { class, ..self }
    }
}

pub(crate) fn change_key(at_ms: u64, page: u64) -> Vec<u8> {
    let mut k = key::bytes(key::CHANGE, &at_ms.to_be_bytes());
    k.extend_from_slice(&page.to_be_bytes());
    k
}

pub(crate) fn pending_key(site: &str, page: u64) -> Vec<u8> {
    site_page_key(key::PENDING, site, page)
}

fn site_page_key(prefix: u8, site: &str, page: u64) -> Vec<u8> {
    let mut k = key::bytes(prefix, site.as_bytes());
    k.push(0);
    k.extend_from_slice(&page.to_be_bytes());
    k
}

fn redesign_key(site: &str, at_ms: u64) -> Vec<u8> {
    let mut k = key::bytes(key::REDESIGN, site.as_bytes());
    k.push(0);
    k.extend_from_slice(&at_ms.to_be_bytes());
    k
}

/// What a site's end-of-crawl pass changes in its template eras, applied in the same batch as
/// its change records (`Store::resolve_changes`), so a kill -9 never records a redesign twice
/// or leaves its old-era pages half marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EraUpdate {
    /// A redesign found by this pass: it starts a new era.
    pub redesign: Option<RedesignRecord>,
    /// The pages the redesign leaves in the era it ends (`era`): their text is kept as it is.
    pub old_pages: Vec<u64>,
    pub era: u32,
    /// Old-era pages a recrawl replaced by new bytes: they join the current era.
    pub rejoined: Vec<u64>,
}

impl Store {
    /// The id of origin `origin_key`, if the store knows it.
    pub fn origin_id(&self, origin_key: &str) -> Option<u32> {
        self.lock().origins.get(origin_key).map(|o| o.id)
    }

    /// Whether the page waits in the revisit queue, in any class (its `order` as queued).
    pub fn revisit_queued(&self, slot: RevisitSlot) -> Result<Option<RevisitSlot>, StoreError> {
        for c in [class::LASTMOD, class::FEED, class::AGE] {
            let s = slot.in_class(c);
            if self.tree.contains_key(s.key())? {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }

    /// Queue pages for a revisit (each `(slot, entry)`; a page already queued in some class is
    /// left where it is). Returns how many were added.
    pub fn queue_revisits(&self, list: &[(RevisitSlot, QueueEntry)]) -> Result<u64, StoreError> {
        let mut added = 0;
        for chunk in list.chunks(super::DISCOVER_BATCH) {
            let mut batch = sled::Batch::default();
            for (slot, entry) in chunk {
                if self.revisit_queued(*slot)?.is_none() {
                    batch.insert(slot.key(), encode(entry));
                    added += 1;
                }
            }
            self.apply(batch)?;
        }
        Ok(added)
    }

    /// Move a queued page to a more urgent class (no-op when it is not queued, or already in
    /// that class or a more urgent one). Returns whether it moved.
    pub fn promote_revisit(&self, slot: RevisitSlot) -> Result<bool, StoreError> {
        let Some(found) = self.revisit_queued(slot)? else {
            return Ok(false);
        };
        if found.class <= slot.class {
            return Ok(false);
        }
        let Some(v) = self.tree.get(found.key())? else {
            return Ok(false);
        };
        let mut batch = sled::Batch::default();
        batch.remove(found.key());
        batch.insert(slot.key(), v);
        self.apply(batch)?;
        Ok(true)
    }

    /// The origin's first queued revisits in priority order, skipping `taken` (in flight).
    pub fn revisits_of(
        &self,
        origin: u32,
        taken: &std::collections::HashSet<RevisitSlot>,
        limit: usize,
    ) -> Result<Vec<(RevisitSlot, QueueEntry)>, StoreError> {
        let mut prefix = vec![key::REVISIT];
        prefix.extend_from_slice(&origin.to_be_bytes());
        let mut out = Vec::new();
        for item in self.tree.scan_prefix(&prefix) {
            let (k, v) = item?;
            let Some(slot) = RevisitSlot::from_key(&k) else {
                continue;
            };
            if taken.contains(&slot) {
                continue;
            }
            out.push((slot, decode(&k, &v)?));
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// Queued revisits per origin id.
    pub fn revisit_lengths(&self) -> Result<HashMap<u32, u64>, StoreError> {
        let mut out: HashMap<u32, u64> = HashMap::new();
        for k in self.tree.scan_prefix([key::REVISIT]).keys() {
            if let Some(slot) = RevisitSlot::from_key(&k?) {
                *out.entry(slot.origin).or_default() += 1;
            }
        }
        Ok(out)
    }

    /// The change log from `since_ms` on, in time order.
    pub fn changes(
        &self,
        since_ms: u64,
    ) -> impl Iterator<Item = Result<ChangeRecord, StoreError>> + '_ {
        let start = change_key(since_ms, 0);
        let end = key::bytes(key::CHANGE + 1, &[]);
        self.tree.range(start..end).map(|item| {
            let (k, v) = item?;
            decode(&k, &v)
        })
    }

    /// How many change records of each kind from `since_ms` on, and how many pages still wait
    /// for their text comparison.
    pub fn change_counts(
        &self,
        since_ms: u64,
    ) -> Result<(Vec<(ChangeKind, u64)>, u64), StoreError> {
        let mut counts: HashMap<ChangeKind, u64> = HashMap::new();
        for rec in self.changes(since_ms) {
            *counts.entry(rec?.kind).or_default() += 1;
        }
        let pending = self.tree.scan_prefix([key::PENDING]).count() as u64;
        let counts = ChangeKind::ALL
            .into_iter()
            .filter_map(|k| counts.get(&k).map(|&n| (k, n)))
            .collect();
        Ok((counts, pending))
    }

    /// The pending change of a replaced page, if any.
    pub fn pending_change(&self, site: &str, id: u64) -> Result<Option<PendingChange>, StoreError> {
        self.get(&pending_key(site, id))
    }

    /// Whether the site has replaced pages whose change is not resolved yet (its end-of-crawl
    /// pass must run).
    pub fn has_pending_changes(&self, site: &str) -> Result<bool, StoreError> {
        let mut prefix = key::bytes(key::PENDING, site.as_bytes());
        prefix.push(0);
        Ok(self.tree.scan_prefix(&prefix).next().transpose()?.is_some())
    }

    /// Resolve the site's pending changes now that its cleaned text is final: a page whose new
    /// text hash equals its old one is `template-churn`, else `content-changed`; and apply
    /// `eras` in the same batch. Returns how many were resolved.
    pub fn resolve_changes(&self, site: &str, eras: &EraUpdate) -> Result<u64, StoreError> {
        let mut batch = sled::Batch::default();
        if let Some(r) = &eras.redesign {
            batch.insert(redesign_key(site, r.at_ms), encode(r));
        }
        for &id in &eras.old_pages {
            batch.insert(site_page_key(key::OLD_ERA, site, id), encode(&eras.era));
        }
        for &id in &eras.rejoined {
            batch.remove(site_page_key(key::OLD_ERA, site, id));
        }
        let mut n = 0;
        for item in self.pending_changes(site) {
            let (id, pending) = item?;
            let new_hash = self.cleaned_sum(id)?.map(|(_, h)| h);
            let kind = if new_hash.is_some() && new_hash == pending.old_hash {
                ChangeKind::TemplateChurn
            } else {
                ChangeKind::ContentChanged
            };
            let rec = ChangeRecord {
                url: pending.url,
                page_id: id,
                kind,
                at_ms: pending.at_ms,
                old_hash: pending.old_hash,
                new_hash,
            };
            batch.insert(change_key(rec.at_ms, id), encode(&rec));
            batch.remove(pending_key(site, id));
            n += 1;
        }
        self.apply(batch)?;
        Ok(n)
    }

    /// The site's pages replaced by new bytes and still pending, with what they were, one at
    /// a time (a recrawl may replace every page of a large site).
    pub fn pending_changes(
        &self,
        site: &str,
    ) -> impl Iterator<Item = Result<(u64, PendingChange), StoreError>> + '_ {
        let mut prefix = key::bytes(key::PENDING, site.as_bytes());
        prefix.push(0);
        let skip = prefix.len();
        self.tree.scan_prefix(prefix).filter_map(move |item| {
            let (k, v) = match item {
                Ok(kv) => kv,
                Err(e) => return Some(Err(e.into())),
            };
            let id = <[u8; 8]>::try_from(&k[skip..])
                .ok()
                .map(u64::from_be_bytes)?;
            Some(decode(&k, &v).map(|p| (id, p)))
        })
    }

    /// The site's pages of earlier template eras (page id → the era it belongs to, 1 the first
    /// crawl's): a redesign left them as they were, and no pass re-cleans them until a recrawl
    /// replaces them (docs/recrawl.md, "Redesigns: template eras").
    pub fn old_era_pages(&self, site: &str) -> Result<BTreeMap<u64, u32>, StoreError> {
        let mut prefix = key::bytes(key::OLD_ERA, site.as_bytes());
        prefix.push(0);
        let skip = prefix.len();
        let mut out = BTreeMap::new();
        for item in self.tree.scan_prefix(&prefix) {
            let (k, v) = item?;
            if let Ok(b) = <[u8; 8]>::try_from(&k[skip..]) {
                out.insert(u64::from_be_bytes(b), decode(&k, &v)?);
            }
        }
        Ok(out)
    }

    /// The pages that got a change record (a revisit's outcome) at or after `since_ms`.
    pub fn revisited_since(&self, since_ms: u64) -> Result<HashSet<u64>, StoreError> {
        let mut ids = HashSet::new();
        for rec in self.changes(since_ms) {
            ids.insert(rec?.page_id);
        }
        Ok(ids)
    }

    /// The redesigns recorded for `site`, oldest first.
    pub fn redesigns(&self, site: &str) -> Result<Vec<RedesignRecord>, StoreError> {
        let mut prefix = key::bytes(key::REDESIGN, site.as_bytes());
        prefix.push(0);
        let mut out = Vec::new();
        for item in self.tree.scan_prefix(&prefix) {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }

    /// The gone mark of a page, if a recrawl found it gone (and no later one found it back).
    pub fn gone(&self, id: u64) -> Result<Option<GoneRecord>, StoreError> {
        self.get(&key::page(key::GONE, id))
    }

    /// The ids of pages marked gone.
    pub fn gone_ids(&self) -> Result<std::collections::HashSet<u64>, StoreError> {
        self.page_ids(key::GONE)
    }
}
