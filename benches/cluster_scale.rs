//! Scaling of `thresher crawl --cluster` with its workers (issue 12, docs/cluster.md
//! "Figures"): a procedural universe whose every reply waits LATENCY before its status line
//! (latency-bound, so the scaling shows on 2 cores), a nats-server started here, and for each
//! worker count N of `--workers`, a fresh engine, a fresh universe server and N workers started
//! at once (`thresher crawl --cluster`, `--concurrency C` each: the per-worker cap). Prints, per
//! N: the time from the start to the last page served (the crawl), to the last worker's exit
//! (the crawl and its end: two share rounds and each worker's end-of-crawl pass), pages served
//! and distinct, pages/s, and the speed-up over the first N.
//!
//! cargo bench --features cluster --bench cluster_scale -- [--workers 1,2,4 --origins 16
//!     --pages 100 --latency-ms 50 --concurrency 2 --partitions 32 --ttl-s 3]
//!
//! With `--compare-embedded ROUNDS` it measures the cluster mode's overhead instead: the
//! embedded crawl, the embedded crawl writing WARC files (a worker's archive is on), and one
//! `--cluster` worker, in turn, ROUNDS times (medians).

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "universe/mod.rs"]
mod universe;

use std::process::{Child, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use clap::Parser;
use thresher::cluster::{Engine, Spec};

#[derive(Debug, Parser)]
#[command(name = "cluster-scale-bench")]
struct Args {
    /// Worker counts, one run each.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    workers: Vec<usize>,
    #[arg(long, default_value_t = 16)]
    origins: usize,
    #[arg(long, default_value_t = 100)]
    pages: usize,
    /// Average page size in KB.
    #[arg(long, default_value_t = 10)]
    page_kb: usize,
    /// What each reply waits before its status line, in ms.
    #[arg(long, default_value_t = 50)]
    latency_ms: u64,
    /// Requests in flight per worker (`crawl --concurrency`).
    #[arg(long, default_value_t = 2)]
    concurrency: usize,
    #[arg(long, default_value_t = 32)]
    partitions: u32,
    #[arg(long, default_value_t = 3)]
    ttl_s: u64,
    /// Instead of scaling: the embedded crawl, the embedded crawl with `--warc-out`, and one
    /// `--cluster` worker, in turn, this many rounds (the cluster mode's overhead; run it with
    /// `--latency-ms 0` for a CPU-bound crawl).
    #[arg(long)]
    compare_embedded: Option<usize>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// How a run crawls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `crawl --cluster` with this many workers.
    Cluster(usize),
    /// One `crawl` without `--cluster` (`warc`: with `--warc-out`, as a cluster worker has).
    Embedded { warc: bool },
}

/// What one run measured.
struct Run {
    /// Start to the last page served, in s.
    crawl: f64,
    /// Start to the last process's exit, in s.
    exited: f64,
    pages: u64,
    unique: u64,
    /// CPU seconds the engine (nats-server) used (0 without one).
    engine_cpu: f64,
    /// From the first page served to the last, in s (the crawl without its start).
    steady: f64,
}

fn main() {
    let args = Args::parse();
    println!(
        "universe: {} origins × {} pages, ~{} KB, every reply after {} ms; {} partitions, lease \
         TTL {} s; --concurrency {} a worker",
        args.origins,
        args.pages,
        args.page_kb,
        args.latency_ms,
        args.partitions,
        args.ttl_s,
        args.concurrency
    );
    if let Some(rounds) = args.compare_embedded {
        return compare_embedded(&args, rounds);
    }
    let mut first: Option<f64> = None;
    for &n in &args.workers {
        let r = run(&args, Mode::Cluster(n));
        let rate = r.unique as f64 / r.crawl;
        let speedup = first.map_or(1.0, |f| rate / f);
        first.get_or_insert(rate);
        println!(
            "workers {n}: crawl {:.1} s (to the last page served), all exited {:.1} s; pages \
             served {}, distinct {}; {rate:.0} pages/s; speed-up {speedup:.2}×",
            r.crawl, r.exited, r.pages, r.unique
        );
    }
}

/// `--compare-embedded ROUNDS`: the embedded crawl, the embedded crawl writing WARC files, and
/// one `--cluster` worker, in turn, ROUNDS times; medians of pages/s (to the last page served).
fn compare_embedded(args: &Args, rounds: usize) {
    let modes = [
        Mode::Embedded { warc: false },
        Mode::Embedded { warc: true },
        Mode::Cluster(1),
    ];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut steady: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    for round in 0..rounds {
        for (m, &mode) in modes.iter().enumerate() {
            let r = run(args, mode);
            assert_eq!(
                r.unique as usize,
                args.origins * args.pages,
                "{mode:?}: not every page"
            );
            let rate = r.unique as f64 / r.crawl;
            let steady_rate = r.unique as f64 / r.steady;
            println!(
                "round {round} {mode:?}: crawl {:.2} s, exited {:.2} s, {rate:.0} pages/s; first \
                 page to last {:.2} s, {steady_rate:.0} pages/s; nats-server CPU {:.2} s",
                r.crawl, r.exited, r.steady, r.engine_cpu
            );
            rates[m].push(rate);
            steady[m].push(steady_rate);
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (base, base_steady) = (median(&rates[0]), median(&steady[0]));
    for (m, mode) in modes.iter().enumerate() {
        let (med, med_steady) = (median(&rates[m]), median(&steady[m]));
        println!(
            "{mode:?}: median {med:.0} pages/s over {rounds} rounds ({:+.1} % against the \
             embedded crawl); first page to last {med_steady:.0} pages/s ({:+.1} %)",
            (med / base - 1.0) * 100.0,
            (med_steady / base_steady - 1.0) * 100.0
        );
    }
}

fn run(args: &Args, mode: Mode) -> Run {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let nats = matches!(mode, Mode::Cluster(_)).then(|| {
        let nats = support::nats::NatsServer::start();
        runtime.block_on(async {
            Engine::connect(&nats.url)
                .await
                .expect("connect")
                .init(&Spec {
                    partitions: args.partitions,
                    replicas: 1,
                    lease_ttl: Duration::from_secs(args.ttl_s),
                })
                .await
                .expect("init");
        });
        nats
    });
    let universe::serve::Served {
        server,
        counters,
        dir,
        seeds: _,
        seeds_file,
        config,
    } = universe::serve::served(args.origins, args.pages, args.page_kb, args.latency_ms, 7);
    let started = Instant::now();
    counters.arm();
    let workers = match mode {
        Mode::Cluster(n) => n,
        Mode::Embedded { .. } => 1,
    };
    let mut children: Vec<Child> = (0..workers)
        .map(|i| {
            let d = dir.path().join(format!("w{i}"));
            let mut cmd =
                universe::serve::crawl_command(&seeds_file, &config, &d, args.concurrency);
            match (mode, &nats) {
                (Mode::Cluster(_), Some(nats)) => {
                    cmd.args(["--cluster", &nats.url]);
                }
                (Mode::Embedded { warc: true }, _) => {
                    cmd.arg("--warc-out").arg(d.join("warc"));
                }
                _ => {}
            }
            cmd.stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start a worker")
        })
        .collect();
    for w in &mut children {
        let status = w.wait().expect("wait");
        assert!(status.success(), "a worker failed: {status}");
    }
    let exited = started.elapsed().as_secs_f64();
    let crawl = counters
        .last_page_at()
        .map_or(exited, |t| t.duration_since(started).as_secs_f64());
    let run = Run {
        crawl,
        exited,
        pages: counters.pages.load(Relaxed),
        unique: counters.unique.load(Relaxed),
        engine_cpu: nats.as_ref().map_or(0.0, |n| n.cpu_seconds()),
        steady: counters
            .first_after_arm()
            .map_or(crawl, |t| crawl - t.duration_since(started).as_secs_f64()),
    };
    drop(server);
    run
}
