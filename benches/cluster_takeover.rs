//! Time from a worker's kill -9 to the first fetch of a partition it held (issue 12,
//! docs/cluster.md "Takeover time"): a procedural universe whose replies wait LATENCY, one
//! nats-server, two workers (`thresher crawl --cluster`) started together; once KILL_AFTER pages
//! are served, worker A is killed (its partitions read from the engine just before), and the
//! universe notes each origin's first page request after the kill. Prints, per run: how many
//! partitions, sites and logged pages A held, the time from the kill to the first request to one
//! of A's sites (the first moved partition at work) and to the last of them (every moved site at
//! work), and what B's takeovers took (the spool and import, from its log). Then B finishes the
//! crawl: every page served, counted distinct.
//!
//! cargo bench --features cluster --bench cluster_takeover -- [--ttl-s 3,6 --kill-after 500,4000
//!     --origins 32 --pages 300 --latency-ms 20 --partitions 16 --concurrency 4]

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "universe/mod.rs"]
mod universe;

use std::collections::BTreeSet;
use std::process::{Child, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use clap::Parser;
use thresher::cluster::{partition_of, Engine, Spec};

#[derive(Debug, Parser)]
#[command(name = "cluster-takeover-bench")]
struct Args {
    /// Lease TTLs, in seconds (one run for each, with each --kill-after).
    #[arg(long, value_delimiter = ',', default_value = "3,6")]
    ttl_s: Vec<u64>,
    /// Pages served before the kill (more: larger logs to take over).
    #[arg(long, value_delimiter = ',', default_value = "500,4000")]
    kill_after: Vec<u64>,
    #[arg(long, default_value_t = 32)]
    origins: usize,
    #[arg(long, default_value_t = 300)]
    pages: usize,
    /// Average page size in KB.
    #[arg(long, default_value_t = 10)]
    page_kb: usize,
    /// What each reply waits before its status line, in ms.
    #[arg(long, default_value_t = 20)]
    latency_ms: u64,
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    #[arg(long, default_value_t = 16)]
    partitions: u32,
    /// `cluster.snapshot_records` of the workers (the default config's when not given).
    #[arg(long)]
    snapshot_records: Option<u64>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = Args::parse();
    println!(
        "universe: {} origins × {} pages, ~{} KB, every reply after {} ms; {} partitions; \
         --concurrency {} a worker, no crawl delay",
        args.origins, args.pages, args.page_kb, args.latency_ms, args.partitions, args.concurrency
    );
    for &ttl in &args.ttl_s {
        for &kill_after in &args.kill_after {
            run(&args, ttl, kill_after);
        }
    }
}

fn run(args: &Args, ttl: u64, kill_after: u64) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let nats = support::nats::NatsServer::start();
    let engine = runtime.block_on(async {
        let engine = Engine::connect(&nats.url).await.expect("connect");
        engine
            .init(&Spec {
                partitions: args.partitions,
                replicas: 1,
                lease_ttl: Duration::from_secs(ttl),
            })
            .await
            .expect("init");
        engine
    });
    let universe::serve::Served {
        server,
        counters,
        dir,
        seeds,
        seeds_file,
        config,
    } = universe::serve::served(args.origins, args.pages, args.page_kb, args.latency_ms, 11);
    if let Some(n) = args.snapshot_records {
        let mut text = std::fs::read_to_string(&config).expect("config");
        text.push_str(&format!("\n[cluster]\nsnapshot_records = {n}\n"));
        std::fs::write(&config, text).expect("config");
    }
    let worker = |name: &str| -> Child {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).expect("worker dir");
        universe::serve::crawl_command(&seeds_file, &config, &d, args.concurrency)
            .args(["--cluster", &nats.url])
            .env("THRESHER_LOG", "thresher=info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("worker.log")).expect("log"))
            .spawn()
            .expect("start a worker")
    };
    let (mut a, mut b) = (worker("a"), worker("b"));
    while counters.pages() < kill_after {
        assert!(
            a.try_wait().expect("wait").is_none(),
            "worker a ended early"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // A's partitions, as the engine has them now; then the kill, at once.
    let report = runtime.block_on(engine.report()).expect("report");
    let tag = format!("-{}-", a.id());
    let held: BTreeSet<u32> = report
        .workers
        .iter()
        .filter(|(id, _)| id.contains(&tag))
        .flat_map(|(_, row)| row.partitions.iter().copied())
        .collect();
    a.kill().expect("kill -9 a");
    counters.arm();
    let killed = Instant::now();
    let _ = a.wait();
    let served_at_kill = counters.pages();
    // A's sites that still had pages to serve.
    let moved: Vec<usize> = (0..args.origins)
        .filter(|&i| {
            let site = url::Url::parse(&seeds[i]).expect("seed");
            held.contains(&partition_of(
                &thresher::crawl::url::site_key(&site),
                args.partitions,
            )) && counters.origin_unique(i) < args.pages as u64
        })
        .collect();
    let status = b.wait().expect("wait b");
    assert!(status.success(), "worker b failed: {status}");
    let firsts: Vec<f64> = moved
        .iter()
        .filter_map(|&i| counters.origin_first_after_arm(i))
        .map(|t| t.duration_since(killed).as_secs_f64())
        .collect();
    let first = firsts.iter().copied().fold(f64::INFINITY, f64::min);
    let last = firsts.iter().copied().fold(0.0, f64::max);
    let log = std::fs::read_to_string(dir.path().join("b/worker.log")).unwrap_or_default();
    let (takeovers, imported, ms) = takeovers(&log);
    let from_snapshots = log
        .lines()
        .filter(|l| l.contains("took a partition over") && l.contains("snapshot=\"p"))
        .count();
    let a_log = std::fs::read_to_string(dir.path().join("a/worker.log")).unwrap_or_default();
    let (snaps, records, bytes, snap_ms) = snapshots(&format!("{a_log}{log}"));
    println!(
        "TTL {ttl} s, kill after {served_at_kill} pages: A held {} partitions ({} sites with \
         pages left); kill → first request to a moved site {first:.2} s, → every moved site \
         {last:.2} s ({} of {} seen); B's takeovers after the kill: {takeovers}, {imported} pages \
         imported, {ms} ms in all (spool + import), {from_snapshots} from a snapshot; crawl: {} \
         distinct of {} pages; snapshots taken (both workers): {snaps}, their records {records}, \
         {bytes} bytes ({:.1} KB a record), {snap_ms} ms in all",
        held.len(),
        moved.len(),
        firsts.len(),
        moved.len(),
        counters.unique.load(Relaxed),
        args.origins * args.pages,
        bytes as f64 / records.max(1) as f64 / 1000.0
    );
    drop(server);
}

/// The "took a snapshot" lines: how many, their records and bytes added up, milliseconds.
fn snapshots(log: &str) -> (usize, u64, u64, u64) {
    let mut out = (0, 0, 0, 0);
    for line in log.lines().filter(|l| l.contains("took a snapshot")) {
        out.0 += 1;
        out.1 += field(line, "records=");
        out.2 += field(line, "bytes=");
        out.3 += field(line, "ms=");
    }
    out
}

/// A `name=value` number of a log line (0 when absent).
fn field(line: &str, name: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(name))
        .and_then(|v| v.trim_matches(|c: char| !c.is_ascii_digit()).parse().ok())
        .unwrap_or(0)
}

/// B's "took a partition over" lines with records (the ones after the kill: a partition at the
/// start has none): how many, pages imported, milliseconds in all.
fn takeovers(log: &str) -> (usize, u64, u64) {
    let mut out = (0, 0, 0);
    for line in log.lines().filter(|l| l.contains("took a partition over")) {
        if field(line, "records=") == 0 {
            continue;
        }
        out.0 += 1;
        out.1 += field(line, "imported=");
        out.2 += field(line, "ms=");
    }
    out
}
