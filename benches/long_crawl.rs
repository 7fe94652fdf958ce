//! The long-crawl benchmark (issue 11): serve a procedural universe (`benches/universe/`: pages
//! generated per request, any number of origins × pages) in-process, run the release
//! `thresher crawl` on it as a child (delay 0, inline cleaning on by default) and record every
//! interval: pages/s from the server's count, the child's RSS and peak, the data directory on
//! disk, and the learner's backlog from the crawl's status snapshot. Then a summary (pages/s per
//! tenth of the crawl, first vs last tenth, peak RSS, store and output bytes per page,
//! end-of-crawl pass, wall) and, on the final store, `thresher status` and `thresher export`
//! times. `--kill-at N` kills the crawler with SIGKILL at N pages and times its restart to the
//! first new fetch. `--server-check` measures the universe server alone. A broad crawl:
//! `--addresses` puts every origin at its own loopback address on one port and
//! `--max-pages-per-host P` stops each site at P pages; the text files on disk are counted
//! throughout, and at the last page request. See docs/benchmarks.md, "Long crawls" and "Broad
//! crawls".
//!
//! cargo bench --bench long_crawl -- [--origins 200 --pages 5000 --page-kb 20 --kill-at N
//!     --inline-clean on|off --interval 10s --dir DIR --keep-data --server-check
//!     --addresses --max-pages-per-host P]

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "universe/mod.rs"]
mod universe;

#[path = "crawl/procfs.rs"]
mod procfs;

#[path = "long_crawl/child.rs"]
mod child;

#[path = "long_crawl/series.rs"]
mod series;

#[path = "long_crawl/server_check.rs"]
mod server_check;

#[path = "long_crawl/texts.rs"]
mod texts;

#[path = "long_crawl/check.rs"]
mod check;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use child::Exit;
use series::{mb, Sample, Timeline, TsvFile};
use texts::{Scans, TextCounter};
use universe::serve::{Addressing, Counters};
use universe::{Spec, Universe};

