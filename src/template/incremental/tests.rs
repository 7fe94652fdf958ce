//! Tests of the incremental host state on synthetic hosts (page key = page index).

use super::*;
use crate::template::cluster::cluster;
use crate::template::synth::SiteSpec;

const SEED: u64 = 21;

fn pages(spec: &SiteSpec, range: std::ops::Range<usize>) -> Vec<(PageKey, Vec<u64>)> {
    range.map(|i| (i as PageKey, spec.page(SEED, i))).collect()
}

fn loader(spec: &SiteSpec) -> impl FnMut(PageKey) -> Vec<u64> + '_ {
    move |k| spec.page(SEED, k as usize)
}

/// The state's partition as a `Clustering` of page indices.
fn partition(h: &HostClusters) -> Clustering {
    Clustering::from_groups(
        h.clusters()
            .map(|c| {
                let members = h.members(c).expect("listed cluster");
                members.iter().map(|&k| k as u32).collect()
            })
            .collect(),
    )
}

/// What `clean` computes for pages 0..n (engine: support over all pages, then `cluster`).
fn batch(spec: &SiteSpec, n: usize) -> Clustering {
    let sets: Vec<Vec<u64>> = (0..n).map(|i| spec.page(SEED, i)).collect();
    let support = Support::from_pages(sets.iter().map(Vec::as_slice));
    let essential: Vec<Vec<u64>> = sets.iter().map(|s| support.essential(s)).collect();
    cluster(&essential, Algorithm::TextMax)
}

#[test]
fn small_hosts_are_rebuilt_and_equal_the_batch_clustering() {
    let spec = SiteSpec::news(150, 3);
    let mut h = HostClusters::new(IncrementalParams::default());
    for start in (0..150).step_by(25) {
        let ch = h.add_pages(&pages(&spec, start..start + 25), loader(&spec));
        assert!(ch.rebuilt);
        assert_eq!(ch.moved.iter().filter(|m| m.0 >= start as u64).count(), 25);
    }
    assert_eq!(h.len(), 150);
    assert_eq!(partition(&h), batch(&spec, 150));
}

#[test]
fn new_pages_join_their_templates_clusters() {
    let spec = SiteSpec::news(2100, 4);
    let mut h = HostClusters::new(IncrementalParams::default());
    assert!(h.add_pages(&pages(&spec, 0..2000), loader(&spec)).rebuilt);
    let before = partition(&h);
    let ch = h.add_pages(&pages(&spec, 2000..2100), |_| panic!("no rebuild expected"));
    assert!(!ch.rebuilt && ch.removed.is_empty());
    let moved: Vec<PageKey> = ch.moved.iter().map(|&(k, _)| k).collect();
    assert_eq!(moved, (2000..2100).collect::<Vec<_>>());
    // Each new page sits with the old pages of its template, and old pages did not move.
    for k in 2000..2100u64 {
        let c = h.cluster_of(k).expect("clustered");
        let members = h.members(c).expect("cluster");
        let t = spec.template_of(SEED, k as usize);
        let same = members
            .iter()
            .filter(|&&m| m < 2000 && spec.template_of(SEED, m as usize) == t)
            .count();
        assert!(
            same * 2 > members.len(),
            "page {k} joined a foreign cluster"
        );
    }
    let old_only: Vec<Vec<u32>> = partition(&h)
        .clusters
        .into_iter()
        .map(|c| c.into_iter().filter(|&i| i < 2000).collect())
        .collect();
    assert_eq!(Clustering::from_groups(old_only), before);
}

#[test]
fn a_new_template_forms_a_new_cluster() {
    // Same site (same seed), but the first 600 pages come from 3 templates and the new ones
    // from a 4th that was never seen.
    let old = SiteSpec::news(600, 3);
    let four = SiteSpec::news(5000, 4);
    let fresh: Vec<(PageKey, Vec<u64>)> = (0..5000)
        .filter(|&i| four.template_of(SEED, i) == 3)
        .take(40)
        .map(|i| (10_000 + i as PageKey, four.page(SEED, i)))
        .collect();
    let mut h = HostClusters::new(IncrementalParams::default());
    h.add_pages(&pages(&old, 0..600), loader(&old));
    let ch = h.add_pages(&fresh, |_| panic!("no rebuild expected"));
    let new_clusters: BTreeSet<ClusterId> = ch.moved.iter().map(|&(_, c)| c).collect();
    assert_eq!(new_clusters.len(), 1, "{ch:?}");
    let c = *new_clusters.first().expect("one");
    assert_eq!(h.members(c).map(<[PageKey]>::len), Some(40));
    assert!(ch.retemplated.contains(&c));
    assert!(!h.template(c).expect("template").is_empty());
}

