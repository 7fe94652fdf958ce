//! Template eras: whether a recrawl found a site redesigned. A page replaced by new bytes keeps
//! its structure when only its content or its template's details changed (a new paragraph, a
//! footer date); a redesign gives most of the replaced pages a different structure at once.
//! The page's path sets before and after tell the two apart without any cluster ids, which a
//! reclustering renumbers. The verdict comes before the site's end-of-crawl pass, so that the
//! pass re-learns and re-cleans only the new era's pages (`learn::site`, docs/recrawl.md).

use std::collections::{BTreeSet, HashMap};

use crate::store::{PendingChange, RedesignRecord, SiteClusters};
use crate::template::mdl::sorted_intersection_len;

/// Path-set Jaccard at or above which a page's old and new versions have the same structure.
/// Reason: the same page before and after a content or template-detail change shares far more
/// (> 0.8 in the recrawl tests); two articles of one template share about half (0.55 in the
/// procedural universe), and pages of two different templates almost nothing (0.02).
pub const SAME_STRUCTURE: f64 = 0.5;

/// Pages with a new structure a redesign needs at least. Reason: one or two restructured pages
/// are a special page's edit, not a site's new template (the same floor as `template.min_pages`
/// would need five pages; three keeps small sites in reach).
pub const MIN_PAGES: u64 = 3;

/// Jaccard similarity of two sorted, deduplicated path sets.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let both = sorted_intersection_len(a, b);
    let union = a.len() + b.len() - both;
    if union == 0 {
        1.0
    } else {
        both as f64 / union as f64
    }
}

/// Tallies a site's replaced pages, one at a time, into a redesign or none.
#[derive(Default)]
pub struct Detector {
    replaced: u64,
    /// The replaced pages whose structure changed.
    moved: Vec<u64>,
}

impl Detector {
    /// One replaced page: what it was (`pending.old_paths`) and its path set now.
    pub fn page(&mut self, id: u64, pending: &PendingChange, new_paths: &[u64]) {
        self.replaced += 1;
        if pending.old_paths.is_empty() || jaccard(&pending.old_paths, new_paths) >= SAME_STRUCTURE
        {
            return;
        }
        self.moved.push(id);
    }

    /// A redesign when at least `MIN_PAGES` and at least half the replaced pages took a new
    /// structure. Known before the site's end-of-crawl pass, which then re-cleans only the new
    /// era's pages.
    pub fn is_redesign(&self) -> bool {
        let moved = self.moved.len() as u64;
        moved >= MIN_PAGES && 2 * moved >= self.replaced
    }

    /// The redesign's record, once the pass has clustered the new era. `before`: the site's
    /// clustering from its last end-of-crawl pass (interim ones are not used: a recrawl's
    /// incremental steps may already have moved pages); `after`: the one this pass made.
    pub fn finish(
        self,
        at_ms: u64,
        before: Option<&SiteClusters>,
        after: Option<&SiteClusters>,
    ) -> Option<RedesignRecord> {
        if !self.is_redesign() {
            return None;
        }
        let members = |s: &SiteClusters| {
            s.clusters
                .iter()
                .flat_map(|c| c.members.iter().map(move |&m| (m, c.id)))
                .collect::<HashMap<u64, u32>>()
        };
        let before = before.filter(|b| b.final_pages > 0).map(members);
        let after = after.map(members);
        let clusters_of = |map: &Option<HashMap<u64, u32>>| -> Vec<u32> {
            let Some(map) = map else { return Vec::new() };
            let set: BTreeSet<u32> = self
                .moved
                .iter()
                .filter_map(|id| map.get(id))
                .copied()
                .collect();
            set.into_iter().collect()
        };
        Some(RedesignRecord {
            at_ms,
            pages: self.moved.len() as u64,
            replaced: self.replaced,
            old_clusters: clusters_of(&before),
            new_clusters: clusters_of(&after),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ClusterSummary;

    fn pending(paths: Vec<u64>) -> PendingChange {
        PendingChange {
            url: "http://a.example/p".into(),
            at_ms: 1,
            old_hash: None,
            old_paths: paths,
        }
    }

    fn clusters(final_pages: u64, list: &[(u32, &[u64])]) -> SiteClusters {
        SiteClusters {
            detector: "text-max".into(),
            final_pages,
            clusters: list
                .iter()
                .map(|&(id, members)| ClusterSummary {
                    id,
                    members: members.to_vec(),
                    template: vec![],
                })
                .collect(),
            updated_at_ms: 0,
        }
    }

    #[test]
    fn jaccard_of_sorted_sets() {
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[], &[]), 1.0);
        assert_eq!(jaccard(&[1], &[2]), 0.0);
    }

    #[test]
    fn most_replaced_pages_with_a_new_structure_are_a_redesign_content_edits_are_not() {
        let old: Vec<u64> = (0..40).collect();
        let edited: Vec<u64> = (0..44).collect(); // a paragraph more: same structure
        let redesigned: Vec<u64> = (100..140).collect();
        let before = clusters(10, &[(0, &[1, 2, 3, 4, 5])]);
        let after = clusters(10, &[(0, &[5]), (1, &[1, 2, 3, 4])]);

        let mut d = Detector::default();
        for id in 1..=4 {
            d.page(id, &pending(old.clone()), &redesigned);
        }
        d.page(5, &pending(old.clone()), &edited);
        assert!(d.is_redesign());
        let r = d
            .finish(7, Some(&before), Some(&after))
            .expect("a redesign");
        assert_eq!((r.pages, r.replaced, r.at_ms), (4, 5, 7));
        assert_eq!((r.old_clusters, r.new_clusters), (vec![0], vec![1]));

        // Content edits only: no redesign.
        let mut d = Detector::default();
        for id in 1..=5 {
            d.page(id, &pending(old.clone()), &edited);
        }
        assert!(!d.is_redesign());
        assert!(d.finish(7, Some(&before), Some(&after)).is_none());

        // Two restructured pages are too few; a minority of the replaced pages is not enough.
        let mut d = Detector::default();
        for id in 1..=2 {
            d.page(id, &pending(old.clone()), &redesigned);
        }
        assert!(d.finish(7, Some(&before), Some(&after)).is_none());
        let mut d = Detector::default();
        for id in 1..=3 {
            d.page(id, &pending(old.clone()), &redesigned);
        }
        for id in 10..=13 {
            d.page(id, &pending(old.clone()), &edited);
        }
        assert!(d.finish(7, None, Some(&after)).is_none());
    }

    #[test]
    fn an_interim_clustering_gives_no_old_clusters() {
        let before = clusters(0, &[(3, &[1, 2, 3])]);
        let after = clusters(10, &[(0, &[1, 2, 3])]);
        let mut d = Detector::default();
        for id in 1..=3 {
            d.page(
                id,
                &pending((0..40).collect()),
                &(100..140).collect::<Vec<_>>(),
            );
        }
        let r = d
            .finish(1, Some(&before), Some(&after))
            .expect("a redesign");
        assert!(r.old_clusters.is_empty());
        assert_eq!(r.new_clusters, vec![0]);
    }
}
