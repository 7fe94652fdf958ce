//! A cluster worker (`thresher crawl --cluster URLS`, docs/cluster.md, "The crawl"): this
//! process as one worker of a crawl across machines. The crawl itself is the one-machine crawl,
//! given hooks (`crawl::Partitioned`, `hooks`): it dispatches only sites of the partitions
//! this worker holds, commits each fetch's WARC records to the partition's log before its store
//! commit (a fenced append drops the fetch), and hands links for other partitions to their
//! inboxes. The worker's own side: share rounds (take free partitions, let lost ones go,
//! `rounds`), a takeover (fence the log, import its last snapshot and the log after it into
//! the local store) and snapshots (`takeover`), the inboxes (log the links, queue them,
//! acknowledge, `links`), and the end (every live worker idle, every partition held, no link
//! waiting: twice in a row). A [`CrawlRun`](super::CrawlRun) given
//! [`cluster`](super::CrawlRun::cluster) starts one.

mod hooks;
mod links;
mod rounds;
mod state;
mod takeover;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use url::Url;

use crate::cluster::{partition_of, ClusterError, Engine, Init, Report, Spec};
use crate::config::Config;
use crate::crawl::stats::CrawlStats;
use crate::crawl::url as urls;
use crate::crawl::worker::Ctx;
use crate::crawl::{EventSink, Partitioned, RunOptions};
use crate::store::{Enqueued, Store};
use links::pull_links;
use rounds::rounds;
pub use state::WorkerError;
use state::{Held, Renewed, SharedJobs, Snaps, State};
use takeover::snapshots;

/// The engine at `urls` answers and the cluster is initialised (else the error says which):
/// checked before a worker touches its data directory.
pub fn check(urls: &str) -> Result<(), super::RunError> {
    blocking(async {
        let engine = Engine::connect(urls).await?;
        engine.spec().await.map(|_| ())
    })
    .map_err(|e| super::RunError::Cluster(e.to_string()))
}

/// A worker's settings: the engine checked first (a worker that cannot use it writes nothing
/// at all), and a WARC directory when none is set (a worker's partition logs carry each fetch's
/// WARC records, which the archive builds: it keeps its own files too).
pub(super) fn config_for(urls: &str, mut config: Config) -> Result<Config, super::RunError> {
    check(urls)?;
    if config.crawl.warc_dir.is_none() {
        config.crawl.warc_dir = Some(config.crawl.data_dir.join("warc"));
    }
    Ok(config)
}

/// Create the cluster's spec, buckets and streams on the engine at `urls`, or check that they
/// are there with the same spec (`thresher cluster init`).
pub fn init(urls: &str, spec: &Spec) -> Result<Init, ClusterError> {
    spec.validate()?;
    blocking(async { Engine::connect(urls).await?.init(spec).await })
}

/// What the cluster at `urls` holds now: its workers, the partitions each holds, the logs
/// (`thresher status --cluster`).
pub fn report(urls: &str) -> Result<Report, ClusterError> {
    blocking(async { Engine::connect(urls).await?.report().await })
}

/// `work` on a runtime of its own (this thread).
fn blocking<T>(
    work: impl std::future::Future<Output = Result<T, ClusterError>>,
) -> Result<T, ClusterError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClusterError::Runtime(e.to_string()))?
        .block_on(work)
}

/// Join the cluster at `urls` as a worker: the crawl gets its hooks in `options`, and the
/// worker's task is returned, to be awaited once the crawl ends.
pub(super) async fn join(
    urls: &str,
    config: &Config,
    store: &Arc<Store>,
    stats: &Arc<CrawlStats>,
    seeds: &[Url],
    shutdown: &CancellationToken,
    options: &mut RunOptions,
) -> Result<tokio::task::JoinHandle<Result<(), WorkerError>>, super::RunError> {
    let worker = start(
        urls,
        config,
        store.clone(),
        stats.clone(),
        seeds.to_vec(),
        shutdown.clone(),
    )
    .await
    .map_err(|e| super::RunError::Cluster(e.to_string()))?;
    options.partitioned = Some(worker.hooks);
    options.external = Some(worker.external);
    options.ctx_out = Some(worker.ctx_out);
    Ok(worker.task)
}

