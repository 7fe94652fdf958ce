//! Extended MinHash sketches of clusters (TEXT-HASH, docs/design.md, "TEXT-MDL, TEXT-HASH,
//! TEXT-MAX"): estimate a cluster's MDL counts and two clusters' similarity without their path
//! sets.
//!
//! One-permutation hashing: each path is mixed once; the top bits pick one of `SLOTS` slots and
//! the low 32 bits are its rank. Per slot a sketch keeps the minimum rank over the cluster's
//! paths (the union of its members' essential sets) and `n`, how many member pages have that
//! minimum path. The union of two clusters is sketched exactly by the slot-wise minimum, with `n`
//! added when the minima are equal (the same path) and taken from the smaller otherwise.
//!
//! Each non-empty slot's minimum is a uniform sample of the union, so the share of slots with
//! `n = m` estimates the share of the union's paths held by exactly m pages. With the exact
//! total Σ|E(d)| (kept beside the sketch) this pins down the union size and the counts of 1s in
//! M_T and ±1s in M_Δ (`Sketch::estimate`). Singletons and groups of identical pages are
//! estimated exactly.
//!
//! `ClusterSketch` adds what is known exactly: a path essential in only one page of the host
//! ("unique") can be in the template of a singleton only, so such paths are counted, not
//! sketched. This matters: a long article's essential set is the whole page (its mode threshold
//! is 1), and without the split a big cluster's union would be almost all unique content, its
//! sketch blind to the template and its estimates noise.

use serde::{Deserialize, Serialize};

use super::mdl::Counts;

/// Slots per sketch.
pub const SLOTS: usize = 128;
/// Rank of an empty slot (real ranks are capped below it).
pub const EMPTY: u32 = u32::MAX;
const SLOT_BITS: u32 = SLOTS.trailing_zeros();

/// The slot and rank of a path hash.
#[inline]
pub fn slot_and_rank(path: u64) -> (usize, u32) {
    // splitmix64's finaliser: path ids are already hashes, but mixing costs little and keeps the
    // slot and rank bits independent whatever produced the ids.
    let mut z = path.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let slot = (z >> (64 - SLOT_BITS)) as usize;
    let rank = (z as u32).min(EMPTY - 1);
    (slot, rank)
}

/// An extended MinHash sketch (see the module doc). Invariant: `min` and `n` have `SLOTS`
/// entries; `n[k] == 0` exactly when `min[k] == EMPTY`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sketch {
    min: Vec<u32>,
    n: Vec<u32>,
}

/// How two sketches overlap: enough for Jaccard and Dice estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overlap {
    /// Slots where both are non-empty with the same minimum.
    pub matches: u32,
    /// Slots non-empty in either (= non-empty slots of the union).
    pub either: u32,
    /// Σ n over the union's slots.
    pub union_n: u64,
}

impl Default for Sketch {
    fn default() -> Self {
        Sketch {
            min: vec![EMPTY; SLOTS],
            n: vec![0; SLOTS],
        }
    }
}

impl Sketch {
    /// The sketch of one page (its essential set).
    pub fn of_set(set: &[u64]) -> Sketch {
        Sketch::from_counts(set.iter().map(|&p| (p, 1)))
    }

    /// The sketch of a cluster from its members' path counts (path, #members having it).
    pub fn from_counts(counts: impl IntoIterator<Item = (u64, u32)>) -> Sketch {
        let mut s = Sketch::default();
        for (p, c) in counts {
            let (k, r) = slot_and_rank(p);
            if r < s.min[k] {
                s.min[k] = r;
                s.n[k] = c;
            } else if r == s.min[k] {
                // Two paths with one rank: only on a 32-bit collision; count both.
                s.n[k] += c;
            }
        }
        s
    }

    /// Become the sketch of the union of both clusters.
    pub fn merge(&mut self, other: &Sketch) {
        for k in 0..SLOTS {
            let (a, b) = (self.min[k], other.min[k]);
            if b < a {
                self.min[k] = b;
                self.n[k] = other.n[k];
            } else if a == b {
                self.n[k] += other.n[k];
            }
        }
    }

    pub fn min(&self) -> &[u32] {
        &self.min
    }

    /// Non-empty slots and Σ n over them.
    fn occupancy(&self) -> (u32, u64) {
        let mut s = 0;
        let mut a = 0u64;
        for &n in &self.n {
            if n > 0 {
                s += 1;
                a += u64::from(n);
            }
        }
        (s, a)
    }

    /// Estimated number of distinct paths in the cluster, given its total Σ|E(d)|.
    pub fn union_size(&self, total: u64) -> f64 {
        let (s, a) = self.occupancy();
        if a == 0 {
            0.0
        } else {
            total as f64 * f64::from(s) / a as f64
        }
    }

