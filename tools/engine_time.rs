//! Dev-only: CPU time of each engine stage over datasets (single thread).
//!   cargo run --release --example engine_time -- DATASET...
use std::time::Instant;
use thresher::dom::Dom;
use thresher::template::clean::ClusterModel;
use thresher::template::engine::essential_sets;
use thresher::template::{cluster::cluster, support, Algorithm};

fn main() {
    let mut t = [0f64; 5];
    for ds in std::env::args().skip(1) {
        for site in std::fs::read_dir(&ds).unwrap() {
            let site = site.unwrap().path();
            if !site.is_dir() {
                continue;
            }
            let mut files: Vec<_> = std::fs::read_dir(&site)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "html"))
                .collect();
            files.sort();
            let s = Instant::now();
            let doms: Vec<Dom> = files
                .iter()
                .map(|f| thresher::dom::parse_bytes(&std::fs::read(f).unwrap(), None).dom)
                .collect();
            t[0] += s.elapsed().as_secs_f64();
            let s = Instant::now();
            let essential = essential_sets(&doms);
            t[1] += s.elapsed().as_secs_f64();
            let s = Instant::now();
            let c = cluster(&essential, Algorithm::default());
            let templates: Vec<Vec<u64>> = c
                .clusters
                .iter()
                .map(|m| support::template(m.iter().map(|&i| essential[i as usize].as_slice())))
                .collect();
            t[2] += s.elapsed().as_secs_f64();
            for (m, tpl) in c.clusters.iter().zip(&templates) {
                let pages: Vec<&Dom> = m.iter().map(|&i| &doms[i as usize]).collect();
                let s = Instant::now();
                let model = ClusterModel::learn(&pages, tpl);
                t[3] += s.elapsed().as_secs_f64();
                let s = Instant::now();
                for d in &pages {
                    std::hint::black_box(model.clean(d));
                }
                t[4] += s.elapsed().as_secs_f64();
            }
        }
    }
    println!(
        "parse {:.3}s  essential {:.3}s  cluster+template {:.3}s  learn {:.3}s  clean {:.3}s",
        t[0], t[1], t[2], t[3], t[4]
    );
}
