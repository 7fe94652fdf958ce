//! The crawl benchmark (issue 2): serve a local universe of news sites in-process (one origin
//! per site, pages assembled from shared `Bytes`), run the release `thresher crawl` on it as a
//! child process, and report what the server saw (pages, duplicates, bytes, gaps between
//! requests per origin, peak in-flight per origin) and what the child cost (wall time, peak RSS
//! from /proc VmHWM, CPU). See docs/benchmarks.md.
//!
//! cargo bench --bench crawl -- [--origins 50 --pages 200 --page-kb 50 --delay 0ms
//!     --concurrency 64 --inline-clean on|off --warc --politeness --settle 65s]

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "crawl/procfs.rs"]
mod procfs;

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

use support::{write_config, write_seeds, TestServer, Universe};

#[derive(Debug, Parser)]
#[command(
    name = "crawl-bench",
    about = "Crawl a local universe of origins and measure it."
)]
struct Args {
    /// Origins (one news site each).
    #[arg(long, default_value_t = 50)]
    origins: usize,
    /// HTML pages per origin, all reachable from its home page.
    #[arg(long, default_value_t = 200)]
    pages: usize,
    /// Average page size in KB (padding in shared head markup).
    #[arg(long, default_value_t = 50)]
    page_kb: usize,
    /// Per-origin politeness delay passed as `--delay`.
    #[arg(long, value_parser = humantime::parse_duration)]
    delay: Option<Duration>,
    /// The politeness run: default delay 100ms; reports violating pairs and gaps per origin.
    #[arg(long)]
    politeness: bool,
    /// Global concurrency passed as `--concurrency`.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Write `[template] inline = true|false` into the config file (omitted: config default).
    #[arg(long, value_parser = ["on", "off"])]
    inline_clean: Option<String>,
    /// Also write WARC files (`--warc-out DIR/warc`) and report their bytes per page.
    #[arg(long)]
    warc: bool,
    /// Extra TOML appended to the generated config file.
    #[arg(long)]
    config_extra: Option<String>,
    /// The crawler binary (default: the release `thresher` cargo built for this bench).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Worker threads of the in-process server.
    #[arg(long, default_value_t = 1)]
    server_threads: usize,
    /// Kill the crawler after this long.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "15m")]
    timeout: Duration,
    /// Keep the data and output directories here (default: a temporary directory, removed).
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Start the crawl no sooner than this after an earlier run of this bench removed its
    /// files (0s: at once). See `SETTLE`.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "65s")]
    settle: Duration,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("crawl bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    let delay = args.delay.unwrap_or(if args.politeness {
        Duration::from_millis(100)
    } else {
        Duration::ZERO
    });
    let bin = args.bin.clone().unwrap_or_else(support::thresher_bin);
    if !bin.is_file() {
        return Err(format!(
            "crawler binary {} not found: run `cargo build --release` (or pass --bin PATH)",
            bin.display()
        ));
    }

    let t = Instant::now();
    let universe = Universe::generate(args.origins, args.pages, args.page_kb * 1000);
    let served_total: usize = universe
        .sites
        .iter()
        .flat_map(|s| s.pages.iter().map(|p| p.len()))
        .sum();
    eprintln!(
        "universe: {} origins × {} pages, {:.1} MB of HTML from {:.1} MB resident, built in {:.1?}",
        args.origins,
        args.pages,
        served_total as f64 / 1e6,
        universe.resident_bytes() as f64 / 1e6,
        t.elapsed()
    );

    let server = TestServer::background(args.origins, args.server_threads);
    let robots = support::Endpoint::text("User-agent: *\nAllow: /\n");
    for (site, origin) in universe.sites.iter().zip(server.origins()) {
        origin.serve(site.site().route("/robots.txt", robots.clone()));
    }

    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = args
        .keep
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let seeds_file = write_seeds(&dir, &seeds);
    let inline = args.inline_clean.as_deref().map(|v| v == "on");
    let mut config = support::bench_config(args.pages, inline);
    if let Some(extra) = &args.config_extra {
        config.push_str(extra);
        config.push('\n');
    }
    let config_file = write_config(&dir, &config);

    settle(args.settle);
    let mut cmd = Command::new(&bin);
    cmd.arg("crawl")
        .arg("--data")
        .arg(dir.join("data"))
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--max-pages", "0", "--max-depth", "50", "--quiet"])
        .arg("--config")
        .arg(&config_file);
    if args.warc {
        cmd.arg("--warc-out").arg(dir.join("warc"));
    }
    cmd.arg("--seeds")
        .arg(&seeds_file)
        .arg("--concurrency")
        .arg(args.concurrency.to_string())
        .arg("--delay")
        .arg(format!("{}ms", delay.as_millis()));
    let log = std::fs::File::create(dir.join("crawler.log")).map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    eprintln!("running: {cmd:?}");

    let server_cpu0 = procfs::cpu_time("self").unwrap_or_default();
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", bin.display()))?;
    let pid = child.id();
    let (mut peak_kib, mut child_cpu, mut child_sys) = (0u64, Duration::ZERO, Duration::ZERO);
    let status = loop {
        if let Some(k) = procfs::peak_rss_kib(pid) {
            peak_kib = peak_kib.max(k);
        }
        if let Some((u, s)) = procfs::cpu_user_system(&pid.to_string()) {
            child_cpu = child_cpu.max(u + s);
            child_sys = child_sys.max(s);
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
    let wall = started.elapsed();
    let server_cpu = procfs::cpu_time("self").unwrap_or_default() - server_cpu0;

    report(
        &args,
        &universe,
        &server,
        delay,
        wall,
        peak_kib,
        (child_cpu, child_sys),
        server_cpu,
    );
    if args.warc {
        report_warc(&dir.join("warc"), &server);
    }
    let log_tail = std::fs::read_to_string(dir.join("crawler.log")).unwrap_or_default();
    let tail: Vec<&str> = log_tail.lines().rev().take(5).collect();
    eprintln!("crawler exit: {status}; last log lines:");
    for l in tail.iter().rev() {
        eprintln!("  | {l}");
    }
    if args.keep.is_some() {
        eprintln!("kept {}", dir.display());
    } else {
        let removed = tmp.path().to_path_buf();
        tmp.close()
            .map_err(|e| format!("remove {}: {e}", removed.display()))?;
        removed_now(&removed);
    }
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Why a run waits after an earlier one (`--settle`, default 65 s): ext4 without a journal
/// (this project's shared machine) passes over inodes freed in the last 60 s when it allocates
/// one (fs/ext4/ialloc.c, `recently_deleted`: a buffer-cache lookup per skipped inode). A run
/// started right after the previous one removed its ~11,000 files spent up to a fifth of the
/// crawler's CPU there (perf, docs/quality.md), a cost of the benchmark, not of the crawler.
/// The removal is synced, so 60 s after it the freed inodes are no longer recent; 5 s spare.
const STAMP: &str = "thresher-crawl-bench.removed";

/// Wait until `settle` has passed since this bench last removed a run's files (the time is in
/// `$TMPDIR/thresher-crawl-bench.removed`).
fn settle(settle: Duration) {
    let stamp = std::env::temp_dir().join(STAMP);
    let Some(removed) = std::fs::read_to_string(&stamp)
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
    else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let since = now.saturating_sub(Duration::from_millis(removed));
    if since < settle {
        let wait = settle - since;
        eprintln!(
            "waiting {:.0?}: an earlier run removed its files {:.0?} ago (--settle; ext4 \
             skips recently freed inodes when it creates files)",
            wait, since
        );
        std::thread::sleep(wait);
    }
}

/// Record that a run's files were just removed (after syncing their file system, so the freed
/// inodes count as recent for 60 s, not the 360 s of a dirty inode table).
fn removed_now(dir: &std::path::Path) {
    if let Some(parent) = dir.parent() {
        if let Ok(f) = std::fs::File::open(parent) {
            use std::os::fd::AsRawFd;
            // SAFETY: syncfs on an open descriptor has no memory-safety preconditions.
            unsafe {
                libc::syncfs(f.as_raw_fd());
            }
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let _ = std::fs::write(
        std::env::temp_dir().join(STAMP),
        now.as_millis().to_string(),
    );
}

/// The WARC files' size: in all, per page stored, and against the bytes the server sent.
fn report_warc(dir: &std::path::Path, server: &TestServer) {
    let files: Vec<u64> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .collect()
        })
        .unwrap_or_default();
    let total: u64 = files.iter().sum();
    let served: u64 = server.origins().iter().map(|o| o.bytes_served()).sum();
    let requests: usize = server.origins().iter().map(|o| o.total_hits()).sum();
    println!(
        "  WARC: {} files, {} bytes = {:.0} bytes per request ({} requests), {:.3} of the bytes served",
        files.len(),
        total,
        total as f64 / requests.max(1) as f64,
        requests,
        total as f64 / served.max(1) as f64
    );
}

#[allow(clippy::too_many_arguments)]
fn report(
    args: &Args,
    universe: &Universe,
    server: &TestServer,
    delay: Duration,
    wall: Duration,
    peak_kib: u64,
    (child_cpu, child_sys): (Duration, Duration),
    server_cpu: Duration,
) {
    let mut pages = 0usize;
    let mut unique = 0usize;
    let mut duplicates = 0usize;
    let mut requests = 0usize;
    let mut bytes = 0u64;
    let mut max_in_flight = 0usize;
    let mut violations = 0usize;
    let mut violations_pages = 0usize;
    let mut min_gaps: Vec<(Duration, usize)> = Vec::new();
    for (i, (site, o)) in universe.sites.iter().zip(server.origins()).enumerate() {
        let counts = o.hit_counts();
        for page in &site.pages {
            if let Some(&n) = counts.get(&page.path) {
                pages += n;
                unique += 1;
                duplicates += n - 1;
            }
        }
        requests += o.total_hits();
        bytes += o.bytes_served();
        max_in_flight = max_in_flight.max(o.max_in_flight());
        violations += o.pairs_closer_than(delay);
        let page_gaps = o.gaps_where(|h| h.path() != "/robots.txt");
        violations_pages += page_gaps.iter().filter(|g| **g < delay).count();
        if let Some(g) = o.min_gap() {
            min_gaps.push((g, i));
        }
    }
    min_gaps.sort();
    let expected = args.origins * args.pages;
    let secs = wall.as_secs_f64();
    println!(
        "crawl benchmark ({} origins × {} pages, ~{} KB/page, delay {delay:?}, concurrency {}{})",
        args.origins,
        args.pages,
        args.page_kb,
        args.concurrency,
        args.inline_clean
            .as_deref()
            .map(|v| format!(", inline clean {v}"))
            .unwrap_or_default()
    );
    println!("  pages fetched      {pages} ({unique} unique of {expected} reachable, {duplicates} duplicate fetches)");
    println!("  requests           {requests} (incl. robots.txt and misses)");
    println!("  wall               {secs:.2} s");
    println!("  pages/s            {:.1}", pages as f64 / secs);
    println!(
        "  MB/s               {:.2} (body bytes served)",
        bytes as f64 / 1e6 / secs
    );
    println!(
        "  peak RSS           {:.1} MB (VmHWM)",
        peak_kib as f64 / 1024.0
    );
    println!(
        "  crawler CPU        {:.1} s ({:.2} cores)",
        child_cpu.as_secs_f64(),
        child_cpu.as_secs_f64() / secs
    );
    println!(
        "  crawler system CPU {:.1} s (kernel: mostly creating files)",
        child_sys.as_secs_f64()
    );
    println!(
        "  server CPU         {:.1} s ({:.2} cores, this process)",
        server_cpu.as_secs_f64(),
        server_cpu.as_secs_f64() / secs
    );
    println!("  max in flight/origin {max_in_flight}");
    if !delay.is_zero() {
        println!("  politeness: pairs of requests to one origin closer than {delay:?}: {violations} (excluding robots.txt: {violations_pages})");
        let show: Vec<String> = min_gaps
            .iter()
            .take(5)
            .map(|(g, i)| format!("origin {i}: {g:.1?}"))
            .collect();
        println!("  smallest min gaps  {}", show.join(", "));
        if let Some((g, _)) = min_gaps.last() {
            println!("  largest min gap    {g:.1?}");
        }
    }
    let json = serde_json::json!({
        "origins": args.origins, "pages_per_origin": args.pages, "page_kb": args.page_kb,
        "delay_ms": delay.as_millis() as u64, "concurrency": args.concurrency,
        "inline_clean": args.inline_clean,
        "pages_fetched": pages, "unique_pages": unique, "duplicates": duplicates,
        "requests": requests, "wall_s": secs, "pages_per_s": pages as f64 / secs,
        "mb_per_s": bytes as f64 / 1e6 / secs, "peak_rss_mb": peak_kib as f64 / 1024.0,
        "crawler_cpu_s": child_cpu.as_secs_f64(),
        "crawler_system_cpu_s": child_sys.as_secs_f64(), "server_cpu_s": server_cpu.as_secs_f64(),
        "max_in_flight_per_origin": max_in_flight, "violating_pairs": violations,
        "violating_pairs_pages_only": violations_pages,
        "min_gap_ms": min_gaps.first().map(|(g, _)| g.as_secs_f64() * 1000.0),
    });
    println!("RESULT {json}");
}