#[derive(Debug, Parser)]
#[command(
    name = "long-crawl-bench",
    about = "Crawl a procedural universe and record speed, memory and disk as the crawl grows."
)]
struct Args {
    /// Origins (one site each, one port each; with --addresses one loopback address each).
    #[arg(long, default_value_t = 200)]
    origins: usize,
    /// Pages per origin, all reachable from its home page.
    #[arg(long, default_value_t = 5000)]
    pages: usize,
    /// Serve every origin on ONE port, each at a loopback address of its own
    /// (`http://127.1.0.1:PORT/`, `http://127.1.0.2:PORT/`, …): many hosts, as a broad crawl
    /// meets them, without a socket each.
    #[arg(long)]
    addresses: bool,
    /// The crawl's page budget per host (`--set crawl.max_pages_per_host=P`): each site stops
    /// at P pages, the rest of its URLs over budget. Default: 2 × --pages + 10 (every page).
    #[arg(long)]
    max_pages_per_host: Option<usize>,
    /// Average page size in KB (pages vary from 0.7× to 1.3×).
    #[arg(long, default_value_t = 20)]
    page_kb: usize,
    /// Seed of the universe.
    #[arg(long, default_value_t = 11)]
    seed: u64,
    /// Global concurrency passed as `--concurrency`.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// The crawl delay per origin passed as `--delay` (`200ms`: a polite crawl, the CPU
    /// mostly idle).
    #[arg(long, default_value = "0ms")]
    delay: String,
    /// `[template] inline`: clean while crawling (the default, as in the product) or not.
    #[arg(long, value_parser = ["on", "off"], default_value = "on")]
    inline_clean: String,
    /// Extra TOML appended to the generated config file.
    #[arg(long)]
    config_extra: Option<String>,
    /// How often a sample row is taken.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
    interval: Duration,
    /// The text files on disk are counted at most this often (and at least every 5 s; counts
    /// spaced to take at most 5 % of a core in between): the resolution of "text on disk at
    /// the last fetch".
    #[arg(long, value_parser = humantime::parse_duration, default_value = "1s")]
    text_every: Duration,
    /// Kill the crawler with SIGKILL once the server has answered this many pages, restart it
    /// with the same command and time the restart to its first new page request.
    #[arg(long)]
    kill_at: Option<u64>,
    /// Skip timing `thresher status` on the final store.
    #[arg(long)]
    no_status: bool,
    /// Skip timing `thresher export` on the final store.
    #[arg(long)]
    no_export: bool,
    /// Where the series, summary and logs go (and the data and output directories while the
    /// crawl runs). Default: a new directory under the system temporary directory.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the data and output directories (default: removed at the end).
    #[arg(long)]
    keep_data: bool,
    /// The crawler binary (default: the release `thresher` cargo built for this bench).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Worker threads of the in-process server.
    #[arg(long, default_value_t = 1)]
    server_threads: usize,
    /// Stop the crawler (SIGTERM) after this long.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "4h")]
    timeout: Duration,
    /// Stop the crawler (SIGTERM) when the file system holding --dir has less free space.
    #[arg(long, default_value_t = 8.0)]
    min_free_gb: f64,
    /// Measure only the universe server (generation alone, then HTTP with a local client) for
    /// this long, and exit.
    #[arg(long, value_parser = humantime::parse_duration, num_args = 0..=1, default_missing_value = "10s")]
    server_check: Option<Duration>,
    /// Check the run, for CI: the crawler ended well, every reachable page (within the
    /// budget) was fetched, stored and cleaned, each site's text files match its index.tsv,
    /// the export has a line per page, the crawler printed no line per site, and (with
    /// --max-rss-mb) the peak RSS stayed under the bound. Without --kill-at, no page was
    /// fetched twice. Exit 1 otherwise.
    #[arg(long)]
    check: bool,
    /// With --check: the largest peak RSS accepted, in MB.
    #[arg(long)]
    max_rss_mb: Option<f64>,
    /// After the crawl, run it again unchanged (it must request no page), then with
    /// `--recrawl` against the same (unchanged) universe, and report the recrawl's wall time,
    /// requests, 304s and CPU against the first crawl's (docs/recrawl.md, "Figures").
    #[arg(long)]
    recrawl: bool,
    /// Only serve the universe for this long (no crawl): its seed URLs go to DIR/seeds.txt,
    /// then a line `SERVING <n> origins` on stdout, and the counters at the end. For comparing
    /// other crawlers on the same universe (benches/pipeline.sh).
    #[arg(long, value_parser = humantime::parse_duration)]
    serve_for: Option<Duration>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// A page request within this long means the crawl phase is still on.
const QUIET_FOR_FINAL: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.server_check {
        Some(d) => server_check::run(&spec(&args), d, args.server_threads),
        None if args.serve_for.is_some() => serve_only(&args),
        None => run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("long crawl bench: {e}");
            ExitCode::from(2)
        }
    }
}

/// Pages the crawl fetches from each site: all of them, or the budget.
fn per_site(args: &Args) -> usize {
    args.max_pages_per_host
        .map_or(args.pages, |p| p.min(args.pages))
}

fn addressing(args: &Args) -> Addressing {
    if args.addresses {
        Addressing::Loopback
    } else {
        Addressing::Ports
    }
}

fn spec(args: &Args) -> Spec {
    Spec {
        origins: args.origins,
        pages: args.pages,
        page_bytes: args.page_kb * 1000,
        seed: args.seed,
    }
}

/// Where one run's files go.
struct Paths {
    dir: PathBuf,
    data: PathBuf,
    out: PathBuf,
    log: PathBuf,
}

/// Everything measured while the crawler runs.
#[derive(Default)]
struct Watch {
    timeline: Timeline,
    samples: Vec<Sample>,
    peak_hwm_kib: u64,
    exits: Vec<Exit>,
    killed_at: Option<(f64, u64)>,
    restart_to_first_fetch: Option<f64>,
    stopped_because: Option<String>,
}

