//! The papers' all-pairs greedy: every round, cost each eligible pair of live clusters against
//! the current host-wide counts and merge the pair that lowers L(C) most (or raises it least).
//! The papers stop when no merge lowers L(C); by default we go on to a single cluster and keep
//! the cheapest clustering on the way (`Stop`). Pair counts are cached (only pairs with the
//! merged cluster are recomputed), the deltas are re-evaluated every round because entropy is
//! not additive. O(k²) memory, O(k³) delta evaluations: TEXT-MDL (exact counts) always runs
//! here, TEXT-HASH/MAX only on small inputs.

use super::{Groups, Rule, Stop};
use crate::template::mdl::{Counts, Model};
use crate::template::minhash::{unique_counts, ClusterSketch};

/// A merge must lower L(C) by more than this many bits (rounding noise is far below it).
pub(crate) const EPS: f64 = 1e-6;

/// TEXT-MDL over the groups: exact counts from the clusters' path counts.
pub(super) fn text_mdl(groups: &Groups, model: Model, stop: Stop) -> Vec<Vec<u32>> {
    let mut repr = Exact {
        counts: Vec::with_capacity(groups.len()),
        unique: Vec::with_capacity(groups.len()),
        pages: (0..groups.len()).map(|g| groups.weight(g)).collect(),
    };
    for g in 0..groups.len() {
        let (shared, unique) = groups.split(g);
        let w = groups.weight(g);
        repr.counts
            .push(shared.into_iter().map(|p| (p, w)).collect());
        repr.unique.push(u64::from(w) * unique);
    }
    greedy(&mut repr, model, None, stop)
}

/// TEXT-HASH (`AllCandidates`) or TEXT-MAX (`MaxJaccard` / `MaxDice`) over all pairs, with
/// counts estimated from sketches.
pub(super) fn text_hash(groups: &Groups, model: Model, rule: Rule, stop: Stop) -> Vec<Vec<u32>> {
    let sketches: Vec<ClusterSketch> = (0..groups.len()).map(|g| groups.sketch(g)).collect();
    let mut repr = Sketched {
        sizes: sketches.iter().map(ClusterSketch::size).collect(),
        sketches,
    };
    greedy(&mut repr, model, Some(rule), stop)
}

/// What the greedy needs from a cluster representation.
trait Repr {
    fn len(&self) -> usize;
    fn own(&self, i: usize) -> Counts;
    fn merged(&self, i: usize, j: usize) -> Counts;
    /// Cluster `i` absorbs cluster `j`.
    fn merge(&mut self, i: usize, j: usize);
    fn similarity(&self, i: usize, j: usize, rule: Rule) -> f64;
}

fn tri(i: usize, j: usize) -> usize {
    debug_assert!(i < j);
    j * (j - 1) / 2 + i
}

/// The greedy over `repr`'s clusters; returns the partition of their indices. Clusters keep
/// their slot (the lower slot absorbs), so slot order = content-key order breaks ties.
fn greedy<R: Repr>(repr: &mut R, model: Model, rule: Option<Rule>, stop: Stop) -> Vec<Vec<u32>> {
    let k = repr.len();
    let by_similarity = matches!(rule, Some(Rule::MaxJaccard | Rule::MaxDice));
    let mut alive = vec![true; k];
    let mut path = MergePath::new(k);
    let mut own: Vec<Counts> = (0..k).map(|i| repr.own(i)).collect();
    let mut global = own.iter().fold(Counts::default(), |a, &c| a + c);
    let mut pair = vec![Counts::default(); k * k.saturating_sub(1) / 2];
    let mut sim = vec![0.0f64; if by_similarity { pair.len() } else { 0 }];
    for j in 1..k {
        for i in 0..j {
            pair[tri(i, j)] = repr.merged(i, j);
            if let (true, Some(r)) = (by_similarity, rule) {
                sim[tri(i, j)] = repr.similarity(i, j, r);
            }
        }
    }
    let mut max_sim = vec![f64::NEG_INFINITY; k];
    loop {
        if by_similarity {
            max_sim.fill(f64::NEG_INFINITY);
            for j in (1..k).filter(|&j| alive[j]) {
                for i in (0..j).filter(|&i| alive[i]) {
                    let s = sim[tri(i, j)];
                    max_sim[i] = max_sim[i].max(s);
                    max_sim[j] = max_sim[j].max(s);
                }
            }
        }
        let mut best: Option<(f64, usize, usize)> = None;
        for j in (1..k).filter(|&j| alive[j]) {
            for i in (0..j).filter(|&i| alive[i]) {
                let t = tri(i, j);
                // TEXT-MAX: a pair is costed only if it is a maximal-similarity partner pair
                // from either side.
                if by_similarity && sim[t] != max_sim[i] && sim[t] != max_sim[j] {
                    continue;
                }
                let d = model.delta(global, own[i] + own[j], pair[t]);
                if best.is_none_or(|b| d < b.0) {
                    best = Some((d, i, j));
                }
            }
        }
        let Some((d, i, j)) = best else { break };
        if d >= -EPS && stop == Stop::FirstRise {
            break;
        }
        repr.merge(i, j);
        path.push(i as u32, j as u32, d);
        let merged = pair[tri(i, j)];
        global = global - own[i] - own[j] + merged;
        own[i] = merged;
        alive[j] = false;
        for x in (0..k).filter(|&x| alive[x] && x != i) {
            let (a, b) = if x < i { (x, i) } else { (i, x) };
            pair[tri(a, b)] = repr.merged(a, b);
            if let (true, Some(r)) = (by_similarity, rule) {
                sim[tri(a, b)] = repr.similarity(a, b, r);
            }
        }
    }
    path.best_partition()
}

