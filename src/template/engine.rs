//! A host's parsed pages → clustering, templates and cleaned text: the one pipeline both the
//! crawler and `thresher clean` run. Path sets → support → essential paths → clusters → each
//! cluster's template and `ClusterModel` → each page's cleaned text.

use crate::dom::Dom;

use super::clean::ClusterModel;
use super::cluster::{cluster, Algorithm, Clustering};
use super::content::features::Features;
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
    essential_from_sets(&sets)
}

/// `essential_sets` from the pages' path sets (`Dom::path_set`), without the pages: what the
/// crawler computes from its stored path sets.
pub fn essential_from_sets(sets: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let support = Support::from_pages(sets.iter().map(Vec::as_slice));
    sets.iter().map(|s| support.essential(s)).collect()
}

/// One cluster: its template (paths essential in more than half its pages) and each page's
/// cleaned text — what `clean_clusters` does per cluster, for callers that hold one cluster's
/// pages at a time.
pub fn clean_cluster(pages: &[&Dom], essential: &[&[u64]]) -> (Vec<u64>, Vec<String>) {
    clean_cluster_with(pages, essential, Features::ALL)
}

/// `clean_cluster` with some components off (the dev harness's ablations).
fn clean_cluster_with(
    pages: &[&Dom],
    essential: &[&[u64]],
    features: Features,
) -> (Vec<u64>, Vec<String>) {
    let template = support::template(essential.iter().copied());
    let (_, texts) = ClusterModel::learn_and_clean_with(pages, &template, features);
    (template, texts)
}

/// Clean one host's pages under a given clustering (the crawler's, or `cluster`'s):
/// per cluster, its template and `ClusterModel`, then each member page's text.
pub fn clean_clusters(doms: &[Dom], essential: &[Vec<u64>], clustering: Clustering) -> SiteResult {
    clean_clusters_with(doms, essential, clustering, Features::ALL)
}

/// `clean_clusters` with some components off (the dev harness's ablations).
pub fn clean_clusters_with(
    doms: &[Dom],
    essential: &[Vec<u64>],
    clustering: Clustering,
    features: Features,
) -> SiteResult {
    let mut texts = vec![String::new(); doms.len()];
    let mut templates = Vec::with_capacity(clustering.clusters.len());
    for members in &clustering.clusters {
        let pages: Vec<&Dom> = members.iter().map(|&i| &doms[i as usize]).collect();
        let sets: Vec<&[u64]> = members
            .iter()
            .map(|&i| essential[i as usize].as_slice())
            .collect();
        let (template, cleaned) = clean_cluster_with(&pages, &sets, features);
        for (&i, text) in members.iter().zip(cleaned) {
            texts[i as usize] = text;
        }
        templates.push(template);
    }
    SiteResult {
        clustering,
        templates,
        texts,
    }
}

/// One cluster's template (paths essential in more than half its pages) and cleaning model, from
/// its pages and their essential path sets — what the crawler recomputes for a cluster that
/// changed before re-cleaning its pages with `ClusterModel::clean`.
pub fn learn_cluster(pages: &[&Dom], essential: &[&[u64]]) -> (Vec<u64>, ClusterModel) {
    let template = support::template(essential.iter().copied());
    let model = ClusterModel::learn(pages, &template);
    (template, model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::clean::tests::{body_paragraph, site};

    #[test]
    fn clean_clusters_cleans_each_cluster_with_its_own_model() {
        let doms = site(6);
        let essential = essential_sets(&doms);
        let split = Clustering {
            clusters: vec![vec![0, 2, 4], vec![1, 3, 5]],
        };
        let r = clean_clusters(&doms, &essential, split.clone());
        assert_eq!(r.clustering, split);
        assert_eq!(r.templates.len(), 2);
        for (i, text) in r.texts.iter().enumerate() {
            assert!(text.contains(&body_paragraph(i, 2)), "page {i}: {text}");
            assert!(!text.contains("Copyright"), "page {i}: {text}");
        }
    }

    #[test]
    fn learn_cluster_matches_clean_clusters_on_one_cluster() {
        let doms = site(4);
        let essential = essential_sets(&doms);
        let pages: Vec<&Dom> = doms.iter().collect();
        let sets: Vec<&[u64]> = essential.iter().map(Vec::as_slice).collect();
        let (template, model) = learn_cluster(&pages, &sets);
        let one = Clustering {
            clusters: vec![vec![0, 1, 2, 3]],
        };
        let r = clean_clusters(&doms, &essential, one);
        assert_eq!(r.templates, vec![template]);
        assert_eq!(r.texts[3], model.clean(&doms[3]));
    }
}
