//! A cluster worker's share rounds: every third of a lease TTL, lost partitions stop at once,
//! surplus ones drain and go back, free ones are taken over; then the worker's idle flag, and
//! the end of the crawl.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::state::{
    held_of, jobs_of, moves_of, queued_here, say, snaps_of, State, WorkerError, ENGINE_PATIENCE,
};
use super::takeover::take_over;
use crate::crawl::worker::Ctx;
use crate::crawl::EventSink;

/// The share rounds, every third of a lease TTL: lost partitions stop at once, surplus ones
/// drain and go back, free ones are taken over; then this worker's idle flag, and the end of
/// the crawl once every worker is idle, every partition held and no link waiting, two rounds
/// running. Interrupted, it hands every partition back at once.
pub(super) async fn rounds(
    state: &State,
    mut share: crate::cluster::Share,
    ctx: &Arc<Ctx>,
    sink: Option<&EventSink>,
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

/// One share round (see [`rounds`]); whether this worker is idle after it (also said to the
/// engine).
pub(super) async fn one_round(
    state: &State,
    share: &mut crate::cluster::Share,
    ctx: &Arc<Ctx>,
    sink: Option<&EventSink>,
    shutdown: &CancellationToken,
    round_began: Instant,
) -> Result<bool, WorkerError> {
    // A lease whose partition has no writer here any more (its log was fenced under this
    // worker, as when an engine election made the lease look lost and this worker took it
    // again) goes back first: held without a writer, the partition's queue would sit unseen and
    // the crawl end without it. Released, it is taken over again from its log, here or by
    // another worker.
    let orphaned: Vec<u32> = {
        let held = held_of(&state.held);
        share.held().filter(|p| !held.contains_key(p)).collect()
    };
    for p in orphaned {
        share.release(p).await?;
        jobs_of(&state.jobs).draining.remove(&p);
        snaps_of(&state.snaps).remove(&p);
        moves_of(state).lost += 1;
        tracing::warn!(
            partition = p,
            "the partition's log was written by another writer; its lease handed back"
        );
    }
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
