//! `thresher crawl --cluster URLS`: this process as one worker of a crawl across machines
//! (docs/cluster.md, "The crawl"). The crawl itself is the one-machine crawl, given hooks
//! (`crawl::Partitioned`): it dispatches only sites of the partitions this worker holds,
//! commits each fetch's WARC records to the partition's log before its store commit (a fenced
//! append drops the fetch), and hands links for other partitions to their inboxes. This module
//! runs the worker's side: share rounds (take free partitions, let lost ones go), a takeover
//! (fence the log, spool it, import it into the local store), the inboxes (log the links, queue
//! them, acknowledge), and the end (every live worker idle, every partition held, no link
//! waiting: twice in a row).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::cluster::{
    partition_of, Append, ClusterError, Engine, Kind, LinkInbox, PartitionLog, SnapshotRef,
    WorkerState,
};
use crate::config::Config;
use crate::crawl::import::{self, Queued};
use crate::crawl::stats::CrawlStats;
use crate::crawl::url as urls;
use crate::crawl::worker::Ctx;
use crate::crawl::{PageSink, Partitioned};
use crate::store::{Commit, Enqueued, QueueEntry, Store};

/// What stops a worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("importing a partition's records: {0}")]
    Import(#[from] import::ImportError),
    #[error("a worker task failed: {0}")]
    Task(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Links pulled from an inbox at once.
const PULL: usize = 256;

/// What the crawl needs from a started worker, and the worker's own task.
pub struct Worker {
    pub hooks: Partitioned,
    pub external: tokio::sync::mpsc::UnboundedReceiver<Vec<Enqueued>>,
    pub ctx_out: tokio::sync::oneshot::Sender<(Arc<Ctx>, Option<PageSink>)>,
    pub task: tokio::task::JoinHandle<Result<(), WorkerError>>,
}

/// The partitions this worker holds now, with their logs (each behind its own lock: a
/// partition's appends go one at a time).
type Held = Arc<Mutex<HashMap<u32, Arc<tokio::sync::Mutex<PartitionLog>>>>>;

/// Per partition: requests and page processings in hand (`Partitioned::started` /
/// `settled`), and whether it is being handed back (no new work starts; it is released once
/// its work in hand is committed).
#[derive(Default)]
struct Jobs {
    in_hand: HashMap<u32, usize>,
    draining: std::collections::HashSet<u32>,
}

type SharedJobs = Arc<Mutex<Jobs>>;

fn jobs_of(jobs: &SharedJobs) -> std::sync::MutexGuard<'_, Jobs> {
    jobs.lock().unwrap_or_else(PoisonError::into_inner)
}

/// When the last share round began: every lease still held was renewed after it, so each is
/// good until at least this plus the TTL. A worker that was stopped (SIGSTOP) past that starts
/// nothing until a round confirms what it still holds.
type Renewed = Arc<Mutex<Instant>>;

struct State {
    renewed: Renewed,
    jobs: SharedJobs,
    engine: Engine,
    id: String,
    partitions: u32,
    held: Held,
    store: Arc<Store>,
    stats: Arc<CrawlStats>,
    data_dir: PathBuf,
    to_crawl: UnboundedSender<Vec<Enqueued>>,
    /// Partitions taken over, handed back and lost since the start (for `status --cluster`).
    moves: Mutex<Moves>,
    /// URLs queued for its partitions at the last round's count (said again when it turns
    /// busy between rounds).
    queued: std::sync::atomic::AtomicU64,
    /// Per partition held: what is logged since its last snapshot, and that snapshot.
    snaps: Snaps,
    /// `cluster.snapshot_records`.
    snapshot_records: u64,
}

/// A partition's snapshot state ([`snapshot`]).
#[derive(Clone, Debug, Default)]
struct Snap {
    /// Records logged since the last snapshot (or in the tail a takeover read).
    since: u64,
    /// Records the last snapshot holds.
    size: u64,
    /// The last snapshot.
    last: Option<SnapshotRef>,
}

type Snaps = Arc<Mutex<HashMap<u32, Snap>>>;

fn snaps_of(snaps: &Snaps) -> std::sync::MutexGuard<'_, HashMap<u32, Snap>> {
    snaps.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Default)]
struct Moves {
    taken: u64,
    released: u64,
    lost: u64,
}

