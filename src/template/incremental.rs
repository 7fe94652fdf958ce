//! A crawling host's clustering, kept up to date as pages arrive (docs/design.md, "The incremental
//! step"). Pure state and functions; the crawler persists it in sled as bytes (`to_bytes`).
//!
//! What is kept (`HostClusters`): the host's path support, each page's cluster, and per cluster
//! its members, the counts of its members' essential paths (path → #members) and its template.
//! No page path sets: when a step needs them it asks the caller (`paths_of`), which loads them
//! from sled in the crawler and from memory in tests.
//!
//! `add_pages` (every N pages or T seconds per host):
//! 1. New pages update the support; their essential sets E(d) are derived with it.
//! 2. Small hosts (≤ `rebuild_below` pages) and hosts that grew by `growth`× since the last
//!    rebuild are reclustered from scratch with the batch algorithm (`rebuild`): the supports
//!    have moved enough that old pages' essential sets are stale, so they are re-derived for all
//!    pages at once ("lazily": at geometric steps, O(1) amortised per page).
//! 3. Otherwise: each existing cluster enters the scalable engine as a settled node (its sketch
//!    rebuilt from its path counts), each new page as an active singleton. A new page looks up
//!    its nearest clusters through the LSH signature index and joins one when that lowers the
//!    cost; the rest agglomerate among themselves (and may then join a settled cluster).
//! 4. Only clusters that gained pages get new counts and templates; `Changes` lists the pages
//!    that moved (every new page included) and the clusters whose template changed, so only
//!    those pages are re-cleaned (`pages_to_clean`).
//!
//! Old pages keep the essential set they were added with until the next rebuild. Path counts
//! of a cluster of 16 or more pages drop their count-1 entries when it is rebuilt and each time
//! it doubles (such a path cannot be in the template; one dropped this way and seen again is
//! undercounted by at most one per doubling), which keeps long pages' content from piling up.
//!
//! `recluster` reruns the batch algorithm on all pages: it gives exactly what `thresher clean`
//! computes for the same pages (same support, same essential sets, same `cluster` call), so the
//! crawler calls it when a host is done.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::cluster::{cluster_with, set_key, Agglomerator, Algorithm, Clustering, Params, Rule};
use super::mdl::Model;
use super::minhash::{ClusterSketch, Sketch};
use super::support::{PathMap, Support};

/// The crawler's id of a page (e.g. a hash of its URL).
pub type PageKey = u64;
/// A cluster's id within its host; stable across incremental steps, reused by a rebuild for
/// the new cluster that shares most pages with the old one.
pub type ClusterId = u32;

/// Clusters at or above this size drop count-1 path entries when they double.
const PRUNE_FROM: usize = 16;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IncrementalParams {
    pub algorithm: Algorithm,
    /// Recluster from scratch while the host has at most this many pages.
    pub rebuild_below: u32,
    /// … and whenever it has grown by this factor since the last rebuild.
    pub growth: f64,
}

impl Default for IncrementalParams {
    fn default() -> Self {
        IncrementalParams {
            algorithm: Algorithm::default(),
            rebuild_below: 200,
            growth: 2.0,
        }
    }
}

/// What a step changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Pages now in another cluster than before (every new page included), with that cluster.
    pub moved: Vec<(PageKey, ClusterId)>,
    /// Clusters whose template changed, new clusters included: their pages need re-cleaning.
    pub retemplated: Vec<ClusterId>,
    /// Clusters that no longer exist.
    pub removed: Vec<ClusterId>,
    /// The host was reclustered from scratch.
    pub rebuilt: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct HostCluster {
    /// Sorted.
    #[serde(with = "sorted_keys")]
    members: Vec<PageKey>,
    /// (path, #members having it essential), sorted by path; count-1 entries pruned when big.
    #[serde(with = "sorted_counts")]
    counts: Vec<(u64, u32)>,
    /// Σ|E(d)| over the members as added (pruned entries included).
    essential: u64,
    /// Paths essential in more than half of the members, sorted.
    #[serde(with = "sorted_keys")]
    template: Vec<u64>,
}

