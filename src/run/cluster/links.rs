//! A cluster worker's inboxes: the links other workers hand to the partitions it holds, pulled,
//! logged to the partition's log (one `link` record), queued in the local store and
//! acknowledged; and the `url<TAB>depth` lines those records (and snapshots) hold.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use url::Url;

use super::state::{
    forget_fenced, held_of, jobs_of, say, snaps_of, State, WorkerError, ENGINE_PATIENCE,
};
use crate::cluster::{Append, Kind, LinkInbox};
use crate::crawl::url as urls;
use crate::crawl::worker::Ctx;
use crate::store::{Commit, QueueEntry};

/// Links pulled from an inbox at once.
pub(super) const PULL: usize = 256;

/// The inboxes of the partitions this worker holds (and is not handing back): links pulled,
/// logged, queued, acknowledged, until `finished`.
pub(super) async fn pull_links(
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
pub(super) async fn pull(
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
        inboxes.remove(&p);
    }
    Ok(true)
}

/// Links pulled from partition `p`'s inbox: logged (one record), queued, acknowledged.
/// `Ok(false)` when the partition turned out to be another worker's (nothing acknowledged;
/// its fenced writer forgotten).
pub(super) async fn receive(
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
        forget_fenced(&state.held, p, &log);
        return Ok(false);
    }
    snaps_of(&state.snaps).entry(p).or_default().since += 1;
    queue(state, ctx, &lines)?;
    for l in links {
        l.ack().await?;
    }
    Ok(true)
}

/// The URLs of a snapshot's links file, a line each.
pub(super) fn read_links(path: &std::path::Path) -> Result<Vec<String>, WorkerError> {
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
pub(super) fn link_line(url: &str, depth: u32) -> String {
    format!("{url}\t{depth}")
}

/// A line of a `link` record: its URL and crawl depth (0 when the line has none).
pub(super) fn parse_link_line(line: &str) -> (&str, u32) {
    match line.split_once('\t') {
        Some((url, depth)) => (url, depth.trim().parse().unwrap_or(0)),
        None => (line, 0),
    }
}

/// Queue `links` (lines of `link` records: in scope, not seen before, within the crawl's
/// depth) in the local store and tell the crawl.
pub(super) fn queue(state: &State, ctx: &Ctx, links: &[String]) -> Result<(), WorkerError> {
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