fn held_of(
    held: &Held,
) -> std::sync::MutexGuard<'_, HashMap<u32, Arc<tokio::sync::Mutex<PartitionLog>>>> {
    held.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Connect, join, and start the worker's task; the crawl gets the hooks.
pub async fn start(
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
    // A lease counts as held for 4/5 of its TTL after the round that renewed it.
    let valid_for = spec.lease_ttl - spec.lease_ttl / 5;
    let handle = tokio::runtime::Handle::current();
    let hooks = Partitioned {
        owns: {
            let (held, jobs, renewed) = (held.clone(), jobs.clone(), renewed.clone());
            Arc::new(move |site: &str| {
                let p = partition_of(site, partitions);
                let fresh = renewed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .elapsed()
                    < valid_for;
                fresh && held_of(&held).contains_key(&p) && !jobs_of(&jobs).draining.contains(&p)
            })
        },
        started: {
            let jobs = jobs.clone();
            Arc::new(move |site: &str| {
                *jobs_of(&jobs)
                    .in_hand
                    .entry(partition_of(site, partitions))
                    .or_default() += 1;
            })
        },
        settled: {
            let jobs = jobs.clone();
            Arc::new(move |site: &str| {
                if let Some(n) = jobs_of(&jobs)
                    .in_hand
                    .get_mut(&partition_of(site, partitions))
                {
                    *n = n.saturating_sub(1);
                }
            })
        },
        same_partition: Arc::new(move |a: &str, b: &str| {
            partition_of(a, partitions) == partition_of(b, partitions)
        }),
        log: {
            let held = held.clone();
            let snaps = snaps.clone();
            let handle = handle.clone();
            Arc::new(move |site: &str, records: Vec<u8>| {
                let p = partition_of(site, partitions);
                let Some(log) = held_of(&held).get(&p).cloned() else {
                    return Ok(false);
                };
                // Called on the blocking pool (the commit path), so it may wait here.
                let appended = handle.block_on(async {
                    log.lock()
                        .await
                        .append_record(Kind::Exchange, &records)
                        .await
                });
                match appended {
                    Ok(Append::Stored(_)) => {
                        snaps_of(&snaps).entry(p).or_default().since += 1;
                        Ok(true)
                    }
                    Ok(Append::Fenced) => {
                        held_of(&held).remove(&p);
                        Ok(false)
                    }
                    Err(e) => Err(e.to_string()),
                }
            })
        },
        hand_on: {
            let engine = engine.clone();
            let handle = handle.clone();
            Arc::new(move |links: Vec<(String, u32)>| {
                let engine = engine.clone();
                handle.spawn(async move {
                    for (link, depth) in links {
                        let Ok(url) = Url::parse(&link) else { continue };
                        let p = partition_of(&urls::site_key(&url), partitions);
                        if let Err(e) = engine.send_link(p, &link, depth).await {
                            tracing::warn!(%link, "handing a link to partition {p}: {e}");
                        }
                    }
                });
            })
        },
    };
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
    sink: Option<PageSink>,
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

/// The share rounds, every third of a lease TTL: lost partitions stop at once, surplus ones
/// drain and go back, free ones are taken over; then this worker's idle flag, and the end of
/// the crawl once every worker is idle, every partition held and no link waiting, two rounds
/// running. Interrupted, it hands every partition back at once.
async fn rounds(
    state: &State,
    mut share: crate::cluster::Share,
    ctx: &Arc<Ctx>,
    sink: Option<&PageSink>,
    ttl: Duration,
    shutdown: &CancellationToken,
) -> Result<(), WorkerError> {
    let period = (ttl / 3).max(Duration::from_millis(300));
    // Announce, then wait a round before taking anything: workers started together then all
    // count each other in their first round, and each takes its share at once (measured:
    // docs/cluster.md, "Scaling").
    share.announce().await?;
    tokio::select! {
        _ = shutdown.cancelled() => return Ok(share.leave().await?),
        _ = tokio::time::sleep(period) => {}
    }
    let mut done_rounds = 0;
    let mut failing_since: Option<Instant> = None;
    loop {
        let round_began = Instant::now();
        match one_round(state, &mut share, ctx, sink, shutdown, round_began).await {
            Ok(idle) => {
                failing_since = None;
                // The end: this worker idle and, by the engine, every other too (two rounds).
                let all_done = idle && state.engine.all_done().await.unwrap_or(false);
                done_rounds = if all_done { done_rounds + 1 } else { 0 };
                if done_rounds >= 2 {
                    tracing::info!("every worker idle and no link waiting: the crawl is done");
                    return Ok(());
                }
            }
            // The engine failing (an election, a node down): the gate closes by itself once
            // the last renewal is old; give up only when it has failed for ENGINE_PATIENCE.
            Err(WorkerError::Cluster(e)) => {
                let since = *failing_since.get_or_insert(round_began);
                if since.elapsed() > ENGINE_PATIENCE {
                    return Err(WorkerError::Cluster(e));
                }
                tracing::warn!("share round failed ({e}); retrying");
                done_rounds = 0;
            }
            Err(e) => return Err(e),
        }
        tokio::select! {
            _ = shutdown.cancelled() => {
                // Hand everything back at once, for the others to take over.
                return Ok(share.leave().await?);
            }
            _ = tokio::time::sleep_until((round_began + period).into()) => {}
        }
    }
}

/// How long a worker goes on while the engine fails its rounds or its inbox pulls (as long as
/// a log append is retried, `cluster::log::APPEND_RETRY`).
const ENGINE_PATIENCE: Duration = Duration::from_secs(30);

/// One share round (see [`rounds`]); whether this worker is idle after it (also said to the
/// engine).
async fn one_round(
    state: &State,
    share: &mut crate::cluster::Share,
    ctx: &Arc<Ctx>,
    sink: Option<&PageSink>,
    shutdown: &CancellationToken,
    round_began: Instant,
) -> Result<bool, WorkerError> {
    let round = share.round().await?;
    for p in &round.lost {
        held_of(&state.held).remove(p);
        jobs_of(&state.jobs).draining.remove(p);
        snaps_of(&state.snaps).remove(p);
    }
    moves_of(state).lost += round.lost.len() as u64;
    // What is left was renewed in this round (the lost ones are out first).
    *state.renewed.lock().unwrap_or_else(PoisonError::into_inner) = round_began;
    // A surplus partition starts no new work; it is released once its work in hand is
    // committed, so the next owner refetches nothing.
    for &p in &round.surplus {
        jobs_of(&state.jobs).draining.insert(p);
    }
    let drained: Vec<u32> = {
        let jobs = jobs_of(&state.jobs);
        jobs.draining
            .iter()
            .copied()
            .filter(|p| jobs.in_hand.get(p).copied().unwrap_or(0) == 0)
            .collect()
    };
    for p in drained {
        share.release(p).await?;
        held_of(&state.held).remove(&p);
        jobs_of(&state.jobs).draining.remove(&p);
        moves_of(state).released += 1;
        tracing::info!(partition = p, "handed a partition back");
    }
    for &p in &round.taken {
        match take_over(state, ctx, sink, p, shutdown).await {
            Ok(()) => moves_of(state).taken += 1,
            // The engine failed part-way: give the lease back, for this worker or another to
            // take the partition over again from the start.
            Err(WorkerError::Cluster(e)) => {
                tracing::warn!(
                    partition = p,
                    "taking a partition over failed ({e}); released"
                );
                held_of(&state.held).remove(&p);
                let _ = share.release(p).await;
            }
            Err(e) => return Err(e),
        }
    }
    if !round.taken.is_empty() || !round.lost.is_empty() {
        tracing::info!(taken = ?round.taken, lost = ?round.lost, held = held_of(&state.held).len(), "partitions moved");
    }
    let queued = queued_here(state)?;
    state.queued.store(queued, Relaxed);
    let idle = queued == 0 && state.stats.in_flight.load(Relaxed) == 0;
    say(state, idle).await?;
    Ok(idle)
}

/// The inboxes of the partitions this worker holds (and is not handing back): links pulled,
/// logged, queued, acknowledged, until `finished`.
async fn pull_links(
    state: Arc<State>,
    ctx: Arc<Ctx>,
    finished: CancellationToken,
) -> Result<(), WorkerError> {
    let mut inboxes: HashMap<u32, LinkInbox> = HashMap::new();
    let mut failing_since: Option<Instant> = None;
    while !finished.is_cancelled() {
        let held: Vec<u32> = {
            let draining = jobs_of(&state.jobs).draining.clone();
            held_of(&state.held)
                .keys()
                .copied()
                .filter(|p| !draining.contains(p))
                .collect()
        };
        inboxes.retain(|p, _| held.contains(p));
        let mut pulled = false;
        for p in held {
            match pull(&state, &ctx, &mut inboxes, p).await {
                Ok(got) => {
                    pulled |= got;
                    failing_since = None;
                }
                // The engine failing: links not acknowledged come back; try again shortly.
                Err(WorkerError::Cluster(e)) => {
                    inboxes.remove(&p);
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > ENGINE_PATIENCE {
                        return Err(WorkerError::Cluster(e));
                    }
                    tracing::warn!(partition = p, "pulling links failed ({e}); retrying");
                }
                Err(e) => return Err(e),
            }
        }
        if !pulled {
            tokio::select! {
                _ = finished.cancelled() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    }
    Ok(())
}

/// Pull partition `p`'s waiting links (opening its inbox the first time) and receive them;
/// whether there were any.
async fn pull(
    state: &State,
    ctx: &Arc<Ctx>,
    inboxes: &mut HashMap<u32, LinkInbox>,
    p: u32,
) -> Result<bool, WorkerError> {
    let inbox = match inboxes.entry(p) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => e.insert(state.engine.inbox(p).await?),
    };
    let links = inbox.next(PULL, Duration::from_millis(20)).await?;
    if links.is_empty() {
        return Ok(false);
    }
    if !receive(state, ctx, p, links).await? {
        held_of(&state.held).remove(&p);
        inboxes.remove(&p);
    }
    Ok(true)
}

/// Take partition `p` over: fence its log, rebuild what it holds in the local store (its
/// fetched pages imported, its handed links queued), then let the crawl dispatch it.
async fn take_over(
    state: &State,
    ctx: &Arc<Ctx>,
    sink: Option<&PageSink>,
    p: u32,
    shutdown: &CancellationToken,
) -> Result<(), WorkerError> {
    let started = Instant::now();
    say(state, false).await?;
    let log = state.engine.log(p, &state.id).await?;
    let dir = state.data_dir.join("cluster");
    std::fs::create_dir_all(&dir).map_err(|source| WorkerError::Io {
        path: dir.clone(),
        source,
    })?;
    let spool = dir.join(format!("p{p}.warc.gz"));
    let spooled = log.reader().spool(0, &spool).await?;
    // The last snapshot the log names, then the log's records (those the snapshot also holds,
    // when its purge did not happen, are stored once).
    let mut files = Vec::new();
    let mut links = Vec::new();
    let (snap_warc, snap_links) = (
        dir.join(format!("p{p}-snapshot.warc.gz")),
        dir.join(format!("p{p}-snapshot.links")),
    );
    let mut snap = Snap {
        since: spooled.exchanges + spooled.links.len() as u64,
        ..Snap::default()
    };
    if let Some(last) = &spooled.snapshot {
        state
            .engine
            .get_snapshot(&last.name, &snap_warc, &snap_links)
            .await?;
        files.push(snap_warc.clone());
        links = read_links(&snap_links)?;
        snap.size = last.records;
        snap.last = Some(last.clone());
    }
    if spooled.exchanges > 0 {
        files.push(spool.clone());
    }
    links.extend(spooled.links.iter().cloned());
    let mut imported = 0;
    if !files.is_empty() {
        let to_crawl = state.to_crawl.clone();
        let queued: Queued = Arc::new(move |list| {
            let _ = to_crawl.send(list);
        });
        let summary = import::import(ctx, &files, sink, shutdown, Some(queued)).await?;
        imported = summary.pages;
    }
    for f in [&spool, &snap_warc, &snap_links] {
        let _ = std::fs::remove_file(f);
    }
    queue(state, ctx, &links)?;
    snaps_of(&state.snaps).insert(p, snap);
    held_of(&state.held).insert(p, Arc::new(tokio::sync::Mutex::new(log)));
    tracing::info!(
        partition = p,
        records = spooled.exchanges,
        snapshot = spooled
            .snapshot
            .as_ref()
            .map_or("none", |s| s.name.as_str()),
        imported,
        links = links.len(),
        ms = started.elapsed().as_millis() as u64,
        "took a partition over"
    );
    Ok(())
}

/// Links pulled from partition `p`'s inbox: logged (one record), queued, acknowledged.
/// `Ok(false)` when the partition turned out to be another worker's (nothing acknowledged).
async fn receive(
    state: &State,
    ctx: &Arc<Ctx>,
    p: u32,
    links: Vec<crate::cluster::InboundLink>,
) -> Result<bool, WorkerError> {
    let Some(log) = held_of(&state.held).get(&p).cloned() else {
        return Ok(false);
    };
    // Busy before the links are acknowledged: once they are, nothing else in the engine shows
    // that this worker has work (the end's check reads the flags and the inboxes).
    say(state, false).await?;
    let lines: Vec<String> = links.iter().map(|l| link_line(&l.url, l.depth)).collect();
    let appended = log
        .lock()
        .await
        .append_record(Kind::Link, lines.join("\n").as_bytes())
        .await?;
    if appended == Append::Fenced {
        return Ok(false);
    }
    snaps_of(&state.snaps).entry(p).or_default().since += 1;
    queue(state, ctx, &lines)?;
    for l in links {
        l.ack().await?;
    }
    Ok(true)
}

/// Snapshot the partitions this worker holds whose logs have grown enough
/// (`cluster.snapshot_records` records since the last snapshot, and at least as many as it
/// holds), one at a time, until `finished`. A snapshot that fails is tried again later.
async fn snapshots(
    state: Arc<State>,
    ttl: Duration,
    finished: CancellationToken,
) -> Result<(), WorkerError> {
    let period = (ttl / 3).max(Duration::from_millis(300));
    while !finished.is_cancelled() {
        let due: Vec<u32> = {
            let held = held_of(&state.held);
            let draining = jobs_of(&state.jobs).draining.clone();
            snaps_of(&state.snaps)
                .iter()
                .filter(|(p, s)| {
                    held.contains_key(p)
                        && !draining.contains(p)
                        && s.since >= state.snapshot_records.max(s.size)
                })
                .map(|(&p, _)| p)
                .collect()
        };
        for p in due {
            if finished.is_cancelled() {
                break;
            }
            match snapshot(&state, p).await {
                Ok(()) => {}
                Err(WorkerError::Cluster(e)) => {
                    tracing::warn!(partition = p, "a snapshot failed ({e}); will try again")
                }
                Err(e) => return Err(e),
            }
        }
        tokio::select! {
            _ = finished.cancelled() => {}
            _ = tokio::time::sleep(period) => {}
        }
    }
    Ok(())
}

/// Snapshot partition `p`: its last snapshot and its log after it, copied to the object store
/// as one new snapshot, named in the log by a fenced record; then the log purged up to what the
/// snapshot covers and the previous snapshot deleted.
async fn snapshot(state: &State, p: u32) -> Result<(), WorkerError> {
    let started = Instant::now();
    let Some(log) = held_of(&state.held).get(&p).cloned() else {
        return Ok(());
    };
    let reader = log.lock().await.reader().clone();
    let previous = snaps_of(&state.snaps).get(&p).cloned().unwrap_or_default();
    let dir = state.data_dir.join("cluster");
    let (warc, links_file) = (
        dir.join(format!("snap-p{p}.warc.gz")),
        dir.join(format!("snap-p{p}.links")),
    );
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| WorkerError::Io { path, source }
    };
    let mut links = Vec::new();
    let after = match &previous.last {
        Some(last) => {
            state
                .engine
                .get_snapshot(&last.name, &warc, &links_file)
                .await?;
            links = read_links(&links_file)?;
            last.covers
        }
        None => {
            std::fs::File::create(&warc).map_err(io(&warc))?;
            0
        }
    };
    let mut out = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .append(true)
            .open(&warc)
            .map_err(io(&warc))?,
    );
    let tail = reader.spool_into(after, &mut out).await?;
    std::io::Write::flush(&mut out).map_err(io(&warc))?;
    drop(out);
    let cleanup = || {
        let _ = std::fs::remove_file(&warc);
        let _ = std::fs::remove_file(&links_file);
    };
    if tail.last == after {
        cleanup();
        return Ok(());
    }
    links.extend(tail.links.iter().cloned());
    std::fs::write(&links_file, links.join("\n")).map_err(io(&links_file))?;
    let records = previous.size + tail.exchanges + tail.links.len() as u64;
    let name = crate::cluster::snapshot::name(p, tail.last);
    let stored = state.engine.put_snapshot(&name, &warc, &links_file).await;
    cleanup();
    let bytes = stored?;
    let said = format!("{} {name} {records}", tail.last);
    let appended = log
        .lock()
        .await
        .append_record(Kind::Snapshot, said.as_bytes())
        .await?;
    if appended == Append::Fenced {
        // Not the partition's snapshot: another worker holds the partition now.
        let _ = state.engine.delete_snapshot(&name).await;
        held_of(&state.held).remove(&p);
        return Ok(());
    }
    reader.purge_through(tail.last).await?;
    if let Some(old) = &previous.last {
        if old.name != name {
            let _ = state.engine.delete_snapshot(&old.name).await;
        }
    }
    if let Some(s) = snaps_of(&state.snaps).get_mut(&p) {
        s.since = s
            .since
            .saturating_sub(tail.exchanges + tail.links.len() as u64);
        s.size = records;
        s.last = Some(SnapshotRef {
            covers: tail.last,
            name,
            records,
        });
    }
    tracing::info!(
        partition = p,
        records,
        bytes,
        ms = started.elapsed().as_millis() as u64,
        "took a snapshot"
    );
    Ok(())
}

