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

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "universe/mod.rs"]
mod universe;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use thresher::cluster::{Engine, Spec};
use universe::{Spec as UniverseSpec, Universe};

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
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut first: Option<f64> = None;
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
    for &n in &args.workers {
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
        let universe = Arc::new(Universe::new(UniverseSpec {
            origins: args.origins,
            pages: args.pages,
            page_bytes: args.page_kb * 1000,
            seed: 7,
        }));
        let (server, counters) = universe::serve::serve_with_latency(
            universe,
            2,
            Duration::from_millis(args.latency_ms),
        );
        let dir = tempfile::tempdir().expect("tmp");
        let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
        let seeds_file = support::write_seeds(dir.path(), &seeds);
        let config =
            support::write_config(dir.path(), &support::bench_config(args.pages, Some(true)));
        let started = Instant::now();
        let mut workers: Vec<Child> = (0..n)
            .map(|i| {
                let d = dir.path().join(format!("w{i}"));
                Command::new(env!("CARGO_BIN_EXE_thresher"))
                    .args(["crawl", "--cluster", &nats.url, "--quiet", "--delay", "0ms"])
                    .args(["--concurrency", &args.concurrency.to_string()])
                    .arg("--seeds")
                    .arg(&seeds_file)
                    .arg("--config")
                    .arg(&config)
                    .arg("--data")
                    .arg(d.join("data"))
                    .arg("--out")
                    .arg(d.join("out"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("start a worker")
            })
            .collect();
        for w in &mut workers {
            let status = w.wait().expect("wait");
            assert!(status.success(), "a worker failed: {status}");
        }
        let all_exited = started.elapsed().as_secs_f64();
        let crawl = counters
            .last_page_at()
            .map_or(all_exited, |t| t.duration_since(started).as_secs_f64());
        let pages = counters.pages.load(Relaxed);
        let unique = counters.unique.load(Relaxed);
        let rate = unique as f64 / crawl;
        let speedup = first.map_or(1.0, |f| rate / f);
        first.get_or_insert(rate);
        println!(
            "workers {n}: crawl {crawl:.1} s (to the last page served), all exited {all_exited:.1} s; \
             pages served {pages}, distinct {unique}; {rate:.0} pages/s; speed-up {speedup:.2}×"
        );
        drop(server);
    }
}
