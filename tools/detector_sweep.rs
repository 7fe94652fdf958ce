//! The parameter sweep behind the baselines' defaults (docs/detectors.md): every dataset given
//! is parsed once, then each baseline runs over a small grid of its parameters and prints macro
//! P and F1 per dataset (score.py's metric).
//!
//! cargo run --release --example detector_sweep -- ../shared/datasets/xmu-cn-news ../shared/datasets/big9-news

use std::path::Path;

use thresher::detect::{node_hash, shingles, table_chunks};
use thresher::dom::{parse_bytes, Dom};
use thresher::eval::dataset::read_text;
use thresher::eval::{prf, summarise, tokens, Bag, Dataset, SiteScores};
use thresher::template::SiteResult;

struct Site {
    name: String,
    ids: Vec<String>,
    doms: Vec<Dom>,
    gold: Vec<(String, Bag)>,
}

fn load(dir: &Path) -> Result<Vec<Site>, Box<dyn std::error::Error>> {
    let mut sites = Vec::new();
    for s in Dataset::open(dir)?.sites {
        let mut doms = Vec::new();
        for (_, p) in &s.html {
            doms.push(parse_bytes(&std::fs::read(p)?, None).dom);
        }
        let mut gold = Vec::new();
        for (id, p) in &s.gold {
            gold.push((id.clone(), tokens(&read_text(p)?)));
        }
        let ids = s.html.into_iter().map(|(id, _)| id).collect();
        sites.push(Site {
            name: s.name,
            ids,
            doms,
            gold,
        });
    }
    Ok(sites)
}

fn score(sites: &[Site], clean: &dyn Fn(&[Dom]) -> SiteResult) -> (f64, f64) {
    let scores: Vec<SiteScores> = sites
        .iter()
        .map(|s| {
            let r = clean(&s.doms);
            let pages = s
                .gold
                .iter()
                .map(|(id, g)| {
                    let k = s.ids.iter().position(|x| x == id);
                    let pred = k.map(|k| tokens(&r.texts[k])).unwrap_or_default();
                    prf(&pred, g)
                })
                .collect();
            SiteScores {
                site: s.name.clone(),
                pages,
            }
        })
        .collect();
    let m = summarise(&scores).macro_;
    (m.p, m.f1)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let datasets: Vec<Vec<Site>> = std::env::args()
        .skip(1)
        .map(|d| load(Path::new(&d)))
        .collect::<Result<_, _>>()?;
    let run = |label: String, clean: &dyn Fn(&[Dom]) -> SiteResult| {
        let mut line = format!("{label:42}");
        for sites in &datasets {
            let (p, f1) = score(sites, clean);
            line += &format!("  P {p:.3} F1 {f1:.3}");
        }
        println!("{line}");
    };
    for lower in [0.02, 0.05, 0.1, 0.2, 0.5] {
        for upper in [1.0, 2.0, f64::INFINITY] {
            let p = node_hash::Params {
                lower,
                upper,
                ..Default::default()
            };
            run(format!("node-hash lower {lower} upper {upper}"), &|d| {
                node_hash::clean_site(d, &p)
            });
        }
    }
    for window in [4, 8, 16] {
        for min_pages in [3, 5, 10] {
            for modulus in [1, 4] {
                let p = shingles::Params {
                    window,
                    min_pages,
                    modulus,
                    ..Default::default()
                };
                let label = format!("shingles W {window} F {min_pages}/{} D {modulus}", p.sample);
                run(label, &|d| shingles::clean_site(d, &p));
            }
        }
    }
    for max_share in [0.05, 0.1, 0.2, 0.5] {
        let p = table_chunks::Params {
            max_share,
            ..Default::default()
        };
        run(format!("table-chunks share {max_share}"), &|d| {
            table_chunks::clean_site(d, &p)
        });
        let p = table_chunks::Params {
            boundaries: BLOCKS,
            ..p
        };
        run(
            format!("table-chunks share {max_share} (block tags)"),
            &|d| table_chunks::clean_site(d, &p),
        );
    }
    Ok(())
}

/// A variant outside the method: every block element delimits chunks, not only table tags.
const BLOCKS: &[&str] = &[
    "table",
    "caption",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "td",
    "th",
    "div",
    "p",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "dl",
    "dt",
    "dd",
    "blockquote",
    "form",
    "br",
];
