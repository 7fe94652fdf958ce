//! The cluster mode's coordination on NATS JetStream (`--features cluster`, docs/cluster.md):
//! reaching the engine, the cluster's layout (its spec, buckets and streams), which partition a
//! site belongs to, fenced partition leases, each worker's fair share of partitions, the
//! fenced partition logs, their snapshots and the links handed between partitions.
//!
//! Owns: every name and setting in the engine, and the only use of `async-nats`. Imports no other
//! thresher module; the cluster worker that drives a crawl over partitions (`run::cluster`) and
//! `cmd::cluster` build on it.

mod lease;
mod links;
mod log;
mod share;
pub mod snapshot;

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};
use serde::{Deserialize, Serialize};

pub use lease::{Lease, Leases, Renewal};
pub use links::{InboundLink, LinkInbox, Sent};
pub use log::{Append, Kind, LogReader, PartitionLog, Replay, SnapshotRef, Spooled};
pub use share::{Round, Share};

/// The bucket holding the cluster's spec (key [`SPEC_KEY`]).
pub const META_BUCKET: &str = "thresher-meta";
/// The bucket of partition leases: key `p<N>`, value the holder's worker id; an entry lapses
/// [`Spec::lease_ttl`] after its last renewal (the bucket's `max_age`).
pub const LEASE_BUCKET: &str = "thresher-leases";
/// The bucket where live workers announce themselves (same TTL as a lease).
pub const MEMBER_BUCKET: &str = "thresher-members";
/// The bucket where each live worker says whether it is idle, with its counts (key: its id;
/// value a [`WorkerState`] as JSON; same TTL as a lease): the crawl is done when every live
/// worker is idle.
pub const IDLE_BUCKET: &str = "thresher-idle";
/// The stream of per-partition commit logs (subjects `thresher.log.<partition>`).
pub const LOG_STREAM: &str = "thresher-log";
/// The stream of links handed to the partition that owns them (`thresher.links.<partition>`),
/// deduplicated by message id within [`LINK_DEDUP_WINDOW`].
pub const LINK_STREAM: &str = "thresher-links";
pub const SPEC_KEY: &str = "spec";
/// How long JetStream remembers a link's message id to drop a second copy.
pub const LINK_DEDUP_WINDOW: Duration = Duration::from_secs(120);
/// How long connecting to the engine may take before the command gives up and says so.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cannot reach the NATS engine at {urls}: {message}")]
    Unreachable { urls: String, message: String },
    #[error("no NATS server address given (--nats nats://host:4222,…)")]
    NoUrls,
    #[error("the cluster is not initialised at {urls}: run `thresher cluster init` first")]
    NotInitialised { urls: String },
    #[error(
        "the cluster at {urls} was initialised with {existing}; asked for {asked} (a cluster's \
         partitions and replicas are fixed when it is created)"
    )]
    SpecMismatch {
        urls: String,
        existing: String,
        asked: String,
    },
    #[error("invalid cluster spec: {0}")]
    InvalidSpec(String),
    #[error("JetStream: {context}: {message}")]
    Engine { context: String, message: String },
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
}

impl ClusterError {
    fn engine(context: &str, e: impl std::fmt::Display) -> ClusterError {
        ClusterError::Engine {
            context: context.to_string(),
            message: e.to_string(),
        }
    }
}

/// What `cluster init` fixes for the life of a cluster crawl.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Sites map to partitions by [`partition_of`]; a partition is the unit a worker leases.
    pub partitions: u32,
    /// JetStream replicas of every bucket and stream (1, or 3 for a cluster that survives the
    /// loss of a node).
    pub replicas: usize,
    /// A lease lapses this long after its holder's last renewal.
    #[serde(with = "secs")]
    pub lease_ttl: Duration,
}

