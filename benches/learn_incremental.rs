//! Incremental cost of inline learning at the product level (issue 4): a sled store holding one
//! host of N generated news pages, stored as the crawler stores them (parsed with
//! `thresher::dom`, DOM and path set in the store). The host is `--layouts` sub-sites under
//! `/0/`, `/1/`, … (tests/support's `NewsSite` with different seeds, so different chrome: home,
//! paginated section lists, static pages, articles in three variants, padded to ~`--page-kb`
//! KB), so it has several templates. A child process generates and stores the pages, so this
//! process's memory is the learner's and sled's alone. Then `learn::SiteLearner`, exactly as
//! the crawl's learner thread drives it, times
//! (a) the steps that cluster the first N pages in batches of `--batch` (the crawl's
//!     `recluster_pages`), (b) one step adding `--add` new pages (clustering, cleaning the pages
//!     that changed, file writes, index.tsv and store records included), `--repeat` times, and
//! (c) the end-of-crawl pass over every page (`finish`, what `thresher clean` computes).
//! Pages arrive in a fixed shuffled order (a crawl interleaves page kinds). Peak RSS per phase is
//! this process's VmHWM, reset before each phase. See docs/inline-learning.md.
//!
//! cargo bench --bench learn_incremental -- [--pages 10000 --add 100 --repeat 3 --batch 50
//!     --page-kb 30 --keep DIR]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;

use support::lorem::Rng;
use support::{NewsSite, SiteSpec};
use thresher::crawl::url::page_id;
use thresher::detect::Detector;
use thresher::dom::parse_bytes;
use thresher::learn::{Output, SiteLearner, SiteState, Step};
use thresher::store::{now_ms, Commit, NewPage, PageMeta, Store};

const SITE: &str = "news.example";
/// sled's page cache: the crawl's default (`[store] cache_bytes`).
const CACHE_BYTES: u64 = 64 << 20;

#[derive(Debug, Parser)]
#[command(
    name = "learn-incremental",
    about = "Time inline learning's steps on a host of N stored pages."
)]
struct Args {
    /// Pages clustered before the measured step.
    #[arg(long, default_value_t = 10_000)]
    pages: usize,
    /// New pages in the measured step.
    #[arg(long, default_value_t = 100)]
    add: usize,
    /// Measured steps, each adding `--add` more pages.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Pages per step while the first N are clustered (config `recluster_pages`).
    #[arg(long, default_value_t = 50)]
    batch: usize,
    /// Average page size in KB.
    #[arg(long, default_value_t = 30)]
    page_kb: usize,
    /// Sub-sites with their own chrome on the host.
    #[arg(long, default_value_t = 4)]
    layouts: usize,
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Keep the store and the output here (default: a temporary directory, removed).
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Child mode: generate the host, store the first `--pages` in DIR/data and write the rest
    /// to DIR/later.
    #[arg(long, hide = true)]
    fill: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match &args.fill {
        Some(dir) => fill(&args, dir),
        None => run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("learn_incremental: {e}");
            ExitCode::from(2)
        }
    }
}

/// One timed phase.
struct Phase {
    name: String,
    steps: usize,
    pages: usize,
    written: u64,
    time: Duration,
    /// The slowest single step of the phase, and the host's pages before it.
    slowest: (Duration, usize),
    peak_mb: f64,
    clusters: u64,
}

