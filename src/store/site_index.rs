//! A site's page list (`S`) and its body-hash index (`D`) as buckets (schema 8): each bucket one
//! sled value of sorted entries, filed under `S`/`D` · site · 0x00 · level u8 · bucket u16.
//! Schema 7 had one key per page in each (`S` · site · 0x00 · page id, and `D` · site · 0x00 ·
//! body hash → page id): 2 of the 4 keys a page, and sled holds ~220 bytes in memory for every
//! node of its tree whatever its cache, a leaf at most 16 keys (docs/design.md, "The store").
//!
//! A bucket is picked by the top bits of the page id (`S`) or body hash (`D`); how many bits
//! depends on the site's page count when the entry is added ([`level`]): 8 bits below 2¹⁶ pages,
//! 12 below 2²⁰, then 16. So a bucket holds about 256 entries at most whatever the site's size
//! (up to 16M pages), and a 5,000-page site is 256 keys a kind instead of 5,000. Entries added
//! at a lower level stay in its buckets: a lookup reads the entry's bucket at every level.
//!
//! Every change goes through a [`SiteIndexBatch`] under the store's commit lock: each bucket is
//! read once from the tree, changed in memory, written once into the commit's batch, so a
//! replaced page and a new page of the same site in one commit never overwrite each other's
//! change. Also the schema 7 → 8 upgrade.

use std::collections::hash_map::{Entry, HashMap};

use super::{key, Store, StoreError};

/// Bucket bits per level. A level holds the entries added while the site had fewer than
/// 2^(bits + 8) pages: about 256 a bucket at most.
const LEVEL_BITS: [u32; 3] = [8, 12, 16];

/// The level new entries of a site with `pages` pages go to.
fn level(pages: u64) -> u8 {
    let mut level = 0;
    while level + 1 < LEVEL_BITS.len() && pages >> (LEVEL_BITS[level] + 8) > 0 {
        level += 1;
    }
    level as u8
}

/// The two bucketed indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    /// `S`: the site's page ids.
    Pages,
    /// `D`: body hash → page id.
    Bodies,
}

impl Kind {
    fn prefix(self) -> u8 {
        match self {
            Kind::Pages => key::SITE_PAGE,
            Kind::Bodies => key::CONTENT,
        }
    }
}

/// `S`/`D` · site · 0x00: every bucket of a site of that kind starts with it.
fn site_prefix(kind: Kind, site: &str) -> Vec<u8> {
    let mut k = key::bytes(kind.prefix(), site.as_bytes());
    k.push(0);
    k
}

/// The key of the bucket of `of` (a page id or body hash) at `level`.
fn bucket_key(kind: Kind, site: &str, level: u8, of: u64) -> Vec<u8> {
    let bits = LEVEL_BITS[level as usize];
    let mut k = site_prefix(kind, site);
    k.push(level);
    k.extend_from_slice(&((of >> (64 - bits)) as u16).to_be_bytes());
    k
}

/// A bucket's entries, sorted by their first number: `(page id, 0)` for `S`, `(body hash, page
/// id)` for `D`. Big-endian u64s, one (`S`) or two (`D`) an entry.
fn decode(kind: Kind, v: &[u8]) -> Vec<(u64, u64)> {
    let n = |c: &[u8]| u64::from_be_bytes(c.try_into().expect("invariant: chunks of 8"));
    match kind {
        Kind::Pages => v.chunks_exact(8).map(|c| (n(c), 0)).collect(),
        Kind::Bodies => v
            .chunks_exact(16)
            .map(|c| (n(&c[..8]), n(&c[8..])))
            .collect(),
    }
}