/// One host's clustering state (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostClusters {
    params: IncrementalParams,
    support: Support,
    page_cluster: BTreeMap<PageKey, ClusterId>,
    clusters: BTreeMap<ClusterId, HostCluster>,
    next_id: ClusterId,
    /// Pages at the last rebuild.
    rebuilt_at: u32,
}

impl HostClusters {
    pub fn new(params: IncrementalParams) -> HostClusters {
        HostClusters {
            params,
            support: Support::default(),
            page_cluster: BTreeMap::new(),
            clusters: BTreeMap::new(),
            next_id: 0,
            rebuilt_at: 0,
        }
    }

    pub fn params(&self) -> &IncrementalParams {
        &self.params
    }

    /// Pages clustered.
    pub fn len(&self) -> usize {
        self.page_cluster.len()
    }

    pub fn is_empty(&self) -> bool {
        self.page_cluster.is_empty()
    }

    pub fn support(&self) -> &Support {
        &self.support
    }

    pub fn cluster_of(&self, page: PageKey) -> Option<ClusterId> {
        self.page_cluster.get(&page).copied()
    }

    /// Cluster ids, ascending.
    pub fn clusters(&self) -> impl Iterator<Item = ClusterId> + '_ {
        self.clusters.keys().copied()
    }

    /// A cluster's pages, sorted.
    pub fn members(&self, id: ClusterId) -> Option<&[PageKey]> {
        self.clusters.get(&id).map(|c| c.members.as_slice())
    }

    /// A cluster's template path set, sorted.
    pub fn template(&self, id: ClusterId) -> Option<&[u64]> {
        self.clusters.get(&id).map(|c| c.template.as_slice())
    }

    /// The template of the cluster a page is in.
    pub fn template_of(&self, page: PageKey) -> Option<&[u64]> {
        self.cluster_of(page).and_then(|c| self.template(c))
    }

    /// The pages to (re-)clean after `changes`: moved pages and all pages of re-templated
    /// clusters, sorted.
    pub fn pages_to_clean(&self, changes: &Changes) -> Vec<PageKey> {
        let mut pages: BTreeSet<PageKey> = changes.moved.iter().map(|&(p, _)| p).collect();
        for &c in &changes.retemplated {
            pages.extend(self.members(c).unwrap_or_default());
        }
        pages.into_iter().collect()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("invariant: serialising to memory cannot fail")
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<HostClusters, postcard::Error> {
        postcard::from_bytes(bytes)
    }

    /// Add newly fetched pages (key, path set). Keys already known, and repeats within `new`,
    /// are ignored, so replaying a batch after a crash is harmless. `paths_of` returns the path
    /// set a known page was added with (needed only when the step rebuilds). The path sets
    /// are borrowed (`Vec<u64>` or `&[u64]`): the end-of-crawl pass adds a whole site's pages
    /// without a second copy of their path sets.
    pub fn add_pages<P: AsRef<[u64]>>(
        &mut self,
        new: &[(PageKey, P)],
        mut paths_of: impl FnMut(PageKey) -> Vec<u64>,
    ) -> Changes {
        let mut seen: BTreeSet<PageKey> = BTreeSet::new();
        let fresh: Vec<(PageKey, &[u64])> = new
            .iter()
            .filter(|(k, _)| !self.page_cluster.contains_key(k) && seen.insert(*k))
            .map(|(k, p)| (*k, p.as_ref()))
            .collect();
        if fresh.is_empty() {
            return Changes::default();
        }
        for (_, p) in &fresh {
            self.support.add(p);
        }
        let n = (self.page_cluster.len() + fresh.len()) as f64;
        if n <= f64::from(self.params.rebuild_below)
            || n >= self.params.growth * f64::from(self.rebuilt_at)
        {
            return self.rebuild(&fresh, &mut paths_of);
        }
        self.extend(&fresh)
    }

    /// Recluster every page from scratch with the batch algorithm (what `clean` computes).
    pub fn recluster(&mut self, mut paths_of: impl FnMut(PageKey) -> Vec<u64>) -> Changes {
        self.rebuild(&[], &mut paths_of)
    }

    /// Replace the path support by `support` (the one `thresher clean` computes from every
    /// page's current path set). The crawl's end-of-crawl pass sets it before `recluster`, so
    /// pages whose path set changed (a recrawl replaced them) leave no trace of their old
    /// paths in it.
    pub fn reset_support(&mut self, support: Support) {
        self.support = support;
    }

    /// Forget pages (key, the path set they were added with), e.g. before re-adding a page
    /// whose content changed. The clusters they leave are re-derived from their remaining
    /// members' path sets.
    pub fn remove_pages(
        &mut self,
        pages: &[(PageKey, Vec<u64>)],
        mut paths_of: impl FnMut(PageKey) -> Vec<u64>,
    ) -> Changes {
        let mut affected: BTreeSet<ClusterId> = BTreeSet::new();
        for (k, old) in pages {
            if let Some(c) = self.page_cluster.remove(k) {
                self.support.remove(old);
                affected.insert(c);
                let members = &mut self.clusters.get_mut(&c).expect("invariant").members;
                members.retain(|m| m != k);
            }
        }
        let mut changes = Changes::default();
        for c in affected {
            let cluster = self
                .clusters
                .get_mut(&c)
                .expect("invariant: cluster of a page");
            if cluster.members.is_empty() {
                self.clusters.remove(&c);
                changes.removed.push(c);
                continue;
            }
            let sets: Vec<Vec<u64>> = cluster
                .members
                .iter()
                .map(|&m| self.support.essential(&paths_of(m)))
                .collect();
            let old = std::mem::take(&mut cluster.template);
            let (counts, essential) = count_paths(&sets);
            cluster.counts = counts;
            cluster.essential = essential;
            cluster.prune();
            cluster.refresh();
            if cluster.template != old {
                changes.retemplated.push(c);
            }
        }
        changes
    }

    fn rebuild(
        &mut self,
        fresh: &[(PageKey, &[u64])],
        paths_of: &mut impl FnMut(PageKey) -> Vec<u64>,
    ) -> Changes {
        let mut keys: Vec<PageKey> = self.page_cluster.keys().copied().collect();
        let mut sets: Vec<Vec<u64>> = keys
            .iter()
            .map(|&k| self.support.essential(&paths_of(k)))
            .collect();
        for &(k, p) in fresh {
            keys.push(k);
            sets.push(self.support.essential(p));
        }
        let clustering = cluster_with(&sets, self.params.algorithm, &Params::default());
        self.rebuilt_at = keys.len() as u32;
        self.install(&keys, &sets, &clustering)
    }

    /// Replace all clusters by `clustering` of `keys` (essential sets `sets`), reusing old ids
    /// for the new clusters that share most pages with them.
    fn install(&mut self, keys: &[PageKey], sets: &[Vec<u64>], clustering: &Clustering) -> Changes {
        let mut order: Vec<&Vec<u32>> = clustering.clusters.iter().collect();
        order.sort_by_key(|c| (std::cmp::Reverse(c.len()), c[0]));
        let mut taken: BTreeSet<ClusterId> = BTreeSet::new();
        let mut old_clusters = std::mem::take(&mut self.clusters);
        let old_assignment = std::mem::take(&mut self.page_cluster);
        let mut changes = Changes {
            rebuilt: true,
            ..Changes::default()
        };
        for members in order {
            let mut overlap: BTreeMap<ClusterId, usize> = BTreeMap::new();
            for &i in members {
                if let Some(&c) = old_assignment.get(&keys[i as usize]) {
                    *overlap.entry(c).or_default() += 1;
                }
            }
            let reuse = overlap
                .iter()
                .filter(|(c, _)| !taken.contains(c))
                .max_by_key(|&(&c, &n)| (n, std::cmp::Reverse(c)))
                .map(|(&c, _)| c);
            let id = reuse.unwrap_or_else(|| self.fresh_id());
            taken.insert(id);
            let member_sets: Vec<&[u64]> = members
                .iter()
                .map(|&i| sets[i as usize].as_slice())
                .collect();
            let (counts, essential) = count_paths(&member_sets);
            let mut cluster = HostCluster {
                members: members.iter().map(|&i| keys[i as usize]).collect(),
                counts,
                essential,
                template: Vec::new(),
            };
            cluster.members.sort_unstable();
            cluster.prune();
            cluster.refresh();
            let old_template = old_clusters.remove(&id).map(|c| c.template);
            if old_template.as_ref() != Some(&cluster.template) {
                changes.retemplated.push(id);
            }
            for &k in &cluster.members {
                if old_assignment.get(&k) != Some(&id) {
                    changes.moved.push((k, id));
                }
                self.page_cluster.insert(k, id);
            }
            self.clusters.insert(id, cluster);
        }
        changes.removed = old_clusters.into_keys().collect();
        changes.moved.sort_unstable();
        changes.retemplated.sort_unstable();
        changes
    }

    fn fresh_id(&mut self) -> ClusterId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The sketch of a page's (or cluster's) essential paths, split by current support.
    fn sketch_of(&self, counts: &[(u64, u32)], pages: u32, essential: u64) -> ClusterSketch {
        let shared = counts.iter().filter(|&&(p, _)| self.support.get(p) > 1);
        let total: u64 = shared.clone().map(|&(_, c)| u64::from(c)).sum();
        ClusterSketch {
            sketch: Sketch::from_counts(shared.copied()),
            pages,
            total,
            unique: essential.saturating_sub(total),
        }
    }

    /// The incremental step (module doc, 3–4).
    fn extend(&mut self, fresh: &[(PageKey, &[u64])]) -> Changes {
        let mut new: Vec<(PageKey, Vec<u64>)> = fresh
            .iter()
            .map(|&(k, p)| (k, self.support.essential(p)))
            .collect();
        new.sort_by(|a, b| (set_key(&a.1), &a.1, a.0).cmp(&(set_key(&b.1), &b.1, b.0)));
        let mut distinct: PathMap<()> = PathMap::default();
        for c in self.clusters.values() {
            distinct.extend(c.counts.iter().map(|&(p, _)| (p, ())));
        }
        for (_, e) in &new {
            distinct.extend(e.iter().map(|&p| (p, ())));
        }
        let pages = (self.page_cluster.len() + new.len()) as u64;
        let model = Model::new(distinct.len() as u64, pages);
        let rule = self.params.algorithm.rule().unwrap_or(Rule::AllCandidates);
        let mut agg = Agglomerator::new(model, rule, &Params::default());
        let ids: Vec<ClusterId> = self.clusters.keys().copied().collect();
        for c in self.clusters.values() {
            agg.add(
                self.sketch_of(&c.counts, c.members.len() as u32, c.essential),
                false,
            );
        }
        for (_, e) in &new {
            let counts: Vec<(u64, u32)> = e.iter().map(|&p| (p, 1)).collect();
            agg.add(self.sketch_of(&counts, 1, e.len() as u64), true);
        }
        agg.run();
        let mut changes = Changes::default();
        for group in agg.partition() {
            let (old, added): (Vec<u32>, Vec<u32>) =
                group.into_iter().partition(|&n| (n as usize) < ids.len());
            if added.is_empty() && old.len() == 1 {
                continue;
            }
            let old: Vec<ClusterId> = old.into_iter().map(|n| ids[n as usize]).collect();
            let added: Vec<&(PageKey, Vec<u64>)> = added
                .into_iter()
                .map(|n| &new[n as usize - ids.len()])
                .collect();
            self.absorb(&old, &added, &mut changes);
        }
        changes.moved.sort_unstable();
        changes.retemplated.sort_unstable();
        changes.removed.sort_unstable();
        changes
    }

    /// Merge the clusters `old` (possibly none) and the new pages `added` into one cluster.
    fn absorb(&mut self, old: &[ClusterId], added: &[&(PageKey, Vec<u64>)], changes: &mut Changes) {
        let survivor = match old
            .iter()
            .max_by_key(|&&c| (self.clusters[&c].members.len(), std::cmp::Reverse(c)))
        {
            Some(&c) => c,
            None => {
                let id = self.fresh_id();
                self.clusters.insert(id, HostCluster::default());
                id
            }
        };
        let mut cluster = self
            .clusters
            .remove(&survivor)
            .expect("invariant: survivor");
        let before = cluster.members.len();
        let old_template = std::mem::take(&mut cluster.template);
        for &c in old.iter().filter(|&&c| c != survivor) {
            let other = self.clusters.remove(&c).expect("invariant: merged cluster");
            for &k in &other.members {
                self.page_cluster.insert(k, survivor);
                changes.moved.push((k, survivor));
            }
            cluster.counts = add_counts(&cluster.counts, &other.counts);
            cluster.essential += other.essential;
            cluster.members.extend(other.members);
            changes.removed.push(c);
        }
        let sets: Vec<&[u64]> = added.iter().map(|(_, e)| e.as_slice()).collect();
        let (counts, essential) = count_paths(&sets);
        cluster.counts = add_counts(&cluster.counts, &counts);
        cluster.essential += essential;
        for (k, _) in added {
            cluster.members.push(*k);
            self.page_cluster.insert(*k, survivor);
            changes.moved.push((*k, survivor));
        }
        cluster.members.sort_unstable();
        let after = cluster.members.len();
        if after >= PRUNE_FROM && (before < PRUNE_FROM || after.ilog2() > before.ilog2()) {
            cluster.prune();
        }
        cluster.refresh();
        if before == 0 || cluster.template != old_template {
            changes.retemplated.push(survivor);
        }
        self.clusters.insert(survivor, cluster);
    }
}

