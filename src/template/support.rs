//! Path support across one host's pages, each page's mode threshold t_d, its essential paths E(d),
//! and a cluster's template (paths essential in more than half its pages) — docs/design.md,
//! "Support and essential paths". Path sets are sorted, duplicate-free `u64` slices
//! (`Dom::path_set`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

/// A hasher for keys that are already 64-bit hashes: passes them through.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for non-u64 keys; fold them in so the hasher stays correct.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by path hash.
pub type PathMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// How many of a host's pages contain each path. Serialises compactly (paths sorted and
/// delta-encoded, so postcard's varints take ~7 bytes a path instead of 10), and identically for
/// equal supports whatever the insertion history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "SortedCounts", from = "SortedCounts")]
pub struct Support {
    counts: PathMap<u32>,
    pages: u32,
}

/// `Support`'s serialised form.
#[derive(Serialize, Deserialize)]
struct SortedCounts {
    pages: u32,
    /// Sorted paths, each as the difference from the previous one.
    path_deltas: Vec<u64>,
    counts: Vec<u32>,
}

impl From<Support> for SortedCounts {
    fn from(s: Support) -> SortedCounts {
        let mut pairs: Vec<(u64, u32)> = s.counts.into_iter().collect();
        pairs.sort_unstable();
        let mut prev = 0u64;
        let path_deltas = pairs
            .iter()
            .map(|&(p, _)| {
                let d = p - prev;
                prev = p;
                d
            })
            .collect();
        SortedCounts {
            pages: s.pages,
            path_deltas,
            counts: pairs.into_iter().map(|(_, c)| c).collect(),
        }
    }
}

impl From<SortedCounts> for Support {
    fn from(s: SortedCounts) -> Support {
        let mut prev = 0u64;
        let counts = s
            .path_deltas
            .into_iter()
            .zip(s.counts)
            .map(|(d, c)| {
                prev = prev.wrapping_add(d);
                (prev, c)
            })
            .collect();
        Support {
            counts,
            pages: s.pages,
        }
    }
}

impl Support {
    pub fn from_pages<'a>(pages: impl IntoIterator<Item = &'a [u64]>) -> Support {
        let mut s = Support::default();
        for p in pages {
            s.add(p);
        }
        s
    }

    /// Count one more page.
    pub fn add(&mut self, page: &[u64]) {
        self.pages += 1;
        for &p in page {
            *self.counts.entry(p).or_insert(0) += 1;
        }
    }

    /// Forget a page previously added (a page re-fetched with new content).
    pub fn remove(&mut self, page: &[u64]) {
        self.pages = self.pages.saturating_sub(1);
        for &p in page {
            if let Some(c) = self.counts.get_mut(&p) {
                *c -= 1;
                if *c == 0 {
                    self.counts.remove(&p);
                }
            }
        }
    }

    pub fn get(&self, path: u64) -> u32 {
        self.counts.get(&path).copied().unwrap_or(0)
    }

    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// Number of distinct paths seen.
    pub fn paths(&self) -> usize {
        self.counts.len()
    }

    /// The page's minimum support threshold t_d: the mode of its paths' supports, the smallest
    /// mode on ties. 0 for an empty page.
    pub fn threshold(&self, page: &[u64]) -> u32 {
        let mut freq: PathMap<u32> = PathMap::default();
        for &p in page {
            *freq.entry(u64::from(self.get(p))).or_insert(0) += 1;
        }
        freq.into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map_or(0, |(support, _)| support as u32)
    }

    /// E(d): the page's paths with support ≥ t_d (sorted, as the input).
    pub fn essential(&self, page: &[u64]) -> Vec<u64> {
        let t = self.threshold(page);
        page.iter().copied().filter(|&p| self.get(p) >= t).collect()
    }
}

/// The template of a cluster: paths essential in more than half of its pages, sorted.
pub fn template<'a>(essential_sets: impl IntoIterator<Item = &'a [u64]>) -> Vec<u64> {
    let mut counts: PathMap<u32> = PathMap::default();
    let mut n = 0u32;
    for set in essential_sets {
        n += 1;
        for &p in set {
            *counts.entry(p).or_insert(0) += 1;
        }
    }
    let mut t: Vec<u64> = counts
        .into_iter()
        .filter(|&(_, c)| 2 * c > n)
        .map(|(p, _)| p)
        .collect();
    t.sort_unstable();
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_counts_pages_not_occurrences() {
        let s = Support::from_pages([&[1u64, 2, 3][..], &[1, 2], &[1]]);
        assert_eq!((s.get(1), s.get(2), s.get(3), s.get(9)), (3, 2, 1, 0));
        assert_eq!(s.pages(), 3);
    }

    #[test]
    fn threshold_is_the_mode_smallest_on_ties() {
        // supports: 1→3, 2→3, 3→1, 4→1 : modes 3 and 1 tie (two paths each) → 1.
        let s = Support::from_pages([&[1u64, 2, 3, 4][..], &[1, 2], &[1, 2]]);
        assert_eq!(s.threshold(&[1, 2, 3, 4]), 1);
        assert_eq!(s.essential(&[1, 2, 3, 4]), vec![1, 2, 3, 4]);
        // supports: 1→3, 2→3, 5→1 : mode 3 → only the shared paths are essential.
        let s = Support::from_pages([&[1u64, 2, 5][..], &[1, 2], &[1, 2]]);
        assert_eq!(s.threshold(&[1, 2, 5]), 3);
        assert_eq!(s.essential(&[1, 2, 5]), vec![1, 2]);
    }

    #[test]
    fn remove_undoes_add() {
        let mut s = Support::from_pages([&[1u64, 2][..]]);
        s.add(&[2, 3]);
        s.remove(&[2, 3]);
        assert_eq!((s.get(2), s.get(3), s.paths(), s.pages()), (1, 0, 2, 1));
    }

    #[test]
    fn support_round_trips_through_postcard() {
        let s = Support::from_pages([&[1u64, 2, u64::MAX][..], &[2, 7]]);
        let bytes = postcard::to_allocvec(&s).expect("serialise");
        let back: Support = postcard::from_bytes(&bytes).expect("deserialise");
        assert_eq!(back, s);
        assert_eq!((back.get(2), back.get(u64::MAX), back.pages()), (2, 1, 2));
    }

    #[test]
    fn template_takes_a_strict_majority() {
        let t = template([&[1u64, 2, 3][..], &[1, 2], &[1, 4], &[1, 2]]);
        assert_eq!(t, vec![1, 2]);
        // exactly half is not more than half
        assert_eq!(template([&[1u64][..], &[2]]), Vec::<u64>::new());
    }
}
