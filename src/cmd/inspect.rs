//! `thresher inspect HOST [--page URL] [--report FILE]`: what was learned for one host. The
//! report is the library's (`inspect::inspect`, read from the store); this writes its HTML to
//! `--report` and prints the listing (the host's clusters largest first, and what the report
//! shows).

use std::path::PathBuf;

use crate::cli::InspectArgs;
use crate::config::ConfigError;
use crate::inspect::{inspect, listing, report, InspectError};

#[derive(Debug, thiserror::Error)]
pub enum InspectCmdError {
    #[error(transparent)]
    Inspect(#[from] InspectError),
    #[error("cannot write the report {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
}

pub fn run(args: &InspectArgs) -> Result<(), InspectCmdError> {
    let config = super::settings(&args.settings, super::data_override(args.data.as_deref()))?;
    let r = inspect(
        &config.crawl.data_dir,
        config.store.cache_bytes,
        &args.host,
        args.page.as_deref(),
    )?;
    crate::output::write_atomic(&args.report, report::render(&r).as_bytes()).map_err(|source| {
        InspectCmdError::Write {
            path: args.report.clone(),
            source,
        }
    })?;
    print!("{}", listing(&r, &args.report));
    Ok(())
}
