//! The MDL cost of a clustering, L(C) = L(M_T) + L(M_D) + L(M_Δ) (docs/design.md, "The MDL cost").
//!
//! Conventions (the ones the seed papers' worked example implies, checked by a test below):
//! - every matrix is counted over |P|×|D| cells, |P| the host's distinct paths and |D| its pages;
//! - L(M) = |M|·H(M), H the entropy of the entries' value distribution: {0,1} for M_T,
//!   {−1,0,+1} for M_Δ;
//! - L(M_D) = |D|·log2|D| (each page names its cluster), a constant for a given host.
//!
//! A cluster's contribution is summed into three counts (`Counts`): the 1s of its template in
//! M_T, and the +1s (essential, not in the template) and −1s (in the template, not essential) of
//! its pages in M_Δ. The cost is a function of the host-wide sums only, so the cost change of a
//! merge needs the two clusters' counts, the merged cluster's counts and the current sums.

use std::ops::{Add, AddAssign, Sub, SubAssign};

use super::support::PathMap;

/// One cluster's (or a whole clustering's) entries in M_T and M_Δ. Exact counts are integers;
/// MinHash estimates are not, so the fields are `f64`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// 1s in M_T: template paths.
    pub ones: f64,
    /// +1s in M_Δ: (page, path) essential but not in the page's cluster template.
    pub plus: f64,
    /// −1s in M_Δ: (page, path) in the template but not essential in the page.
    pub minus: f64,
}

impl Counts {
    /// The counts of one cluster of `pages` pages whose template is the majority rule
    /// (`support::template`), given for each path of the members' union how many members have
    /// it essential.
    pub fn of_cluster(pages: u32, path_counts: impl IntoIterator<Item = u32>) -> Counts {
        let m = u64::from(pages);
        let (mut ones, mut plus, mut minus) = (0u64, 0u64, 0u64);
        for c in path_counts {
            let c = u64::from(c);
            if 2 * c > m {
                ones += 1;
                minus += m - c;
            } else {
                plus += c;
            }
        }
        Counts {
            ones: ones as f64,
            plus: plus as f64,
            minus: minus as f64,
        }
    }
}

impl Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            ones: self.ones + o.ones,
            plus: self.plus + o.plus,
            minus: self.minus + o.minus,
        }
    }
}

impl Sub for Counts {
    type Output = Counts;
    fn sub(self, o: Counts) -> Counts {
        Counts {
            ones: self.ones - o.ones,
            plus: self.plus - o.plus,
            minus: self.minus - o.minus,
        }
    }
}

impl AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        *self = *self + o;
    }
}

impl SubAssign for Counts {
    fn sub_assign(&mut self, o: Counts) {
        *self = *self - o;
    }
}

/// L(C) and its parts, in bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub template: f64,
    pub membership: f64,
    pub delta: f64,
    pub total: f64,
}

/// The fixed size of a host's matrices: |P| paths × |D| pages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    paths: f64,
    pages: f64,
}

impl Model {
    pub fn new(paths: u64, pages: u64) -> Model {
        Model {
            paths: paths as f64,
            pages: pages as f64,
        }
    }

    /// |P|·|D|, the cells of each matrix.
    pub fn cells(&self) -> f64 {
        self.paths * self.pages
    }

    /// L(C) of a clustering whose summed counts are `c`.
    pub fn cost(&self, c: Counts) -> Cost {
        let n = self.cells();
        let template = entropy_bits(n, &[c.ones, n - c.ones]);
        let delta = entropy_bits(n, &[c.plus, c.minus, n - c.plus - c.minus]);
        let membership = xlog2(self.pages);
        Cost {
            template,
            membership,
            delta,
            total: template + membership + delta,
        }
    }

    /// The change of L(C) when the host-wide sums go from `global` to `global − before + after`
    /// (a merge replaces two clusters' counts, `before`, by the merged cluster's, `after`).
    /// Computed term by term with `ln_1p`, so a change of a few bits stays exact even when the
    /// totals are ~10^11 bits.
    pub fn delta(&self, global: Counts, before: Counts, after: Counts) -> f64 {
        let n = self.cells();
        let d = after - before;
        let (t, p, m) = (global.ones, global.plus, global.minus);
        let rest = (n - p - m).max(0.0);
        -(dxlog2(t, d.ones) + dxlog2((n - t).max(0.0), -d.ones))
            - (dxlog2(p, d.plus) + dxlog2(m, d.minus) + dxlog2(rest, -d.plus - d.minus))
    }
}

/// x·log2(x), 0 at 0.
fn xlog2(x: f64) -> f64 {
    if x <= 0.0 {
        0.0
    } else {
        x * x.log2()
    }
}

/// xlog2(x + d) − xlog2(x), without cancellation when |d| ≪ x.
fn dxlog2(x: f64, d: f64) -> f64 {
    let y = x + d;
    if x <= 0.0 || y <= 0.0 {
        return xlog2(y) - xlog2(x);
    }
    // (x+d)·log2(x+d) − x·log2(x) = d·log2(x+d) + x·log2(1 + d/x)
    d * y.log2() + x * (d / x).ln_1p() / std::f64::consts::LN_2
}