    /// Estimated MDL counts of the cluster (`pages` members, Σ|E(d)| = `total`) with the
    /// majority template.
    pub fn estimate(&self, pages: u32, total: u64) -> Counts {
        estimate_slots(self.n.iter().copied(), pages, total)
    }

    /// `estimate` of the union of both clusters, without building its sketch.
    pub fn estimate_merged(&self, other: &Sketch, pages: u32, total: u64) -> Counts {
        estimate_slots(
            (0..SLOTS).map(|k| merged_n(self.min[k], self.n[k], other.min[k], other.n[k])),
            pages,
            total,
        )
    }

    pub fn overlap(&self, other: &Sketch) -> Overlap {
        let mut o = Overlap::default();
        for k in 0..SLOTS {
            let (a, b) = (self.min[k], other.min[k]);
            let n = merged_n(a, self.n[k], b, other.n[k]);
            if n > 0 {
                o.either += 1;
                o.union_n += u64::from(n);
                if a == b {
                    o.matches += 1;
                }
            }
        }
        o
    }
}

impl Overlap {
    /// Estimated Jaccard coefficient of the two clusters' path unions (slot matches).
    pub fn jaccard(&self) -> f64 {
        if self.either == 0 {
            0.0
        } else {
            f64::from(self.matches) / f64::from(self.either)
        }
    }

    /// Estimated Dice coefficient 2|A∩B|/(|A|+|B|), from the size estimates of A, B (given) and
    /// A∪B (from the union's slots and the exact total `total_ab` = Σ|E(d)| over both).
    /// In exact arithmetic Dice = 2J/(1+J), so it ranks partners as Jaccard does; the estimators
    /// differ (sizes from `n` counts vs. slot matches).
    pub fn dice(&self, size_a: f64, size_b: f64, total_ab: u64) -> f64 {
        if self.union_n == 0 || size_a + size_b <= 0.0 {
            return 0.0;
        }
        let union = total_ab as f64 * f64::from(self.either) / self.union_n as f64;
        (2.0 * (size_a + size_b - union) / (size_a + size_b)).clamp(0.0, 1.0)
    }
}

/// What the sketched algorithms know of a cluster: a sketch of its members' shared essential
/// paths, and exact counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterSketch {
    /// Sketch of the paths essential in more than one page of the host.
    pub sketch: Sketch,
    pub pages: u32,
    /// Σ over members of their sketched (shared) essential paths.
    pub total: u64,
    /// Σ over members of their unique essential paths.
    pub unique: u64,
}

impl ClusterSketch {
    /// `weight` pages with the same essential set: `shared` paths plus `unique` unique ones.
    pub fn of_pages(shared: &[u64], unique: u64, weight: u32) -> ClusterSketch {
        ClusterSketch {
            sketch: Sketch::from_counts(shared.iter().map(|&p| (p, weight))),
            pages: weight,
            total: u64::from(weight) * shared.len() as u64,
            unique: u64::from(weight) * unique,
        }
    }

    /// Estimated MDL counts with the majority template.
    pub fn counts(&self) -> Counts {
        self.sketch.estimate(self.pages, self.total) + unique_counts(self.pages, self.unique)
    }

    /// `counts` of the union of both clusters.
    pub fn merged_counts(&self, o: &ClusterSketch) -> Counts {
        let pages = self.pages + o.pages;
        self.sketch
            .estimate_merged(&o.sketch, pages, self.total + o.total)
            + unique_counts(pages, self.unique + o.unique)
    }

    pub fn merge(&mut self, o: &ClusterSketch) {
        self.sketch.merge(&o.sketch);
        self.pages += o.pages;
        self.total += o.total;
        self.unique += o.unique;
    }

    /// Estimated number of distinct shared paths.
    pub fn size(&self) -> f64 {
        self.sketch.union_size(self.total)
    }

    /// Estimated Jaccard coefficient of the shared paths.
    pub fn jaccard(&self, o: &ClusterSketch) -> f64 {
        self.sketch.overlap(&o.sketch).jaccard()
    }

    /// Estimated Dice coefficient of the shared paths (`size`s passed in: callers cache them).
    pub fn dice(&self, o: &ClusterSketch, size: f64, o_size: f64) -> f64 {
        self.sketch
            .overlap(&o.sketch)
            .dice(size, o_size, self.total + o.total)
    }
}

/// Unique paths are template paths of a singleton and +1s in any larger cluster.
pub(crate) fn unique_counts(pages: u32, unique: u64) -> Counts {
    let u = unique as f64;
    if pages <= 1 {
        Counts {
            ones: u,
            ..Counts::default()
        }
    } else {
        Counts {
            plus: u,
            ..Counts::default()
        }
    }
}

#[inline]
fn merged_n(a: u32, na: u32, b: u32, nb: u32) -> u32 {
    match a.cmp(&b) {
        std::cmp::Ordering::Less => na,
        std::cmp::Ordering::Greater => nb,
        std::cmp::Ordering::Equal => na + nb,
    }
}