/// What the crawl needs from a started worker, and the worker's own task.
struct Worker {
    hooks: Partitioned,
    external: tokio::sync::mpsc::UnboundedReceiver<Vec<Enqueued>>,
    ctx_out: tokio::sync::oneshot::Sender<(Arc<Ctx>, Option<EventSink>)>,
    task: tokio::task::JoinHandle<Result<(), WorkerError>>,
}

/// Connect, join, and start the worker's task; the crawl gets the hooks.
async fn start(
    urls: &str,
    config: &Config,
    store: Arc<Store>,
    stats: Arc<CrawlStats>,
    seeds: Vec<Url>,
    shutdown: CancellationToken,
) -> Result<Worker, ClusterError> {
    let engine = Engine::connect(urls).await?;
    let spec = engine.spec().await?;
    let id = worker_id();
    let share = engine.join(&id).await?;
    let partitions = spec.partitions;
    let held: Held = Arc::new(Mutex::new(HashMap::new()));
    let snaps: Snaps = Arc::default();
    let jobs: SharedJobs = Arc::default();
    let renewed: Renewed = Arc::new(Mutex::new(Instant::now()));
    let hooks = hooks::hooks(&hooks::Shared {
        engine: engine.clone(),
        partitions,
        held: held.clone(),
        jobs: jobs.clone(),
        renewed: renewed.clone(),
        snaps: snaps.clone(),
        // A lease counts as held for 4/5 of its TTL after the round that renewed it.
        valid_for: spec.lease_ttl - spec.lease_ttl / 5,
    });
    let (to_crawl, external) = tokio::sync::mpsc::unbounded_channel();
    let (ctx_out, ctx_in) = tokio::sync::oneshot::channel();
    let state = State {
        renewed,
        jobs,
        engine,
        id,
        partitions,
        held,
        store,
        stats,
        data_dir: config.crawl.data_dir.clone(),
        to_crawl,
        moves: Mutex::default(),
        queued: Default::default(),
        snaps,
        snapshot_records: config.cluster.snapshot_records,
    };
    let ttl = spec.lease_ttl;
    let task = tokio::spawn(async move {
        let Ok((ctx, sink)) = ctx_in.await else {
            return Ok(());
        };
        drive(state, share, ctx, sink, seeds, ttl, shutdown).await
    });
    Ok(Worker {
        hooks,
        external,
        ctx_out,
        task,
    })
}

/// Host, pid and start time: unique per process.
fn worker_id() -> String {
    let host = crate::crawl::archive::hostname().unwrap_or_else(|| "host".into());
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{host}-{}-{ms}", std::process::id())
}

async fn drive(
    state: State,
    share: crate::cluster::Share,
    ctx: Arc<Ctx>,
    sink: Option<EventSink>,
    seeds: Vec<Url>,
    ttl: Duration,
    shutdown: CancellationToken,
) -> Result<(), WorkerError> {
    // The seeds go to their partitions' owners (each worker sends them; the engine keeps one
    // copy within its duplicate window, and the owner's seen set the rest).
    for s in &seeds {
        let p = partition_of(&urls::site_key(s), state.partitions);
        state.engine.send_link(p, s.as_str(), 0).await?;
    }
    let state = Arc::new(state);
    // The rounds (leases, takeovers, the end) and the inboxes run apart, so that neither a
    // slow pull nor a takeover's import delays a lease's renewal.
    let finished = CancellationToken::new();
    let puller = tokio::spawn(pull_links(state.clone(), ctx.clone(), finished.clone()));
    let snapshotter = tokio::spawn(snapshots(state.clone(), ttl, finished.clone()));
    let rounds = rounds(&state, share, &ctx, sink.as_ref(), ttl, &shutdown).await;
    finished.cancel();
    let pulled = puller.await.map_err(|e| WorkerError::Task(e.to_string()))?;
    let snapped = snapshotter
        .await
        .map_err(|e| WorkerError::Task(e.to_string()))?;
    rounds.and(pulled).and(snapped)
}
