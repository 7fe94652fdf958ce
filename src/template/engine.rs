//! A host's parsed pages → clustering, templates and cleaned text: the one pipeline both the
//! crawler and `thresher clean` run. Path sets → support → essential paths → clusters → each
//! cluster's template and `ClusterModel` → each page's cleaned text.

use crate::dom::Dom;

use super::byline::Byline;
use super::clean::{Cleaned, ClusterModel, Renders};
use super::cluster::{cluster, Algorithm, Clustering};
use super::content::features::Features;
use super::support::{self, Support};

#[derive(Clone, Debug, Default)]
pub struct SiteResult {
    pub clustering: Clustering,
    /// Each cluster's template path set, sorted.
    pub templates: Vec<Vec<u64>>,
    /// Cleaned text per input page, one block per line (empty when not asked for: `Renders`).
    pub texts: Vec<String>,
    /// The same per input page as Markdown (empty when not asked for).
    pub markdowns: Vec<String>,
    /// What each input page's byline says (`template::byline`); empty for the baseline
    /// detectors, which read none.
    pub bylines: Vec<Byline>,
}

/// Cluster and clean one host's pages, rendering what `renders` asks for.
pub fn clean_site(doms: &[Dom], algorithm: Algorithm, renders: Renders) -> SiteResult {
    let essential = essential_sets(doms);
    let clustering = cluster(&essential, algorithm);
    clean_clusters_with(doms, &essential, clustering, Features::ALL, renders)
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
    let (template, cleaned) = clean_cluster_with(pages, essential, Features::ALL, Renders::Text);
    (template, cleaned.into_iter().map(|c| c.text).collect())
}

/// `clean_cluster` with each page's byline too.
pub fn clean_cluster_pages(pages: &[&Dom], essential: &[&[u64]]) -> (Vec<u64>, Vec<Cleaned>) {
    clean_cluster_with(pages, essential, Features::ALL, Renders::Both)
}

/// A cluster's content model learns from at most this many of its pages; every page is then
/// cleaned with it. Bounds what learning a large cluster holds in memory (the crawl's
/// end-of-crawl pass loads only these pages' DOMs at once, then streams the rest). 256 is above
/// every dev-set cluster (the largest, 250 pages), so no dev-set figure depends on it; past it,
/// the pages agree on repeated text and the region long before (`LEARN_SAMPLE` pages already
/// give each vote hundreds of pages).
pub const LEARN_SAMPLE: usize = 256;