fn run(args: &Args) -> Result<ExitCode, String> {
    let bin = args.bin.clone().unwrap_or_else(support::thresher_bin);
    if !bin.is_file() {
        return Err(format!(
            "crawler binary {} not found: run `cargo build --release` (or pass --bin PATH)",
            bin.display()
        ));
    }
    let dir = args.dir.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        std::env::temp_dir().join(format!("long-crawl-{}x{}-{secs}", args.origins, args.pages))
    });
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let paths = Paths {
        data: dir.join("data"),
        out: dir.join("out"),
        log: dir.join("crawler.log"),
        dir,
    };

    let universe = Arc::new(Universe::new(spec(args)));
    let (server, counters) =
        universe::serve::serve_at(universe.clone(), args.server_threads, addressing(args));
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let seeds_file = support::write_seeds(&paths.dir, &seeds);
    let mut config = support::bench_config(args.pages, Some(args.inline_clean == "on"));
    if let Some(extra) = &args.config_extra {
        config.push_str(extra);
        config.push('\n');
    }
    let config_file = support::write_config(&paths.dir, &config);
    let crawl_cmd = || {
        let mut cmd = Command::new(&bin);
        cmd.arg("crawl")
            .arg("--data")
            .arg(&paths.data)
            .arg("--out")
            .arg(&paths.out)
            .args(["--max-pages", "0", "--max-depth", "1000", "--quiet"])
            .arg("--config")
            .arg(&config_file)
            .arg("--seeds")
            .arg(&seeds_file)
            .arg("--concurrency")
            .arg(args.concurrency.to_string())
            .arg("--delay")
            .arg(&args.delay)
            // The learner's one-line summary (end-of-crawl pass time) even with --quiet.
            .env("THRESHER_LEARN_STATS", "1");
        if let Some(p) = args.max_pages_per_host {
            cmd.arg("--set")
                .arg(format!("crawl.max_pages_per_host={p}"));
        }
        cmd
    };
    eprintln!(
        "long crawl: {} origins × {} pages{}, ~{} KB/page, {}, inline clean {}, concurrency {}, \
         delay {}; files in {}",
        args.origins,
        args.pages,
        args.max_pages_per_host
            .map_or(String::new(), |p| format!(" (budget {p} per host)")),
        args.page_kb,
        match addressing(args) {
            Addressing::Ports => "a port per origin",
            Addressing::Loopback => "one port, an address per origin",
        },
        args.inline_clean,
        args.concurrency,
        args.delay,
        paths.dir.display()
    );
    eprintln!("running: {:?}", crawl_cmd());
    eprintln!("{}", Sample::HEADER);

    let server_cpu0 = procfs::threads_cpu_time("test-server");
    let started = Instant::now();
    let text_counter = TextCounter::start(paths.out.clone(), started, args.text_every);
    let watch = watch_crawl(args, &paths, &counters, &crawl_cmd, started, &text_counter);
    let scans = text_counter.finish();
    let watch = watch?;
    let wall = started.elapsed();
    let server_cpu = procfs::threads_cpu_time("test-server") - server_cpu0;

    let summary = summarise(
        args, &paths, &counters, &watch, &scans, &bin, wall, server_cpu, started,
    );
    // After the summary, so its counts are the first crawl's alone.
    if args.recrawl {
        recrawl_figures(&counters, &crawl_cmd, &paths, &watch, wall)?;
    }
    drop(server);
    std::fs::write(
        paths.dir.join("summary.json"),
        serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    print_summary(&summary);
    println!(
        "RESULT {}",
        serde_json::to_string(&summary).map_err(|e| e.to_string())?
    );
    let failures = if args.check {
        check::check(args, &paths, &bin, &counters, &summary)
    } else {
        Vec::new()
    };
    for f in &failures {
        println!("CHECK FAILED: {f}");
    }
    if args.check && failures.is_empty() {
        println!("CHECK ok");
    }
    if args.keep_data {
        eprintln!("kept {} and {}", paths.data.display(), paths.out.display());
    } else {
        let _ = std::fs::remove_dir_all(&paths.data);
        let _ = std::fs::remove_dir_all(&paths.out);
    }
    eprintln!(
        "series: {}; summary: {}",
        paths.dir.join("series.tsv").display(),
        paths.dir.join("summary.json").display()
    );
    let ok = watch.exits.last().is_some_and(Exit::success)
        && watch.stopped_because.is_none()
        && failures.is_empty();
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Requests the universe's origins answered so far (pages, robots.txt and sitemaps, 404s).
fn requests(c: &Counters) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    c.pages() + c.meta.load(Relaxed) + c.missing.load(Relaxed)
}

