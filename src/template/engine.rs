//! A host's parsed pages → clustering, templates and cleaned text: the one pipeline both the
//! crawler and `thresher clean` run. Path sets → support → essential paths → clusters → each
//! cluster's template and `ClusterModel` → each page's cleaned text.

use crate::dom::Dom;

use super::clean::ClusterModel;
use super::cluster::{cluster, Algorithm, Clustering};
use super::support::{self, Support};

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
    let essential = essential_sets(doms);
    let clustering = cluster(&essential, algorithm);
    clean_clusters(doms, &essential, clustering)
}

/// Each page's essential paths E(d), with support counted over all of `doms` (one host).
pub fn essential_sets(doms: &[Dom]) -> Vec<Vec<u64>> {
    let sets: Vec<Vec<u64>> = doms.iter().map(Dom::path_set).collect();
    let support = Support::from_pages(sets.iter().map(Vec::as_slice));
    sets.iter().map(|s| support.essential(s)).collect()
}

/// Clean one host's pages under a given clustering (the crawler's, or `cluster`'s):
/// per cluster, its template and `ClusterModel`, then each member page's text.
pub fn clean_clusters(doms: &[Dom], essential: &[Vec<u64>], clustering: Clustering) -> SiteResult {
    let mut texts = vec![String::new(); doms.len()];
    let mut templates = Vec::with_capacity(clustering.clusters.len());
    for members in &clustering.clusters {
        let template = support::template(members.iter().map(|&i| essential[i as usize].as_slice()));
        let pages: Vec<&Dom> = members.iter().map(|&i| &doms[i as usize]).collect();
        let model = ClusterModel::learn(&pages, &template);
        for (&i, dom) in members.iter().zip(&pages) {
            texts[i as usize] = model.clean(dom);
        }
        templates.push(template);
    }
    SiteResult {
        clustering,
        templates,
        texts,
    }
}
