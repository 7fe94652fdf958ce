//! Quality through the crawl (issue 4): serve every site of a dataset from its own origin on
//! 127.0.0.1 (each page at `/<page id>.html` with its stored bytes and a bare `text/html`
//! Content-Type, plus a `noindex, follow` index page at `/` linking every page), crawl them with
//! the release `thresher crawl`, map the output back to dataset page ids and score it with
//! `score.py` beside `thresher clean` on the same files. The index page is not stored, so each
//! host's crawled pages are exactly the dataset's pages and the crawl's end-of-crawl pass must
//! write what `clean` writes: the harness counts the pages whose texts differ (expected: 0).
//! It also cleans the dataset a second time with the files renamed into another order, so the
//! engine's order independence is checked directly. See docs/inline-learning.md.
//!
//! cargo bench --bench crawl_quality -- ../shared/datasets/xmu-cn-news [--keep DIR] [--bin PATH]

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "crawl/procfs.rs"]
mod procfs;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use xxhash_rust::xxh3::xxh3_64;

use support::{write_config, write_seeds, Endpoint, TestServer};

/// Differing pages listed in full (the count covers all of them).
const SHOW_DIFFS: usize = 10;

#[derive(Debug, Parser)]
#[command(
    name = "crawl-quality",
    about = "Crawl a dataset served locally and score the output beside `thresher clean`."
)]
struct Args {
    /// Datasets: DATASET/<site>/<page id>.html + .gold.txt (default: the two dev datasets).
    datasets: Vec<PathBuf>,
    /// The thresher binary (default: the release binary cargo built for this bench).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// The scorer.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/eval/score.py"))]
    score: PathBuf,
    #[arg(long, default_value = "python3")]
    python: String,
    /// Kill the crawler after this long.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10m")]
    timeout: Duration,
    /// Keep the work directories (seeds, config, store, outputs) under DIR/<dataset name>
    /// instead of temporary ones.
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// One site of the dataset: its directory name and its pages (id = file stem, bytes as stored).
struct DataSite {
    name: String,
    dir: PathBuf,
    pages: Vec<(String, Bytes)>,
}

/// Datasets run when none is given, under ../shared/datasets.
const DEV_DATASETS: [&str; 2] = ["xmu-cn-news", "big9-news"];

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("crawl_quality: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    let bin = args.bin.clone().unwrap_or_else(support::thresher_bin);
    if !bin.is_file() {
        return Err(format!(
            "thresher binary {} not found: run `cargo build --release` (or pass --bin PATH)",
            bin.display()
        ));
    }
    if !args.score.is_file() {
        return Err(format!(
            "scorer {} not found (pass --score PATH)",
            args.score.display()
        ));
    }
    let datasets = if args.datasets.is_empty() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
        DEV_DATASETS.iter().map(|d| root.join(d)).collect()
    } else {
        args.datasets.clone()
    };
    let mut code = ExitCode::SUCCESS;
    for dataset in &datasets {
        println!("== {}", dataset.display());
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let work = match &args.keep {
            Some(k) => k.join(dir_name(dataset)),
            None => tmp.path().to_path_buf(),
        };
        std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
        if !run_dataset(&args, &bin, dataset, &work)? {
            code = ExitCode::from(1);
        }
        if args.keep.is_some() {
            println!("kept {}", work.display());
        }
        println!();
    }
    Ok(code)
}