impl HostCluster {
    /// Drop count-1 entries of a big cluster (they cannot be template paths).
    fn prune(&mut self) {
        if self.members.len() >= PRUNE_FROM {
            self.counts.retain(|&(_, c)| c > 1);
        }
    }

    /// Recompute the template from the counts (the majority rule of `support::template`).
    fn refresh(&mut self) {
        let m = self.members.len() as u64;
        self.template = self
            .counts
            .iter()
            .filter(|&&(_, c)| 2 * u64::from(c) > m)
            .map(|&(p, _)| p)
            .collect();
    }
}

/// (path, #sets containing it) sorted by path, and Σ|set|.
fn count_paths<S: AsRef<[u64]>>(sets: &[S]) -> (Vec<(u64, u32)>, u64) {
    // Counted in a map of the distinct paths, not by sorting a flat copy of every set: a
    // 5,000-page cluster's copy was ~12 MB of the end-of-crawl pass's peak.
    let mut by_path: PathMap<u32> = PathMap::default();
    let mut total = 0u64;
    for set in sets {
        let set = set.as_ref();
        total += set.len() as u64;
        for &p in set {
            *by_path.entry(p).or_insert(0) += 1;
        }
    }
    let mut counts: Vec<(u64, u32)> = by_path.into_iter().collect();
    counts.sort_unstable();
    (counts, total)
}

