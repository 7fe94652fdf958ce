//! A host's parsed pages → clustering, templates and cleaned text: the one pipeline both the
//! crawler and `thresher clean` run.
//! BASELINE: removes text whose path is in the cluster template (the papers' cleaning).

use crate::dom::{text, Dom};

use super::cluster::{cluster, Algorithm, Clustering};
use super::support::{self, PathMap, Support};

#[derive(Clone, Debug, Default)]
pub struct SiteResult {
    pub clustering: Clustering,
    /// Each cluster's template path set, sorted.
    pub templates: Vec<Vec<u64>>,
    /// Cleaned text per input page, one block per line.
    pub texts: Vec<String>,
}

/// Cluster and clean one host's pages.
pub fn clean_site(doms: &[Dom], algorithm: Algorithm) -> SiteResult {
    let sets: Vec<Vec<u64>> = doms.iter().map(Dom::path_set).collect();
    let support = Support::from_pages(sets.iter().map(Vec::as_slice));
    let essential: Vec<Vec<u64>> = sets.iter().map(|s| support.essential(s)).collect();
    let clustering = cluster(&essential, algorithm);
    let templates: Vec<Vec<u64>> = clustering
        .clusters
        .iter()
        .map(|m| support::template(m.iter().map(|&i| essential[i as usize].as_slice())))
        .collect();
    let assignment = clustering.assignment(doms.len());
    let texts = doms
        .iter()
        .zip(&assignment)
        .map(|(dom, &c)| {
            let tpl: PathMap<()> = templates[c as usize].iter().map(|&p| (p, ())).collect();
            text::render(dom, |i| !tpl.contains_key(&dom.nodes[i].path))
        })
        .collect();
    SiteResult {
        clustering,
        templates,
        texts,
    }
}
