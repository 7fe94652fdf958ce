//! The scalable greedy behind TEXT-HASH/TEXT-MAX on large inputs and the incremental crawler.
//!
//! Each active cluster looks up candidate partners (LSH bucket-mates; in the sweep, the
//! `sweep_top` largest clusters), costs them from sketches (TEXT-HASH: all; TEXT-MAX: those of
//! maximal similarity) and pushes its best beneficial merge on a heap. The heap is lazy: an
//! entry stores the merged cluster's estimated counts (which depend only on the two clusters),
//! and its cost change is re-evaluated against the current host-wide counts when popped; an entry
//! whose partner has changed is recomputed, one whose cost got worse than the next entry goes
//! back. So a merge costs O(candidates · SLOTS) and never touches path sets.
//!
//! After the LSH phase (bucket-mates only), sweeps cost every active leftover cluster against
//! the largest clusters, which catches merges between dissimilar clusters (an odd page joining
//! its site's big cluster) that banding misses. With `Stop::BestPrefix` merges that raise L(C)
//! are taken too (least bad first, after every paying one) and the cheapest prefix of the merge
//! sequence is the result (`MergePath`).
//!
//! Ties are broken by node keys (the callers give content-derived, unique keys in node order),
//! and all iteration is in node order, so results do not depend on input order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::pairwise::{MergePath, EPS};
use super::{Params, Stop};
use crate::template::lsh::Lsh;
use crate::template::mdl::{Counts, Model};
use crate::template::minhash::ClusterSketch;

/// Which candidates of a cluster are costed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// TEXT-HASH: every candidate.
    AllCandidates,
    /// TEXT-MAX: the candidates of maximal estimated Jaccard coefficient.
    MaxJaccard,
    /// TEXT-MAX-DICE: the candidates of maximal estimated Dice coefficient.
    MaxDice,
}

/// Sweeps after the LSH phase, at most.
const MAX_SWEEPS: usize = 3;

struct Node {
    sketch: ClusterSketch,
    /// Estimated union size of the shared paths (for Dice).
    size: f64,
    counts: Counts,
    /// Smallest key of the nodes merged into this one (tie-breaking).
    key: u32,
    version: u32,
    alive: bool,
    /// May look for partners (new or changed clusters); others are only looked up.
    active: bool,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    delta: f64,
    key_a: u32,
    key_b: u32,
    a: u32,
    b: u32,
    version_a: u32,
    version_b: u32,
    merged: Counts,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// The max-heap pops the lowest delta first, then the lowest keys.
    fn cmp(&self, o: &Self) -> Ordering {
        o.delta
            .total_cmp(&self.delta)
            .then(o.key_a.cmp(&self.key_a))
            .then(o.key_b.cmp(&self.key_b))
    }
}

#[derive(Clone, Copy)]
enum Scope<'a> {
    Lsh,
    Among(&'a [u32]),
}

pub(crate) struct Agglomerator {
    model: Model,
    rule: Rule,
    stop: Stop,
    nodes: Vec<Node>,
    path: MergePath,
    lsh: Lsh,
    global: Counts,
    heap: BinaryHeap<Entry>,
    sweep_top: usize,
    /// Candidate dedupe: `mark[id] == stamp` means seen in this query.
    mark: Vec<u32>,
    stamp: u32,
    merges: usize,
}

impl Agglomerator {
    pub fn new(model: Model, rule: Rule, params: &Params) -> Agglomerator {
        Agglomerator {
            model,
            rule,
            stop: params.stop,
            nodes: Vec::new(),
            path: MergePath::new(0),
            lsh: Lsh::new(params.lsh_bands, params.lsh_rows, params.bucket_cap),
            global: Counts::default(),
            heap: BinaryHeap::new(),
            sweep_top: params.sweep_top.max(1),
            mark: Vec::new(),
            stamp: 0,
            merges: 0,
        }
    }

    /// Add a cluster; its key is its id, so add in canonical order. `active` clusters look for
    /// partners; inactive ones (the settled clusters of an incremental run) wait to be chosen.
    pub fn add(&mut self, sketch: ClusterSketch, active: bool) -> u32 {
        let id = self.nodes.len() as u32;
        let counts = sketch.counts();
        self.global += counts;
        self.lsh.insert(id, &sketch.sketch);
        self.nodes.push(Node {
            size: sketch.size(),
            sketch,
            counts,
            key: id,
            version: 0,
            alive: true,
            active,
        });
        self.path.add_node();
        self.mark.push(0);
        id
    }

