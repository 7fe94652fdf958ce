//! One module per `thresher` subcommand: each turns its `cli` args into work and a summary.

pub mod clean;
pub mod crawl;
pub mod eval;
pub mod export;
pub mod inspect;
pub mod status;

use std::path::Path;

/// Write `bytes` to `path` so that readers (and a kill -9) see the old file or the new one,
/// never half of one: write a temporary sibling, then rename it over.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// A site key (`host` or `host:port`) as a directory name: `:` becomes `_` so the name is
/// portable.
pub fn site_dir_name(site: &str) -> String {
    site.replace(':', "_")
}
