//! `thresher status`: what a data directory holds — pages per host, queue sizes, errors by kind,
//! when the crawl last ran. sled lets one process open a store, so a running crawl writes the
//! same report to `DATA/status.json` every few seconds and `status` shows that snapshot. A
//! closed store's report is kept there too, and shown while the store is unchanged. The
//! report itself (`StatusReport`, read from a store or written as the snapshot) is
//! `crate::status`; this is the command.

use std::path::Path;

use crate::cli::StatusArgs;
use crate::config::ConfigError;
// Re-exported: `status::report` returns it, and callers have named it here.
use crate::status::SNAPSHOT;
pub use crate::status::{HostRow, StatusReport};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0} does not exist (no crawl has used it)")]
    Missing(std::path::PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Cluster(#[from] super::cluster::ClusterCmdError),
    #[error("cannot read the running crawl's snapshot {path}: {message}")]
    Snapshot {
        path: std::path::PathBuf,
        message: String,
    },
}

pub fn run(args: &StatusArgs) -> Result<(), StatusError> {
    let text = match &args.cluster {
        Some(urls) => super::cluster::status(urls, args.json)?,
        None => {
            let config =
                super::settings(&args.settings, super::data_override(args.data.as_deref()))?;
            let report = report(&config.crawl.data_dir, config.store.cache_bytes)?;
            if args.json {
                super::json_text(&report)
            } else {
                report.render()
            }
        }
    };
    // `status | head`: a closed pipe is the reader's choice, not an error (nor a panic).
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
    Ok(())
}

/// The report on the data directory `data`, its store opened with a page cache of `cache_bytes`
/// (`store.cache_bytes`); the running crawl's snapshot when a crawl holds the store.
pub fn report(data: &Path, cache_bytes: u64) -> Result<StatusReport, StatusError> {
    if !data.exists() {
        return Err(StatusError::Missing(data.to_path_buf()));
    }
    if let Some(report) = crate::status::closed_report(data) {
        return Ok(report);
    }
    match Store::open_existing(data, cache_bytes) {
        Ok(store) => {
            let report = StatusReport::from_store(&store)?;
            let stamp = store.stamp()?;
            // Closed first, so the log file is as the next `status` will find it (a writer
            // opening the store in between flushes a new stamp: the kept report is then stale).
            drop(store);
            if let Err(e) = crate::status::keep_closed_report(data, report.clone(), stamp) {
                tracing::debug!("cannot keep the report in {SNAPSHOT}: {e}");
            }
            Ok(report)
        }
        Err(StoreError::Locked { .. }) => {
            let path = data.join(SNAPSHOT);
            let text = std::fs::read_to_string(&path).map_err(|e| StatusError::Snapshot {
                path: path.clone(),
                message: e.to_string(),
            })?;
            serde_json::from_str(&text).map_err(|e| StatusError::Snapshot {
                path,
                message: e.to_string(),
            })
        }
        Err(e) => Err(e.into()),
    }
}
