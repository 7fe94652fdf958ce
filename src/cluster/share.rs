//! A worker's fair share of partitions: it announces itself in the member bucket, keeps the
//! partitions it holds renewed, takes free ones up to ⌈partitions / live workers⌉ and reports
//! what it holds above that share, for its caller to hand back once the partition's work is
//! saved. Run [`Share::round`] about three times per lease TTL.

use std::collections::{BTreeMap, BTreeSet};

use async_nats::jetstream::kv;
use futures::StreamExt;

use super::lease::{Lease, Leases, Renewal};
use super::ClusterError;

/// One round's outcome.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Live workers, this one included.
    pub members: usize,
    /// This worker's share: ⌈partitions / members⌉.
    pub share: usize,
    /// Partitions taken this round.
    pub taken: Vec<u32>,
    /// Partitions lost this round (another worker holds them now): stop their work at once.
    pub lost: Vec<u32>,
    /// Partitions held above the share: save their work, then [`Share::release`] them.
    pub surplus: Vec<u32>,
}

/// A worker's membership and leases.
pub struct Share {
    id: String,
    members: kv::Store,
    leases: Leases,
    held: BTreeMap<u32, Lease>,
    /// The member entry's revision (renewed like a lease).
    member_revision: Option<u64>,
}

impl Share {
    pub(super) fn new(id: &str, members: kv::Store, leases: Leases) -> Share {
        Share {
            id: id.to_string(),
            members,
            leases,
            held: BTreeMap::new(),
            member_revision: None,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The partitions this worker holds.
    pub fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.held.keys().copied()
    }

    /// Announce, renew, count the live workers and take free partitions up to the share.
    pub async fn round(&mut self) -> Result<Round, ClusterError> {
        self.announce().await?;
        let mut round = Round::default();
        for (&p, lease) in self.held.iter_mut() {
            if self.leases.renew(lease).await? == Renewal::Lost {
                round.lost.push(p);
            }
        }
        for p in &round.lost {
            self.held.remove(p);
        }
        round.members = keys(&self.members).await?.len().max(1);
        let partitions = self.leases.partitions() as usize;
        round.share = partitions.div_ceil(round.members);
        let taken_by_anyone: BTreeSet<u32> = keys(self.leases.store())
            .await?
            .iter()
            .filter_map(|k| k.strip_prefix('p')?.parse().ok())
            .collect();
        // Start the search at a place of this worker's own, so joining workers do not all race
        // for partition 0.
        let start = (xxhash_rust::xxh3::xxh3_64(self.id.as_bytes()) % partitions as u64) as u32;
        for i in 0..partitions as u32 {
            if self.held.len() >= round.share {
                break;
            }
            let p = (start + i) % partitions as u32;
            if taken_by_anyone.contains(&p) {
                continue;
            }
            if let Some(lease) = self.leases.acquire(p).await? {
                self.held.insert(p, lease);
                round.taken.push(p);
            }
        }
        round.surplus = self
            .held
            .keys()
            .rev()
            .take(self.held.len().saturating_sub(round.share))
            .copied()
            .collect();
        Ok(round)
    }

    /// Hand `partition` back (its work saved): free for another worker at once.
    pub async fn release(&mut self, partition: u32) -> Result<(), ClusterError> {
        if let Some(lease) = self.held.remove(&partition) {
            self.leases.release(lease).await?;
        }
        Ok(())
    }

    /// Leave the cluster: every partition handed back, the member entry removed.
    pub async fn leave(mut self) -> Result<(), ClusterError> {
        let held: Vec<u32> = self.held().collect();
        for p in held {
            self.release(p).await?;
        }
        self.members
            .delete(&self.id)
            .await
            .map_err(|e| ClusterError::engine("leaving the member bucket", e))
    }

    /// Say this worker is live, without taking anything (a joining worker does this a moment
    /// before its first round, so workers started together share from the first round on
    /// instead of the first one taking everything and handing most of it back).
    pub async fn announce(&mut self) -> Result<(), ClusterError> {
        let value = || self.id.clone().into_bytes().into();
        let renewed = match self.member_revision {
            Some(rev) => self.members.update(&self.id, value(), rev).await.ok(),
            None => None,
        };
        let revision = match renewed {
            Some(rev) => rev,
            // First round, or the entry lapsed (a pause past the TTL): announce again.
            None => self
                .members
                .put(&self.id, value())
                .await
                .map_err(|e| ClusterError::engine("announcing in the member bucket", e))?,
        };
        self.member_revision = Some(revision);
        Ok(())
    }
}

/// The live keys of a bucket (lapsed and deleted entries are not listed).
pub(super) async fn keys(store: &kv::Store) -> Result<Vec<String>, ClusterError> {
    let mut keys = store
        .keys()
        .await
        .map_err(|e| ClusterError::engine("listing a bucket", e))?;
    let mut out = Vec::new();
    while let Some(k) = keys.next().await {
        out.push(k.map_err(|e| ClusterError::engine("listing a bucket", e))?);
    }
    Ok(out)
}
