//! Partition snapshots in the engine's object store (bucket [`SNAPSHOT_BUCKET`]): a snapshot of
//! partition `p` covering its log up to stream sequence `S` is two objects — `p<p>-<S>.warc.gz`
//! (every `exchange` record up to `S`, gzip members one after another: a WARC file) and
//! `p<p>-<S>.links` (every `link` record's URLs, a line each). Its owner writes them, then
//! appends a fenced `snapshot` record naming them (only then is the snapshot the partition's),
//! then purges the log up to `S`; a takeover or an export reads the last snapshot the log names,
//! then the log after it. A snapshot whose record was fenced is deleted by its writer.

use std::path::Path;

use async_nats::jetstream::{self, object_store};

use super::ClusterError;

/// The object store bucket of partition snapshots.
pub const SNAPSHOT_BUCKET: &str = "thresher-snapshots";

/// The name of partition `partition`'s snapshot covering its log up to `sequence`.
pub fn name(partition: u32, sequence: u64) -> String {
    format!("p{partition}-{sequence}")
}

/// The object store, created if need be (by `init`, with the cluster's replicas).
pub(super) async fn create(
    js: &jetstream::Context,
    replicas: usize,
) -> Result<object_store::ObjectStore, ClusterError> {
    match js.get_object_store(SNAPSHOT_BUCKET).await {
        Ok(store) => Ok(store),
        Err(_) => js
            .create_object_store(object_store::Config {
                bucket: SNAPSHOT_BUCKET.to_string(),
                num_replicas: replicas,
                storage: jetstream::stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| ClusterError::engine("creating the snapshot bucket", e)),
    }
}

pub(super) async fn open(
    js: &jetstream::Context,
) -> Result<object_store::ObjectStore, ClusterError> {
    js.get_object_store(SNAPSHOT_BUCKET).await.map_err(|e| {
        ClusterError::engine(
            "opening the snapshot bucket (run `thresher cluster init` again)",
            e,
        )
    })
}

/// Store the local file `from` as object `object`; its size.
pub(super) async fn put(
    store: &object_store::ObjectStore,
    object: &str,
    from: &Path,
) -> Result<u64, ClusterError> {
    let mut file = tokio::fs::File::open(from).await.map_err(|e| {
        ClusterError::engine("reading a snapshot", format!("{}: {e}", from.display()))
    })?;
    let info = store
        .put(object, &mut file)
        .await
        .map_err(|e| ClusterError::engine("storing a snapshot", e))?;
    Ok(info.size as u64)
}

/// Copy object `object` to the local file `to`; its size.
pub(super) async fn get(
    store: &object_store::ObjectStore,
    object: &str,
    to: &Path,
) -> Result<u64, ClusterError> {
    let mut reader = store
        .get(object)
        .await
        .map_err(|e| ClusterError::engine(&format!("reading snapshot {object}"), e))?;
    let mut file = tokio::fs::File::create(to).await.map_err(|e| {
        ClusterError::engine("writing a snapshot", format!("{}: {e}", to.display()))
    })?;
    let n = tokio::io::copy(&mut reader, &mut file)
        .await
        .map_err(|e| ClusterError::engine(&format!("reading snapshot {object}"), e))?;
    tokio::io::AsyncWriteExt::flush(&mut file)
        .await
        .map_err(|e| ClusterError::engine("writing a snapshot", e))?;
    Ok(n)
}

pub(super) async fn delete(
    store: &object_store::ObjectStore,
    object: &str,
) -> Result<(), ClusterError> {
    store
        .delete(object)
        .await
        .map_err(|e| ClusterError::engine(&format!("deleting snapshot {object}"), e))
}
