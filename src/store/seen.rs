//! The seen set as buckets of URL hashes: a URL is its 64-bit xxh3, filed under one of
//! 2¹⁶ sled keys by the hash's top 16 bits, each bucket one value of sorted hashes
//! (schema 3). One key per URL (the URL itself, schema 2) cost about 90 bytes of sled's
//! in-memory tree a URL — an `IVec` key and an empty `IVec` value in leaves of at most 17 entries —
//! whatever the key's length: 40 MB for the 460,000 URLs of `links3`, under the peak of its
//! last page's parse. A bucket holds 8 bytes a URL and its key's share.
//!
//! Collisions: two URLs with the same 64-bit hash are one URL to the seen set, so the second is
//! never queued. For n URLs that happens with probability about n² / 2⁶⁵ (10⁻⁸ for 460,000
//! URLs, 3 · 10⁻⁶ for ten million); the crawl accepts it, as it accepts a page id
//! (`crawl::url::page_id`) being a 64-bit hash.
//!
//! Also the schema 2 → 3 upgrade of a store whose seen set was one key per URL.

use std::collections::hash_map::{Entry, HashMap};

use super::{key, Store, StoreError};

/// Bits of a URL's hash that pick its bucket (at most 16: the key holds them in two bytes).
/// 2¹⁶ buckets: 460,000 URLs are ~7 hashes a bucket; ten million, ~150 (a 1.2 KB value
/// rewritten per new URL in it).
const BUCKET_BITS: u32 = 16;
const _: () = assert!(BUCKET_BITS <= 16);

/// The hash the seen set files `url` under.
pub fn url_hash(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

/// The sled key of the bucket holding `hash`.
pub(crate) fn bucket_key(hash: u64) -> [u8; 3] {
    let [a, b] = ((hash >> (64 - BUCKET_BITS)) as u16).to_be_bytes();
    [key::SEEN, a, b]
}

/// A bucket's hashes (big-endian u64s, ascending).
fn decode_bucket(v: &[u8]) -> Vec<u64> {
    v.chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().expect("invariant: chunks of 8")))
        .collect()
}

fn encode_bucket(hashes: &[u64]) -> Vec<u8> {
    let mut v = Vec::with_capacity(hashes.len() * 8);
    for h in hashes {
        v.extend_from_slice(&h.to_be_bytes());
    }
    v
}

/// The buckets the store's commits have read or written, in memory (8 bytes a URL): every new
/// link is looked up in a random bucket, and sled's cache (`store.cache_bytes`) could not hold
/// them all at 1M pages without its memory growing to many times its setting; read back from
/// sled, each lookup cost a node's decoding (docs/benchmarks.md, "Memory"). Updated only
/// after the batch that wrote a bucket is applied, so it never runs ahead of the tree.
#[derive(Default)]
pub(crate) struct SeenMirror {
    buckets: HashMap<[u8; 3], Vec<u64>>,
}

impl SeenMirror {
    /// Buckets held in memory (tests).
    #[cfg(test)]
    pub fn buckets_held(&self) -> usize {
        self.buckets.len()
    }
}

impl std::fmt::Debug for SeenMirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeenMirror")
            .field("buckets", &self.buckets.len())
            .finish()
    }
}

/// The buckets one batch reads and changes: each read once (from the mirror, else the tree),
/// written once.
#[derive(Default)]
pub(crate) struct SeenBatch {
    buckets: HashMap<[u8; 3], (Vec<u64>, bool)>,
}

impl SeenBatch {
    /// Read the buckets of `urls` from the tree in key order (random order cost links3 ~15 %
    /// more CPU: each read a descent to a leaf far from the last one's).
    pub fn load<'u>(
        &mut self,
        tree: &sled::Tree,
        mirror: Option<&SeenMirror>,
        urls: impl Iterator<Item = &'u str>,
    ) -> Result<(), StoreError> {
        let mut keys: Vec<[u8; 3]> = urls.map(|u| bucket_key(url_hash(u))).collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            self.bucket(tree, mirror, k)?;
        }
        Ok(())
    }

    /// The bucket `k` (hashes, changed), read on first use from `mirror` when it has it, else
    /// from the tree.
    fn bucket(
        &mut self,
        tree: &sled::Tree,
        mirror: Option<&SeenMirror>,
        k: [u8; 3],
    ) -> Result<&mut (Vec<u64>, bool), StoreError> {
        Ok(match self.buckets.entry(k) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                let stored = match mirror.and_then(|m| m.buckets.get(&k)) {
                    Some(hashes) => hashes.clone(),
                    None => tree.get(k)?.map(|b| decode_bucket(&b)).unwrap_or_default(),
                };
                v.insert((stored, false))
            }
        })
    }

    /// Add `url`'s hash; false when the seen set (with this batch) already has it. Its bucket
    /// is the one `load` read, else read now from the tree.
    pub fn insert(&mut self, tree: &sled::Tree, url: &str) -> Result<bool, StoreError> {
        self.insert_hash(tree, url_hash(url))
    }

    fn insert_hash(&mut self, tree: &sled::Tree, hash: u64) -> Result<bool, StoreError> {
        let (hashes, dirty) = self.bucket(tree, None, bucket_key(hash))?;
        match hashes.binary_search(&hash) {
            Ok(_) => Ok(false),
            Err(i) => {
                hashes.insert(i, hash);
                *dirty = true;
                Ok(true)
            }
        }
    }

    /// Put the changed buckets into `batch`.
    pub fn write(&self, batch: &mut sled::Batch) {
        for (k, (hashes, dirty)) in &self.buckets {
            if *dirty {
                batch.insert(&k[..], encode_bucket(hashes));
            }
        }
    }

    /// The batch `write` went into was applied: its buckets, as the tree now holds them, go
    /// to `mirror`.
    pub fn keep(self, mirror: &mut SeenMirror) {
        for (k, (hashes, _)) in self.buckets {
            mirror.buckets.insert(k, hashes);
        }
    }
}

/// Old (schema 2) seen keys moved per batch by the upgrade.
const UPGRADE_BATCH: usize = 4096;

impl Store {
    /// Whether `url` was ever seen (queued).
    pub fn is_seen(&self, url: &str) -> Result<bool, StoreError> {
        let hash = url_hash(url);
        Ok(match self.tree.get(bucket_key(hash))? {
            Some(b) => decode_bucket(&b).binary_search(&hash).is_ok(),
            None => false,
        })
    }

    /// Schema 2 → 3: each seen key `s` · URL becomes its hash in its bucket (`s` · 2 bytes; a
    /// URL is never 2 bytes long, so the two kinds of key are told apart by length). Each batch
    /// moves some old keys and removes them, so an upgrade cut short continues on the next open.
    pub(crate) fn upgrade_seen_v2(&self) -> Result<(), StoreError> {
        // One pass: sled's iterator reads on past the keys each batch removed or wrote.
        let mut old = self
            .tree
            .scan_prefix([key::SEEN])
            .filter(|item| !matches!(item, Ok((k, _)) if k.len() == 3))
            .peekable();
        while old.peek().is_some() {
            let mut seen = SeenBatch::default();
            let mut batch = sled::Batch::default();
            for item in old.by_ref().take(UPGRADE_BATCH) {
                let (k, _) = item?;
                seen.insert_hash(&self.tree, xxhash_rust::xxh3::xxh3_64(&k[1..]))?;
                batch.remove(k);
            }
            seen.write(&mut batch);
            self.apply(batch)?;
        }
        Ok(())
    }
}
