//! Partition leases in the lease bucket: taken with create-if-absent, renewed with
//! compare-and-set on the entry's revision, lapsing after the bucket's TTL. The revision a
//! worker holds is its fencing token: once another worker has taken the partition, every renewal
//! with the old revision fails, so a stale worker learns it lost the partition before it writes.

use async_nats::jetstream::kv;

use super::ClusterError;

/// A partition this worker holds, as of `revision` (the lease entry's last revision).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub partition: u32,
    pub revision: u64,
}

/// What a renewal found.
#[derive(Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Still ours, until one TTL from now.
    Held,
    /// Someone else took it, or it lapsed: stop all work on the partition now.
    Lost,
}

/// One worker's view of the lease bucket.
pub struct Leases {
    kv: kv::Store,
    worker: String,
    partitions: u32,
}

fn key(partition: u32) -> String {
    format!("p{partition}")
}

impl Leases {
    pub(super) fn new(kv: kv::Store, worker: &str, partitions: u32) -> Leases {
        Leases {
            kv,
            worker: worker.to_string(),
            partitions,
        }
    }

    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    pub(super) fn store(&self) -> &kv::Store {
        &self.kv
    }

    /// Take `partition` if nobody holds it (`None`: somebody does).
    pub async fn acquire(&self, partition: u32) -> Result<Option<Lease>, ClusterError> {
        self.check(partition)?;
        match self
            .kv
            .create(key(partition), self.worker.clone().into_bytes().into())
            .await
        {
            Ok(revision) => Ok(Some(Lease {
                partition,
                revision,
            })),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(ClusterError::engine("taking a lease", e)),
        }
    }

    /// Renew `lease` for another TTL if it is still this worker's (its revision unchanged).
    pub async fn renew(&self, lease: &mut Lease) -> Result<Renewal, ClusterError> {
        match self
            .kv
            .update(
                key(lease.partition),
                self.worker.clone().into_bytes().into(),
                lease.revision,
            )
            .await
        {
            Ok(revision) => {
                lease.revision = revision;
                Ok(Renewal::Held)
            }
            Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(Renewal::Lost),
            Err(e) => Err(ClusterError::engine("renewing a lease", e)),
        }
    }

    /// Give `lease` back at once (only if it is still ours: a lost lease is left to its holder).
    pub async fn release(&self, lease: Lease) -> Result<(), ClusterError> {
        match self
            .kv
            .delete_expect_revision(key(lease.partition), Some(lease.revision))
            .await
        {
            Ok(()) => Ok(()),
            // The revision moved on: somebody else holds it now, nothing of ours to give back.
            Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(()),
            Err(e) => Err(ClusterError::engine("releasing a lease", e)),
        }
    }

    /// The worker holding `partition`, if any.
    pub async fn holder(&self, partition: u32) -> Result<Option<String>, ClusterError> {
        self.check(partition)?;
        let value = self
            .kv
            .get(key(partition))
            .await
            .map_err(|e| ClusterError::engine("reading a lease", e))?;
        Ok(value.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    fn check(&self, partition: u32) -> Result<(), ClusterError> {
        if partition >= self.partitions {
            return Err(ClusterError::InvalidSpec(format!(
                "partition {partition} does not exist (the cluster has {})",
                self.partitions
            )));
        }
        Ok(())
    }
}