/// The merges done so far and the cost change of each; replays the cheapest prefix.
pub(crate) struct MergePath {
    nodes: usize,
    merges: Vec<(u32, u32)>,
    /// Cost after each merge, relative to the start.
    cost: Vec<f64>,
}

impl MergePath {
    pub fn new(nodes: usize) -> MergePath {
        MergePath {
            nodes,
            merges: Vec::new(),
            cost: Vec::new(),
        }
    }

    /// Node `from` merged into node `into`, changing L(C) by `delta`.
    pub fn push(&mut self, into: u32, from: u32, delta: f64) {
        let before = self.cost.last().copied().unwrap_or(0.0);
        self.merges.push((into, from));
        self.cost.push(before + delta);
    }

    /// One more node (ids are dense, in order of addition).
    pub fn add_node(&mut self) {
        self.nodes += 1;
    }

    /// How many leading merges give the cheapest clustering (the fewest on ties within `EPS`).
    pub fn best_len(&self) -> usize {
        let mut best = (0.0, 0);
        for (i, &c) in self.cost.iter().enumerate() {
            if c < best.0 - EPS {
                best = (c, i + 1);
            }
        }
        best.1
    }

    /// The clustering after the cheapest prefix, as lists of node ids (ascending, by first id).
    pub fn best_partition(&self) -> Vec<Vec<u32>> {
        self.partition(self.best_len())
    }

    pub fn partition(&self, merges: usize) -> Vec<Vec<u32>> {
        let mut parent: Vec<u32> = (0..self.nodes as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        for &(into, from) in &self.merges[..merges] {
            let (a, b) = (find(&mut parent, into), find(&mut parent, from));
            parent[b as usize] = a;
        }
        let mut index = vec![u32::MAX; self.nodes];
        let mut out: Vec<Vec<u32>> = Vec::new();
        for id in 0..self.nodes as u32 {
            let r = find(&mut parent, id) as usize;
            if index[r] == u32::MAX {
                index[r] = out.len() as u32;
                out.push(Vec::new());
            }
            out[index[r] as usize].push(id);
        }
        out
    }
}

/// Exact: each cluster's (shared path, #members with it essential), sorted by path, and its
/// members' unique essential paths (a template path of a singleton, a +1 otherwise).
struct Exact {
    counts: Vec<Vec<(u64, u32)>>,
    unique: Vec<u64>,
    pages: Vec<u32>,
}

impl Exact {
    /// Walk two sorted count lists in path order, yielding each path's combined count.
    fn walk(a: &[(u64, u32)], b: &[(u64, u32)], mut f: impl FnMut(u64, u32)) {
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let take_a = j == b.len() || (i < a.len() && a[i].0 <= b[j].0);
            let take_b = i == a.len() || (j < b.len() && b[j].0 <= a[i].0);
            let (p, mut c) = if take_a { a[i] } else { (b[j].0, 0) };
            if take_a {
                i += 1;
            }
            if take_b {
                c += b[j].1;
                j += 1;
            }
            f(p, c);
        }
    }
}

impl Repr for Exact {
    fn len(&self) -> usize {
        self.counts.len()
    }

    fn own(&self, i: usize) -> Counts {
        Counts::of_cluster(self.pages[i], self.counts[i].iter().map(|&(_, c)| c))
            + unique_counts(self.pages[i], self.unique[i])
    }

    fn merged(&self, i: usize, j: usize) -> Counts {
        let m = self.pages[i] + self.pages[j];
        let mut cs = Vec::with_capacity(self.counts[i].len() + self.counts[j].len());
        Exact::walk(&self.counts[i], &self.counts[j], |_, c| cs.push(c));
        Counts::of_cluster(m, cs) + unique_counts(m, self.unique[i] + self.unique[j])
    }

    fn merge(&mut self, i: usize, j: usize) {
        let b = std::mem::take(&mut self.counts[j]);
        let mut out = Vec::with_capacity(self.counts[i].len() + b.len());
        Exact::walk(&self.counts[i], &b, |p, c| out.push((p, c)));
        self.counts[i] = out;
        self.pages[i] += self.pages[j];
        self.unique[i] += self.unique[j];
    }

    fn similarity(&self, _: usize, _: usize, _: Rule) -> f64 {
        0.0
    }
}

/// Sketched: extended MinHash per cluster plus its exact totals.
struct Sketched {
    sketches: Vec<ClusterSketch>,
    /// Estimated shared-path union sizes (for Dice).
    sizes: Vec<f64>,
}

impl Repr for Sketched {
    fn len(&self) -> usize {
        self.sketches.len()
    }

    fn own(&self, i: usize) -> Counts {
        self.sketches[i].counts()
    }

    fn merged(&self, i: usize, j: usize) -> Counts {
        self.sketches[i].merged_counts(&self.sketches[j])
    }

    fn merge(&mut self, i: usize, j: usize) {
        let b = std::mem::take(&mut self.sketches[j]);
        self.sketches[i].merge(&b);
        self.sizes[i] = self.sketches[i].size();
    }

    fn similarity(&self, i: usize, j: usize, rule: Rule) -> f64 {
        let (a, b) = (&self.sketches[i], &self.sketches[j]);
        match rule {
            Rule::MaxDice => a.dice(b, self.sizes[i], self.sizes[j]),
            _ => a.jaccard(b),
        }
    }
}
