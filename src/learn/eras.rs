//! Template eras: whether a recrawl found a site redesigned. A page replaced by new bytes keeps
//! its structure when only its content or its template's details changed (a new paragraph, a
//! footer date); a redesign gives most of the replaced pages a different structure at once.
//! The page's path sets before and after tell the two apart without any cluster ids, which a
//! reclustering renumbers.

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
pub struct Detector {
    before: Option<HashMap<u64, u32>>,
    after: HashMap<u64, u32>,
    replaced: u64,
    moved: u64,
    old_clusters: BTreeSet<u32>,
    new_clusters: BTreeSet<u32>,
}

impl Detector {
    /// `before`: the site's clustering from its last end-of-crawl pass (interim ones are not
    /// used: a recrawl's incremental steps may already have moved pages); `after`: the one
    /// this recrawl's pass made.
    pub fn new(before: Option<&SiteClusters>, after: &SiteClusters) -> Detector {
        let members = |s: &SiteClusters| {
            s.clusters
                .iter()
                .flat_map(|c| c.members.iter().map(move |&m| (m, c.id)))
                .collect::<HashMap<u64, u32>>()
        };
        Detector {
            before: before.filter(|b| b.final_pages > 0).map(members),
            after: members(after),
            replaced: 0,
            moved: 0,
            old_clusters: BTreeSet::new(),
            new_clusters: BTreeSet::new(),
        }
    }

    /// One replaced page: what it was (`pending.old_paths`) and its path set now.
    pub fn page(&mut self, id: u64, pending: &PendingChange, new_paths: &[u64]) {
        self.replaced += 1;
        if pending.old_paths.is_empty() || jaccard(&pending.old_paths, new_paths) >= SAME_STRUCTURE
        {
            return;
        }
        self.moved += 1;
        if let Some(c) = self.before.as_ref().and_then(|b| b.get(&id)) {
            self.old_clusters.insert(*c);
        }
        if let Some(c) = self.after.get(&id) {
            self.new_clusters.insert(*c);
        }
    }

    /// A redesign when at least `MIN_PAGES` and at least half the replaced pages took a new
    /// structure.
    pub fn finish(self, at_ms: u64) -> Option<RedesignRecord> {
        (self.moved >= MIN_PAGES && 2 * self.moved >= self.replaced).then(|| RedesignRecord {
            at_ms,
            pages: self.moved,
            replaced: self.replaced,
            old_clusters: self.old_clusters.into_iter().collect(),
            new_clusters: self.new_clusters.into_iter().collect(),
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

        let mut d = Detector::new(Some(&before), &after);
        for id in 1..=4 {
            d.page(id, &pending(old.clone()), &redesigned);
        }
        d.page(5, &pending(old.clone()), &edited);
        let r = d.finish(7).expect("a redesign");
        assert_eq!((r.pages, r.replaced, r.at_ms), (4, 5, 7));
        assert_eq!((r.old_clusters, r.new_clusters), (vec![0], vec![1]));

        // Content edits only: no redesign.
        let mut d = Detector::new(Some(&before), &after);
        for id in 1..=5 {
            d.page(id, &pending(old.clone()), &edited);
        }
        assert!(d.finish(7).is_none());

        // Two restructured pages are too few; a minority of the replaced pages is not enough.
        let mut d = Detector::new(Some(&before), &after);
        for id in 1..=2 {
            d.page(id, &pending(old.clone()), &redesigned);
        }
        assert!(d.finish(7).is_none());
        let mut d = Detector::new(None, &after);
        for id in 1..=3 {
            d.page(id, &pending(old.clone()), &redesigned);
        }
        for id in 10..=13 {
            d.page(id, &pending(old.clone()), &edited);
        }
        assert!(d.finish(7).is_none());
    }

    #[test]
    fn an_interim_clustering_gives_no_old_clusters() {
        let before = clusters(0, &[(3, &[1, 2, 3])]);
        let after = clusters(10, &[(0, &[1, 2, 3])]);
        let mut d = Detector::new(Some(&before), &after);
        for id in 1..=3 {
            d.page(
                id,
                &pending((0..40).collect()),
                &(100..140).collect::<Vec<_>>(),
            );
        }
        let r = d.finish(1).expect("a redesign");
        assert!(r.old_clusters.is_empty());
        assert_eq!(r.new_clusters, vec![0]);
    }
}