/// Run the finished crawl's command again as is, then with `--recrawl`: wall time, requests the
/// server answered, the crawler's CPU and its own recrawl line (304s, kinds), printed against
/// the first crawl's.
fn recrawl_figures(
    counters: &Counters,
    crawl_cmd: &impl Fn() -> Command,
    paths: &Paths,
    first: &Watch,
    first_wall: Duration,
) -> Result<(), String> {
    let first_cpu: Duration = first.exits.iter().map(|e| e.cpu).sum();
    let first_requests = requests(counters);
    for (name, extra) in [("plain re-run", None), ("recrawl", Some("--recrawl"))] {
        let log = paths.dir.join(format!("{}.log", name.replace(' ', "-")));
        let before = requests(counters);
        let started = Instant::now();
        let mut cmd = crawl_cmd();
        cmd.args(extra);
        let child = spawn(&mut cmd, &log)?;
        let exit = child::reap(&child, true)
            .map_err(|e| e.to_string())?
            .ok_or("the crawler did not end")?;
        let wall = started.elapsed();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let line = text
            .lines()
            .find(|l| l.starts_with("Recrawl:") && l.contains("revisited"))
            .unwrap_or("(no recrawl line)");
        println!(
            "RECRAWL {name}: {:.1} s wall, {} requests, {:.1} s CPU, peak RSS {} MB ({}); {line}",
            wall.as_secs_f64(),
            requests(counters) - before,
            exit.cpu.as_secs_f64(),
            exit.max_rss_kib / 1024,
            exit.describe()
        );
    }
    println!(
        "RECRAWL first crawl: {:.1} s wall, {first_requests} requests, {:.1} s CPU",
        first_wall.as_secs_f64(),
        first_cpu.as_secs_f64()
    );
    Ok(())
}

/// `--serve-for`: serve the universe and nothing else.
fn serve_only(args: &Args) -> Result<ExitCode, String> {
    use std::sync::atomic::Ordering::Relaxed;
    let dir = args.dir.clone().ok_or("--serve-for needs --dir")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let universe = Arc::new(Universe::new(spec(args)));
    let (server, counters) = universe::serve::serve(universe, args.server_threads);
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let file = support::write_seeds(&dir, &seeds);
    println!(
        "SERVING {} origins; seeds in {}",
        seeds.len(),
        file.display()
    );
    std::thread::sleep(args.serve_for.unwrap_or_default());
    println!(
        "served {} pages ({} distinct), {} robots/sitemap requests, {} not found",
        counters.pages(),
        counters.unique.load(Relaxed),
        counters.meta.load(Relaxed),
        counters.missing.load(Relaxed)
    );
    Ok(ExitCode::SUCCESS)
}

fn spawn(cmd: &mut Command, log: &Path) -> Result<Child, String> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("spawn the crawler: {e}"))
}

/// Run the crawler to its end (through one kill and restart with `--kill-at`), sampling.
fn watch_crawl(
    args: &Args,
    paths: &Paths,
    counters: &Counters,
    crawl_cmd: &impl Fn() -> Command,
    started: Instant,
    texts: &TextCounter,
) -> Result<Watch, String> {
    let mut w = Watch::default();
    let mut tsv = TsvFile::create(&paths.dir.join("series.tsv")).map_err(|e| e.to_string())?;
    let mut child = spawn(&mut crawl_cmd(), &paths.log)?;
    let mut run = 0u32;
    let mut restarted_at: Option<Instant> = None;
    let mut next_second = started;
    let mut next_sample = started + args.interval;
    let mut last_sample = (0.0f64, 0u64);
    let min_free = (args.min_free_gb * 1e9) as u64;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let pid = child.id();
        if let Some(k) = procfs::peak_rss_kib(pid) {
            w.peak_hwm_kib = w.peak_hwm_kib.max(k);
        }
        let exited = child::reap(&child, false).map_err(|e| e.to_string())?;
        let now = Instant::now();
        let t = (now - started).as_secs_f64();
        let pages = counters.pages();
        if now >= next_second || exited.is_some() {
            w.timeline.push(t, pages);
            next_second += Duration::from_secs(1);
        }
        if let (Some(at), None) = (restarted_at, w.restart_to_first_fetch) {
            if let Some(first) = counters.first_after_arm() {
                w.restart_to_first_fetch = Some((first - at).as_secs_f64());
            }
        }
        if now >= next_sample || exited.is_some() {
            next_sample += args.interval;
            let s = sample(t, run, pid, counters, paths, last_sample, texts.latest());
            last_sample = (t, pages);
            eprintln!("{}", s.tsv());
            tsv.push(&s);
            w.samples.push(s);
            if w.stopped_because.is_none() {
                if let Some(free) = child::free_bytes(&paths.dir).filter(|f| *f < min_free) {
                    w.stopped_because = Some(format!(
                        "free disk space {:.1} GB < --min-free-gb",
                        free as f64 / 1e9
                    ));
                    child::signal(&child, libc::SIGTERM);
                }
            }
        }
        if let Some(exit) = exited {
            eprintln!("crawler (run {run}) ended: {}", exit.describe());
            w.exits.push(exit);
            return Ok(w);
        }
        if w.stopped_because.is_none() && now - started > args.timeout {
            w.stopped_because = Some(format!("timeout {:?}", args.timeout));
            child::signal(&child, libc::SIGTERM);
        }
        if let Some(kill_at) = args.kill_at.filter(|_| run == 0) {
            if pages >= kill_at {
                let _ = child.kill();
                let exit = child::reap(&child, true)
                    .map_err(|e| e.to_string())?
                    .ok_or("the killed crawler was not reaped")?;
                let t_kill = started.elapsed().as_secs_f64();
                eprintln!(
                    "killed the crawler (SIGKILL) at {} pages, t = {t_kill:.1} s; restarting",
                    counters.pages()
                );
                w.killed_at = Some((t_kill, counters.pages()));
                w.exits.push(exit);
                counters.arm();
                restarted_at = Some(Instant::now());
                child = spawn(&mut crawl_cmd(), &paths.log)?;
                run = 1;
            }
        }
    }
}

