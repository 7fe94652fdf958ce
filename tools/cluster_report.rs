//! Dev harness: cluster each site of a dataset with every algorithm and report the clusters and
//! their agreement with the page labels (the file-name prefix before the first `-`, e.g. the
//! big9-news era `2009-…`; pages without a prefix share one label).
//!
//! cargo run --release --example cluster_report -- ../shared/datasets/big9-news [--paths all]
//!     [--stop first-rise]
//!
//! `--paths all` prices the MDL cost with the host's distinct paths (the papers' |P|) instead
//! of the distinct essential paths (`cluster`'s default); `--stop first-rise` stops the greedy
//! at the first merge that does not pay (the papers' rule) instead of `BestPrefix`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use thresher::template::cluster::{cluster_with, Params, Stop};
use thresher::template::mdl;
use thresher::template::support::Support;
use thresher::template::Algorithm;

fn main() {
    let mut dirs = Vec::new();
    let mut all_paths = false;
    let mut stop = Stop::BestPrefix;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--paths" {
            all_paths = args.next().as_deref() == Some("all");
        } else if a == "--stop" {
            if args.next().as_deref() == Some("first-rise") {
                stop = Stop::FirstRise;
            }
        } else {
            dirs.push(PathBuf::from(a));
        }
    }
    println!(
        "| site | pages | labels | algorithm | clusters | ARI | purity | L(C) bits | seconds |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for ds in dirs {
        let mut sites: Vec<PathBuf> = read_dir(&ds).into_iter().filter(|p| p.is_dir()).collect();
        sites.sort();
        for site in sites {
            report(&site, all_paths, stop);
        }
    }
}

fn read_dir(p: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .map(|e| e.expect("dir entry").path())
        .collect()
}

fn report(site: &Path, all_paths: bool, stop: Stop) {
    let mut files: Vec<PathBuf> = read_dir(site)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    let labels: Vec<String> = files
        .iter()
        .map(|f| {
            let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            stem.split_once('-').map_or("", |(l, _)| l).to_string()
        })
        .collect();
    let sets: Vec<Vec<u64>> = files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).expect("read page");
            thresher::dom::parse_bytes(&bytes, None).dom.path_set()
        })
        .collect();
    let support = Support::from_pages(sets.iter().map(Vec::as_slice));
    let essential: Vec<Vec<u64>> = sets.iter().map(|s| support.essential(s)).collect();
    let params = Params {
        paths: all_paths.then_some(support.paths() as u64),
        stop,
        ..Params::default()
    };
    let paths = params
        .paths
        .unwrap_or_else(|| mdl::distinct_paths(essential.iter().map(Vec::as_slice)));
    let mut distinct_labels = labels.clone();
    distinct_labels.sort();
    distinct_labels.dedup();
    let name = site.file_name().and_then(|s| s.to_str()).unwrap_or("?");
    let label_clusters: Vec<Vec<u32>> = distinct_labels
        .iter()
        .map(|l| {
            (0..labels.len() as u32)
                .filter(|&i| &labels[i as usize] == l)
                .collect()
        })
        .collect();
    println!(
        "| {name} | {} | {} | (labels) | {} | 1.000 | 1.000 | {:.0} | |",
        essential.len(),
        distinct_labels.len(),
        distinct_labels.len(),
        mdl::clustering_cost(&essential, &label_clusters, paths).total
    );
    for algo in Algorithm::ALL {
        let t = Instant::now();
        let c = cluster_with(&essential, algo, &params);
        let secs = t.elapsed().as_secs_f64();
        let assign = c.assignment(essential.len());
        let cost = mdl::clustering_cost(&essential, &c.clusters, paths).total;
        let mut sizes: Vec<usize> = c.clusters.iter().map(Vec::len).collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        println!(
            "| {name} | {} | {} | {algo} | {} {:?} | {:.3} | {:.3} | {cost:.0} | {secs:.3} |",
            essential.len(),
            distinct_labels.len(),
            c.clusters.len(),
            &sizes[..sizes.len().min(8)],
            ari(&labels, &assign),
            purity(&labels, &assign),
        );
    }
}

/// Adjusted Rand index of two labellings.
fn ari(a: &[String], b: &[u32]) -> f64 {
    use std::collections::HashMap;
    let choose2 = |n: usize| (n * n.saturating_sub(1) / 2) as f64;
    let mut joint: HashMap<(&str, u32), usize> = HashMap::new();
    let mut ca: HashMap<&str, usize> = HashMap::new();
    let mut cb: HashMap<u32, usize> = HashMap::new();
    for (x, &y) in a.iter().zip(b) {
        *joint.entry((x.as_str(), y)).or_default() += 1;
        *ca.entry(x.as_str()).or_default() += 1;
        *cb.entry(y).or_default() += 1;
    }
    let index: f64 = joint.values().map(|&n| choose2(n)).sum();
    let sa: f64 = ca.values().map(|&n| choose2(n)).sum();
    let sb: f64 = cb.values().map(|&n| choose2(n)).sum();
    let expected = sa * sb / choose2(a.len());
    let max = (sa + sb) / 2.0;
    if (max - expected).abs() < 1e-12 {
        1.0
    } else {
        (index - expected) / (max - expected)
    }
}

/// Share of pages whose cluster's majority label is their own.
fn purity(a: &[String], b: &[u32]) -> f64 {
    use std::collections::HashMap;
    let mut joint: HashMap<(u32, &str), usize> = HashMap::new();
    for (x, &y) in a.iter().zip(b) {
        *joint.entry((y, x.as_str())).or_default() += 1;
    }
    let mut best: HashMap<u32, usize> = HashMap::new();
    for (&(c, _), &n) in &joint {
        let e = best.entry(c).or_default();
        *e = (*e).max(n);
    }
    best.values().sum::<usize>() as f64 / a.len() as f64
}