/// The URLs of a snapshot's links file, a line each.
fn read_links(path: &std::path::Path) -> Result<Vec<String>, WorkerError> {
    let text = std::fs::read_to_string(path).map_err(|source| WorkerError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(text
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// A handed link as a line of a `link` record (and of a snapshot's links): its URL, a tab,
/// its crawl depth.
fn link_line(url: &str, depth: u32) -> String {
    format!("{url}\t{depth}")
}

/// A line of a `link` record: its URL and crawl depth (0 when the line has none).
fn parse_link_line(line: &str) -> (&str, u32) {
    match line.split_once('\t') {
        Some((url, depth)) => (url, depth.trim().parse().unwrap_or(0)),
        None => (line, 0),
    }
}

/// Queue `links` (lines of `link` records: in scope, not seen before, within the crawl's
/// depth) in the local store and tell the crawl.
fn queue(state: &State, ctx: &Ctx, links: &[String]) -> Result<(), WorkerError> {
    let mut commit = Commit::new();
    for line in links {
        let (link, depth) = parse_link_line(line);
        let Ok(url) = Url::parse(link) else { continue };
        if ctx.scope.check(&url).is_err() || depth > ctx.config.crawl.max_depth {
            continue;
        }
        commit.discover(
            urls::origin_key(&url),
            QueueEntry::page(url.to_string(), depth),
        );
    }
    let out = state.store.commit(commit)?;
    let _ = state.to_crawl.send(out.enqueued);
    Ok(())
}

/// URLs queued for the sites of the partitions this worker holds.
fn queued_here(state: &State) -> Result<u64, WorkerError> {
    let lengths = state.store.queue_lengths()?;
    let held = held_of(&state.held);
    let mut queued = 0;
    for origin in state.store.origins() {
        let n = lengths.get(&origin.id).copied().unwrap_or(0);
        if n == 0 {
            continue;
        }
        let site = Url::parse(&origin.key).map_or(origin.key.clone(), |u| urls::site_key(&u));
        if held.contains_key(&partition_of(&site, state.partitions)) {
            queued += n;
        }
    }
    Ok(queued)
}

fn moves_of(state: &State) -> std::sync::MutexGuard<'_, Moves> {
    state.moves.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Tell the engine whether this worker is idle, with its counts (queued: as the last round
/// counted).
async fn say(state: &State, idle: bool) -> Result<(), WorkerError> {
    let said = {
        let moves = moves_of(state);
        WorkerState {
            idle,
            fetched: state.stats.fetched.load(Relaxed),
            stored: state.stats.stored.load(Relaxed),
            errors: state.stats.errors.load(Relaxed),
            queued: state.queued.load(Relaxed),
            taken: moves.taken,
            released: moves.released,
            lost: moves.lost,
        }
    };
    Ok(state.engine.set_state(&state.id, &said).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_line_carries_its_depth_and_an_old_line_reads_as_depth_0() {
        let line = link_line("http://a.example/x", 3);
        assert_eq!(parse_link_line(&line), ("http://a.example/x", 3));
        assert_eq!(
            parse_link_line("http://a.example/y"),
            ("http://a.example/y", 0)
        );
        assert_eq!(
            parse_link_line("http://a.example/z\tbad"),
            ("http://a.example/z", 0)
        );
    }
}
