//! Tests of the clustering algorithms on planted templates.

use super::*;
use crate::template::mdl;
use crate::template::mdl::clustering_cost;
use crate::template::synth::{partition_of, Rng, SiteSpec};

fn scalable() -> Params {
    Params {
        pairwise_limit: 0,
        ..Params::default()
    }
}

/// Each cluster's size and its pages' planted labels, for readable failures.
fn summary(c: &Clustering, labels: &[usize]) -> String {
    c.clusters
        .iter()
        .map(|m| {
            let mut by = std::collections::BTreeMap::<usize, usize>::new();
            for &i in m {
                *by.entry(labels[i as usize]).or_default() += 1;
            }
            format!("{by:?}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Relabel-free comparison: both sides canonical.
fn planted(labels: &[usize]) -> Clustering {
    Clustering::from_groups(partition_of(labels))
}

/// Small hosts: 2 or 3 templates, ≤ 60 pages, optional widgets and some long pages (whose
/// essential set is the whole page), so the essential sets differ page to page.
fn small_hosts() -> Vec<(Vec<usize>, Vec<Vec<u64>>)> {
    let mut hosts = Vec::new();
    for seed in 0..10u64 {
        let templates = 2 + (seed % 2) as usize;
        let pages = 20 + (seed as usize * 7) % 41;
        let (labels, sets) = SiteSpec::news(pages, templates).essential_sets(seed);
        assert!(
            Groups::new(&sets).len() > templates,
            "seed {seed}: trivial host"
        );
        hosts.push((labels, sets));
    }
    hosts
}

#[test]
fn every_algorithm_recovers_planted_templates_on_small_hosts() {
    for (labels, sets) in small_hosts() {
        let want = planted(&labels);
        let mdl = cluster(&sets, Algorithm::TextMdl);
        assert!(mdl == want, "TEXT-MDL: {}", summary(&mdl, &labels));
        for algo in [
            Algorithm::TextHash,
            Algorithm::TextMax,
            Algorithm::TextMaxDice,
        ] {
            let got = cluster(&sets, algo);
            assert!(got == mdl, "{algo} (pairwise): {}", summary(&got, &labels));
            let got = cluster_with(&sets, algo, &scalable());
            assert!(
                got == mdl,
                "{algo} (LSH engine): {}",
                summary(&got, &labels)
            );
        }
    }
}

#[test]
fn mdl_result_costs_no_more_than_the_obvious_alternatives() {
    // Core blocks missing at random: the planted partition is not the cheapest here.
    let spec = SiteSpec {
        core_presence: 0.9,
        ..SiteSpec::news(40, 3)
    };
    let (labels, sets) = spec.essential_sets(11);
    let paths = mdl::distinct_paths(sets.iter().map(Vec::as_slice));
    let found = cluster(&sets, Algorithm::TextMdl);
    let cost = |c: &[Vec<u32>]| clustering_cost(&sets, c, paths).total;
    let singletons: Vec<Vec<u32>> = (0..sets.len() as u32).map(|i| vec![i]).collect();
    let one: Vec<Vec<u32>> = vec![(0..sets.len() as u32).collect()];
    assert!(cost(&found.clusters) < cost(&singletons));
    assert!(cost(&found.clusters) < cost(&one));
    assert!(cost(&found.clusters) <= cost(&planted(&labels).clusters) + 1e-6);
}

fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Rng::new(seed);
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    order
}

/// Permuting the input permutes the page indices of the output, nothing else.
fn assert_order_independent(sets: &[Vec<u64>], algo: Algorithm, params: &Params) {
    let base = cluster_with(sets, algo, params);
    for seed in 0..3 {
        let order = shuffled(sets.len(), seed);
        let permuted: Vec<Vec<u64>> = order.iter().map(|&i| sets[i].clone()).collect();
        let got = cluster_with(&permuted, algo, params);
        let back = Clustering::from_groups(
            got.clusters
                .iter()
                .map(|c| c.iter().map(|&j| order[j as usize] as u32).collect())
                .collect(),
        );
        assert_eq!(back, base, "{algo} depends on input order (seed {seed})");
    }
    assert_eq!(
        cluster_with(sets, algo, params),
        base,
        "{algo} not repeatable"
    );
}

#[test]
fn results_do_not_depend_on_input_order() {
    // Content-heavy pages and near-ties: many distinct essential sets.
    let spec = SiteSpec {
        core_presence: 0.8,
        long_share: 0.4,
        ..SiteSpec::news(50, 3)
    };
    let (_, sets) = spec.essential_sets(5);
    for algo in Algorithm::ALL {
        assert_order_independent(&sets, algo, &Params::default());
    }
    let spec = SiteSpec {
        core_presence: 0.9,
        ..SiteSpec::news(600, 4)
    };
    let (_, big) = spec.essential_sets(9);
    for algo in [
        Algorithm::TextHash,
        Algorithm::TextMax,
        Algorithm::TextMaxDice,
    ] {
        assert_order_independent(&big, algo, &scalable());
    }
}

#[test]
fn duplicates_stay_together_and_edge_cases_hold() {
    assert_eq!(cluster(&[], Algorithm::TextMax), Clustering::default());
    let one = vec![vec![1u64, 2, 3]];
    for algo in Algorithm::ALL {
        assert_eq!(cluster(&one, algo).clusters, vec![vec![0]]);
    }
    // Two unrelated pages each duplicated: two clusters, whatever the algorithm.
    let a: Vec<u64> = (0..200).collect();
    let b: Vec<u64> = (1000..1300).collect();
    let sets = vec![a.clone(), b.clone(), a, b, vec![]];
    for algo in Algorithm::ALL {
        let c = cluster(&sets, algo);
        let assign = c.assignment(sets.len());
        assert_eq!(assign[0], assign[2], "{algo}");
        assert_eq!(assign[1], assign[3], "{algo}");
        assert_ne!(assign[0], assign[1], "{algo}");
    }
}

/// Regression: long pages' unique content filled big clusters' sketched unions, leaving the
/// sketches blind to the templates (merging templates looked free); unique paths are now
/// counted exactly outside the sketch.
#[test]
fn regression_unique_paths_blinded_sketches_at_scale() {
    let (labels, sets) = SiteSpec::news(5000, 6).essential_sets(3);
    for algo in [
        Algorithm::TextMax,
        Algorithm::TextHash,
        Algorithm::TextMaxDice,
    ] {
        let got = cluster_with(&sets, algo, &scalable());
        assert!(
            got == planted(&labels),
            "{algo}: {}",
            summary(&got, &labels)
        );
    }
}

/// Regression: stopping at the first merge that does not pay (the papers' rule) stranded long
/// pages (essential set = whole page) as singletons: the first ±1s in M_Δ are the dearest bits,
/// so their first merges look bad although the planted clustering is far cheaper.
#[test]
fn regression_first_rise_strands_long_pages() {
    for seed in 0..4u64 {
        let spec = SiteSpec {
            long_share: 0.5,
            ..SiteSpec::news(30 + seed as usize * 3, 2 + (seed % 2) as usize)
        };
        let (labels, sets) = spec.essential_sets(seed);
        let paths = mdl::distinct_paths(sets.iter().map(Vec::as_slice));
        let cost = |c: &Clustering| clustering_cost(&sets, &c.clusters, paths).total;
        let first_rise = Params {
            stop: Stop::FirstRise,
            ..Params::default()
        };
        for algo in Algorithm::ALL {
            let stalled = cluster_with(&sets, algo, &first_rise);
            let best = cluster(&sets, algo);
            assert!(
                best == planted(&labels),
                "{algo}: {}",
                summary(&best, &labels)
            );
            assert!(
                stalled.clusters.len() > best.clusters.len(),
                "{algo} seed {seed}"
            );
            assert!(cost(&best) < cost(&stalled), "{algo} seed {seed}");
        }
    }
}
