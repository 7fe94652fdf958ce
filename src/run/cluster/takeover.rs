//! A cluster worker taking a partition over (fence its log, rebuild what it holds in the local
//! store from its last snapshot and the log after it) and snapshotting the partitions it holds
//! (their last snapshot and the log since, copied to the engine's object store as one, named in
//! the log; then the log purged up to it).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::links::{queue, read_links};
use super::state::{forget_fenced, held_of, jobs_of, say, snaps_of, Snap, State, WorkerError};
use crate::cluster::{Append, Kind, SnapshotRef};
use crate::crawl::import::{self, Queued};
use crate::crawl::worker::Ctx;
use crate::crawl::EventSink;

/// Take partition `p` over: fence its log, rebuild what it holds in the local store (its
/// fetched pages imported, its handed links queued), then let the crawl dispatch it.
pub(super) async fn take_over(
    state: &State,
    ctx: &Arc<Ctx>,
    sink: Option<&EventSink>,
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

/// Snapshot the partitions this worker holds whose logs have grown enough
/// (`cluster.snapshot_records` records since the last snapshot, and at least as many as it
/// holds), one at a time, until `finished`. A snapshot that fails is tried again later.
pub(super) async fn snapshots(
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
pub(super) async fn snapshot(state: &State, p: u32) -> Result<(), WorkerError> {
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
        forget_fenced(&state.held, p, &log);
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