fn run(args: &Args) -> Result<(), String> {
    if args.pages == 0 || args.batch == 0 || args.layouts == 0 {
        return Err("--pages, --batch and --layouts must be positive".into());
    }
    let total = args.pages + args.add * args.repeat;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = args
        .keep
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    println!(
        "machine: {} cores, load average {}; figures are wall-clock, indicative only",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load_average()
    );

    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let status = Command::new(exe)
        .args(std::env::args().skip(1).filter(|a| a != "--bench"))
        .arg("--fill")
        .arg(&dir)
        .status()
        .map_err(|e| format!("spawn the fill child: {e}"))?;
    if !status.success() {
        return Err(format!("the fill child failed: {status}"));
    }
    let later = read_later(&dir)?;

    let store = Store::open(&dir.join("data"), CACHE_BYTES).map_err(|e| e.to_string())?;
    // Sorted by page id (a hash of the URL): page kinds and layouts interleaved, as in a crawl.
    let first = store.site_pages(SITE).map_err(|e| e.to_string())?;
    let out = Output::new(&dir.join("out"));
    let learner = SiteLearner {
        store: &store,
        out: &out,
        detector: Detector::default(),
    };
    let mut state = SiteState::default();
    let can_reset = reset_peak();
    println!(
        "learner process before learning: RSS {:.0} MB",
        vm_hwm_kib().unwrap_or(0) as f64 / 1024.0
    );

    let mut phases = Vec::new();
    let batches: Vec<&[u64]> = first.chunks(args.batch).collect();
    phases.push(timed(
        format!(
            "(a) cluster the first {} in steps of {}",
            args.pages, args.batch
        ),
        0,
        &batches,
        |ids| learner.step(SITE, &mut state, ids),
    )?);
    for (i, chunk) in later.chunks(args.add.max(1)).enumerate() {
        let ids = store_pages(&store, chunk)?;
        let before = args.pages + i * args.add;
        phases.push(timed(
            format!("(b) add {} pages to {before}", ids.len()),
            before,
            &[&ids],
            |ids| learner.step(SITE, &mut state, ids),
        )?);
    }
    let mut whole = timed(
        format!("(c) from scratch over all {total} (finish)"),
        total,
        &[&[]],
        |_| learner.finish(SITE, &mut state),
    )?;
    whole.pages = total;
    phases.push(whole);

    println!();
    println!("| phase | steps | pages | pages written | clusters after | time s | slowest step s (host pages before it) | peak RSS MB |");
    println!("|---|---|---|---|---|---|---|---|");
    for p in &phases {
        println!(
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} ({}) | {:.0} |",
            p.name,
            p.steps,
            p.pages,
            p.written,
            p.clusters,
            p.time.as_secs_f64(),
            p.slowest.0.as_secs_f64(),
            p.slowest.1,
            p.peak_mb
        );
    }
    if !can_reset {
        println!("(peak RSS could not be reset between phases: each is the process peak so far)");
    }
    println!(
        "store on disk {:.0} MB; process peak RSS {:.0} MB; load average now {}",
        store.size_on_disk() as f64 / 1e6,
        vm_hwm_kib().unwrap_or(0) as f64 / 1024.0,
        load_average()
    );
    if let Some(k) = &args.keep {
        println!("kept {}", k.display());
    }
    Ok(())
}

/// The fill child: generate the host, store `--pages` of its pages (chosen at random), write
/// the others to DIR/later (`urls.txt` and `<line>.html`) for the measured steps.
fn fill(args: &Args, dir: &Path) -> Result<(), String> {
    let total = args.pages + args.add * args.repeat;
    let t = Instant::now();
    let mut pages = generate(args, total);
    let html_mb = pages.iter().map(|(_, b)| b.len()).sum::<usize>() as f64 / 1e6;
    println!(
        "generated {} pages ({html_mb:.0} MB of HTML, {:.1} KB/page, {} layouts) in {:.1?}",
        pages.len(),
        html_mb * 1e3 / pages.len() as f64,
        args.layouts,
        t.elapsed()
    );
    let later = pages.split_off(args.pages.min(pages.len()));
    let later_dir = dir.join("later");
    std::fs::create_dir_all(&later_dir).map_err(|e| e.to_string())?;
    let mut urls = String::new();
    for (i, (url, html)) in later.iter().enumerate() {
        urls.push_str(url);
        urls.push('\n');
        std::fs::write(later_dir.join(format!("{i}.html")), html).map_err(|e| e.to_string())?;
    }
    std::fs::write(later_dir.join("urls.txt"), urls).map_err(|e| e.to_string())?;

    let t = Instant::now();
    let store = Store::open(&dir.join("data"), CACHE_BYTES).map_err(|e| e.to_string())?;
    store_pages(&store, &pages)?;
    store.flush().map_err(|e| e.to_string())?;
    println!(
        "stored {} pages (parse + path set + commit: the crawl's share) in {:.1?}",
        pages.len(),
        t.elapsed()
    );
    Ok(())
}