    /// Run the LSH phase, then the sweeps.
    pub fn run(&mut self) {
        for a in 0..self.nodes.len() as u32 {
            if self.nodes[a as usize].active {
                self.push_best(a, Scope::Lsh);
            }
        }
        self.drain(Scope::Lsh);
        for _ in 0..MAX_SWEEPS {
            let before = self.merges;
            let mut alive: Vec<u32> = (0..self.nodes.len() as u32)
                .filter(|&i| self.nodes[i as usize].alive)
                .collect();
            let sweepers: Vec<u32> = alive
                .iter()
                .copied()
                .filter(|&i| self.nodes[i as usize].active)
                .collect();
            alive.sort_by_key(|&i| {
                let n = &self.nodes[i as usize];
                (std::cmp::Reverse(n.sketch.pages), n.key)
            });
            alive.truncate(self.sweep_top);
            for &a in &sweepers {
                self.push_best(a, Scope::Among(&alive));
            }
            self.drain(Scope::Among(&alive));
            if self.merges == before {
                break;
            }
        }
    }

    /// The cheapest clustering seen, as lists of the added node ids (ascending, by first id).
    pub fn partition(&self) -> Vec<Vec<u32>> {
        self.path.best_partition()
    }

    fn drain(&mut self, scope: Scope) {
        while let Some(e) = self.heap.pop() {
            let (a, b) = (&self.nodes[e.a as usize], &self.nodes[e.b as usize]);
            if !a.alive || a.version != e.version_a {
                continue; // a changed: it pushed a fresh entry then
            }
            if !b.alive || b.version != e.version_b {
                self.push_best(e.a, scope);
                continue;
            }
            let delta = self.model.delta(self.global, a.counts + b.counts, e.merged);
            if delta >= -EPS && self.stop == Stop::FirstRise {
                continue; // no longer pays; a sweep looks again
            }
            if delta > e.delta && self.heap.peek().is_some_and(|top| delta > top.delta) {
                self.heap.push(Entry { delta, ..e });
                continue;
            }
            let survivor = self.merge(e.a, e.b, e.merged, delta);
            self.push_best(survivor, scope);
        }
    }

    /// Merge `a` and `b`; the larger (then lower-keyed) node absorbs the other.
    fn merge(&mut self, a: u32, b: u32, merged: Counts, delta: f64) -> u32 {
        let (na, nb) = (&self.nodes[a as usize], &self.nodes[b as usize]);
        let a_absorbs = (na.sketch.pages, std::cmp::Reverse(na.key))
            >= (nb.sketch.pages, std::cmp::Reverse(nb.key));
        let (s, o) = if a_absorbs { (a, b) } else { (b, a) };
        self.global = self.global - na.counts - nb.counts + merged;
        self.lsh.remove(o);
        let other = std::mem::take(&mut self.nodes[o as usize].sketch);
        let o_key = {
            let n = &mut self.nodes[o as usize];
            n.alive = false;
            n.key
        };
        let n = &mut self.nodes[s as usize];
        n.sketch.merge(&other);
        n.size = n.sketch.size();
        n.counts = merged;
        n.key = n.key.min(o_key);
        n.version += 1;
        n.active = true;
        self.lsh.insert(s, &self.nodes[s as usize].sketch.sketch);
        self.path.push(s, o, delta);
        self.merges += 1;
        s
    }

    /// Find `a`'s best partner in `scope` and push the merge if it lowers the cost.
    fn push_best(&mut self, a: u32, scope: Scope) {
        let mut cands: Vec<u32> = Vec::new();
        match scope {
            Scope::Lsh => self
                .lsh
                .candidates(a, &self.nodes[a as usize].sketch.sketch, &mut cands),
            Scope::Among(ids) => cands.extend_from_slice(ids),
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        self.mark[a as usize] = stamp;
        cands.retain(|&b| {
            let keep = self.nodes[b as usize].alive && self.mark[b as usize] != stamp;
            self.mark[b as usize] = stamp;
            keep
        });
        if cands.is_empty() {
            return;
        }
        let na = &self.nodes[a as usize];
        if self.rule != Rule::AllCandidates {
            let sims: Vec<f64> = cands
                .iter()
                .map(|&b| {
                    let nb = &self.nodes[b as usize];
                    match self.rule {
                        Rule::MaxDice => na.sketch.dice(&nb.sketch, na.size, nb.size),
                        _ => na.sketch.jaccard(&nb.sketch),
                    }
                })
                .collect();
            let max = sims.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut i = 0;
            cands.retain(|_| {
                i += 1;
                sims[i - 1] == max
            });
        }
        let mut best: Option<Entry> = None;
        for &b in &cands {
            let nb = &self.nodes[b as usize];
            let merged = na.sketch.merged_counts(&nb.sketch);
            let delta = self.model.delta(self.global, na.counts + nb.counts, merged);
            let e = Entry {
                delta,
                key_a: na.key,
                key_b: nb.key,
                a,
                b,
                version_a: na.version,
                version_b: nb.version,
                merged,
            };
            if best.is_none_or(|cur| e > cur) {
                best = Some(e);
            }
        }
        if let Some(e) = best.filter(|e| e.delta < -EPS || self.stop == Stop::BestPrefix) {
            self.heap.push(e);
        }
    }
}
