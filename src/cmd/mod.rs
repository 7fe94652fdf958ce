//! One module per `thresher` subcommand: each turns its `cli` args into work and a summary.
//!
//! Owns: turning flags into work, the summaries on stdout, and what each command reads and
//! writes. The top of the library: it may use every module below it, and nothing below imports
//! `cmd`, so what two commands share lives lower down (`output`, `store`, `template::engine`).
//! Layers: docs/design.md, "Layers: who may import whom".

pub mod changes;
pub mod clean;
pub mod crawl;
pub mod eval;
pub mod export;
pub mod inspect;
pub mod status;

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