fn sample(
    t: f64,
    run: u32,
    pid: u32,
    counters: &Counters,
    paths: &Paths,
    (t_prev, pages_prev): (f64, u64),
    texts: Option<u64>,
) -> Sample {
    let pages = counters.pages();
    let snapshot = read_snapshot(&paths.data);
    // A running crawl's snapshot lists its busiest hosts only (`hosts_more` left out): then
    // the sum of `cleaned` is partial, and the text files on disk stand in for it.
    let cleaned = snapshot
        .as_ref()
        .filter(|r| r.hosts_more == 0)
        .map(|r| r.hosts.iter().map(|h| h.cleaned).sum::<u64>());
    let quiet = counters
        .last_page_at()
        .is_none_or(|at| at.elapsed() > QUIET_FOR_FINAL);
    Sample {
        t_s: t,
        run,
        pages,
        pages_per_s: (pages - pages_prev) as f64 / (t - t_prev).max(1e-3),
        unique: counters.unique.load(std::sync::atomic::Ordering::Relaxed),
        rss_mb: procfs::rss_kib(pid).map_or(0.0, |k| k as f64 / 1024.0),
        hwm_mb: procfs::peak_rss_kib(pid).map_or(0.0, |k| k as f64 / 1024.0),
        store_mb: mb(child::du(&paths.data).1),
        stored: snapshot.as_ref().map(|r| r.pages),
        queued: snapshot.as_ref().map(|r| r.queued),
        cleaned,
        texts,
        backlog: snapshot
            .as_ref()
            .zip(cleaned.or(texts))
            .map(|(r, c)| r.pages.saturating_sub(c)),
        load1: series::load1(),
        phase: if quiet && pages > 0 { "final" } else { "crawl" },
    }
}