#[test]
fn state_round_trips_and_resumes_identically() {
    let spec = SiteSpec::news(700, 3);
    let mut h = HostClusters::new(IncrementalParams::default());
    h.add_pages(&pages(&spec, 0..500), loader(&spec));
    let bytes = h.to_bytes();
    let mut back = HostClusters::from_bytes(&bytes).expect("decode");
    assert_eq!(back, h);
    let a = h.add_pages(&pages(&spec, 500..560), loader(&spec));
    let b = back.add_pages(&pages(&spec, 500..560), loader(&spec));
    assert_eq!(a, b);
    assert_eq!(back, h);
}

#[test]
fn known_pages_and_replays_are_ignored() {
    let spec = SiteSpec::news(300, 2);
    let mut h = HostClusters::new(IncrementalParams::default());
    h.add_pages(&pages(&spec, 0..250), loader(&spec));
    let snapshot = h.clone();
    assert_eq!(
        h.add_pages(&pages(&spec, 0..250), loader(&spec)),
        Changes::default()
    );
    assert_eq!(h, snapshot);
    let mut twice = pages(&spec, 250..260);
    twice.extend(pages(&spec, 250..260));
    let ch = h.add_pages(&twice, loader(&spec));
    assert_eq!(ch.moved.len(), 10);
    assert_eq!(h.len(), 260);
}

#[test]
fn growth_triggers_a_rebuild_and_recluster_equals_clean() {
    let spec = SiteSpec::news(700, 3);
    let mut h = HostClusters::new(IncrementalParams::default());
    assert!(h.add_pages(&pages(&spec, 0..300), loader(&spec)).rebuilt);
    assert!(!h.add_pages(&pages(&spec, 300..500), loader(&spec)).rebuilt);
    assert!(h.add_pages(&pages(&spec, 500..650), loader(&spec)).rebuilt);
    assert!(!h.add_pages(&pages(&spec, 650..700), loader(&spec)).rebuilt);
    let ch = h.recluster(loader(&spec));
    assert!(ch.rebuilt);
    assert_eq!(partition(&h), batch(&spec, 700));
    // Templates are the majority rule over the members' (current) essential sets.
    let sets: Vec<Vec<u64>> = (0..700).map(|i| spec.page(SEED, i)).collect();
    let support = Support::from_pages(sets.iter().map(Vec::as_slice));
    for c in h.clusters() {
        let m = h.members(c).expect("cluster");
        if m.len() >= PRUNE_FROM {
            let ess: Vec<Vec<u64>> = m
                .iter()
                .map(|&k| support.essential(&sets[k as usize]))
                .collect();
            let want = crate::template::support::template(ess.iter().map(Vec::as_slice));
            assert_eq!(h.template(c), Some(want.as_slice()));
        }
    }
}

#[test]
fn removing_pages_updates_their_cluster() {
    let spec = SiteSpec::news(400, 2);
    let mut h = HostClusters::new(IncrementalParams::default());
    h.add_pages(&pages(&spec, 0..400), loader(&spec));
    let c = h.cluster_of(0).expect("clustered");
    let gone: Vec<(PageKey, Vec<u64>)> = h
        .members(c)
        .expect("members")
        .iter()
        .map(|&k| (k, spec.page(SEED, k as usize)))
        .collect();
    let ch = h.remove_pages(&gone, loader(&spec));
    assert_eq!(ch.removed, vec![c]);
    assert_eq!(h.len(), 400 - gone.len());
    assert_eq!(h.support().pages() as usize, h.len());
    assert!(h.cluster_of(0).is_none());
}

#[test]
fn pages_to_clean_covers_moved_pages_and_retemplated_clusters() {
    let spec = SiteSpec::news(300, 2);
    let mut h = HostClusters::new(IncrementalParams::default());
    let ch = h.add_pages(&pages(&spec, 0..300), loader(&spec));
    assert_eq!(h.pages_to_clean(&ch), (0..300).collect::<Vec<_>>());
    let ch = Changes {
        retemplated: vec![h.cluster_of(7).expect("clustered")],
        ..Changes::default()
    };
    let members = h.members(ch.retemplated[0]).expect("cluster").to_vec();
    assert_eq!(h.pages_to_clean(&ch), members);
}

#[test]
fn path_counts_are_sorted_by_path_with_each_sets_share_and_the_total() {
    let sets: Vec<&[u64]> = vec![&[1, 5, 9], &[5, 9], &[9, 2], &[]];
    let (counts, total) = count_paths(&sets);
    assert_eq!(counts, vec![(1, 1), (2, 1), (5, 2), (9, 3)]);
    assert_eq!(total, 7);
}
