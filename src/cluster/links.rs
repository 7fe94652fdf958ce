//! Links handed across partitions: a worker that finds a link to a site of another partition
//! publishes it to that partition's subject of the link stream with the URL's hash as message
//! id (JetStream drops a second copy within its duplicate window); the partition's owner pulls
//! them from a durable consumer and acknowledges each only once it is committed to its frontier,
//! so a worker killed before that leaves the link to be delivered again (after the ack wait,
//! one lease TTL) to the partition's next owner.

use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use async_nats::HeaderMap;
use futures::StreamExt;

use super::log::APPEND_RETRY;
use super::{ClusterError, LINK_STREAM};

/// The header carrying a link's crawl depth (the depth its page would have had on one machine).
pub const DEPTH_HEADER: &str = "Thresher-Depth";

/// The subject of `partition`'s links.
pub fn subject(partition: u32) -> String {
    format!("thresher.links.{partition}")
}

/// What sending a link did.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    Stored,
    /// The same URL was sent within the duplicate window: dropped by the engine.
    Duplicate,
}

/// Send `url`, found at crawl depth `depth`, to `partition`'s owner. An error the engine may recover from — a leader
/// election, or the same URL being stored by another worker this instant ("duplicate message
/// id is in process", on a replicated stream) — is retried with the same message for up to
/// [`APPEND_RETRY`]: a link that is not sent is lost to the crawl.
pub(super) async fn send(
    js: &jetstream::Context,
    partition: u32,
    url: &str,
    depth: u32,
) -> Result<Sent, ClusterError> {
    let mut headers = HeaderMap::new();
    let id = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(url.as_bytes()));
    headers.insert(async_nats::header::NATS_MESSAGE_ID, id.as_str());
    headers.insert(DEPTH_HEADER, depth.to_string().as_str());
    let payload = bytes::Bytes::from(url.to_string().into_bytes());
    let started = std::time::Instant::now();
    loop {
        let error = match js
            .publish_with_headers(subject(partition), headers.clone(), payload.clone())
            .await
        {
            Ok(ack) => match ack.await {
                Ok(ack) if ack.duplicate => return Ok(Sent::Duplicate),
                Ok(_) => return Ok(Sent::Stored),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        if started.elapsed() >= APPEND_RETRY {
            return Err(ClusterError::engine("sending a link", error));
        }
        tracing::debug!(partition, "sending a link failed ({error}); retrying");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A partition's links as its owner pulls them.
pub struct LinkInbox {
    consumer: consumer::PullConsumer,
}

/// A link pulled from an inbox: [`InboundLink::ack`] it once it is committed.
pub struct InboundLink {
    pub url: String,
    /// Its crawl depth (0 when the sender gave none).
    pub depth: u32,
    message: jetstream::Message,
}

impl InboundLink {
    pub async fn ack(self) -> Result<(), ClusterError> {
        self.message
            .ack()
            .await
            .map_err(|e| ClusterError::engine("acknowledging a link", e))
    }
}

impl LinkInbox {
    /// The durable consumer of `partition`'s links; an unacknowledged link is delivered again
    /// after `ack_wait`.
    pub(super) async fn open(
        js: &jetstream::Context,
        partition: u32,
        ack_wait: Duration,
    ) -> Result<LinkInbox, ClusterError> {
        let stream: stream::Stream = js
            .get_stream(LINK_STREAM)
            .await
            .map_err(|e| ClusterError::engine("opening the link stream", e))?;
        let name = format!("links-{partition}");
        let consumer = stream
            .get_or_create_consumer(
                &name,
                consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    filter_subject: subject(partition),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| ClusterError::engine("opening a link inbox", e))?;
        Ok(LinkInbox { consumer })
    }

    /// Links not yet acknowledged: waiting to be pulled, or pulled and not acknowledged.
    pub async fn waiting(&mut self) -> Result<u64, ClusterError> {
        let info = self
            .consumer
            .info()
            .await
            .map_err(|e| ClusterError::engine("reading a link inbox", e))?;
        Ok(info.num_pending + info.num_ack_pending as u64)
    }

    /// Up to `max` waiting links, waiting at most `wait` for the first.
    pub async fn next(&self, max: usize, wait: Duration) -> Result<Vec<InboundLink>, ClusterError> {
        let mut batch = self
            .consumer
            .fetch()
            .max_messages(max)
            .expires(wait)
            .messages()
            .await
            .map_err(|e| ClusterError::engine("pulling links", e))?;
        let mut out = Vec::new();
        while let Some(message) = batch.next().await {
            let message = message.map_err(|e| ClusterError::engine("pulling links", e))?;
            let url = String::from_utf8_lossy(&message.payload).into_owned();
            let depth = message
                .headers
                .as_ref()
                .and_then(|h| h.get(DEPTH_HEADER))
                .and_then(|d| d.as_str().parse().ok())
                .unwrap_or(0);
            out.push(InboundLink {
                url,
                depth,
                message,
            });
        }
        Ok(out)
    }
}