/// The crawl's status snapshot, if there is a readable one.
fn read_snapshot(data: &Path) -> Option<thresher::status::StatusReport> {
    let text = std::fs::read_to_string(data.join(thresher::status::SNAPSHOT)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Run `thresher ARGS…` to its end; its wall time (`None`: it failed, its output is in `log`).
fn time_command(bin: &Path, args: &[&str], log: &Path) -> Option<f64> {
    let mut cmd = Command::new(bin);
    cmd.args(args);
    let t = Instant::now();
    let mut child = spawn(&mut cmd, log).ok()?;
    let ok = child.wait().ok()?.success();
    ok.then(|| t.elapsed().as_secs_f64())
}

/// The learner's end-of-crawl pass time from its summary line ("… and of N sites at the end
/// (X.Ys): …").
fn learner_final_pass(log: &str) -> Option<f64> {
    const AT_END: &str = "sites at the end (";
    let line = log.lines().rev().find(|l| l.contains(AT_END))?;
    let rest = &line[line.find(AT_END)? + AT_END.len()..];
    rest[..rest.find("s)")?].parse().ok()
}

/// What a run comes to (`summary.json`, the `RESULT` line).
#[derive(Debug, Default, serde::Serialize)]
struct Summary {
    origins: usize,
    pages_per_origin: usize,
    /// `crawl.max_pages_per_host` when set by --max-pages-per-host.
    max_pages_per_host: Option<usize>,
    /// `ports` (127.0.0.1, a port per origin) or `loopback` (one port, an address per origin).
    addressing: String,
    page_kb: usize,
    inline_clean: String,
    concurrency: usize,
    kill_at: Option<u64>,
    crawler_exit: Vec<String>,
    stopped_because: Option<String>,
    pages_served: u64,
    unique_pages: u64,
    reachable_pages: usize,
    /// Pages the crawl should fetch: every page, or each site's budget.
    expected_pages: u64,
    duplicate_fetches: u64,
    bytes_served: u64,
    robots_and_sitemap_requests: u64,
    not_found_requests: u64,
    wall_s: f64,
    pages_per_s_overall: f64,
    /// Pages/s within each tenth of the pages, from the first page request on.
    pages_per_s_tenths: Vec<f64>,
    pages_per_s_first_tenth: Option<f64>,
    pages_per_s_last_tenth: Option<f64>,
    /// last / first − 1.
    last_vs_first: Option<f64>,
    /// Peak RSS of the crawler (its rusage and the polled VmHWM; the larger).
    peak_rss_mb: f64,
    rss_mb_max_sampled: f64,
    store_bytes: u64,
    store_apparent_bytes: u64,
    store_bytes_per_page: Option<f64>,
    out_bytes: u64,
    out_apparent_bytes: u64,
    out_files: u64,
    out_bytes_per_page: Option<f64>,
    /// From the last page request to the crawler's exit.
    end_of_crawl_pass_s: Option<f64>,
    /// The last page request, in seconds from the start.
    last_fetch_s: Option<f64>,
    /// Text files on disk at the last page request (the last count that ended by then, at
    /// most `text_scan_gap_max_s` old), and their share of the pages fetched.
    texts_at_last_fetch: Option<u64>,
    text_share_at_last_fetch: Option<f64>,
    /// The text-file counts over time: (seconds, files), one per scan.
    texts_over_time: Vec<(f64, u64)>,
    text_scan_ms_mean: Option<f64>,
    text_scan_gap_max_s: Option<f64>,
    /// Lines the crawler printed (with --quiet; both runs with --kill-at).
    crawler_log_lines: usize,
    /// The learner's own end-of-crawl pass figure (its summary line): time summed over the
    /// sites, which run on parallel threads, so above the wall time on 2 cores.
    learner_final_pass_s: Option<f64>,
    learner_backlog_max: Option<u64>,
    /// (seconds, pages) when the crawler was killed.
    killed_at: Option<(f64, u64)>,
    restart_to_first_fetch_s: Option<f64>,
    /// `thresher status` on the final store, twice.
    status_s: Option<[Option<f64>; 2]>,
    export_s: Option<f64>,
    export_bytes: Option<u64>,
    export_lines: Option<u64>,
    server_cpu_s: f64,
    /// Mean and largest 1-minute load average over the samples (2 cores: above 2, the crawler
    /// waited for CPU).
    load1_mean: f64,
    load1_max: f64,
    server_cpu_ms_per_page: Option<f64>,
    /// The crawler's own summary lines.
    crawler_summary: Vec<String>,
    dir: PathBuf,
}

#[allow(clippy::too_many_arguments)]
fn summarise(
    args: &Args,
    paths: &Paths,
    counters: &Counters,
    w: &Watch,
    scans: &Scans,
    bin: &Path,
    wall: Duration,
    server_cpu: Duration,
    started: Instant,
) -> Summary {
    use std::sync::atomic::Ordering::Relaxed;
    let pages = counters.pages();
    let unique = counters.unique.load(Relaxed);
    let tenths = w.timeline.tenths();
    let first = tenths.first().copied();
    let last = tenths.last().copied();
    let peak_kib = w
        .exits
        .iter()
        .map(|e| e.max_rss_kib)
        .chain([w.peak_hwm_kib])
        .max()
        .unwrap_or(0);
    let (store_apparent, store_bytes, _) = child::du(&paths.data);
    let (out_apparent, out_bytes, out_files) = child::du(&paths.out);
    let log = std::fs::read_to_string(&paths.log).unwrap_or_default();
    let ok = w.exits.last().is_some_and(Exit::success);
    let data = paths.data.to_string_lossy().to_string();
    let cmd_log = paths.dir.join("commands.log");
    let status_s = (!args.no_status && ok)
        .then(|| [1, 2].map(|_| time_command(bin, &["status", "--data", &data], &cmd_log)));
    let export_file = paths.dir.join("export.jsonl");
    let export_path = export_file.to_string_lossy().to_string();
    let export = (!args.no_export && ok).then(|| {
        let s = time_command(
            bin,
            &[
                "export",
                "--data",
                &data,
                "--format",
                "jsonl",
                "--out",
                &export_path,
                "-q",
            ],
            &cmd_log,
        );
        let size = std::fs::metadata(&export_file).map_or(0, |m| m.len());
        let lines = count_lines(&export_file);
        let _ = std::fs::remove_file(&export_file);
        (s, size, lines)
    });
    let per_page = |b: u64| (unique > 0).then(|| b as f64 / unique as f64);
    let last_fetch_s = counters
        .last_page_at()
        .map(|at| at.saturating_duration_since(started).as_secs_f64());
    let texts_at_last_fetch = last_fetch_s.and_then(|t| scans.at(t));
    Summary {
        origins: args.origins,
        pages_per_origin: args.pages,
        max_pages_per_host: args.max_pages_per_host,
        addressing: format!("{:?}", addressing(args)).to_lowercase(),
        page_kb: args.page_kb,
        inline_clean: args.inline_clean.clone(),
        concurrency: args.concurrency,
        kill_at: args.kill_at,
        crawler_exit: w.exits.iter().map(Exit::describe).collect(),
        stopped_because: w.stopped_because.clone(),
        pages_served: pages,
        unique_pages: unique,
        reachable_pages: args.origins * args.pages,
        expected_pages: (args.origins * per_site(args)) as u64,
        duplicate_fetches: pages - unique,
        bytes_served: counters.bytes.load(Relaxed),
        robots_and_sitemap_requests: counters.meta.load(Relaxed),
        not_found_requests: counters.missing.load(Relaxed),
        wall_s: wall.as_secs_f64(),
        pages_per_s_overall: pages as f64 / wall.as_secs_f64(),
        pages_per_s_first_tenth: first,
        pages_per_s_last_tenth: last,
        last_vs_first: first.zip(last).map(|(f, l)| l / f - 1.0),
        pages_per_s_tenths: tenths,
        peak_rss_mb: peak_kib as f64 / 1024.0,
        rss_mb_max_sampled: w.samples.iter().map(|s| s.rss_mb).fold(0.0, f64::max),
        store_bytes,
        store_apparent_bytes: store_apparent,
        store_bytes_per_page: per_page(store_bytes),
        out_bytes,
        out_apparent_bytes: out_apparent,
        out_files,
        out_bytes_per_page: per_page(out_bytes),
        end_of_crawl_pass_s: counters
            .last_page_at()
            .map(|at| (started + wall).saturating_duration_since(at).as_secs_f64()),
        last_fetch_s,
        texts_at_last_fetch,
        text_share_at_last_fetch: texts_at_last_fetch
            .filter(|_| unique > 0)
            .map(|n| n as f64 / unique as f64),
        texts_over_time: scans.0.iter().map(|s| (s.ended_s, s.files)).collect(),
        text_scan_ms_mean: scans.mean_ms(),
        text_scan_gap_max_s: scans.max_gap_s(),
        crawler_log_lines: log.lines().count(),
        learner_final_pass_s: learner_final_pass(&log),
        learner_backlog_max: w.samples.iter().filter_map(|s| s.backlog).max(),
        killed_at: w.killed_at,
        restart_to_first_fetch_s: w.restart_to_first_fetch,
        status_s,
        export_s: export.as_ref().and_then(|e| e.0),
        export_bytes: export.as_ref().map(|e| e.1),
        export_lines: export.as_ref().map(|e| e.2),
        server_cpu_s: server_cpu.as_secs_f64(),
        load1_mean: w.samples.iter().map(|s| s.load1).sum::<f64>() / w.samples.len().max(1) as f64,
        load1_max: w.samples.iter().map(|s| s.load1).fold(0.0, f64::max),
        server_cpu_ms_per_page: (pages > 0)
            .then(|| server_cpu.as_secs_f64() * 1000.0 / pages as f64),
        crawler_summary: log
            .lines()
            .filter(|l| {
                l.starts_with("Crawled")
                    || l.starts_with("Interrupted")
                    || l.starts_with("Templates:")
            })
            .map(String::from)
            .collect(),
        dir: paths.dir.clone(),
    }
}

fn count_lines(path: &Path) -> u64 {
    use std::io::BufRead;
    std::fs::File::open(path).map_or(0, |f| {
        std::io::BufReader::new(f).split(b'\n').count() as u64
    })
}

fn print_summary(s: &Summary) {
    let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    println!(
        "long crawl ({} origins × {} pages{}, ~{} KB/page, {} addressing, inline clean {})",
        s.origins,
        s.pages_per_origin,
        s.max_pages_per_host
            .map_or(String::new(), |p| format!(", budget {p} per host")),
        s.page_kb,
        s.addressing,
        s.inline_clean
    );
    println!(
        "  pages served        {} ({} unique of {} reachable, {} duplicate fetches)",
        s.pages_served, s.unique_pages, s.reachable_pages, s.duplicate_fetches
    );
    println!(
        "  wall                {:.1} s ({:.1} pages/s overall)",
        s.wall_s, s.pages_per_s_overall
    );
    println!(
        "  pages/s by tenth    {}",
        series::show_tenths(&s.pages_per_s_tenths)
    );
    println!(
        "  first / last tenth  {} / {} pages/s ({}%)",
        f(s.pages_per_s_first_tenth),
        f(s.pages_per_s_last_tenth),
        s.last_vs_first
            .map_or("-".into(), |v| format!("{:+.1}", v * 100.0))
    );
    println!(
        "  peak RSS            {:.1} MB (max sampled RSS {:.1} MB)",
        s.peak_rss_mb, s.rss_mb_max_sampled
    );
    println!(
        "  store               {:.1} MB ({} bytes/page); output {:.1} MB in {} files",
        mb(s.store_bytes),
        f(s.store_bytes_per_page),
        mb(s.out_bytes),
        s.out_files
    );
    println!(
        "  end-of-crawl pass   {} s after the last page request (learner: {} s summed over sites)",
        f(s.end_of_crawl_pass_s),
        f(s.learner_final_pass_s)
    );
    println!("  learner backlog max {:?}", s.learner_backlog_max);
    println!(
        "  text at last fetch  {} files, {} of the pages (last fetch at {} s; counts every \
         {} s or less, {} ms a count)",
        s.texts_at_last_fetch.map_or("-".into(), |n| n.to_string()),
        s.text_share_at_last_fetch
            .map_or("-".into(), |v| format!("{:.1} %", v * 100.0)),
        f(s.last_fetch_s),
        f(s.text_scan_gap_max_s),
        f(s.text_scan_ms_mean)
    );
    println!("  crawler output      {} lines", s.crawler_log_lines);
    if let Some((t, pages)) = s.killed_at {
        println!(
            "  kill -9 at          {pages} pages (t = {t:.1} s); restart to first new fetch {} s",
            f(s.restart_to_first_fetch_s)
        );
    }
    println!("  status              {:?} s (two runs)", s.status_s);
    println!(
        "  export              {} s, {:?} bytes, {:?} lines",
        f(s.export_s),
        s.export_bytes,
        s.export_lines
    );
    println!(
        "  server CPU          {:.1} s ({} ms/page)",
        s.server_cpu_s,
        s.server_cpu_ms_per_page
            .map_or("-".into(), |v| format!("{v:.3}"))
    );
    println!(
        "  machine load        {:.1} mean, {:.1} max (1-minute load average, 2 cores)",
        s.load1_mean, s.load1_max
    );
    for l in &s.crawler_summary {
        println!("  crawler: {l}");
    }
    if let Some(why) = &s.stopped_because {
        println!("  STOPPED EARLY       {why}");
    }
}
