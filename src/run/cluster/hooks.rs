//! The hooks a cluster worker gives the one-machine crawl (`crawl::Partitioned`): which sites
//! it may dispatch (a partition held, its lease fresh, not being handed back), the work in hand
//! per partition, the partition log each fetch's WARC records go to first, and the inboxes
//! links of other partitions go to.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use url::Url;

use super::state::{forget_fenced, held_of, jobs_of, snaps_of, Held, Renewed, SharedJobs, Snaps};
use crate::cluster::{partition_of, Append, Engine, Kind};
use crate::crawl::url as urls;
use crate::crawl::Partitioned;

/// The worker's state the hooks read and write.
pub(super) struct Shared {
    pub(super) engine: Engine,
    pub(super) partitions: u32,
    pub(super) held: Held,
    pub(super) jobs: SharedJobs,
    pub(super) renewed: Renewed,
    pub(super) snaps: Snaps,
    /// How long after the round that renewed it a lease counts as held.
    pub(super) valid_for: Duration,
}

/// The crawl's hooks for a worker (called on the crawl's runtime and its blocking pool).
pub(super) fn hooks(shared: &Shared) -> Partitioned {
    let Shared {
        engine,
        partitions,
        held,
        jobs,
        renewed,
        snaps,
        valid_for,
    } = shared;
    let (partitions, valid_for) = (*partitions, *valid_for);
    let handle = tokio::runtime::Handle::current();
    Partitioned {
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
                        forget_fenced(&held, p, &log);
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
    }
}