fn encode(kind: Kind, entries: &[(u64, u64)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(entries.len() * 16);
    for &(a, b) in entries {
        v.extend_from_slice(&a.to_be_bytes());
        if kind == Kind::Bodies {
            v.extend_from_slice(&b.to_be_bytes());
        }
    }
    v
}

/// Whether `k` (a key of `kind`'s prefix) is a schema 7 key, one per page (its part after the
/// site's 0x00 is 8 bytes; a bucket's is 3). Site names hold no 0x00.
fn is_schema_7_key(k: &[u8]) -> Option<(&str, u64)> {
    let zero = k.iter().skip(1).position(|&b| b == 0)? + 1;
    let rest = <[u8; 8]>::try_from(&k[zero + 1..]).ok()?;
    let site = std::str::from_utf8(&k[1..zero]).ok()?;
    Some((site, u64::from_be_bytes(rest)))
}

/// The buckets one commit reads and changes: each read once from the tree, written once.
#[derive(Default)]
pub(crate) struct SiteIndexBatch {
    buckets: HashMap<(Kind, Vec<u8>), Bucket>,
}

/// A bucket's entries (`decode`'s) and whether this batch changed them.
#[derive(Default)]
struct Bucket {
    entries: Vec<(u64, u64)>,
    dirty: bool,
}

impl SiteIndexBatch {
    fn bucket(
        &mut self,
        tree: &sled::Tree,
        kind: Kind,
        k: Vec<u8>,
    ) -> Result<&mut Bucket, StoreError> {
        Ok(match self.buckets.entry((kind, k)) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                let entries = tree
                    .get(&v.key().1)?
                    .map(|b| decode(kind, &b))
                    .unwrap_or_default();
                v.insert(Bucket {
                    entries,
                    dirty: false,
                })
            }
        })
    }

    /// The level and position of `of`'s entry, if any level's bucket has one.
    fn find(
        &mut self,
        tree: &sled::Tree,
        kind: Kind,
        site: &str,
        of: u64,
    ) -> Result<Option<(u8, u64)>, StoreError> {
        for level in 0..LEVEL_BITS.len() as u8 {
            let b = self.bucket(tree, kind, bucket_key(kind, site, level, of))?;
            if let Ok(i) = b.entries.binary_search_by_key(&of, |e| e.0) {
                return Ok(Some((level, b.entries[i].1)));
            }
        }
        Ok(None)
    }

    /// Set `of`'s entry to `(of, value)`: where it is, else in its bucket at the level of a site
    /// of `pages` pages.
    fn set(
        &mut self,
        tree: &sled::Tree,
        kind: Kind,
        site: &str,
        pages: u64,
        of: u64,
        value: u64,
    ) -> Result<(), StoreError> {
        let level = match self.find(tree, kind, site, of)? {
            Some((_, v)) if v == value => return Ok(()),
            Some((level, _)) => level,
            None => level(pages),
        };
        let b = self.bucket(tree, kind, bucket_key(kind, site, level, of))?;
        match b.entries.binary_search_by_key(&of, |e| e.0) {
            Ok(i) => b.entries[i].1 = value,
            Err(i) => b.entries.insert(i, (of, value)),
        }
        b.dirty = true;
        Ok(())
    }

    /// Add page `id` to its site's pages (`pages`: the site's page count before it). Only for a
    /// page with no `p` record (its `S` entry is written in the same batch as that record), so
    /// no other level holds it and only its bucket at the current level is read: no lookup
    /// over the levels on the commit's path. Adding it twice at that level changes nothing.
    pub fn add_page(
        &mut self,
        tree: &sled::Tree,
        site: &str,
        pages: u64,
        id: u64,
    ) -> Result<(), StoreError> {
        let k = bucket_key(Kind::Pages, site, level(pages), id);
        let b = self.bucket(tree, Kind::Pages, k)?;
        if let Err(i) = b.entries.binary_search_by_key(&id, |e| e.0) {
            b.entries.insert(i, (id, 0));
            b.dirty = true;
        }
        Ok(())
    }

    /// The page of `site` whose body hashes to `hash`.
    pub fn body_owner(
        &mut self,
        tree: &sled::Tree,
        site: &str,
        hash: u64,
    ) -> Result<Option<u64>, StoreError> {
        Ok(self.find(tree, Kind::Bodies, site, hash)?.map(|(_, id)| id))
    }

    /// The page of `site` other than `id` whose body hashes to `hash`: `id`'s twin.
    pub fn twin(
        &mut self,
        tree: &sled::Tree,
        site: &str,
        hash: u64,
        id: u64,
    ) -> Result<Option<u64>, StoreError> {
        Ok(self.body_owner(tree, site, hash)?.filter(|&t| t != id))
    }

    /// Page `id` now has a body hashing to `hash`.
    pub fn set_body(
        &mut self,
        tree: &sled::Tree,
        site: &str,
        pages: u64,
        hash: u64,
        id: u64,
    ) -> Result<(), StoreError> {
        self.set(tree, Kind::Bodies, site, pages, hash, id)
    }

    /// Page `id` no longer has a body hashing to `hash` (another page's entry stays).
    pub fn remove_body(
        &mut self,
        tree: &sled::Tree,
        site: &str,
        hash: u64,
        id: u64,
    ) -> Result<(), StoreError> {
        let Some((level, owner)) = self.find(tree, Kind::Bodies, site, hash)? else {
            return Ok(());
        };
        if owner != id {
            return Ok(());
        }
        let k = bucket_key(Kind::Bodies, site, level, hash);
        let b = self.bucket(tree, Kind::Bodies, k)?;
        b.entries.retain(|e| e.0 != hash);
        b.dirty = true;
        Ok(())
    }

    /// Put the changed buckets into `batch` (an emptied bucket is removed).
    pub fn write(self, batch: &mut sled::Batch) {
        for ((kind, k), b) in self.buckets {
            if !b.dirty {
                continue;
            }
            if b.entries.is_empty() {
                batch.remove(k);
            } else {
                batch.insert(k, encode(kind, &b.entries));
            }
        }
    }
}

/// Schema 7 keys moved per batch by the upgrade.
const UPGRADE_BATCH: usize = 4096;