/// n·H(counts/n) = n·log2 n − Σ c·log2 c, for counts summing to n.
fn entropy_bits(n: f64, counts: &[f64]) -> f64 {
    if n <= 0.0 {
        return 0.0;
    }
    xlog2(n) - counts.iter().map(|&c| xlog2(c.max(0.0))).sum::<f64>()
}

/// The exact counts of a clustering whose cluster `i` has template `templates[i]` (any set of
/// paths, sorted), pages given by their essential sets.
pub fn counts_with_templates(
    essential: &[Vec<u64>],
    clusters: &[Vec<u32>],
    templates: &[Vec<u64>],
) -> Counts {
    let mut total = Counts::default();
    for (members, template) in clusters.iter().zip(templates) {
        total.ones += template.len() as f64;
        for &d in members {
            let e = &essential[d as usize];
            let common = sorted_intersection_len(e, template);
            total.plus += (e.len() - common) as f64;
            total.minus += (template.len() - common) as f64;
        }
    }
    total
}

/// The exact counts of a clustering with majority templates (`support::template`).
pub fn counts_of_clustering(essential: &[Vec<u64>], clusters: &[Vec<u32>]) -> Counts {
    let mut total = Counts::default();
    for members in clusters {
        let mut counts: PathMap<u32> = PathMap::default();
        for &d in members {
            for &p in &essential[d as usize] {
                *counts.entry(p).or_insert(0) += 1;
            }
        }
        total += Counts::of_cluster(members.len() as u32, counts.into_values());
    }
    total
}

/// Number of distinct paths over the given sets (the default |P|).
pub fn distinct_paths<'a>(sets: impl IntoIterator<Item = &'a [u64]>) -> u64 {
    let mut seen: PathMap<()> = PathMap::default();
    for s in sets {
        for &p in s {
            seen.insert(p, ());
        }
    }
    seen.len() as u64
}

/// The exact L(C) of a clustering with majority templates, |P| = `paths`.
pub fn clustering_cost(essential: &[Vec<u64>], clusters: &[Vec<u32>], paths: u64) -> Cost {
    Model::new(paths, essential.len() as u64).cost(counts_of_clustering(essential, clusters))
}

/// How many values two sorted, deduplicated slices share.
pub fn sorted_intersection_len(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed papers' example: 4 pages, 9 paths; E(d1)=E(d2)={p1,p2},
    /// E(d3)=E(d4)={p1,p2,p4,p5,p6,p7}; C = {({p1,p2},{d1,d2}), ({p1..p7},{d3,d4})}.
    /// By hand: M_T has 2+7 = 9 ones in 36 cells: 36·H(9/36) = 9·2 + 27·log2(36/27) = 29.206;
    /// L(M_D) = 4·log2 4 = 8; M_Δ has two −1s (p3 for d3, d4): 2·log2 18 + 34·log2(36/34) =
    /// 11.144 (the papers print 11.145 from rounded intermediates); total 48.35.
    #[test]
    fn worked_example_from_the_papers() {
        let e = vec![
            vec![1, 2],
            vec![1, 2],
            vec![1, 2, 4, 5, 6, 7],
            vec![1, 2, 4, 5, 6, 7],
        ];
        let clusters = vec![vec![0, 1], vec![2, 3]];
        let templates = vec![vec![1, 2], vec![1, 2, 3, 4, 5, 6, 7]];
        let counts = counts_with_templates(&e, &clusters, &templates);
        assert_eq!((counts.ones, counts.plus, counts.minus), (9.0, 0.0, 2.0));
        let cost = Model::new(9, 4).cost(counts);
        assert!((cost.template - 29.21).abs() < 0.005, "{cost:?}");
        assert!((cost.membership - 8.0).abs() < 1e-12, "{cost:?}");
        assert!((cost.delta - 11.145).abs() < 0.005, "{cost:?}");
        assert!((cost.total - 48.35).abs() < 0.005, "{cost:?}");
    }

    #[test]
    fn majority_counts_match_explicit_majority_templates() {
        let e = vec![vec![1, 2, 3], vec![1, 2], vec![1, 4], vec![9]];
        let clusters = vec![vec![0, 1, 2], vec![3]];
        let templates = vec![vec![1, 2], vec![9]];
        assert_eq!(
            counts_of_clustering(&e, &clusters),
            counts_with_templates(&e, &clusters, &templates)
        );
    }

    #[test]
    fn delta_equals_difference_of_totals() {
        let model = Model::new(500, 40);
        let global = Counts {
            ones: 900.0,
            plus: 300.0,
            minus: 120.0,
        };
        let before = Counts {
            ones: 400.0,
            plus: 10.0,
            minus: 5.0,
        };
        let after = Counts {
            ones: 210.0,
            plus: 60.0,
            minus: 30.0,
        };
        let direct = model.cost(global - before + after).total - model.cost(global).total;
        assert!((model.delta(global, before, after) - direct).abs() < 1e-6);
    }

    #[test]
    fn merging_identical_pages_always_pays() {
        let e = vec![vec![1, 2, 3, 4], vec![1, 2, 3, 4], vec![7, 8]];
        let apart = clustering_cost(&e, &[vec![0], vec![1], vec![2]], 6);
        let together = clustering_cost(&e, &[vec![0, 1], vec![2]], 6);
        assert!(together.total < apart.total);
    }
}