impl Spec {
    pub fn validate(&self) -> Result<(), ClusterError> {
        if self.partitions == 0 || self.partitions > 1 << 20 {
            return Err(ClusterError::InvalidSpec(format!(
                "partitions must be 1..={} (got {})",
                1 << 20,
                self.partitions
            )));
        }
        if !(1..=5).contains(&self.replicas) {
            return Err(ClusterError::InvalidSpec(format!(
                "replicas must be 1..=5 (got {})",
                self.replicas
            )));
        }
        if self.lease_ttl < Duration::from_secs(1) {
            return Err(ClusterError::InvalidSpec(format!(
                "the lease TTL must be at least 1s (got {:?})",
                self.lease_ttl
            )));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "{} partitions, {} replica(s), lease TTL {}s",
            self.partitions,
            self.replicas,
            self.lease_ttl.as_secs()
        )
    }
}

/// Durations as whole seconds in the stored spec (readable with `nats kv get`).
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs(u64::deserialize(d)?))
    }
}

/// The partition of a site (its site key, as the store names sites): stable across workers,
/// runs and versions (xxh3, seed 0).
pub fn partition_of(site: &str, partitions: u32) -> u32 {
    (xxhash_rust::xxh3::xxh3_64(site.as_bytes()) % u64::from(partitions.max(1))) as u32
}

/// What `init` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Init {
    Created,
    /// The cluster existed with the same spec; its buckets and streams were checked.
    AlreadyThere,
}

/// What a live worker says of itself each share round (bucket [`IDLE_BUCKET`], JSON): whether
/// it is idle — the end of the crawl is read from these — and its counts, for `status
/// --cluster`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct WorkerState {
    /// No request or page in hand, nothing queued for its partitions.
    pub idle: bool,
    /// Responses its crawl received since it started.
    pub fetched: u64,
    /// Pages in its store (those it fetched and those it imported at takeovers).
    pub stored: u64,
    /// URLs that ended in an error since it started.
    pub errors: u64,
    /// URLs queued for the sites of the partitions it holds.
    pub queued: u64,
    /// Partitions it took over, handed back (a worker joined), and lost (its lease lapsed),
    /// since it started.
    pub taken: u64,
    pub released: u64,
    pub lost: u64,
}

/// A live worker in the report: the partitions it holds and what it last said.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct WorkerRow {
    pub partitions: Vec<u32>,
    /// `None` until its first round's end.
    pub state: Option<WorkerState>,
}

/// Who holds what, and how far the crawl is: `thresher status --cluster`.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Report {
    pub urls: String,
    pub spec: Spec,
    /// Live workers (announced within one lease TTL).
    pub workers: BTreeMap<String, WorkerRow>,
    /// Partitions held by a worker id that is not (or no longer) announced: leases about to
    /// lapse and move.
    pub held_by_others: BTreeMap<String, Vec<u32>>,
    /// Partitions nobody holds (to be taken over at the next round).
    pub free: u32,
    /// The partition logs: records (with takeover markers) and bytes, every partition.
    pub log_messages: u64,
    pub log_bytes: u64,
    /// The live workers' counts added up (`stored` is not: a page may be in two stores).
    pub fetched: u64,
    pub errors: u64,
    pub queued: u64,
}

impl Report {
    pub fn render(&self) -> String {
        let mut out = format!("Cluster at {}: {}\n", self.urls, self.spec.describe());
        out.push_str(&format!(
            "Workers: {} live; fetched {}, queued {}, errors {}\n",
            self.workers.len(),
            self.fetched,
            self.queued,
            self.errors
        ));
        for (id, row) in &self.workers {
            out.push_str(&format!("  {id}  {} partitions", row.partitions.len()));
            match &row.state {
                Some(s) => out.push_str(&format!(
                    "  {}  fetched {}, stored {}, queued {}, errors {}; partitions taken {}, \
                     handed back {}, lost {}\n",
                    if s.idle { "idle" } else { "busy" },
                    s.fetched,
                    s.stored,
                    s.queued,
                    s.errors,
                    s.taken,
                    s.released,
                    s.lost
                )),
                None => out.push_str("  (starting)\n"),
            }
        }
        for (id, held) in &self.held_by_others {
            out.push_str(&format!(
                "  {id}  {} partitions (not announced: its leases lapse within {}s)\n",
                held.len(),
                self.spec.lease_ttl.as_secs()
            ));
        }
        out.push_str(&format!("Partitions without a holder: {}\n", self.free));
        out.push_str(&format!(
            "Partition logs: {} records, {:.1} MB\n",
            self.log_messages,
            self.log_bytes as f64 / 1e6
        ));
        out
    }
}

