//! A partition's commit log on the log stream (subject `thresher.log.<partition>`): appends carry
//! the last sequence this writer saw on the subject (`Nats-Expected-Last-Subject-Sequence`), so
//! JetStream refuses an append from a writer that is not the last one — the fencing that stops a
//! stale worker from writing after another has taken its partition. Read back in order for a
//! takeover's replay. Opening a log appends a takeover marker, so the previous writer is fenced
//! from that moment, before the new owner's first commit.

use std::io::Write;
use std::path::Path;

use async_nats::jetstream::{self, consumer, context::PublishErrorKind, stream};
use async_nats::HeaderMap;
use futures::StreamExt;

use super::{ClusterError, LOG_STREAM};

/// The subject of `partition`'s log.
pub fn subject(partition: u32) -> String {
    format!("thresher.log.{partition}")
}

/// A read-only handle on a partition's log: reads it back without fencing anyone (`export
/// --cluster` reads every partition's this way while the crawl goes on). A writer's
/// [`PartitionLog`] reads through one ([`PartitionLog::reader`]).
#[derive(Clone)]
pub struct LogReader {
    stream: stream::Stream,
    partition: u32,
}

/// One writer's handle on a partition's log.
pub struct PartitionLog {
    js: jetstream::Context,
    reader: LogReader,
    /// The last sequence on the subject this writer knows of (0: none).
    last: u64,
    /// This writer's id (header [`WRITER_HEADER`] of its appends).
    writer: String,
    /// Appends this handle made (header [`APPEND_HEADER`] numbers them from 1).
    appended: u64,
}

/// The header naming the writer of an append.
pub const WRITER_HEADER: &str = "Thresher-Writer";
/// The header numbering the messages a writer's handle publishes (1, 2, …; the takeover marker
/// is 1): with [`WRITER_HEADER`], how a writer knows its own append when the ack was lost.
pub const APPEND_HEADER: &str = "Thresher-Append";
/// How long an append is retried through errors the engine may recover from (a new leader is
/// elected within seconds; a worker's lease lasts longer than this only if its TTL does).
pub const APPEND_RETRY: std::time::Duration = std::time::Duration::from_secs(30);

/// The header of a takeover marker (its value: the new writer's id); replay skips markers.
pub const MARKER_HEADER: &str = "Thresher-Takeover";

/// What a record of the crawl's is ([`PartitionLog::append_record`]); the header
/// `KIND_HEADER` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One fetch's WARC records (gzip members: the response or revisit, then the request),
    /// exactly as `--warc-out` writes them: a new owner imports them as pages this crawl fetched
    /// (`crawl::import`, docs/cluster.md).
    Exchange,
    /// URLs the partition was handed (seeds, or other partitions' links from its inbox), one
    /// a line, committed before the inbox messages are acknowledged.
    Link,
    /// A snapshot of the partition is in the snapshot bucket: `<sequence> <name>`, the stream
    /// sequence it covers up to (every record at or before it) and its objects' name
    /// (`cluster::snapshot`). Appended fenced, so only the partition's owner can say so.
    Snapshot,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Exchange => "exchange",
            Kind::Link => "link",
            Kind::Snapshot => "snapshot",
        }
    }

    fn of(name: &str) -> Option<Kind> {
        match name {
            "exchange" => Some(Kind::Exchange),
            "link" => Some(Kind::Link),
            "snapshot" => Some(Kind::Snapshot),
            _ => None,
        }
    }
}

