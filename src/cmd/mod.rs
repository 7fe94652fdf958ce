//! One module per `thresher` subcommand: each turns its `cli` args into work and a summary.

pub mod clean;
pub mod crawl;
pub mod eval;
pub mod export;
pub mod inspect;
pub mod status;

use std::path::Path;

/// Tune glibc's allocator for a batch job that parses many pages on all cores and frees them
/// in bulk (`clean`, `eval`): grow heaps in large steps and do not hand freed memory back to
/// the kernel between pages. With the defaults every thread's heap shrinks and regrows per
/// page (an `mprotect` plus zeroed page faults each time): about 6 % of `clean`'s wall time on
/// the dev datasets. The process keeps its peak memory until it exits, which a batch job
/// does. The settings are process-wide, so the binary calls this for those commands only (a
/// library caller keeps its own allocator settings). Elsewhere a no-op.
pub fn tune_allocator_for_batch() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters (glibc takes its arena lock to do so,
    // so it is safe with other threads running); a refused setting leaves the default.
    unsafe {
        let _ = libc::mallopt(libc::M_TOP_PAD, 32 << 20);
        let _ = libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        let _ = libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

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
