//! A partition's commit log on the log stream (subject `thresher.log.<partition>`): appends carry
//! the last sequence this writer saw on the subject (`Nats-Expected-Last-Subject-Sequence`), so
//! JetStream refuses an append from a writer that is not the last one — the fencing that stops a
//! stale worker from writing after another has taken its partition. Read back in order for a
//! takeover's replay. Opening a log appends a takeover marker, so the previous writer is fenced
//! from that moment, before the new owner's first commit.

use async_nats::jetstream::{self, context::PublishErrorKind, stream};
use async_nats::HeaderMap;

use super::{ClusterError, LOG_STREAM};

/// The subject of `partition`'s log.
pub fn subject(partition: u32) -> String {
    format!("thresher.log.{partition}")
}

/// One writer's handle on a partition's log.
pub struct PartitionLog {
    js: jetstream::Context,
    stream: stream::Stream,
    partition: u32,
    /// The last sequence on the subject this writer knows of (0: none).
    last: u64,
}

/// The header of a takeover marker (its value: the new writer's id); replay skips markers.
pub const MARKER_HEADER: &str = "Thresher-Takeover";

/// What an append found.
#[derive(Debug, PartialEq, Eq)]
pub enum Append {
    /// Stored at this stream sequence.
    Stored(u64),
    /// Another writer appended since this one last did: the partition is no longer this
    /// worker's. Nothing was written; stop its work.
    Fenced,
}

impl PartitionLog {
    /// Open `partition`'s log for writing after what it holds now, as writer `writer` (the
    /// caller holds the partition's lease, so no other live worker appends): a takeover marker
    /// is appended at once, which fences whoever wrote before.
    pub(super) async fn open(
        js: &jetstream::Context,
        partition: u32,
        writer: &str,
    ) -> Result<Self, ClusterError> {
        let stream = js
            .get_stream(LOG_STREAM)
            .await
            .map_err(|e| ClusterError::engine("opening the log stream", e))?;
        let mut log = PartitionLog {
            js: js.clone(),
            stream,
            partition,
            last: 0,
        };
        log.last = log.last_sequence().await?;
        let mut marker = HeaderMap::new();
        marker.insert(MARKER_HEADER, writer);
        match log.publish(marker, Vec::new()).await? {
            Append::Stored(_) => Ok(log),
            // Another writer appended between reading the last sequence and the marker: it
            // holds the partition now (our lease lapsed meanwhile); refuse to open.
            Append::Fenced => Err(ClusterError::engine(
                "taking over a partition log",
                format!("partition {partition} was written by another worker meanwhile"),
            )),
        }
    }

    pub fn partition(&self) -> u32 {
        self.partition
    }

    /// The last sequence on the subject (0: empty).
    async fn last_sequence(&self) -> Result<u64, ClusterError> {
        match self
            .stream
            .get_last_raw_message_by_subject(&subject(self.partition))
            .await
        {
            Ok(m) => Ok(m.sequence),
            Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(0),
            Err(e) => Err(ClusterError::engine("reading a partition log", e)),
        }
    }

    /// Append `record` if no other writer appended since this one's last append (or open).
    pub async fn append(&mut self, record: Vec<u8>) -> Result<Append, ClusterError> {
        self.publish(HeaderMap::new(), record).await
    }

    async fn publish(
        &mut self,
        mut headers: HeaderMap,
        record: Vec<u8>,
    ) -> Result<Append, ClusterError> {
        headers.insert(
            async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
            self.last.to_string().as_str(),
        );
        let ack = self
            .js
            .publish_with_headers(subject(self.partition), headers, record.into())
            .await
            .map_err(|e| ClusterError::engine("appending to a partition log", e))?;
        match ack.await {
            Ok(ack) => {
                self.last = ack.sequence;
                Ok(Append::Stored(ack.sequence))
            }
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => Ok(Append::Fenced),
            Err(e) => Err(ClusterError::engine("appending to a partition log", e)),
        }
    }

    /// The records of the log after stream sequence `after`, in order, with their sequences
    /// (takeover markers left out).
    pub async fn read_after(&self, after: u64) -> Result<Vec<(u64, Vec<u8>)>, ClusterError> {
        let mut out = Vec::new();
        let mut next = after + 1;
        loop {
            match self
                .stream
                .get_first_raw_message_by_subject(subject(self.partition), next)
                .await
            {
                Ok(m) => {
                    next = m.sequence + 1;
                    if m.headers.get(MARKER_HEADER).is_none() {
                        out.push((m.sequence, m.payload.to_vec()));
                    }
                }
                Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => {
                    return Ok(out)
                }
                Err(e) => return Err(ClusterError::engine("reading a partition log", e)),
            }
        }
    }
}