/// The key that picks a cluster's learning sample: the hash of the page's path set (its text at
/// its paths), so the sample does not depend on page order — the crawl and `clean` pick the same
/// pages whatever order they hold them in.
pub fn sample_key(path_set: &[u64]) -> u64 {
    let bytes: Vec<u8> = path_set.iter().flat_map(|p| p.to_le_bytes()).collect();
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// Indices into `keys` (one `sample_key` per page of a cluster of more than `LEARN_SAMPLE`
/// pages) of the pages its model learns from: one page per distinct key, the `LEARN_SAMPLE`
/// smallest keys, in ascending index order.
pub fn learn_sample(keys: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_unstable_by_key(|&i| (keys[i], i));
    order.dedup_by_key(|i| keys[*i]);
    order.truncate(LEARN_SAMPLE);
    order.sort_unstable();
    order
}

/// `clean_cluster` with some components off (the dev harness's ablations), rendering what
/// `renders` asks for.
fn clean_cluster_with(
    pages: &[&Dom],
    essential: &[&[u64]],
    features: Features,
    renders: Renders,
) -> (Vec<u64>, Vec<Cleaned>) {
    let template = support::template(essential.iter().copied());
    if pages.len() <= LEARN_SAMPLE {
        let (_, cleaned) =
            ClusterModel::learn_and_clean_pages_with(pages, &template, features, renders);
        return (template, cleaned);
    }
    let keys: Vec<u64> = pages.iter().map(|d| sample_key(&d.path_set())).collect();
    let chosen = learn_sample(&keys);
    let sample: Vec<&Dom> = chosen.iter().map(|&i| pages[i]).collect();
    // The sample's own texts come with its learning (each page scored once).
    let (model, sample_cleaned) =
        ClusterModel::learn_and_clean_pages_with(&sample, &template, features, renders);
    let mut cleaned: Vec<Option<Cleaned>> = vec![None; pages.len()];
    for (&i, c) in chosen.iter().zip(sample_cleaned) {
        cleaned[i] = Some(c);
    }
    let cleaned = cleaned
        .into_iter()
        .zip(pages)
        .map(|(c, d)| c.unwrap_or_else(|| model.clean_page_as(d, renders)))
        .collect();
    (template, cleaned)
}

/// Clean one host's pages under a given clustering (the crawler's, or `cluster`'s):
/// per cluster, its template and `ClusterModel`, then each member page's text.
pub fn clean_clusters(doms: &[Dom], essential: &[Vec<u64>], clustering: Clustering) -> SiteResult {
    clean_clusters_with(doms, essential, clustering, Features::ALL, Renders::Both)
}

/// `clean_clusters` with some components off (the dev harness's ablations), rendering what
/// `renders` asks for.
pub fn clean_clusters_with(
    doms: &[Dom],
    essential: &[Vec<u64>],
    clustering: Clustering,
    features: Features,
    renders: Renders,
) -> SiteResult {
    let mut texts = vec![String::new(); doms.len()];
    let mut markdowns = vec![String::new(); doms.len()];
    let mut bylines = vec![Byline::default(); doms.len()];
    let mut templates = Vec::with_capacity(clustering.clusters.len());
    for members in &clustering.clusters {
        let pages: Vec<&Dom> = members.iter().map(|&i| &doms[i as usize]).collect();
        let sets: Vec<&[u64]> = members
            .iter()
            .map(|&i| essential[i as usize].as_slice())
            .collect();
        let (template, cleaned) = clean_cluster_with(&pages, &sets, features, renders);
        for (&i, c) in members.iter().zip(cleaned) {
            texts[i as usize] = c.text;
            markdowns[i as usize] = c.markdown;
            bylines[i as usize] = c.byline;
        }
        templates.push(template);
    }
    SiteResult {
        clustering,
        templates,
        texts,
        markdowns,
        bylines,
    }
}

/// One cluster's template (paths essential in more than half its pages) and cleaning model, from
/// its pages and their essential path sets — what the crawler recomputes for a cluster that
/// changed before re-cleaning its pages with `ClusterModel::clean`.
pub fn learn_cluster(pages: &[&Dom], essential: &[&[u64]]) -> (Vec<u64>, ClusterModel) {
    learn_cluster_with(pages, essential, Features::ALL)
}

/// `learn_cluster` with some components off (the training dump learns without the
/// classifier, whose output nothing learned depends on).
pub fn learn_cluster_with(
    pages: &[&Dom],
    essential: &[&[u64]],
    features: Features,
) -> (Vec<u64>, ClusterModel) {
    let template = support::template(essential.iter().copied());
    let model = ClusterModel::learn_with(pages, &template, features);
    (template, model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_past_the_learning_sample_cleans_the_same_in_any_page_order() {
        use crate::template::clean::tests::news_page;
        let doms: Vec<Dom> = (0..LEARN_SAMPLE + 30)
            .map(|i| crate::dom::parse_html(&news_page(i)).dom)
            .collect();
        let sets = essential_sets(&doms);
        let forward: Vec<usize> = (0..doms.len()).collect();
        let mut shuffled = forward.clone();
        shuffled.reverse();
        shuffled.swap(3, 200);
        let clean = |order: &[usize]| {
            let pages: Vec<&Dom> = order.iter().map(|&i| &doms[i]).collect();
            let refs: Vec<&[u64]> = order.iter().map(|&i| sets[i].as_slice()).collect();
            let (template, texts) = clean_cluster(&pages, &refs);
            let mut by_page = vec![String::new(); doms.len()];
            for (&i, t) in order.iter().zip(texts) {
                by_page[i] = t;
            }
            (template, by_page)
        };
        let (a, b) = (clean(&forward), clean(&shuffled));
        assert_eq!(a, b);
        assert!(a.1.iter().all(|t| !t.is_empty()));
        // The sample: LEARN_SAMPLE distinct pages, whatever the order.
        let keys: Vec<u64> = doms.iter().map(|d| sample_key(&d.path_set())).collect();
        assert_eq!(learn_sample(&keys).len(), LEARN_SAMPLE);
    }
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