fn read_later(dir: &Path) -> Result<Vec<(String, Bytes)>, String> {
    let later = dir.join("later");
    let urls = std::fs::read_to_string(later.join("urls.txt")).map_err(|e| e.to_string())?;
    urls.lines()
        .enumerate()
        .map(|(i, url)| {
            let html = std::fs::read(later.join(format!("{i}.html"))).map_err(|e| e.to_string())?;
            Ok((url.to_string(), Bytes::from(html)))
        })
        .collect()
}

/// The host's pages as (URL, HTML), in a fixed shuffled order: `--layouts` news sites with
/// different seeds, each under its own path prefix.
fn generate(args: &Args, total: usize) -> Vec<(String, Bytes)> {
    let mut pages: Vec<(String, Bytes)> = Vec::with_capacity(total);
    for k in 0..args.layouts {
        let spec = SiteSpec {
            seed: args.seed + k as u64,
            pages: total / args.layouts + usize::from(k < total % args.layouts),
            sections: 8,
            per_list_page: 20,
            variants: 3,
            paragraphs: (4, 12),
            page_bytes: args.page_kb * 1000,
            orphans: 0,
            external: Vec::new(),
            pool: None,
        };
        let site = NewsSite::generate(&spec);
        pages.extend(
            site.pages
                .iter()
                .map(|p| (format!("https://{SITE}/{k}{}", p.path), p.html())),
        );
    }
    let mut rng = Rng::new(args.seed);
    for i in (1..pages.len()).rev() {
        pages.swap(i, rng.below(i + 1));
    }
    pages
}

/// Parse and store pages as the crawl's worker does; their ids in order.
fn store_pages(store: &Store, pages: &[(String, Bytes)]) -> Result<Vec<u64>, String> {
    let mut ids = Vec::with_capacity(pages.len());
    for (raw, html) in pages {
        let url = url::Url::parse(raw).map_err(|e| format!("{raw}: {e}"))?;
        let parsed = parse_bytes(html, Some("text/html; charset=utf-8"));
        let paths = parsed.dom.path_set();
        let meta = PageMeta {
            url: url.to_string(),
            requested: None,
            site: SITE.into(),
            status: 200,
            content_type: Some("text/html; charset=utf-8".into()),
            headers: Vec::new(),
            fetched_at_ms: now_ms(),
            depth: 1,
            body_bytes: html.len() as u64,
            encoding: "UTF-8".into(),
            title: parsed.dom.title(),
            truncated: parsed.truncated,
        };
        let id = page_id(&url);
        let mut commit = Commit::new();
        commit.page(NewPage::new(id, meta, html, &parsed.dom, &paths));
        store.commit(commit).map_err(|e| e.to_string())?;
        ids.push(id);
    }
    Ok(ids)
}

/// Run `step` on each batch (the host has `start` pages before the first), timing the whole
/// and the slowest, with the phase's peak RSS.
fn timed<E: std::fmt::Display>(
    name: String,
    start: usize,
    batches: &[&[u64]],
    mut step: impl FnMut(&[u64]) -> Result<Step, E>,
) -> Result<Phase, String> {
    reset_peak();
    let mut phase = Phase {
        name,
        steps: batches.len(),
        pages: batches.iter().map(|b| b.len()).sum(),
        written: 0,
        time: Duration::ZERO,
        slowest: (Duration::ZERO, start),
        peak_mb: 0.0,
        clusters: 0,
    };
    let mut before = start;
    for ids in batches {
        let t = Instant::now();
        let s = step(ids).map_err(|e| format!("{}: {e}", phase.name))?;
        let dt = t.elapsed();
        phase.time += dt;
        phase.slowest = phase.slowest.max((dt, before));
        before += ids.len();
        phase.written += s.written;
        phase.clusters = s.clusters;
    }
    phase.peak_mb = vm_hwm_kib().unwrap_or(0) as f64 / 1024.0;
    eprintln!("{}: {:.2?}", phase.name, phase.time);
    Ok(phase)
}

/// Reset VmHWM to the current RSS (Linux ≥ 4.0); false if not possible.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line["VmHWM:".len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
