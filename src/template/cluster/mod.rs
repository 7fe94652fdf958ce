//! Clustering a host's pages by template: TEXT-MDL, TEXT-HASH and TEXT-MAX (docs/design.md,
//! "TEXT-MDL, TEXT-HASH, TEXT-MAX").
//!
//! All three are greedy agglomerative minimisers of the MDL cost L(C) (`mdl`): start from
//! singletons and repeatedly merge the pair that lowers L(C) most. The papers stop when no merge
//! lowers it; by default we merge on and keep the cheapest clustering on the way (`Stop`). They
//! differ in how a merge is costed and which pairs are looked at:
//! - TEXT-MDL (`pairwise`, exact): every pair, exact counts from the clusters' path counts.
//! - TEXT-HASH: every pair, counts estimated from extended MinHash sketches (`minhash`; paths
//!   essential in one page only are counted exactly, not sketched).
//! - TEXT-MAX (default): as TEXT-HASH, but a cluster is only costed with its partners of maximal
//!   estimated Jaccard (TEXT-MAX-DICE: Dice) coefficient.
//!
//! Above `Params::pairwise_limit` distinct essential sets, TEXT-HASH and TEXT-MAX switch to the
//! scalable engine (`agglom`): candidates from LSH banding (`lsh`), a lazily re-evaluated heap
//! of best partners, and a final sweep of the leftovers against the largest clusters.
//!
//! Determinism: pages with identical essential sets are indistinguishable, so they are grouped
//! first (merging them always lowers the cost) and every tie is broken by a key derived from the
//! sets' content, never by input position. The partition is therefore a function of the
//! multiset of essential sets: permuting the input permutes the output's page indices only.

mod agglom;
mod pairwise;

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub(crate) use agglom::{Agglomerator, Rule};

use super::mdl::Model;
use super::minhash::ClusterSketch;
use super::support::PathMap;

/// The clustering algorithm (`--algorithm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Exact agglomerative MDL (reference; slow).
    TextMdl,
    /// MinHash-estimated MDL cost.
    TextHash,
    /// TEXT-HASH costing only the maximal-Jaccard partners (the default).
    #[default]
    TextMax,
    /// TEXT-MAX with the Dice coefficient.
    TextMaxDice,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::TextMdl,
        Algorithm::TextHash,
        Algorithm::TextMax,
        Algorithm::TextMaxDice,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::TextMdl => "text-mdl",
            Algorithm::TextHash => "text-hash",
            Algorithm::TextMax => "text-max",
            Algorithm::TextMaxDice => "text-max-dice",
        }
    }

    /// Which partners of a cluster get costed (`None` for the exact TEXT-MDL).
    pub(crate) fn rule(self) -> Option<Rule> {
        match self {
            Algorithm::TextMdl => None,
            Algorithm::TextHash => Some(Rule::AllCandidates),
            Algorithm::TextMax => Some(Rule::MaxJaccard),
            Algorithm::TextMaxDice => Some(Rule::MaxDice),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                format!(
                    "unknown algorithm {s:?} (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// A partition of a host's pages (indices into the input) into clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clustering {
    /// Each cluster's member page indices, ascending; every page in exactly one cluster.
    /// Clusters are ordered by their smallest member.
    pub clusters: Vec<Vec<u32>>,
}

impl Clustering {
    /// Page index → cluster index.
    pub fn assignment(&self, pages: usize) -> Vec<u32> {
        let mut a = vec![u32::MAX; pages];
        for (c, members) in self.clusters.iter().enumerate() {
            for &m in members {
                a[m as usize] = c as u32;
            }
        }
        a
    }

    /// Build from arbitrary groups of page indices: sorts members and clusters canonically.
    pub fn from_groups(mut clusters: Vec<Vec<u32>>) -> Clustering {
        clusters.retain(|c| !c.is_empty());
        for c in &mut clusters {
            c.sort_unstable();
        }
        clusters.sort_unstable_by_key(|c| c[0]);
        Clustering { clusters }
    }
}

/// When the greedy agglomeration stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stop {
    /// The papers' rule: stop when no merge lowers L(C). L(C) is concave near the all-singleton
    /// start (the first ±1s in M_Δ are the dearest), so this often stops in a local optimum
    /// with the content-heavy pages left as singletons.
    FirstRise,
    /// Merge on (the least-bad merge when none pays) and return the cheapest clustering along
    /// the way: never costlier than `FirstRise`, whose clustering is one of its prefixes.
    #[default]
    BestPrefix,
}

/// Tuning of the clustering; `Default` is what `cluster` uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// |P| of the cost model. `None`: the distinct paths of the essential sets. The engine may
    /// pass the host's distinct path count (the papers' |P|); the crawler's `HostClusters` does.
    pub paths: Option<u64>,
    /// TEXT-HASH / TEXT-MAX compare all pairs (as the papers do) up to this many distinct
    /// essential sets; above it they take candidates from LSH buckets.
    pub pairwise_limit: usize,
    /// LSH shape: `lsh_bands × lsh_rows` ≤ `minhash::SLOTS`.
    pub lsh_bands: usize,
    pub lsh_rows: usize,
    /// Members read per LSH bucket and query.
    pub bucket_cap: usize,
    /// After the LSH phase each leftover cluster is costed against this many largest clusters.
    pub sweep_top: usize,
    pub stop: Stop,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            paths: None,
            pairwise_limit: 256,
            lsh_bands: 16,
            lsh_rows: 4,
            bucket_cap: 8,
            sweep_top: 128,
            stop: Stop::default(),
        }
    }
}

