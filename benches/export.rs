//! The export benchmark (issue 14): a store of generated news pages with planted duplicates
//! (`tests/support/corpus.rs`: pages committed as the crawler commits them, every site cleaned by
//! the end-of-crawl pass), then the release `thresher export` run on it as a child process in
//! several configurations, measuring wall time and peak RSS (the child's /proc VmHWM, polled).
//! `--figure dedup` instead scores near-duplicate detection against the planted copies, on
//! cleaned text (the export) and on whole-page text (the same dedup code). See docs/export.md.
//!
//! cargo bench --bench export -- [--sites 100 --articles 1000 --dups 2000 --keep DIR]
//! cargo bench --bench export -- --figure dedup [--sites 10 --articles 150 --dups 300]

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "crawl/procfs.rs"]
mod procfs;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

use support::corpus::{clean_all, raw_text_flags, store_pages, DupSpec, DupUniverse, Score};
use support::thresher_bin;
use thresher::store::Store;

#[derive(Debug, Parser)]
#[command(
    name = "export-bench",
    about = "Measure thresher export on a generated store."
)]
struct Args {
    /// Sites (one template each).
    #[arg(long, default_value_t = 100)]
    sites: usize,
    /// Articles per site.
    #[arg(long, default_value_t = 1000)]
    articles: usize,
    /// Planted copies: half republished on another site, half a second URL on the same site.
    #[arg(long, default_value_t = 2000)]
    dups: usize,
    /// `dedup`: the precision/recall figure instead of the speed run.
    #[arg(long)]
    figure: Option<String>,
    #[arg(long, default_value_t = 14)]
    seed: u64,
    /// Keep the store here (and reuse it when it exists); default: a temporary directory.
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.figure.as_deref() {
        None => speed(&args),
        Some("dedup") => figure(&args),
        Some(other) => Err(format!("unknown --figure {other:?} (known: dedup)")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("export bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn spec(args: &Args) -> DupSpec {
    DupSpec {
        seed: args.seed,
        sites: args.sites,
        articles: args.articles,
        syndicated: args.dups / 2,
        churned: args.dups - args.dups / 2,
        nav: 30,
    }
}

/// The store at `dir/data` for `u` (built unless it is there already).
fn build(dir: &Path, u: &DupUniverse) -> Result<(), String> {
    let data = dir.join("data");
    if data.join(thresher::store::MARKER).exists() {
        println!("reusing the store in {}", data.display());
        return Ok(());
    }
    let started = Instant::now();
    let store = Store::open(&data, 64 << 20).map_err(|e| e.to_string())?;
    for chunk in u.pages.chunks(5000) {
        store_pages(&store, chunk);
    }
    clean_all(&store, &dir.join("out"));
    store.flush().map_err(|e| e.to_string())?;
    println!(
        "built a store of {} pages ({} planted copies) in {:.0} s: {:.0} MB on disk",
        u.pages.len(),
        u.planted,
        started.elapsed().as_secs_f64(),
        store.size_on_disk() as f64 / 1e6
    );
    Ok(())
}

fn workdir(args: &Args) -> Result<(Option<tempfile::TempDir>, PathBuf), String> {
    match &args.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            Ok((None, dir.clone()))
        }
        None => {
            let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
            let dir = tmp.path().to_path_buf();
            Ok((Some(tmp), dir))
        }
    }
}

/// One child run of `thresher export`: wall time, peak RSS, stderr's summary line.
struct Run {
    wall: Duration,
    /// The child's user + system time, last read before it exited.
    cpu: Duration,
    peak_mb: f64,
    summary: String,
}

fn export(data: &Path, args: &[&str]) -> Result<Run, String> {
    let started = Instant::now();
    let mut child = Command::new(thresher_bin())
        .arg("export")
        .arg("--data")
        .arg(data)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn thresher export: {e}"))?;
    let pid = child.id();
    let mut peak = 0;
    let mut cpu = Duration::ZERO;
    let status = loop {
        if let Some(kib) = procfs::peak_rss_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(t) = procfs::cpu_time(&pid.to_string()) {
            cpu = cpu.max(t);
        }
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = started.elapsed();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    if !status.success() {
        return Err(format!("export {args:?} failed: {stderr}"));
    }
    Ok(Run {
        wall,
        cpu,
        peak_mb: peak as f64 / 1024.0,
        summary: stderr.lines().last().unwrap_or("").to_string(),
    })
}

fn speed(args: &Args) -> Result<(), String> {
    let (_tmp, dir) = workdir(args)?;
    let u = DupUniverse::generate(&spec(args));
    let pages = u.pages.len();
    build(&dir, &u)?;
    drop(u);
    println!(
        "machine: {} cores, load average {}; wall-clock figures, indicative only",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    );
    let data = dir.join("data");
    let out = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let runs: Vec<(&str, Vec<String>, String)> = vec![
        (
            "jsonl, all fields, --dedup none",
            vec!["-q".into(), "--out".into(), out("c.jsonl")],
            out("c.jsonl"),
        ),
        (
            "jsonl, id,url,text only",
            vec![
                "-q".into(),
                "--fields".into(),
                "id,url,text".into(),
                "--out".into(),
                out("t.jsonl"),
            ],
            out("t.jsonl"),
        ),
        (
            "jsonl.zst, all fields, --dedup near",
            vec![
                "--dedup".into(),
                "near".into(),
                "--out".into(),
                out("c.jsonl.zst"),
            ],
            out("c.jsonl.zst"),
        ),
        (
            "parquet, all fields, --dedup near",
            vec![
                "--dedup".into(),
                "near".into(),
                "--out".into(),
                out("c.parquet"),
            ],
            out("c.parquet"),
        ),
    ];
    println!();
    println!(
        "| export of {pages} pages | wall s | CPU s | pages/s | peak RSS MB | output MB | summary |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, flags, file) in runs {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let run = export(&data, &flags)?;
        let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        println!(
            "| {name} | {:.1} | {:.1} | {:.0} | {:.0} | {:.0} | {} |",
            run.wall.as_secs_f64(),
            run.cpu.as_secs_f64(),
            pages as f64 / run.wall.as_secs_f64(),
            run.peak_mb,
            size as f64 / 1e6,
            run.summary
        );
        let _ = std::fs::remove_file(&file);
    }
    Ok(())
}

fn figure(args: &Args) -> Result<(), String> {
    let (_tmp, dir) = workdir(args)?;
    let u = DupUniverse::generate(&spec(args));
    build(&dir, &u)?;
    let data = dir.join("data");
    let marked = dir.join("marked.jsonl");
    let run = export(
        &data,
        &[
            "--dedup",
            "mark",
            "--fields",
            "id,url,dup_of",
            "--out",
            marked.to_str().ok_or("temp path is not UTF-8")?,
        ],
    )?;
    let text = std::fs::read_to_string(&marked).map_err(|e| e.to_string())?;
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let url_of: std::collections::HashMap<&str, &str> = rows
        .iter()
        .filter_map(|r| Some((r["id"].as_str()?, r["url"].as_str()?)))
        .collect();
    let flags: Vec<(&str, &str)> = rows
        .iter()
        .filter_map(|r| Some((r["url"].as_str()?, url_of[r["dup_of"].as_str()?])))
        .collect();
    let cleaned = Score::of(&u, flags);
    let store = Store::open_existing(&data, 64 << 20).map_err(|e| e.to_string())?;
    let raw_flags = raw_text_flags(&store);
    let raw = Score::of(&u, raw_flags.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    println!();
    println!(
        "{} sites × {} articles + {} planted copies ({} syndicated, {} churned); {}",
        args.sites,
        args.articles,
        u.planted,
        spec(args).syndicated,
        spec(args).churned,
        run.summary
    );
    let raw_pairs: Vec<(&str, &str)> = raw_flags
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let flags: Vec<(&str, &str)> = rows
        .iter()
        .filter_map(|r| Some((r["url"].as_str()?, url_of[r["dup_of"].as_str()?])))
        .collect();
    println!(
        "| near-dup detection on | flagged | right | wrong | precision | recall | recall, syndicated (other site's template) | recall, churned (same site, second URL) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, s, pairs) in [
        ("cleaned text (export)", cleaned, &flags),
        ("raw page text", raw, &raw_pairs),
    ] {
        println!(
            "| {name} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            s.right + s.wrong,
            s.right,
            s.wrong,
            s.precision(),
            s.recall(),
            kind_recall(&u, pairs, "/syndicated/"),
            kind_recall(&u, pairs, "/print/")
        );
    }
    Ok(())
}

/// Recall over the planted copies whose URL contains `marker`: a copy is found when a right
/// flag names it, as the duplicate or as the original (export order is by page id, so a copy
/// may come before the page it copies and be the one kept).
fn kind_recall(u: &DupUniverse, flags: &[(&str, &str)], marker: &str) -> f64 {
    let planted = u.group.keys().filter(|url| url.contains(marker)).count();
    let named: std::collections::HashSet<&str> = flags
        .iter()
        .filter(|(page, of)| u.group.get(*page) == u.group.get(*of))
        .flat_map(|&(page, of)| [page, of])
        .filter(|url| url.contains(marker))
        .collect();
    let found = named.len();
    if planted == 0 {
        return 1.0;
    }
    found as f64 / planted as f64
}
