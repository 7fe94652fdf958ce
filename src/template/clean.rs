//! A cluster's cleaning model: learned once from the cluster's pages and template, then applied
//! to one page at a time (`ClusterModel::clean`), so the crawler re-cleans only the pages of
//! clusters that changed. What the cluster teaches beyond its template:
//!
//! - *repeated text*: text nodes found on two or more of its pages without being template
//!   (bylines, editor and source lines, an author's bio) — short ones are dropped;
//! - *the content region*: the element signature under which its pages keep their prose,
//!   agreed by vote, so one odd page (a flash item next to a long list) gets its siblings' region.
//!
//! Pure and deterministic: the model does not depend on page order (counts and integer votes).

use std::collections::BTreeMap;

use crate::dom::{text, Dom, NodeKind};

use super::content::blocks::{Blocks, NONE};
use super::content::prune;
use super::content::region::{self, Pass, SCALE};
use super::support::PathMap;

/// What cleaning one cluster's pages needs.
#[derive(Clone, Debug, Default)]
pub struct ClusterModel {
    /// Template paths: their text is removed.
    template: PathMap<()>,
    /// Text paths (not template) found on two or more of the cluster's pages.
    repeated: PathMap<()>,
    /// The signature (`region::signature`) of the element the cluster's pages keep their
    /// content under, when they agree on one.
    region: Option<u64>,
}

/// A page scored for the region pass.
struct Scored {
    blocks: Blocks,
    furniture: Vec<bool>,
    scores: Vec<i64>,
}

impl ClusterModel {
    /// Learn from a cluster's pages and its template path set (`support::template`).
    pub fn learn(pages: &[&Dom], template: &[u64]) -> ClusterModel {
        // One page is no evidence of what pages share: its "template" would be the whole page.
        let template = if pages.len() < 2 { &[][..] } else { template };
        let mut model = ClusterModel {
            template: template.iter().map(|&p| (p, ())).collect(),
            repeated: PathMap::default(),
            region: None,
        };
        model.repeated = model.repeated_paths(pages);
        model.region = model.vote_region(pages);
        model
    }

    /// Non-template text paths present on two or more pages.
    fn repeated_paths(&self, pages: &[&Dom]) -> PathMap<()> {
        let mut seen: PathMap<u32> = PathMap::default();
        for dom in pages {
            let mut paths: Vec<u64> = dom
                .nodes
                .iter()
                .filter(|n| matches!(n.kind, NodeKind::Text(_)) && !self.is_template(n.path))
                .map(|n| n.path)
                .collect();
            paths.sort_unstable();
            paths.dedup();
            for p in paths {
                *seen.entry(p).or_insert(0) += 1;
            }
        }
        seen.into_iter()
            .filter(|&(_, c)| c >= 2)
            .map(|(p, _)| (p, ()))
            .collect()
    }

    /// Each page votes for the signatures of its positively scoring elements, in proportion to
    /// the share of the page's best score that the best element with that signature reaches; the
    /// signature with most votes wins (the smallest signature on ties).
    fn vote_region(&self, pages: &[&Dom]) -> Option<u64> {
        let mut votes: BTreeMap<u64, i64> = BTreeMap::new();
        for dom in pages {
            let scores = self.score(dom).scores;
            let top = scores[region::best(dom, &scores)];
            if top <= 0 {
                continue;
            }
            let mut mine: BTreeMap<u64, i64> = BTreeMap::new();
            for (i, &s) in scores.iter().enumerate() {
                if s > 0 && dom.element(i).is_some() {
                    let v = mine.entry(region::signature(dom, i)).or_insert(0);
                    *v = (*v).max(s * SCALE / top);
                }
            }
            for (sig, v) in mine {
                *votes.entry(sig).or_insert(0) += v;
            }
        }
        votes
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(sig, _)| sig)
    }

    /// Whether path `p` is template.
    pub fn is_template(&self, p: u64) -> bool {
        self.template.contains_key(&p)
    }

    /// The page's blocks as this model sees them (template and repeated text marked).
    pub fn blocks(&self, dom: &Dom) -> Blocks {
        Blocks::new(dom, |i| {
            let p = dom.nodes[i].path;
            (self.is_template(p), self.repeated.contains_key(&p))
        })
    }

    fn score(&self, dom: &Dom) -> Scored {
        let blocks = self.blocks(dom);
        let furniture = region::furniture_blocks(dom, &blocks);
        let scores = region::subtree_scores(dom, &blocks, &furniture, Pass::Region);
        Scored {
            blocks,
            furniture,
            scores,
        }
    }

    /// The page's content region (a node index): the best element with the cluster's agreed
    /// signature when it reaches half the page's own best score, else the page's own best.
    fn region(&self, dom: &Dom, scores: &[i64]) -> usize {
        let own = region::best(dom, scores);
        let agreed = self.region.and_then(|sig| {
            (0..dom.nodes.len())
                .filter(|&i| scores[i] > 0 && region::signature(dom, i) == sig)
                .max_by(|&a, &b| scores[a].cmp(&scores[b]).then(b.cmp(&a)))
        });
        agreed
            .filter(|&a| 2 * scores[a] >= scores[own])
            .unwrap_or(own)
    }

    /// The page's blocks and, per block, whether cleaning keeps it.
    pub fn kept_blocks(&self, dom: &Dom) -> (Blocks, Vec<bool>) {
        let s = self.score(dom);
        let r = self.region(dom, &s.scores);
        let kept = prune::keep(dom, &s.blocks, &s.furniture, r);
        (s.blocks, kept)
    }

    /// The cleaned text of one page of the cluster, one block per line.
    pub fn clean(&self, dom: &Dom) -> String {
        let (blocks, kept) = self.kept_blocks(dom);
        text::render(dom, |i| {
            let b = blocks.block_of[i];
            b != NONE && kept[b as usize] && !blocks.in_template[i]
        })
    }
}
