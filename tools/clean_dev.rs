//! Dev-only harness for the cleaner (never product code): runs the engine over a dataset with the
//! real clustering, an "oracle" grouping taken from file names (big9's `<era>-` prefix), or every
//! page alone (`--singletons`: no template, the cleaner as a single-page extractor); dumps a
//! page's blocks next to the gold text, or audits kept/dropped tokens against the gold.
//!
//!   cargo run --release --example clean_dev -- run DATASET OUT [--oracle | --singletons]
//!       [--without=COMPONENT,…]   (ablation: components of `Features::NAMES` turned off)
//!       [--frame=PERCENT]         (the site-mode region's share, for leave-one-out figures)
//!       [--page-frame=PERCENT]    (the page-mode region's share, likewise)
//!       [--articles=PERCENT]      (the share a cluster needs to read as articles, likewise)
//!       [--embedded-prose=TOKENS] [--short-repeated=TOKENS]   (those constants, likewise)
//!   cargo run --release --example clean_dev -- audit DATASET [--oracle] [--without=…]
//!   cargo run --release --example clean_dev -- dump DATASET SITE PAGE [--oracle] [--without=…]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use thresher::dom::{paths::path_string, Dom};
use thresher::template::clean::ClusterModel;
use thresher::template::content::features::Features;
use thresher::template::content::tokens;
use thresher::template::engine::{clean_clusters_with, essential_sets};
use thresher::template::{cluster::cluster, support, Algorithm, Clustering, Renders};

fn pages(site: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    files
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn clustering(files: &[PathBuf], essential: &[Vec<u64>], oracle: bool) -> Clustering {
    if std::env::args().any(|a| a == "--singletons") {
        return Clustering {
            clusters: (0..files.len() as u32).map(|i| vec![i]).collect(),
        };
    }
    if !oracle {
        return cluster(essential, Algorithm::default());
    }
    let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        let s = stem(f);
        let key = s
            .split_once('-')
            .map_or(String::new(), |(a, _)| a.to_string());
        groups.entry(key).or_default().push(i as u32);
    }
    Clustering {
        clusters: groups.into_values().collect(),
    }
}

fn load(site: &Path) -> (Vec<PathBuf>, Vec<Dom>) {
    let files = pages(site);
    let doms = files
        .iter()
        .map(|f| thresher::dom::parse_bytes(&std::fs::read(f).unwrap(), None).dom)
        .collect();
    (files, doms)
}

fn run(dataset: &Path, out: &Path, oracle: bool) {
    let mut sites: Vec<PathBuf> = std::fs::read_dir(dataset)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    sites.sort();
    for site in sites {
        let (files, doms) = load(&site);
        let essential = essential_sets(&doms);
        let c = clustering(&files, &essential, oracle);
        let n = c.clusters.len();
        let r = clean_clusters_with(&doms, &essential, c, features(), Renders::Text);
        let dir = out.join(site.file_name().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        for (f, t) in files.iter().zip(&r.texts) {
            std::fs::write(dir.join(stem(f) + ".txt"), t).unwrap();
        }
        eprintln!("{}: {} pages, {n} clusters", site.display(), files.len());
    }
}

/// Bag of token bigrams (a unigram for one-token texts): short nav text no longer matches the
/// gold through common words alone.
fn token_bag(text: &str) -> HashMap<String, u32> {
    let toks = token_list(text);
    let mut bag = HashMap::new();
    if toks.len() == 1 {
        bag.insert(toks[0].clone(), 1);
    }
    for w in toks.windows(2) {
        *bag.entry(format!("{} {}", w[0], w[1])).or_insert(0) += 1;
    }
    bag
}

fn token_list(text: &str) -> Vec<String> {
    let mut bag = Vec::new();
    let mut word = String::new();
    let flush = |w: &mut String, bag: &mut Vec<String>| {
        if !w.is_empty() {
            bag.push(std::mem::take(w));
        }
    };
    for c in text.to_lowercase().chars() {
        if tokens::is_cjk(c) {
            flush(&mut word, &mut bag);
            bag.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut bag);
        }
    }
    flush(&mut word, &mut bag);
    bag
}

fn audit(dataset: &Path, oracle: bool) {
    let mut sites: Vec<PathBuf> = std::fs::read_dir(dataset)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    sites.sort();
    // (site, kind, container desc) -> (tokens, blocks, example)
    let mut agg: BTreeMap<(String, &str, String), (u32, u32, String)> = BTreeMap::new();
    for site in sites {
        let (files, doms) = load(&site);
        let essential = essential_sets(&doms);
        let c = clustering(&files, &essential, oracle);
        let sname = site.file_name().unwrap().to_string_lossy().into_owned();
        for at in 0..files.len() {
            for row in annotate(&site, &files, &doms, &essential, &c, at) {
                let kind = match (row.kept, row.gold >= 0.5) {
                    (true, false) => "FP",
                    (false, true) if row.own > 0 && row.tmpl == 0 => "FN",
                    _ => continue,
                };
                let e = agg
                    .entry((sname.clone(), kind, row.desc.clone()))
                    .or_insert((0, 0, String::new()));
                e.0 += row.own;
                e.1 += 1;
                if e.2.is_empty() {
                    e.2 = format!(
                        "{}: {}",
                        stem(&files[at]),
                        row.text.chars().take(70).collect::<String>()
                    );
                }
            }
        }
    }
    let mut rows: Vec<_> = agg.into_iter().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1 .0));
    for ((site, kind, desc), (tok, n, ex)) in rows.into_iter().take(60) {
        println!(
            "{kind} {site:<24} {tok:>6} {n:>4} {:<34} {ex}",
            desc.chars().take(34).collect::<String>()
        );
    }
}