/// Crawl, clean and score one dataset; true when the crawl succeeded and its output equals
/// `clean`'s.
fn run_dataset(args: &Args, bin: &Path, dataset: &Path, work: &Path) -> Result<bool, String> {
    let sites = load_dataset(dataset)?;

    let server = TestServer::background(sites.len(), 1);
    for (site, origin) in sites.iter().zip(server.origins()) {
        origin.set_fallback(site_endpoint(site));
    }
    let crawl_out = work.join("crawl-out");
    let run = crawl(args, bin, &server, &sites, work, &crawl_out)?;
    println!(
        "crawl: {}, {:.1} s wall, {:.1} s CPU, peak RSS {:.0} MB, {} requests ({} to URLs outside the dataset: links in its pages)",
        run.status,
        run.wall.as_secs_f64(),
        run.cpu.as_secs_f64(),
        run.peak_kib as f64 / 1024.0,
        server.total_hits(),
        misses(&sites, &server)
    );
    let crawl_pred = work.join("crawl-pred");
    let ports: HashMap<u16, &str> = server
        .origins()
        .iter()
        .zip(&sites)
        .map(|(o, s)| (o.port(), s.name.as_str()))
        .collect();
    let unmapped = map_crawl_output(&crawl_out, &ports, &crawl_pred)?;
    drop(server);

    let clean_pred = work.join("clean-pred");
    clean(bin, sites.iter().map(|s| s.dir.clone()), &clean_pred)?;
    let shuffled_pred = work.join("clean-shuffled-pred");
    clean_shuffled(bin, &sites, &work.join("shuffled"), &shuffled_pred)?;

    let crawl_table = score(args, dataset, &crawl_pred)?;
    let clean_table = score(args, dataset, &clean_pred)?;
    print_side_by_side(&crawl_table, &clean_table);

    let crawl_vs_clean = compare(&sites, &crawl_pred, &clean_pred);
    let order = compare(&sites, &shuffled_pred, &clean_pred);
    let total: usize = sites.iter().map(|s| s.pages.len()).sum();
    println!();
    println!(
        "crawl output: {} of {total} dataset pages written, {} other pages",
        total - crawl_vs_clean.missing_a,
        unmapped.len()
    );
    for u in unmapped.iter().take(SHOW_DIFFS) {
        println!("  other: {u}");
    }
    crawl_vs_clean.print("crawl vs clean", total);
    order.print("clean (files in another order) vs clean", total);
    let same = crawl_vs_clean.is_clean() && order.is_clean() && unmapped.is_empty();
    Ok(same && run.status.success())
}

/// Requests for anything but the dataset's pages, `/` and robots.txt (links in the pages).
fn misses(sites: &[DataSite], server: &TestServer) -> usize {
    let mut n = 0;
    for (site, origin) in sites.iter().zip(server.origins()) {
        let known: HashSet<String> = site
            .pages
            .iter()
            .map(|(id, _)| format!("/{id}.html"))
            .chain(["/".into(), "/robots.txt".into()])
            .collect();
        n += origin
            .hit_counts()
            .iter()
            .filter(|(target, _)| !known.contains(*target))
            .map(|(_, hits)| hits)
            .sum::<usize>();
    }
    n
}

fn load_dataset(dir: &Path) -> Result<Vec<DataSite>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "dataset directory {}: {e} (expected DATASET/<site>/<page>.html, e.g. ../shared/datasets/xmu-cn-news)",
            dir.display()
        )
    })?;
    let mut site_dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    site_dirs.sort();
    let (mut sites, mut gold) = (Vec::new(), 0);
    for sdir in site_dirs {
        let mut pages = Vec::new();
        for e in std::fs::read_dir(&sdir).map_err(|e| format!("{}: {e}", sdir.display()))? {
            let path = e.map_err(|e| e.to_string())?.path();
            gold += usize::from(path.to_string_lossy().ends_with(".gold.txt"));
            if path.extension().and_then(|x| x.to_str()) != Some("html") {
                continue;
            }
            let id = stem(&path);
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            pages.push((id, Bytes::from(bytes)));
        }
        if pages.is_empty() {
            continue;
        }
        pages.sort_by(|a, b| a.0.cmp(&b.0));
        sites.push(DataSite {
            name: dir_name(&sdir),
            dir: sdir,
            pages,
        });
    }
    if gold == 0 {
        return Err(format!(
            "no site directory with *.html and *.gold.txt under {}: not a dataset",
            dir.display()
        ));
    }
    Ok(sites)
}

fn dir_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `/<id>.html` for every page (bare `text/html`: the charset comes from the bytes, as in
/// `clean`), a `noindex, follow` index at `/`, and a robots.txt that allows everything. Only
/// these exact targets are served: anything else, `/<id>.html?print=true` included (pages link
/// such variants), is a 404, so no page is stored twice under two URLs.
fn site_endpoint(site: &DataSite) -> Endpoint {
    let mut index = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\
         <meta name=\"robots\" content=\"noindex, follow\"><title>index</title></head><body><ul>\n",
    );
    let mut routes: HashMap<String, Endpoint> = HashMap::new();
    for (id, bytes) in &site.pages {
        index.push_str(&format!("<li><a href=\"/{id}.html\">{id}</a></li>\n"));
        routes.insert(
            format!("/{id}.html"),
            Endpoint::typed("text/html", bytes.clone()),
        );
    }
    index.push_str("</ul></body></html>\n");
    routes.insert("/".into(), Endpoint::typed("text/html", index));
    routes.insert(
        "/robots.txt".into(),
        Endpoint::text("User-agent: *\nAllow: /\n"),
    );
    Endpoint::dynamic(move |target| {
        routes
            .get(target)
            .cloned()
            .unwrap_or_else(Endpoint::not_found)
    })
}

