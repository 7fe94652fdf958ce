//! LSH banding over cluster sketches: find candidate partners in sub-linear time.
//!
//! The first `bands × rows` slots of a sketch are cut into bands; clusters whose minima agree on
//! every row of some band share that band's bucket. Two clusters with Jaccard J share a bucket
//! with probability 1 − (1 − J^rows)^bands (16 × 4: J = 0.5 → 0.64, J = 0.7 → 0.99).
//!
//! Buckets of one template grow as large as the template's page count, so a query reads at most
//! `cap` members per bucket: bucket-mates agree on `rows` minima and are near-interchangeable.
//! Removal is O(1) (swap-remove with positions), so merged clusters leave and re-enter cheaply.
//! The order inside buckets depends only on the order of inserts and removals, which the callers
//! keep deterministic.

use super::minhash::{Sketch, EMPTY, SLOTS};
use super::support::PathMap;

const NONE: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct Lsh {
    bands: usize,
    rows: usize,
    cap: usize,
    buckets: Vec<PathMap<Vec<u32>>>,
    /// Per (id, band): the bucket key the id is filed under (`NONE` = not filed).
    keys: Vec<u64>,
    /// Per (id, band): the id's index in that bucket.
    pos: Vec<u32>,
}

impl Lsh {
    /// `bands × rows` must not exceed `SLOTS`; `cap` ≥ 1 members are read per bucket.
    pub fn new(bands: usize, rows: usize, cap: usize) -> Lsh {
        assert!(
            bands >= 1 && rows >= 1 && bands * rows <= SLOTS && cap >= 1,
            "invariant: LSH shape {bands}×{rows} fits {SLOTS} slots"
        );
        Lsh {
            bands,
            rows,
            cap,
            buckets: vec![PathMap::default(); bands],
            keys: Vec::new(),
            pos: Vec::new(),
        }
    }

    fn band_key(&self, sketch: &Sketch, band: usize) -> Option<u64> {
        let rows = &sketch.min()[band * self.rows..(band + 1) * self.rows];
        if rows.iter().all(|&r| r == EMPTY) {
            return None;
        }
        let mut h = 0x243f_6a88_85a3_08d3u64 ^ band as u64;
        for &r in rows {
            h = (h.rotate_left(23) ^ u64::from(r)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        h ^= h >> 29;
        Some(if h == NONE { 0 } else { h })
    }

    /// File `id` under its sketch's band keys. An id already filed is moved.
    pub fn insert(&mut self, id: u32, sketch: &Sketch) {
        self.remove(id);
        let base = id as usize * self.bands;
        if self.keys.len() < base + self.bands {
            self.keys.resize(base + self.bands, NONE);
            self.pos.resize(base + self.bands, 0);
        }
        for band in 0..self.bands {
            if let Some(key) = self.band_key(sketch, band) {
                let bucket = self.buckets[band].entry(key).or_default();
                self.keys[base + band] = key;
                self.pos[base + band] = bucket.len() as u32;
                bucket.push(id);
            }
        }
    }

    /// Unfile `id` (no-op if it is not filed).
    pub fn remove(&mut self, id: u32) {
        let base = id as usize * self.bands;
        if base >= self.keys.len() {
            return;
        }
        for band in 0..self.bands {
            let key = std::mem::replace(&mut self.keys[base + band], NONE);
            if key == NONE {
                continue;
            }
            let at = self.pos[base + band] as usize;
            let bucket = self.buckets[band]
                .get_mut(&key)
                .expect("invariant: a filed id's bucket exists");
            bucket.swap_remove(at);
            if let Some(&moved) = bucket.get(at) {
                self.pos[moved as usize * self.bands + band] = at as u32;
            }
            if bucket.is_empty() {
                self.buckets[band].remove(&key);
            }
        }
    }

    /// Push onto `out` up to `cap` bucket-mates per band of `sketch`, other than `id`
    /// (duplicates across bands included; callers dedupe).
    pub fn candidates(&self, id: u32, sketch: &Sketch, out: &mut Vec<u32>) {
        for band in 0..self.bands {
            let Some(key) = self.band_key(sketch, band) else {
                continue;
            };
            if let Some(bucket) = self.buckets[band].get(&key) {
                out.extend(bucket.iter().copied().filter(|&m| m != id).take(self.cap));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(range: std::ops::Range<u64>) -> Sketch {
        let set: Vec<u64> = range.map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        Sketch::of_set(&set)
    }

    #[test]
    fn similar_sketches_meet_and_disjoint_ones_do_not() {
        let mut lsh = Lsh::new(16, 4, 8);
        lsh.insert(0, &sketch(0..1000));
        lsh.insert(1, &sketch(20..1020)); // J ≈ 0.96
        lsh.insert(2, &sketch(5000..6000)); // disjoint
        let mut out = Vec::new();
        lsh.candidates(0, &sketch(0..1000), &mut out);
        assert!(out.contains(&1));
        assert!(!out.contains(&2) && !out.contains(&0));
    }

    #[test]
    fn remove_and_reinsert_keep_positions_consistent() {
        let mut lsh = Lsh::new(8, 4, 100);
        let s = sketch(0..500);
        for id in 0..10 {
            lsh.insert(id, &s);
        }
        lsh.remove(3);
        lsh.remove(0);
        lsh.insert(3, &sketch(9000..9500));
        lsh.remove(9);
        let mut out = Vec::new();
        lsh.candidates(u32::MAX, &s, &mut out);
        out.sort_unstable();
        out.dedup();
        assert_eq!(out, vec![1, 2, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn a_query_reads_at_most_cap_per_bucket() {
        let mut lsh = Lsh::new(4, 4, 3);
        let s = sketch(0..500);
        for id in 0..20 {
            lsh.insert(id, &s);
        }
        let mut out = Vec::new();
        lsh.candidates(u32::MAX, &s, &mut out);
        assert_eq!(out.len(), 4 * 3);
    }
}
