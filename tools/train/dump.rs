//! Writes the content classifier's training data: every block of every page of the given
//! datasets (`DIR/<site>/<page>.html` + `.gold.txt`), with the features cleaning computes for it
//! (`ClusterModel::block_features`, after the same clustering `thresher clean` runs) and how
//! much of its text the gold holds.
//!
//!     cargo run --release --example train_dump -- OUT.tsv DATASET_DIR...
//!
//! A row per block: dataset, site, page, block, tokens, covered, then the features
//! (`classify::names` order). `covered` counts the block's tokens that lie in a run of four
//! tokens found in the gold text (windows may cross into neighbouring blocks, so a heading
//! followed by its gold paragraph counts; a menu word that the gold happens to contain does
//! not). Tokens are score.py's. `tools/train/train.py` reads the file.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use thresher::dom::{parse_bytes, Dom, NodeKind};
use thresher::eval::dataset::Dataset;
use thresher::eval::metric::token_list;
use thresher::template::cluster::{cluster, Algorithm};
use thresher::template::content::classify;
use thresher::template::content::features::Features;
use thresher::template::engine::{essential_sets, learn_cluster_with};

const N: usize = 4;

fn hash(tokens: &[String]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for t in tokens {
        h.update(t.as_bytes());
        h.update(&[0]);
    }
    h.digest()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out_path = PathBuf::from(
        args.next()
            .ok_or("usage: train_dump OUT.tsv DATASET_DIR...")?,
    );
    let mut out = std::io::BufWriter::new(std::fs::File::create(&out_path)?);
    let rules_only = Features::ALL
        .without("classifier")
        .expect("invariant: the classifier is a component");
    write!(out, "dataset\tsite\tpage\tblock\teval_tokens\tcovered")?;
    for g in ["g_item", "g_run", "g_container", "g_up1", "g_up3"] {
        write!(out, "\t{g}")?;
    }
    for n in classify::names() {
        write!(out, "\t{n}")?;
    }
    writeln!(out, "\ttext")?;
    for dir in args {
        let dataset = Dataset::open(std::path::Path::new(&dir))?;
        let name = dataset
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for site in &dataset.sites {
            let doms: Vec<Dom> = site
                .html
                .iter()
                .map(|(_, p)| std::fs::read(p).map(|b| parse_bytes(&b, None).dom))
                .collect::<Result<_, _>>()?;
            let essential = essential_sets(&doms);
            let clustering = cluster(&essential, Algorithm::TextMax);
            for members in &clustering.clusters {
                let pages: Vec<&Dom> = members.iter().map(|&i| &doms[i as usize]).collect();
                let sets: Vec<&[u64]> = members
                    .iter()
                    .map(|&i| essential[i as usize].as_slice())
                    .collect();
                // Learned without the classifier: nothing learned depends on its output, and
                // the dump must not need a model for features it is about to be trained on.
                let (_, model) = learn_cluster_with(&pages, &sets, rules_only);
                for &i in members {
                    let (stem, _) = &site.html[i as usize];
                    let Some((_, gold_path)) = site.gold.iter().find(|(g, _)| g == stem) else {
                        continue;
                    };
                    let gold = token_list(&std::fs::read_to_string(gold_path).unwrap_or_default());
                    let windows: HashSet<u64> = if gold.len() >= N {
                        gold.windows(N).map(hash).collect()
                    } else {
                        gold.iter().map(|t| hash(std::slice::from_ref(t))).collect()
                    };
                    let dom = &doms[i as usize];
                    let (blocks, described) = model.block_features(dom);
                    let features = described.rows;
                    // The page's token stream, block by block.
                    let mut stream: Vec<String> = Vec::new();
                    let mut owner: Vec<usize> = Vec::new();
                    let mut texts: Vec<String> = Vec::new();
                    for (k, b) in blocks.blocks.iter().enumerate() {
                        let mut text = String::new();
                        for &n in blocks.nodes_of(b) {
                            if let NodeKind::Text(t) = &dom.nodes[n as usize].kind {
                                text.push_str(&t.text);
                                text.push(' ');
                            }
                        }
                        let shown: String = text
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                            .chars()
                            .take(100)
                            .collect();
                        texts.push(shown.replace(['\t', '"'], " "));
                        for t in token_list(&text) {
                            stream.push(t);
                            owner.push(k);
                        }
                    }
                    let mut covered = vec![false; stream.len()];
                    if gold.len() >= N {
                        for j in 0..stream.len().saturating_sub(N - 1) {
                            if windows.contains(&hash(&stream[j..j + N])) {
                                covered[j..j + N].iter_mut().for_each(|c| *c = true);
                            }
                        }
                    } else {
                        for (j, t) in stream.iter().enumerate() {
                            covered[j] = windows.contains(&hash(std::slice::from_ref(t)));
                        }
                    }
                    let mut tokens = vec![0u32; blocks.blocks.len()];
                    let mut hit = vec![0u32; blocks.blocks.len()];
                    for (j, &k) in owner.iter().enumerate() {
                        tokens[k] += 1;
                        hit[k] += u32::from(covered[j]);
                    }
                    let w = classify::width();
                    for (k, row) in features.chunks_exact(w).enumerate() {
                        write!(
                            out,
                            "{name}\t{}\t{stem}\t{k}\t{}\t{}",
                            site.name, tokens[k], hit[k]
                        )?;
                        for g in described.groups[k] {
                            write!(
                                out,
                                "\t{}",
                                if g == classify::NONE {
                                    -1
                                } else {
                                    i64::from(g)
                                }
                            )?;
                        }
                        for v in row {
                            write!(out, "\t{v}")?;
                        }
                        writeln!(out, "\t{}", texts[k])?;
                    }
                }
            }
        }
        eprintln!("{name}: done");
    }
    out.flush()?;
    Ok(())
}