/// Sum of two sorted count lists.
fn add_counts(a: &[(u64, u32)], b: &[(u64, u32)]) -> Vec<(u64, u32)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Sorted u64 lists as deltas (postcard varints: ~7 bytes per random 64-bit id, not 10).
mod sorted_keys {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let mut prev = 0u64;
        let deltas: Vec<u64> = v
            .iter()
            .map(|&x| {
                let d = x.wrapping_sub(prev);
                prev = x;
                d
            })
            .collect();
        deltas.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let mut prev = 0u64;
        Ok(Vec::<u64>::deserialize(d)?
            .into_iter()
            .map(|x| {
                prev = prev.wrapping_add(x);
                prev
            })
            .collect())
    }
}

/// Sorted (path, count) lists: delta-encoded paths, then counts.
mod sorted_counts {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[(u64, u32)], s: S) -> Result<S::Ok, S::Error> {
        let mut prev = 0u64;
        let deltas: Vec<u64> = v
            .iter()
            .map(|&(x, _)| {
                let d = x.wrapping_sub(prev);
                prev = x;
                d
            })
            .collect();
        let counts: Vec<u32> = v.iter().map(|&(_, c)| c).collect();
        (deltas, counts).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u64, u32)>, D::Error> {
        let (deltas, counts) = <(Vec<u64>, Vec<u32>)>::deserialize(d)?;
        let mut prev = 0u64;
        Ok(deltas
            .into_iter()
            .zip(counts)
            .map(|(x, c)| {
                prev = prev.wrapping_add(x);
                (prev, c)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