/// Cluster pages given their essential path sets E(d) (each sorted, duplicate-free).
pub fn cluster(essential: &[Vec<u64>], algorithm: Algorithm) -> Clustering {
    cluster_with(essential, algorithm, &Params::default())
}

/// `cluster` with explicit parameters.
pub fn cluster_with(essential: &[Vec<u64>], algorithm: Algorithm, params: &Params) -> Clustering {
    if essential.is_empty() {
        return Clustering::default();
    }
    let groups = Groups::new(essential);
    let paths = params.paths.unwrap_or(groups.support.len() as u64);
    let model = Model::new(paths, essential.len() as u64);
    let node_partition = match algorithm.rule() {
        None => pairwise::text_mdl(&groups, model, params.stop),
        Some(rule) if groups.len() <= params.pairwise_limit => {
            pairwise::text_hash(&groups, model, rule, params.stop)
        }
        Some(rule) => {
            let mut agg = Agglomerator::new(model, rule, params);
            for g in 0..groups.len() {
                agg.add(groups.sketch(g), true);
            }
            agg.run();
            agg.partition()
        }
    };
    groups.to_clustering(node_partition)
}

/// Pages grouped by identical essential set, in canonical (content-derived) order.
pub(crate) struct Groups<'a> {
    /// One set per group.
    pub sets: Vec<&'a [u64]>,
    /// The input indices of each group's pages, ascending.
    pub pages: Vec<Vec<u32>>,
    /// Path → number of pages having it essential.
    pub support: PathMap<u32>,
}

impl<'a> Groups<'a> {
    pub fn new(essential: &'a [Vec<u64>]) -> Groups<'a> {
        let mut order: Vec<(u64, u32)> = essential
            .iter()
            .enumerate()
            .map(|(i, s)| (set_key(s), i as u32))
            .collect();
        let cmp = |a: &(u64, u32), b: &(u64, u32)| {
            a.0.cmp(&b.0)
                .then_with(|| essential[a.1 as usize].cmp(&essential[b.1 as usize]))
        };
        order.sort_unstable_by(|a, b| cmp(a, b).then(a.1.cmp(&b.1)));
        let mut groups = Groups {
            sets: Vec::new(),
            pages: Vec::new(),
            support: PathMap::default(),
        };
        for (i, item) in order.iter().enumerate() {
            if i > 0 && cmp(&order[i - 1], item) == Ordering::Equal {
                groups
                    .pages
                    .last_mut()
                    .expect("invariant: a previous group exists")
                    .push(item.1);
            } else {
                groups.sets.push(&essential[item.1 as usize]);
                groups.pages.push(vec![item.1]);
            }
        }
        for (g, set) in groups.sets.iter().enumerate() {
            let w = groups.pages[g].len() as u32;
            for &p in *set {
                *groups.support.entry(p).or_insert(0) += w;
            }
        }
        groups
    }

    /// Group `g`'s paths essential in other pages too (sorted), and the number of the others.
    pub fn split(&self, g: usize) -> (Vec<u64>, u64) {
        let set = self.sets[g];
        let shared: Vec<u64> = set
            .iter()
            .copied()
            .filter(|p| self.support.get(p).is_some_and(|&c| c > 1))
            .collect();
        let unique = (set.len() - shared.len()) as u64;
        (shared, unique)
    }

    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Pages in group `g`.
    pub fn weight(&self, g: usize) -> u32 {
        self.pages[g].len() as u32
    }

    /// The sketch of group `g`.
    pub fn sketch(&self, g: usize) -> ClusterSketch {
        let (shared, unique) = self.split(g);
        ClusterSketch::of_pages(&shared, unique, self.weight(g))
    }

    /// Expand a partition of groups into a clustering of pages.
    pub fn to_clustering(&self, partition: Vec<Vec<u32>>) -> Clustering {
        Clustering::from_groups(
            partition
                .into_iter()
                .map(|gs| {
                    gs.iter()
                        .flat_map(|&g| self.pages[g as usize].iter().copied())
                        .collect()
                })
                .collect(),
        )
    }
}

/// A content-derived key of a path set (order-independent tie-breaking).
pub(crate) fn set_key(set: &[u64]) -> u64 {
    let mut h = 0x6a09_e667_f3bc_c909u64 ^ set.len() as u64;
    for &p in set {
        h = (h.rotate_left(29) ^ p).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests;