/// The header naming a record's [`Kind`].
pub const KIND_HEADER: &str = "Thresher-Kind";
/// The header of a record's part, `i/n` (1-based), when it takes more than one message.
pub const PART_HEADER: &str = "Thresher-Part";
/// The most bytes of a record in one message: JetStream's default `max_payload` is 1 MiB, and
/// a page's records can be larger (a 5 MB page compresses to over 1 MB at level 1).
pub const CHUNK_BYTES: usize = 512 << 10;

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
        let mut log = PartitionLog {
            js: js.clone(),
            reader: LogReader::open(js, partition).await?,
            last: 0,
            writer: writer.to_string(),
            appended: 0,
        };
        log.last = log.reader.last_sequence().await?;
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
        self.reader.partition
    }

    /// This log read back (replay, spool), as any reader would.
    pub fn reader(&self) -> &LogReader {
        &self.reader
    }

    /// Append `record` if no other writer appended since this one's last append (or open).
    pub async fn append(&mut self, record: Vec<u8>) -> Result<Append, ClusterError> {
        self.publish(HeaderMap::new(), record).await
    }

    /// Append a record of `kind`, in parts of at most `CHUNK_BYTES` when it is larger (each
    /// part fenced as any append is). `Stored` carries the last part's sequence: the record is
    /// in the log once that part is. A writer fenced between parts leaves the parts before in
    /// the log, which a replay drops, as it drops every record it cannot read whole.
    pub async fn append_record(
        &mut self,
        kind: Kind,
        bytes: &[u8],
    ) -> Result<Append, ClusterError> {
        let parts: Vec<&[u8]> = if bytes.is_empty() {
            vec![bytes]
        } else {
            bytes.chunks(CHUNK_BYTES).collect()
        };
        let n = parts.len();
        let mut stored = Append::Fenced;
        for (i, part) in parts.into_iter().enumerate() {
            let mut headers = HeaderMap::new();
            headers.insert(KIND_HEADER, kind.name());
            if n > 1 {
                headers.insert(PART_HEADER, format!("{}/{n}", i + 1).as_str());
            }
            stored = self.publish(headers, part.to_vec()).await?;
            if stored == Append::Fenced {
                return Ok(Append::Fenced);
            }
        }
        Ok(stored)
    }

    /// Publish one message fenced by this writer's last sequence, naming the writer and its
    /// append's number. An error the engine may recover from (a leader election: a timeout,
    /// no responders) is retried with the same message for up to [`APPEND_RETRY`]; an append
    /// refused as out of sequence is this writer's own when the subject's last message carries
    /// its name and this append's number (the first try was stored, its ack lost), else the
    /// partition is another writer's now.
    async fn publish(
        &mut self,
        mut headers: HeaderMap,
        record: Vec<u8>,
    ) -> Result<Append, ClusterError> {
        let number = (self.appended + 1).to_string();
        headers.insert(
            async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
            self.last.to_string().as_str(),
        );
        headers.insert(WRITER_HEADER, self.writer.as_str());
        headers.insert(APPEND_HEADER, number.as_str());
        // Shared by every try (a clone is a reference count, not a copy).
        let payload = bytes::Bytes::from(record);
        let started = std::time::Instant::now();
        loop {
            let sent = self
                .js
                .publish_with_headers(
                    subject(self.reader.partition),
                    headers.clone(),
                    payload.clone(),
                )
                .await;
            let error = match sent {
                Ok(ack) => match ack.await {
                    Ok(ack) => {
                        self.last = ack.sequence;
                        self.appended += 1;
                        return Ok(Append::Stored(ack.sequence));
                    }
                    Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                        return self.own_or_fenced(&number).await;
                    }
                    Err(e) => e.to_string(),
                },
                Err(e) => e.to_string(),
            };
            if started.elapsed() >= APPEND_RETRY {
                return Err(ClusterError::engine("appending to a partition log", error));
            }
            tracing::debug!(
                partition = self.reader.partition,
                "append failed ({error}); retrying"
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// After an append refused as out of sequence: `Stored` when the subject's last message is
    /// this writer's append `number` (an earlier try of it got in), else `Fenced`.
    async fn own_or_fenced(&mut self, number: &str) -> Result<Append, ClusterError> {
        let last = self
            .reader
            .stream
            .get_last_raw_message_by_subject(&subject(self.reader.partition))
            .await
            .map_err(|e| ClusterError::engine("reading a partition log", e))?;
        let header = |name: &str| last.headers.get(name).map(|v| v.as_str().to_string());
        if header(WRITER_HEADER).as_deref() == Some(self.writer.as_str())
            && header(APPEND_HEADER).as_deref() == Some(number)
        {
            self.last = last.sequence;
            self.appended += 1;
            return Ok(Append::Stored(last.sequence));
        }
        Ok(Append::Fenced)
    }
}

impl LogReader {
    pub(super) async fn open(
        js: &jetstream::Context,
        partition: u32,
    ) -> Result<Self, ClusterError> {
        let stream = js
            .get_stream(LOG_STREAM)
            .await
            .map_err(|e| ClusterError::engine("opening the log stream", e))?;
        Ok(LogReader { stream, partition })
    }

    pub fn partition(&self) -> u32 {
        self.partition
    }

    /// The last sequence on the subject (0: empty).
    pub async fn last_sequence(&self) -> Result<u64, ClusterError> {
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

    /// A takeover's read of the log after stream sequence `after`: every `exchange` record's
    /// bytes written one after another to `exchanges` (gzip members, so the file is a WARC file
    /// the crawl imports), every `link` record's URL returned, in order, and the last
    /// `snapshot` record's sequence and name. The file is the new owner's scratch, made anew at
    /// each takeover (a kill part-way leaves nothing another takeover needs).
    pub async fn spool(&self, after: u64, exchanges: &Path) -> Result<Spooled, ClusterError> {
        let io = |e: std::io::Error| {
            ClusterError::engine(
                "writing a partition's records",
                format!("{}: {e}", exchanges.display()),
            )
        };
        let mut out = std::io::BufWriter::new(std::fs::File::create(exchanges).map_err(io)?);
        let spooled = self.spool_into(after, &mut out).await?;
        out.flush().map_err(io)?;
        Ok(spooled)
    }

    /// [`LogReader::spool`] to any writer (a snapshot appends the log's tail to the snapshot
    /// before it).
    pub async fn spool_into(
        &self,
        after: u64,
        out: &mut impl Write,
    ) -> Result<Spooled, ClusterError> {
        let mut spooled = Spooled {
            last: after,
            ..Spooled::default()
        };
        let mut replay = self.replay(after).await?;
        while let Some((seq, kind, bytes)) = replay.next().await? {
            spooled.last = seq;
            match kind {
                Kind::Exchange => {
                    out.write_all(&bytes)
                        .map_err(|e| ClusterError::engine("writing a partition's records", e))?;
                    spooled.exchanges += 1;
                }
                Kind::Link => spooled.links.extend(
                    String::from_utf8_lossy(&bytes)
                        .lines()
                        .filter(|l| !l.is_empty())
                        .map(str::to_string),
                ),
                Kind::Snapshot => {
                    let text = String::from_utf8_lossy(&bytes);
                    let mut words = text.split_whitespace();
                    if let (Some(Ok(covers)), Some(name), records) = (
                        words.next().map(str::parse),
                        words.next(),
                        words.next().and_then(|r| r.parse().ok()),
                    ) {
                        spooled.snapshot = Some(SnapshotRef {
                            covers,
                            name: name.to_string(),
                            records: records.unwrap_or(0),
                        });
                    }
                }
            }
        }
        Ok(spooled)
    }

    /// Drop the partition's messages at or before stream sequence `through` (a snapshot holds
    /// them now).
    pub async fn purge_through(&self, through: u64) -> Result<(), ClusterError> {
        self.stream
            .purge()
            .filter(subject(self.partition))
            .sequence(through + 1)
            .await
            .map_err(|e| ClusterError::engine("purging a partition log", e))?;
        Ok(())
    }

    /// The log's records after stream sequence `after`, up to the last one appended by now,
    /// one at a time ([`Replay::next`]), through an ordered consumer (the engine pushes the
    /// messages in order, without a request each).
    pub async fn replay(&self, after: u64) -> Result<Replay, ClusterError> {
        // Through a leader election the engine may time out for a while: retried, as appends.
        let started = std::time::Instant::now();
        loop {
            match self.try_replay(after).await {
                Ok(replay) => return Ok(replay),
                Err(e) if started.elapsed() < APPEND_RETRY => {
                    tracing::debug!(partition = self.partition, "replay failed ({e}); retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn try_replay(&self, after: u64) -> Result<Replay, ClusterError> {
        let end = self.last_sequence().await?;
        let messages = if end > after {
            let consumer = self
                .stream
                .create_consumer(consumer::pull::OrderedConfig {
                    filter_subject: subject(self.partition),
                    deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                        start_sequence: after + 1,
                    },
                    ..Default::default()
                })
                .await
                .map_err(|e| ClusterError::engine("replaying a partition log", e))?;
            Some(
                consumer
                    .messages()
                    .await
                    .map_err(|e| ClusterError::engine("replaying a partition log", e))?,
            )
        } else {
            None
        };
        Ok(Replay { messages, end })
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

/// What [`LogReader::spool`] read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Spooled {
    /// The sequence of the last record read (`after` when there was none): where the next
    /// replay of this partition starts.
    pub last: u64,
    /// `exchange` records written to the file.
    pub exchanges: u64,
    /// The `link` records' URLs, in order.
    pub links: Vec<String>,
    /// The last `snapshot` record read.
    pub snapshot: Option<SnapshotRef>,
}

/// A `snapshot` record: `<covers> <name> <records>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotRef {
    /// The stream sequence the snapshot covers up to (every record at or before it).
    pub covers: u64,
    /// Its objects' name (`cluster::snapshot::name`).
    pub name: String,
    /// Records it holds.
    pub records: u64,
}

/// A partition log read back record by record, in order ([`LogReader::replay`]): a takeover
/// reads what the partition's writers committed, one message in memory at a time (beside the
/// record being put together from its parts).
pub struct Replay {
    /// `None` when there is nothing to read.
    messages: Option<consumer::pull::Ordered>,
    /// The last sequence on the subject when the replay began: it ends there.
    end: u64,
}

impl Replay {
    /// The next whole record: its last part's sequence, its kind and its bytes; `None` at the
    /// end of the log. Takeover markers, messages of no kind (raw [`PartitionLog::append`]s)
    /// and records missing a part (their writer was fenced part-way) are passed over.
    pub async fn next(&mut self) -> Result<Option<(u64, Kind, Vec<u8>)>, ClusterError> {
        // The record being put together: its kind, the parts it has, how many it has in all.
        let mut partial: Option<(Kind, Vec<u8>, usize, usize)> = None;
        loop {
            let Some(messages) = self.messages.as_mut() else {
                return Ok(None);
            };
            let m = match messages.next().await {
                Some(Ok(m)) => m,
                Some(Err(e)) => return Err(ClusterError::engine("replaying a partition log", e)),
                None => return Ok(None),
            };
            let sequence = m
                .info()
                .map_err(|e| ClusterError::engine("replaying a partition log", e))?
                .stream_sequence;
            if sequence >= self.end {
                self.messages = None;
            }
            let header = |name: &str| {
                m.headers
                    .as_ref()
                    .and_then(|h| h.get(name))
                    .map(|v| v.as_str().to_string())
            };
            let Some(kind) = header(KIND_HEADER).as_deref().and_then(Kind::of) else {
                // A marker (or a raw append) between two parts: the record was cut off.
                partial = None;
                continue;
            };
            let part = header(PART_HEADER).and_then(|p| {
                let (i, n) = p.split_once('/')?;
                Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?))
            });
            match part {
                None => return Ok(Some((sequence, kind, m.payload.to_vec()))),
                Some((1, n)) if n > 1 => {
                    partial = Some((kind, m.payload.to_vec(), 1, n));
                }
                Some((i, n)) => match partial.take() {
                    Some((k, mut bytes, had, total)) if k == kind && had + 1 == i && total == n => {
                        bytes.extend_from_slice(&m.payload);
                        if i == n {
                            return Ok(Some((sequence, kind, bytes)));
                        }
                        partial = Some((k, bytes, i, n));
                    }
                    // A part out of its place: the record it belongs to is not whole.
                    _ => {}
                },
            }
        }
    }
}