impl Store {
    /// Page ids of `site`, ascending.
    pub fn site_pages(&self, site: &str) -> Result<Vec<u64>, StoreError> {
        let mut out = Vec::new();
        for v in self
            .tree
            .scan_prefix(site_prefix(Kind::Pages, site))
            .values()
        {
            out.extend(decode(Kind::Pages, &v?).into_iter().map(|(id, _)| id));
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Schema 7 → 8: each `S` and `D` key of one page becomes an entry of its site's bucket, at
    /// the level of the site's page count now. Each batch moves some old keys and removes them;
    /// adding an entry a bucket already has changes nothing, so an upgrade cut short goes on at
    /// the next open.
    pub(crate) fn upgrade_site_index_v7(&self) -> Result<(), StoreError> {
        for kind in [Kind::Pages, Kind::Bodies] {
            let mut from = vec![kind.prefix()];
            loop {
                let mut old = Vec::with_capacity(UPGRADE_BATCH);
                for item in self.tree.range(from.clone()..) {
                    let (k, v) = item?;
                    if k.first() != Some(&kind.prefix()) || old.len() == UPGRADE_BATCH {
                        break;
                    }
                    if is_schema_7_key(&k).is_some() {
                        old.push((k, v));
                    }
                }
                let Some((last, _)) = old.last() else { break };
                from = last.to_vec();
                let mut index = SiteIndexBatch::default();
                let mut batch = sled::Batch::default();
                for (k, v) in &old {
                    let (site, of) = is_schema_7_key(k).expect("invariant: picked above");
                    let pages = self.site_counters(site).pages;
                    match kind {
                        Kind::Pages => index.add_page(&self.tree, site, pages, of)?,
                        Kind::Bodies => {
                            let id = <[u8; 8]>::try_from(v.as_ref())
                                .map_err(|_| super::corrupt(k, "page id"))?;
                            index.set_body(&self.tree, site, pages, of, u64::from_be_bytes(id))?;
                        }
                    }
                    batch.remove(k.clone());
                }
                index.write(&mut batch);
                self.apply(batch)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_holds_about_256_entries_whatever_the_sites_size() {
        assert_eq!(level(0), 0);
        assert_eq!(level(65_535), 0);
        assert_eq!(level(65_536), 1);
        assert_eq!(level((1 << 20) - 1), 1);
        assert_eq!(level(1 << 20), 2);
        assert_eq!(level(u64::MAX), 2);
        // Entries a level takes over buckets it has: at most ~256 each (2^(bits+8) / 2^bits).
        for (l, bits) in LEVEL_BITS.iter().enumerate() {
            let k = bucket_key(Kind::Pages, "a", l as u8, u64::MAX);
            assert_eq!(k.len(), 1 + 1 + 1 + 1 + 2);
            assert_eq!(
                u16::from_be_bytes([k[4], k[5]]) as u64,
                (1u64 << bits) - 1,
                "the top {bits} bits"
            );
        }
    }

    #[test]
    fn schema_7_keys_are_told_from_buckets_by_length() {
        let mut old = key::bytes(key::SITE_PAGE, b"a.example");
        old.push(0);
        old.extend_from_slice(&7u64.to_be_bytes());
        assert_eq!(is_schema_7_key(&old), Some(("a.example", 7)));
        let bucket = bucket_key(Kind::Pages, "a.example", 1, 7);
        assert_eq!(is_schema_7_key(&bucket), None);
    }

    #[test]
    fn a_batch_sees_its_own_changes_and_writes_each_bucket_once() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let tree = db.open_tree("t").unwrap();
        let mut index = SiteIndexBatch::default();
        index.set_body(&tree, "a", 0, 0xAA << 56, 1).unwrap();
        index.set_body(&tree, "a", 0, (0xAA << 56) | 5, 2).unwrap();
        assert_eq!(index.body_owner(&tree, "a", 0xAA << 56).unwrap(), Some(1));
        index.remove_body(&tree, "a", 0xAA << 56, 9).unwrap();
        assert_eq!(
            index.body_owner(&tree, "a", 0xAA << 56).unwrap(),
            Some(1),
            "another page's entry stays"
        );
        index.remove_body(&tree, "a", 0xAA << 56, 1).unwrap();
        assert_eq!(index.body_owner(&tree, "a", 0xAA << 56).unwrap(), None);
        let mut batch = sled::Batch::default();
        index.write(&mut batch);
        tree.apply_batch(batch).unwrap();
        assert_eq!(tree.len(), 1, "one bucket for both hashes");
        let mut index = SiteIndexBatch::default();
        assert_eq!(
            index.body_owner(&tree, "a", (0xAA << 56) | 5).unwrap(),
            Some(2)
        );
        // A site past 2^16 pages files new entries at level 1; the old one is still found and
        // updated where it is.
        index.set_body(&tree, "a", 1 << 16, 0xAB << 56, 3).unwrap();
        index
            .set_body(&tree, "a", 1 << 16, (0xAA << 56) | 5, 4)
            .unwrap();
        let mut batch = sled::Batch::default();
        index.write(&mut batch);
        tree.apply_batch(batch).unwrap();
        assert_eq!(tree.len(), 2);
        let mut index = SiteIndexBatch::default();
        assert_eq!(index.body_owner(&tree, "a", 0xAB << 56).unwrap(), Some(3));
        assert_eq!(
            index.body_owner(&tree, "a", (0xAA << 56) | 5).unwrap(),
            Some(4)
        );
    }
}