/// What the crawler process came to.
struct CrawlRun {
    status: std::process::ExitStatus,
    wall: Duration,
    cpu: Duration,
    peak_kib: u64,
}

/// Run `thresher crawl` over every origin.
fn crawl(
    args: &Args,
    bin: &Path,
    server: &TestServer,
    sites: &[DataSite],
    work: &Path,
    out: &Path,
) -> Result<CrawlRun, String> {
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let seeds_file = write_seeds(work, &seeds);
    // Room above the biggest site, so that stray pages would show up rather than be cut off.
    let per_host = sites.iter().map(|s| s.pages.len()).max().unwrap_or(0) * 2 + 10;
    let config = write_config(
        work,
        &format!("[crawl]\nmax_pages = 0\nmax_pages_per_host = {per_host}\n"),
    );
    let log = std::fs::File::create(work.join("crawl.log")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    cmd.arg("crawl")
        .arg("--seeds")
        .arg(&seeds_file)
        .arg("--data")
        .arg(work.join("data"))
        .arg("--out")
        .arg(out)
        .args(["--delay", "0ms", "--max-depth", "2", "--quiet"])
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    eprintln!("running: {cmd:?}");
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", bin.display()))?;
    let (mut peak_kib, mut cpu) = (0, Duration::ZERO);
    let status = loop {
        if let Some(k) = procfs::peak_rss_kib(child.id()) {
            peak_kib = k.max(peak_kib);
        }
        if let Some(c) = procfs::cpu_time(&child.id().to_string()) {
            cpu = c.max(cpu);
        }
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > args.timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "crawler still running after {:?}: killed",
                args.timeout
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(CrawlRun {
        status,
        wall: started.elapsed(),
        cpu,
        peak_kib,
    })
}

/// Copy `OUT/<site dir>/<page id hex>.txt` to `PRED/<dataset site>/<dataset page id>.txt`
/// through each site's index.tsv (URL path `/<id>.html`, port → site). Returns the output
/// pages that are not dataset pages.
fn map_crawl_output(
    out: &Path,
    ports: &HashMap<u16, &str>,
    pred: &Path,
) -> Result<Vec<String>, String> {
    let mut other = Vec::new();
    let dirs =
        std::fs::read_dir(out).map_err(|e| format!("crawl output {}: {e}", out.display()))?;
    for dir in dirs.filter_map(|e| e.ok().map(|e| e.path())) {
        let tsv_path = dir.join("index.tsv");
        let tsv = std::fs::read_to_string(&tsv_path)
            .map_err(|e| format!("{}: {e}", tsv_path.display()))?;
        for line in tsv.lines().skip(1) {
            let Some((hex, raw)) = line.split_once('\t') else {
                continue;
            };
            let url = url::Url::parse(raw).map_err(|e| format!("{raw}: {e}"))?;
            let site = url.port().and_then(|p| ports.get(&p));
            let id = url
                .path()
                .strip_prefix('/')
                .and_then(|p| p.strip_suffix(".html"));
            let (Some(site), Some(id), None) = (site, id, url.query()) else {
                other.push(raw.to_string());
                continue;
            };
            let to = pred.join(site);
            std::fs::create_dir_all(&to).map_err(|e| e.to_string())?;
            let from = dir.join(format!("{hex}.txt"));
            std::fs::copy(&from, to.join(format!("{id}.txt")))
                .map_err(|e| format!("{}: {e}", from.display()))?;
        }
    }
    Ok(other)
}

fn clean(bin: &Path, dirs: impl Iterator<Item = PathBuf>, out: &Path) -> Result<(), String> {
    let mut cmd = Command::new(bin);
    cmd.arg("clean")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .stdout(Stdio::null());
    let status = cmd
        .status()
        .map_err(|e| format!("spawn {}: {e}", bin.display()))?;
    if !status.success() {
        return Err(format!("{cmd:?}: {status}"));
    }
    Ok(())
}

/// `clean` over symlinks named `<hash>_<id>.html`, which sort in another order than the
/// dataset's names; the outputs are moved back to `PRED/<site>/<id>.txt`.
fn clean_shuffled(bin: &Path, sites: &[DataSite], links: &Path, pred: &Path) -> Result<(), String> {
    let raw = links.with_extension("out");
    for site in sites {
        let dir = links.join(&site.name);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        for (id, _) in &site.pages {
            let target = std::fs::canonicalize(site.dir.join(format!("{id}.html")))
                .map_err(|e| e.to_string())?;
            let name = format!("{:016x}_{id}.html", xxh3_64(id.as_bytes()));
            std::os::unix::fs::symlink(target, dir.join(name)).map_err(|e| e.to_string())?;
        }
    }
    clean(bin, sites.iter().map(|s| links.join(&s.name)), &raw)?;
    for site in sites {
        let to = pred.join(&site.name);
        std::fs::create_dir_all(&to).map_err(|e| e.to_string())?;
        for (id, _) in &site.pages {
            let name = format!("{:016x}_{id}.txt", xxh3_64(id.as_bytes()));
            let from = raw.join(&site.name).join(name);
            if from.exists() {
                std::fs::rename(&from, to.join(format!("{id}.txt"))).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

/// score.py's table: (row name, [pages, P, R, F1]).
type Table = Vec<(String, [String; 4])>;

fn score(args: &Args, dataset: &Path, pred: &Path) -> Result<Table, String> {
    let out = Command::new(&args.python)
        .arg(&args.score)
        .arg(dataset)
        .arg(pred)
        .output()
        .map_err(|e| format!("run {} {}: {e}", args.python, args.score.display()))?;
    if !out.status.success() {
        return Err(format!(
            "score.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .skip(1)
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let n = words.len().checked_sub(4)?;
            let cells: [String; 4] = std::array::from_fn(|i| words[n + i].to_string());
            Some((words[..n].join(" "), cells))
        })
        .collect())
}

fn print_side_by_side(crawl: &Table, clean: &Table) {
    let row = |name: &str, pages: &str, a: [&str; 3], b: [&str; 3]| {
        println!(
            "{name:32} {pages:>5} | {:>6} {:>6} {:>6} | {:>6} {:>6} {:>6}",
            a[0], a[1], a[2], b[0], b[1], b[2]
        );
    };
    println!();
    row("", "", ["crawl", "", ""], ["clean", "", ""]);
    row("site", "pages", ["P", "R", "F1"], ["P", "R", "F1"]);
    for (name, a) in crawl {
        let b = clean
            .iter()
            .find(|(n, _)| n == name)
            .map_or(["-"; 3], |(_, b)| [&b[1], &b[2], &b[3]].map(String::as_str));
        row(name, &a[0], [&a[1], &a[2], &a[3]].map(String::as_str), b);
    }
}

/// Per-page comparison of two prediction trees over the dataset's pages.
#[derive(Default)]
struct Diff {
    same: usize,
    /// (site/page, first differing line of each side).
    differ: Vec<(String, String, String)>,
    missing_a: usize,
    missing_b: usize,
}

impl Diff {
    fn is_clean(&self) -> bool {
        self.differ.is_empty() && self.missing_a == 0 && self.missing_b == 0
    }

    fn print(&self, what: &str, total: usize) {
        println!(
            "{what}: {} of {total} pages identical, {} differ, {} missing on the left, {} on the right",
            self.same,
            self.differ.len(),
            self.missing_a,
            self.missing_b
        );
        for (page, a, b) in self.differ.iter().take(SHOW_DIFFS) {
            println!("  {page}: first difference\n    < {a}\n    > {b}");
        }
    }
}

fn compare(sites: &[DataSite], a: &Path, b: &Path) -> Diff {
    let mut diff = Diff::default();
    for site in sites {
        for (id, _) in &site.pages {
            let read = |root: &Path| {
                std::fs::read_to_string(root.join(&site.name).join(format!("{id}.txt"))).ok()
            };
            match (read(a), read(b)) {
                (None, _) => diff.missing_a += 1,
                (_, None) => diff.missing_b += 1,
                (Some(x), Some(y)) if x == y => diff.same += 1,
                (Some(x), Some(y)) => {
                    let (xs, ys): (Vec<&str>, Vec<&str>) =
                        (x.lines().collect(), y.lines().collect());
                    let first = (0..=xs.len().max(ys.len()))
                        .find(|&i| xs.get(i) != ys.get(i))
                        .unwrap_or(0);
                    let (la, lb) = (xs.get(first).copied(), ys.get(first).copied());
                    let show = |l: Option<&str>| {
                        l.map_or("<end>".to_string(), |l| l.chars().take(100).collect())
                    };
                    diff.differ
                        .push((format!("{}/{id}", site.name), show(la), show(lb)));
                }
            }
        }
    }
    diff
}
