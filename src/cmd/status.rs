//! `thresher status`: what a data directory holds — pages per host, queue sizes, errors by kind,
//! when the crawl last ran — or, with `--cluster`, what a cluster's workers hold. The report
//! (`status::report`: the store, a running crawl's snapshot, or the report kept for a closed
//! store) is the library's; this prints it as text or JSON.

use crate::cli::StatusArgs;
use crate::config::ConfigError;
use crate::status::report;

#[derive(Debug, thiserror::Error)]
pub enum StatusCmdError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Status(#[from] crate::status::StatusError),
    #[error(transparent)]
    Cluster(#[from] super::cluster::ClusterCmdError),
}

pub fn run(args: &StatusArgs) -> Result<(), StatusCmdError> {
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
