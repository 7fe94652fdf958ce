//! A cluster worker's shared state: the partitions it holds (with their logs), the work in
//! hand per partition, its snapshots, its moves, and what it tells the engine about itself.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;
use url::Url;

use crate::cluster::{partition_of, ClusterError, Engine, PartitionLog, SnapshotRef, WorkerState};
use crate::crawl::import;
use crate::crawl::stats::CrawlStats;
use crate::crawl::url as urls;
use crate::store::{Enqueued, Store};

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

/// How long a worker goes on while the engine fails its rounds or its inbox pulls (as long as
/// a log append is retried, `cluster::log::APPEND_RETRY`).
pub(super) const ENGINE_PATIENCE: Duration = Duration::from_secs(30);

/// The partitions this worker holds now, with their logs (each behind its own lock: a
/// partition's appends go one at a time).
pub(super) type Held = Arc<Mutex<HashMap<u32, SharedLog>>>;

/// A held partition's log writer, shared by the commit path, the inbox and the snapshots.
pub(super) type SharedLog = Arc<tokio::sync::Mutex<PartitionLog>>;

/// Per partition: requests and page processings in hand (`Partitioned::started` /
/// `settled`), and whether it is being handed back (no new work starts; it is released once
/// its work in hand is committed).
#[derive(Default)]
pub(super) struct Jobs {
    pub(super) in_hand: HashMap<u32, usize>,
    pub(super) draining: std::collections::HashSet<u32>,
}

pub(super) type SharedJobs = Arc<Mutex<Jobs>>;

pub(super) fn jobs_of(jobs: &SharedJobs) -> std::sync::MutexGuard<'_, Jobs> {
    jobs.lock().unwrap_or_else(PoisonError::into_inner)
}

/// When the last share round began: every lease still held was renewed after it, so each is
/// good until at least this plus the TTL. A worker that was stopped (SIGSTOP) past that starts
/// nothing until a round confirms what it still holds.
pub(super) type Renewed = Arc<Mutex<Instant>>;

pub(super) struct State {
    pub(super) renewed: Renewed,
    pub(super) jobs: SharedJobs,
    pub(super) engine: Engine,
    pub(super) id: String,
    pub(super) partitions: u32,
    pub(super) held: Held,
    pub(super) store: Arc<Store>,
    pub(super) stats: Arc<CrawlStats>,
    pub(super) data_dir: PathBuf,
    pub(super) to_crawl: UnboundedSender<Vec<Enqueued>>,
    /// Partitions taken over, handed back and lost since the start (for `status --cluster`).
    pub(super) moves: Mutex<Moves>,
    /// URLs queued for its partitions at the last round's count (said again when it turns
    /// busy between rounds).
    pub(super) queued: std::sync::atomic::AtomicU64,
    /// Per partition held: what is logged since its last snapshot, and that snapshot.
    pub(super) snaps: Snaps,
    /// `cluster.snapshot_records`.
    pub(super) snapshot_records: u64,
}

/// A partition's snapshot state ([`snapshot`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Snap {
    /// Records logged since the last snapshot (or in the tail a takeover read).
    pub(super) since: u64,
    /// Records the last snapshot holds.
    pub(super) size: u64,
    /// The last snapshot.
    pub(super) last: Option<SnapshotRef>,
}

pub(super) type Snaps = Arc<Mutex<HashMap<u32, Snap>>>;

pub(super) fn snaps_of(snaps: &Snaps) -> std::sync::MutexGuard<'_, HashMap<u32, Snap>> {
    snaps.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Default)]
pub(super) struct Moves {
    pub(super) taken: u64,
    pub(super) released: u64,
    pub(super) lost: u64,
}

pub(super) fn held_of(held: &Held) -> std::sync::MutexGuard<'_, HashMap<u32, SharedLog>> {
    held.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Partition `p`'s writer `log` was fenced: forget it, unless `p` is held through a newer
/// writer by now (this worker took the partition over again while the append waited; the
/// newer writer fenced the old one and is the partition's log).
pub(super) fn forget_fenced(held: &Held, p: u32, log: &SharedLog) {
    let mut held = held_of(held);
    if held.get(&p).is_some_and(|now| Arc::ptr_eq(now, log)) {
        held.remove(&p);
    }
}

/// URLs queued for the sites of the partitions this worker holds.
pub(super) fn queued_here(state: &State) -> Result<u64, WorkerError> {
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

pub(super) fn moves_of(state: &State) -> std::sync::MutexGuard<'_, Moves> {
    state.moves.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Tell the engine whether this worker is idle, with its counts (queued: as the last round
/// counted).
pub(super) async fn say(state: &State, idle: bool) -> Result<(), WorkerError> {
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