/// A connection to the engine.
#[derive(Clone)]
pub struct Engine {
    urls: String,
    js: jetstream::Context,
}

impl Engine {
    /// Connect to the engine at `urls` (comma-separated `nats://host:port`), failing within
    /// [`CONNECT_TIMEOUT`] with [`ClusterError::Unreachable`] when no server answers.
    pub async fn connect(urls: &str) -> Result<Engine, ClusterError> {
        let list: Vec<&str> = urls
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        if list.is_empty() {
            return Err(ClusterError::NoUrls);
        }
        let unreachable = |message: String| ClusterError::Unreachable {
            urls: urls.to_string(),
            message,
        };
        let options = async_nats::ConnectOptions::new()
            .connection_timeout(CONNECT_TIMEOUT)
            .name("thresher");
        let client = tokio::time::timeout(CONNECT_TIMEOUT, options.connect(list.as_slice()))
            .await
            .map_err(|_| unreachable(format!("no answer in {:?}", CONNECT_TIMEOUT)))?
            .map_err(|e| unreachable(e.to_string()))?;
        Ok(Engine {
            urls: urls.to_string(),
            js: jetstream::new(client),
        })
    }

    /// Create the cluster's spec, buckets and streams; when the cluster exists with the same
    /// spec, check them and report [`Init::AlreadyThere`]; with another spec, refuse.
    pub async fn init(&self, spec: &Spec) -> Result<Init, ClusterError> {
        spec.validate()?;
        let meta = self
            .js
            .create_key_value(kv::Config {
                bucket: META_BUCKET.to_string(),
                history: 1,
                num_replicas: spec.replicas,
                ..Default::default()
            })
            .await
            .map_err(|e| ClusterError::engine("creating the spec bucket", e))?;
        let bytes = serde_json::to_vec(spec).expect("invariant: a spec serialises");
        let outcome = match meta.create(SPEC_KEY, bytes.into()).await {
            Ok(_) => Init::Created,
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                let existing = self.spec().await?;
                if existing != *spec {
                    return Err(ClusterError::SpecMismatch {
                        urls: self.urls.clone(),
                        existing: existing.describe(),
                        asked: spec.describe(),
                    });
                }
                Init::AlreadyThere
            }
            Err(e) => return Err(ClusterError::engine("storing the spec", e)),
        };
        for bucket in [LEASE_BUCKET, MEMBER_BUCKET, IDLE_BUCKET] {
            self.js
                .create_key_value(kv::Config {
                    bucket: bucket.to_string(),
                    history: 1,
                    max_age: spec.lease_ttl,
                    num_replicas: spec.replicas,
                    ..Default::default()
                })
                .await
                .map_err(|e| ClusterError::engine(&format!("creating bucket {bucket}"), e))?;
        }
        snapshot::create(&self.js, spec.replicas).await?;
        for (name, subjects, dedup) in [
            (LOG_STREAM, "thresher.log.>", Duration::from_secs(120)),
            (LINK_STREAM, "thresher.links.>", LINK_DEDUP_WINDOW),
        ] {
            self.js
                .get_or_create_stream(stream::Config {
                    name: name.to_string(),
                    subjects: vec![subjects.to_string()],
                    num_replicas: spec.replicas,
                    duplicate_window: dedup,
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .map_err(|e| ClusterError::engine(&format!("creating stream {name}"), e))?;
        }
        Ok(outcome)
    }

    /// The spec `init` stored.
    pub async fn spec(&self) -> Result<Spec, ClusterError> {
        let not_there = || ClusterError::NotInitialised {
            urls: self.urls.clone(),
        };
        let meta = self
            .js
            .get_key_value(META_BUCKET)
            .await
            .map_err(|_| not_there())?;
        let bytes = meta
            .get(SPEC_KEY)
            .await
            .map_err(|e| ClusterError::engine("reading the spec", e))?
            .ok_or_else(not_there)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| ClusterError::engine("reading the spec", format!("unreadable: {e}")))
    }

