//! Scale benchmark of the template clustering (harness = false; docs/template-algorithms.md).
//!
//!   cargo bench --bench template_scale                       # the full table
//!   cargo bench --bench template_scale -- max 100000 varied  # one measurement
//!
//! Each measurement runs in a child process (this binary with `--child`), so its peak resident
//! memory (VmHWM) is its own. Hosts are synthetic (`template::synth`, 6 templates, ~370 paths a
//! page, 15% long pages): `news` has rigid templates (most pages of a template share one
//! essential set, as on the dev sites), `varied` drops each core block with probability 0.1
//! (almost every essential set distinct: no help from grouping duplicates). Generating the host
//! (support + essential sets) is timed apart from clustering; the peak is read before
//! clustering, then reset (`/proc/self/clear_refs`) and read after it, so "cluster peak" is the
//! clustering's own high-water mark including the resident input. Quality: L(C) of the result
//! over L(C) of the planted partition (< 1: the result is cheaper than the planted templates).

use std::process::Command;
use std::time::Instant;

use thresher::template::cluster::{cluster, Algorithm};
use thresher::template::incremental::{HostClusters, IncrementalParams, PageKey};
use thresher::template::mdl;
use thresher::template::synth::{partition_of, SiteSpec};
use thresher::template::Clustering;

const SEED: u64 = 42;
const TEMPLATES: usize = 6;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("--child") => child(&args[1..]),
        Some(kind) => {
            let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
            let workload = args.get(2).map_or("news", String::as_str);
            println!("{}", run_child(kind, n, workload));
        }
        None => full(),
    }
}

fn full() {
    println!(
        "machine: {} cores; figures are wall-clock on a shared, loaded machine",
        cores()
    );
    println!();
    println!("| algorithm | workload | pages | distinct E(d) | generate s | cluster s | µs/page | s/(n·log2 n)·1e6 | clusters | L(C)/L(planted) | peak MB before | cluster peak MB |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for workload in ["news", "varied"] {
        for (kind, n) in [
            ("max", 1_000),
            ("max", 10_000),
            ("max", 100_000),
            ("dice", 100_000),
            ("hash", 100_000),
            ("mdl", 100),
            ("mdl", 200),
            ("mdl", 400),
            ("max", 400),
        ] {
            println!("{}", run_child(kind, n, workload));
        }
    }
    println!();
    println!("| incremental | host pages | added | add_pages s | recluster from scratch s | state bytes | peak MB |");
    println!("|---|---|---|---|---|---|---|");
    for n in [10_000, 100_000] {
        println!("{}", run_child("incr", n, "news"));
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn run_child(kind: &str, n: usize, workload: &str) -> String {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe)
        .args(["--child", kind, &n.to_string(), workload])
        .output()
        .expect("run child");
    if !out.status.success() {
        return format!(
            "| {kind} | {n} | child failed: {} |",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// VmHWM in MB (0 if unavailable).
fn peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Reset VmHWM to the current RSS (Linux ≥ 4.0); false if not possible.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn child(args: &[String]) {
    let kind = args[0].as_str();
    let n: usize = args[1].parse().expect("page count");
    if kind == "incr" {
        return incremental(n);
    }
    let algo = match kind {
        "max" => Algorithm::TextMax,
        "hash" => Algorithm::TextHash,
        "dice" => Algorithm::TextMaxDice,
        "mdl" => Algorithm::TextMdl,
        other => panic!("unknown kind {other}"),
    };
    let workload = args.get(2).map_or("news", String::as_str);
    let spec = SiteSpec {
        core_presence: if workload == "varied" { 0.9 } else { 1.0 },
        ..SiteSpec::news(n, TEMPLATES)
    };
    let t = Instant::now();
    let (labels, sets) = spec.essential_sets(SEED);
    let generate = t.elapsed().as_secs_f64();
    let before = peak_mb();
    let reset = reset_peak();
    let t = Instant::now();
    let c = cluster(&sets, algo);
    let secs = t.elapsed().as_secs_f64();
    let during = if reset { peak_mb() } else { f64::NAN };
    let planted = Clustering::from_groups(partition_of(&labels));
    let paths = mdl::distinct_paths(sets.iter().map(Vec::as_slice));
    let ratio = mdl::clustering_cost(&sets, &c.clusters, paths).total
        / mdl::clustering_cost(&sets, &planted.clusters, paths).total;
    let mut distinct: Vec<&Vec<u64>> = sets.iter().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let nf = n as f64;
    println!(
        "| {algo} | {workload} | {n} | {} | {generate:.2} | {secs:.3} | {:.1} | {:.3} | {} | {ratio:.4}{} | {before:.0} | {during:.0} |",
        distinct.len(),
        secs * 1e6 / nf,
        secs / (nf * nf.log2()) * 1e6,
        c.clusters.len(),
        if c == planted { " (= planted)" } else { "" },
    );
}

/// Cluster `n` pages into a `HostClusters`, then time adding 100 more, against reclustering
/// the n + 100 pages from scratch.
fn incremental(n: usize) {
    let added = 100;
    let spec = SiteSpec::news(n + added, TEMPLATES);
    let page = |k: PageKey| spec.page(SEED, k as usize);
    let mut h = HostClusters::new(IncrementalParams::default());
    let first: Vec<(PageKey, Vec<u64>)> = (0..n as u64).map(|k| (k, page(k))).collect();
    h.add_pages(&first, page);
    drop(first);
    let new: Vec<(PageKey, Vec<u64>)> = (n as u64..(n + added) as u64)
        .map(|k| (k, page(k)))
        .collect();
    let t = Instant::now();
    let ch = h.add_pages(&new, page);
    let add = t.elapsed().as_secs_f64();
    assert!(!ch.rebuilt, "the step was meant to be incremental");
    let bytes = h.to_bytes().len();
    let t = Instant::now();
    h.recluster(page);
    let full = t.elapsed().as_secs_f64();
    println!(
        "| text-max | {n} | {added} | {add:.3} | {full:.2} | {bytes} | {:.0} |",
        peak_mb()
    );
}