/// The estimate from the slots' `n` (0 = empty): with A = Σn and s non-empty slots, the union
/// holds ≈ total·s/A paths; each slot stands for total/A of them.
fn estimate_slots(ns: impl Iterator<Item = u32>, pages: u32, total: u64) -> Counts {
    let m = u64::from(pages);
    let (mut sum, mut maj, mut maj_n) = (0u64, 0u64, 0u64);
    for n in ns {
        let n = u64::from(n);
        sum += n;
        if n > 0 && 2 * n > m {
            maj += 1;
            maj_n += n;
        }
    }
    if sum == 0 {
        return Counts::default();
    }
    let scale = total as f64 / sum as f64;
    Counts {
        ones: maj as f64 * scale,
        plus: (sum - maj_n) as f64 * scale,
        minus: (maj * m - maj_n) as f64 * scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::mdl::counts_of_clustering;

    fn set(range: std::ops::Range<u64>) -> Vec<u64> {
        range
            .map(|i| i.wrapping_mul(0x2545_f491_4f6c_dd1d))
            .collect()
    }

    #[test]
    fn singletons_and_identical_pages_are_estimated_exactly() {
        let a = set(0..500);
        let s = Sketch::of_set(&a);
        let c = s.estimate(1, 500);
        assert_eq!((c.ones, c.plus, c.minus), (500.0, 0.0, 0.0));
        let mut two = s.clone();
        two.merge(&s);
        let c = two.estimate(2, 1000);
        assert!((c.ones - 500.0).abs() < 1e-9 && c.plus == 0.0 && c.minus == 0.0);
    }

    #[test]
    fn merge_equals_sketch_of_the_counts() {
        let (a, b) = (set(0..300), set(200..700));
        let mut m = Sketch::of_set(&a);
        m.merge(&Sketch::of_set(&b));
        let mut counts: Vec<(u64, u32)> = set(0..200).into_iter().map(|p| (p, 1)).collect();
        counts.extend(set(200..300).into_iter().map(|p| (p, 2)));
        counts.extend(set(300..700).into_iter().map(|p| (p, 1)));
        assert_eq!(m, Sketch::from_counts(counts));
    }

    #[test]
    fn estimates_track_exact_counts() {
        // 10 pages: a shared core of 400 paths, each page with 60 of its own.
        let core = set(0..400);
        let pages: Vec<Vec<u64>> = (0..10u64)
            .map(|i| {
                let mut p = core.clone();
                p.extend(set(10_000 + i * 60..10_000 + (i + 1) * 60));
                p.sort_unstable();
                p
            })
            .collect();
        let mut sk = Sketch::default();
        for p in &pages {
            sk.merge(&Sketch::of_set(p));
        }
        let total: u64 = pages.iter().map(|p| p.len() as u64).sum();
        let est = sk.estimate(10, total);
        let exact = counts_of_clustering(&pages, &[(0..10).collect()]);
        assert_eq!((exact.ones, exact.plus, exact.minus), (400.0, 600.0, 0.0));
        assert!((est.ones - exact.ones).abs() < 80.0, "{est:?}");
        assert!((est.plus - exact.plus).abs() < 120.0, "{est:?}");
        assert!((sk.union_size(total) - 1000.0).abs() < 150.0);
    }

    #[test]
    fn jaccard_and_dice_estimate_the_overlap() {
        let (a, b) = (set(0..1000), set(500..1500)); // J = 1/3, Dice = 1/2
        let (sa, sb) = (Sketch::of_set(&a), Sketch::of_set(&b));
        let o = sa.overlap(&sb);
        assert!((o.jaccard() - 1.0 / 3.0).abs() < 0.12, "{}", o.jaccard());
        let d = o.dice(sa.union_size(1000), sb.union_size(1000), 2000);
        assert!((d - 0.5).abs() < 0.12, "{d}");
        assert_eq!(sa.overlap(&sa).jaccard(), 1.0);
        assert_eq!(sa.overlap(&Sketch::default()).jaccard(), 0.0);
    }

    #[test]
    fn unique_paths_are_counted_exactly() {
        // Two long pages sharing 100 paths, each with 400 unique ones.
        let shared = set(0..100);
        let a = ClusterSketch::of_pages(&shared, 400, 1);
        let c = a.counts();
        assert_eq!((c.ones, c.plus, c.minus), (500.0, 0.0, 0.0));
        let m = a.merged_counts(&a.clone());
        assert!((m.ones - 100.0).abs() < 1e-9 && m.plus == 800.0 && m.minus == 0.0);
    }

    #[test]
    fn merged_estimate_equals_estimate_of_merge() {
        let (a, b) = (Sketch::of_set(&set(0..300)), Sketch::of_set(&set(100..450)));
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(a.estimate_merged(&b, 2, 650), m.estimate(2, 650));
    }
}