    /// The lease bucket, for a worker named `worker`.
    pub async fn leases(&self, worker: &str) -> Result<Leases, ClusterError> {
        let spec = self.spec().await?;
        let kv = self
            .js
            .get_key_value(LEASE_BUCKET)
            .await
            .map_err(|e| ClusterError::engine("opening the lease bucket", e))?;
        Ok(Leases::new(kv, worker, spec.partitions))
    }

    /// Who holds which partitions now.
    pub async fn report(&self) -> Result<Report, ClusterError> {
        let spec = self.spec().await?;
        let bucket = |name: &'static str| async move {
            self.js
                .get_key_value(name)
                .await
                .map_err(|e| ClusterError::engine(&format!("opening bucket {name}"), e))
        };
        let members = bucket(MEMBER_BUCKET).await?;
        let leases = bucket(LEASE_BUCKET).await?;
        let states = bucket(IDLE_BUCKET).await?;
        let mut workers: BTreeMap<String, WorkerRow> = BTreeMap::new();
        for id in share::keys(&members).await? {
            let state = states
                .get(&id)
                .await
                .map_err(|e| ClusterError::engine("reading a worker's state", e))?
                .and_then(|b| serde_json::from_slice(&b).ok());
            workers.insert(
                id,
                WorkerRow {
                    partitions: Vec::new(),
                    state,
                },
            );
        }
        let mut held_by_others: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut held = 0;
        for key in share::keys(&leases).await? {
            let Some(p) = key.strip_prefix('p').and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Some(holder) = leases
                .get(&key)
                .await
                .map_err(|e| ClusterError::engine("reading a lease", e))?
            else {
                continue; // lapsed between the listing and the read
            };
            let holder = String::from_utf8_lossy(&holder).into_owned();
            held += 1;
            match workers.get_mut(&holder) {
                Some(row) => row.partitions.push(p),
                None => held_by_others.entry(holder).or_default().push(p),
            }
        }
        for list in workers
            .values_mut()
            .map(|r| &mut r.partitions)
            .chain(held_by_others.values_mut())
        {
            list.sort_unstable();
        }
        let log = self
            .js
            .get_stream(LOG_STREAM)
            .await
            .map_err(|e| ClusterError::engine("opening the log stream", e))?
            .info()
            .await
            .map_err(|e| ClusterError::engine("reading the log stream's size", e))?
            .state
            .clone();
        let sum = |f: fn(&WorkerState) -> u64| {
            workers
                .values()
                .filter_map(|r| r.state.as_ref())
                .map(f)
                .sum()
        };
        Ok(Report {
            urls: self.urls.clone(),
            free: spec.partitions.saturating_sub(held),
            log_messages: log.messages,
            log_bytes: log.bytes,
            fetched: sum(|s| s.fetched),
            errors: sum(|s| s.errors),
            queued: sum(|s| s.queued),
            spec,
            workers,
            held_by_others,
        })
    }

    /// `partition`'s commit log, taken over by writer `writer` (call it once the partition's
    /// lease is held: whoever wrote before is fenced from now on), for appending and reading back.
    pub async fn log(&self, partition: u32, writer: &str) -> Result<PartitionLog, ClusterError> {
        PartitionLog::open(&self.js, partition, writer).await
    }

    /// `partition`'s log to read only: no marker is appended, so its writer goes on.
    pub async fn log_reader(&self, partition: u32) -> Result<LogReader, ClusterError> {
        LogReader::open(&self.js, partition).await
    }

    /// Store a partition snapshot as objects `<name>.warc.gz` and `<name>.links` from the
    /// local files `warc` and `links` (`cluster::snapshot`); the bytes stored.
    pub async fn put_snapshot(
        &self,
        name: &str,
        warc: &std::path::Path,
        links: &std::path::Path,
    ) -> Result<u64, ClusterError> {
        let store = snapshot::open(&self.js).await?;
        let a = snapshot::put(&store, &format!("{name}.warc.gz"), warc).await?;
        let b = snapshot::put(&store, &format!("{name}.links"), links).await?;
        Ok(a + b)
    }

    /// Copy snapshot `name` to the local files `warc` and `links`; the bytes read.
    pub async fn get_snapshot(
        &self,
        name: &str,
        warc: &std::path::Path,
        links: &std::path::Path,
    ) -> Result<u64, ClusterError> {
        let store = snapshot::open(&self.js).await?;
        let a = snapshot::get(&store, &format!("{name}.warc.gz"), warc).await?;
        let b = snapshot::get(&store, &format!("{name}.links"), links).await?;
        Ok(a + b)
    }

    /// Delete snapshot `name` (one no longer the partition's last).
    pub async fn delete_snapshot(&self, name: &str) -> Result<(), ClusterError> {
        let store = snapshot::open(&self.js).await?;
        snapshot::delete(&store, &format!("{name}.warc.gz")).await?;
        snapshot::delete(&store, &format!("{name}.links")).await
    }

    /// Hand `url`, found at crawl depth `depth`, to the owner of `partition` (its site's
    /// partition).
    pub async fn send_link(
        &self,
        partition: u32,
        url: &str,
        depth: u32,
    ) -> Result<Sent, ClusterError> {
        links::send(&self.js, partition, url, depth).await
    }

    /// `partition`'s incoming links, for its owner: a link not acknowledged within one lease
    /// TTL is delivered again (to whoever owns the partition by then).
    pub async fn inbox(&self, partition: u32) -> Result<LinkInbox, ClusterError> {
        let spec = self.spec().await?;
        LinkInbox::open(&self.js, partition, spec.lease_ttl).await
    }

    /// Store what worker `id` says of itself (whether it is idle, its counts); the entry lapses
    /// with the worker.
    pub async fn set_state(&self, id: &str, state: &WorkerState) -> Result<(), ClusterError> {
        let bucket = self.bucket(IDLE_BUCKET).await?;
        let value = serde_json::to_vec(state).expect("invariant: a worker state serialises");
        bucket
            .put(id, value.into())
            .await
            .map_err(|e| ClusterError::engine("storing a worker's state", e))?;
        Ok(())
    }

    /// Whether the whole crawl has nothing left to do now: every live worker says it is idle,
    /// every partition is held, and no partition has links waiting in its inbox.
    pub async fn all_done(&self) -> Result<bool, ClusterError> {
        let members = share::keys(&self.bucket(MEMBER_BUCKET).await?).await?;
        let idle = self.bucket(IDLE_BUCKET).await?;
        for m in &members {
            let state = idle
                .get(m)
                .await
                .map_err(|e| ClusterError::engine("reading a worker's state", e))?
                .and_then(|b| serde_json::from_slice::<WorkerState>(&b).ok());
            if !state.is_some_and(|s| s.idle) {
                return Ok(false);
            }
        }
        let spec = self.spec().await?;
        let held = share::keys(&self.bucket(LEASE_BUCKET).await?).await?.len();
        if members.is_empty() || held < spec.partitions as usize {
            return Ok(false);
        }
        for p in 0..spec.partitions {
            if self.inbox(p).await?.waiting().await? > 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    async fn bucket(&self, name: &str) -> Result<kv::Store, ClusterError> {
        self.js.get_key_value(name).await.map_err(|e| {
            ClusterError::engine(
                &format!("opening bucket {name} (run `thresher cluster init` again)"),
                e,
            )
        })
    }

    /// Join the cluster as worker `id` (unique per process, e.g. host, pid and start time):
    /// nothing held until the first [`Share::round`].
    pub async fn join(&self, id: &str) -> Result<Share, ClusterError> {
        let leases = self.leases(id).await?;
        let members = self
            .js
            .get_key_value(MEMBER_BUCKET)
            .await
            .map_err(|e| ClusterError::engine("opening the member bucket", e))?;
        Ok(Share::new(id, members, leases))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_keeps_its_partition_and_sites_spread_over_all_of_them() {
        assert_eq!(
            partition_of("example.com", 64),
            partition_of("example.com", 64)
        );
        let mut seen = vec![0u32; 16];
        for i in 0..1600 {
            seen[partition_of(&format!("site{i}.example"), 16) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 60), "uneven spread: {seen:?}");
        assert_eq!(partition_of("anything", 0), 0, "0 partitions read as 1");
    }

    #[test]
    fn the_status_report_shows_each_workers_partitions_counts_and_the_moving_leases() {
        let state = WorkerState {
            idle: false,
            fetched: 120,
            stored: 130,
            errors: 2,
            queued: 40,
            taken: 5,
            released: 1,
            lost: 0,
        };
        let report = Report {
            urls: "nats://h:4222".into(),
            spec: Spec {
                partitions: 8,
                replicas: 1,
                lease_ttl: Duration::from_secs(15),
            },
            workers: BTreeMap::from([
                (
                    "w1".to_string(),
                    WorkerRow {
                        partitions: vec![0, 1, 2, 3],
                        state: Some(state),
                    },
                ),
                (
                    "w2".to_string(),
                    WorkerRow {
                        partitions: vec![4],
                        state: None,
                    },
                ),
            ]),
            held_by_others: BTreeMap::from([("gone".to_string(), vec![5, 6])]),
            free: 1,
            log_messages: 300,
            log_bytes: 6_200_000,
            fetched: 120,
            errors: 2,
            queued: 40,
        };
        assert_eq!(
            report.render(),
            "Cluster at nats://h:4222: 8 partitions, 1 replica(s), lease TTL 15s\n\
             Workers: 2 live; fetched 120, queued 40, errors 2\n  \
             w1  4 partitions  busy  fetched 120, stored 130, queued 40, errors 2; partitions \
             taken 5, handed back 1, lost 0\n  \
             w2  1 partitions  (starting)\n  \
             gone  2 partitions (not announced: its leases lapse within 15s)\n\
             Partitions without a holder: 1\n\
             Partition logs: 300 records, 6.2 MB\n"
        );
    }

    #[test]
    fn a_spec_outside_its_bounds_is_refused_with_the_reason() {
        let ok = Spec {
            partitions: 64,
            replicas: 3,
            lease_ttl: Duration::from_secs(15),
        };
        assert!(ok.validate().is_ok());
        let e = Spec {
            partitions: 0,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("partitions"), "{e}");
        let e = Spec {
            replicas: 0,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("replicas"), "{e}");
        let e = Spec {
            lease_ttl: Duration::from_millis(10),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("TTL"), "{e}");
    }

    #[test]
    fn the_stored_spec_reads_back_equal() {
        let spec = Spec {
            partitions: 1024,
            replicas: 1,
            lease_ttl: Duration::from_secs(15),
        };
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(json, r#"{"partitions":1024,"replicas":1,"lease_ttl":15}"#);
        assert_eq!(serde_json::from_str::<Spec>(&json).unwrap(), spec);
    }
}