struct Row {
    kept: bool,
    gold: f64,
    own: u32,
    tmpl: u32,
    desc: String,
    text: String,
    line: String,
}

fn annotate(
    site: &Path,
    files: &[PathBuf],
    doms: &[Dom],
    essential: &[Vec<u64>],
    c: &Clustering,
    at: usize,
) -> Vec<Row> {
    let page = stem(&files[at]);
    let members = c
        .clusters
        .iter()
        .find(|m| m.contains(&(at as u32)))
        .unwrap();
    let template = support::template(members.iter().map(|&i| essential[i as usize].as_slice()));
    let pages: Vec<&Dom> = members.iter().map(|&i| &doms[i as usize]).collect();
    // The components `--without=` leaves on, as `run` cleans with.
    let model = ClusterModel::learn_and_clean_with(&pages, &template, features()).0;
    let dom = &doms[at];
    let gold = std::fs::read_to_string(site.join(format!("{page}.gold.txt"))).unwrap_or_default();
    let gold = token_bag(&gold);
    let (blocks, kept) = model.kept_blocks(dom);
    let mut rows = Vec::new();
    for (bi, b) in blocks.blocks.iter().enumerate() {
        let text: String = blocks
            .nodes_of(b)
            .iter()
            .map(|&i| dom.text(i as usize).unwrap().text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let bag = token_bag(&text);
        let total: u32 = bag.values().sum();
        let hit: u32 = bag
            .iter()
            .map(|(k, v)| (*v).min(*gold.get(k).unwrap_or(&0)))
            .sum();
        let g = if total == 0 {
            0.0
        } else {
            hit as f64 / total as f64
        };
        let el = dom.element(b.container as usize);
        let desc = el.map_or(String::new(), |e| {
            format!(
                "{}{}{}",
                e.tag,
                e.id.as_ref().map_or(String::new(), |x| format!("#{x}")),
                e.class
                    .as_ref()
                    .map_or(String::new(), |x| format!(".{}", x.replace(' ', ".")))
            )
        });
        let short: String = text.chars().take(90).collect();
        let line = format!(
            "{}{:>3} g={:.2} t={:<4} l={:<3} tp={:<3} r={:<3} p={:<3} {:<30} | {}",
            if kept[bi] { "+" } else { " " },
            bi,
            g,
            b.tokens,
            b.link_tokens,
            b.template_tokens,
            b.repeated_tokens,
            b.punct,
            desc.chars().take(30).collect::<String>(),
            short
        );
        rows.push(Row {
            kept: kept[bi],
            gold: g,
            own: b.own_tokens(),
            tmpl: b.template_tokens,
            desc,
            text,
            line,
        });
    }
    if let Ok(b) = std::env::var("CHAIN") {
        let b: usize = b.parse().unwrap();
        let scores = thresher::template::content::region::subtree_scores(
            dom,
            &blocks,
            &thresher::template::content::region::furniture_blocks(dom, &blocks),
        );
        let first = blocks.nodes_of(&blocks.blocks[b])[0] as usize;
        for a in dom.ancestors(first) {
            let e = dom.element(a);
            println!(
                "  {a:>6} {:>8} {} #{:?} .{:?} end={}",
                scores[a] / 100,
                e.map_or("doc", |e| &*e.tag),
                e.and_then(|e| e.id.clone()),
                e.and_then(|e| e.class.clone()),
                dom.nodes[a].end
            );
        }
    }
    if std::env::var("PATHS").is_ok() {
        for b in &blocks.blocks {
            println!("{}", path_string(dom, b.container as usize));
        }
    }
    rows
}

fn dump(dataset: &Path, site: &str, page: &str, oracle: bool) {
    let (files, doms) = load(&dataset.join(site));
    let essential = essential_sets(&doms);
    let c = clustering(&files, &essential, oracle);
    let at = files.iter().position(|f| stem(f) == page).expect("page");
    for row in annotate(&dataset.join(site), &files, &doms, &essential, &c, at) {
        println!("{}", row.line);
    }
}

/// `Features::ALL` less the components named by `--without=a,b`.
fn features() -> Features {
    let mut f = Features::ALL;
    for arg in std::env::args() {
        if let Some(names) = arg.strip_prefix("--without=") {
            for name in names.split(',') {
                f = f
                    .without(name)
                    .unwrap_or_else(|| panic!("unknown component {name:?}: {:?}", Features::NAMES));
            }
        }
        if let Some(pct) = arg.strip_prefix("--frame=") {
            f.frame_percent = pct.parse().expect("--frame=PERCENT");
        }
        if let Some(pct) = arg.strip_prefix("--page-frame=") {
            f.page_frame_percent = pct.parse().expect("--page-frame=PERCENT");
        }
        if let Some(pct) = arg.strip_prefix("--articles=") {
            f.articles_percent = pct.parse().expect("--articles=PERCENT");
        }
        if let Some(n) = arg.strip_prefix("--embedded-prose=") {
            f.embedded_prose = n.parse().expect("--embedded-prose=TOKENS");
        }
        if let Some(n) = arg.strip_prefix("--short-repeated=") {
            f.short_repeated = n.parse().expect("--short-repeated=TOKENS");
        }
    }
    f
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let oracle = args.iter().any(|a| a == "--oracle");
    let args: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    match args.first().map(|s| s.as_str()) {
        Some("run") => run(Path::new(args[1]), Path::new(args[2]), oracle),
        Some("audit") => audit(Path::new(args[1]), oracle),
        Some("dump") => dump(Path::new(args[1]), args[2], args[3], oracle),
        _ => eprintln!(
            "usage: clean_dev run DATASET OUT [--oracle] | dump DATASET SITE PAGE [--oracle]"
        ),
    }
}
