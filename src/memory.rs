//! Giving freed heap back to the OS: after work on a huge page, every few seconds of a crawl,
//! and around the end-of-crawl pass; and the allocator settings the `thresher` binary runs with.
//!
//! Owns: when freed memory is returned, and how ([`jemalloc`]). Imports no other thresher module.
//!
//! The binary's allocator is jemalloc (`main.rs`, [`jemalloc::CONF`]): its background thread
//! returns pages freed for a second (`dirty_decay_ms`) on its own, and [`release`] asks it to
//! return every freed page at once after work that freed much (a huge page, a site's pass).
//! glibc's malloc, which the binary used before jemalloc, kept what a thread freed in that
//! thread's arena: parsing a multi-megabyte page left hundreds of MB of such free memory spread
//! over the arenas (docs/robustness.md), and over a million-page crawl its arenas'
//! fragments grew by ~25 MB per 200,000 pages even with `malloc_trim` after every site while the
//! live heap stayed flat (docs/benchmarks.md, "Memory"). [`release`] calls what the
//! binary installed with [`enable_release`]; a library caller keeps its own allocator's
//! behaviour.
//!
//! Parsing such a page holds its html5ever tree and its flat copy at once (about 200 MB for a
//! 4.95 MB page of 230,000 links); two of them parsing on two cores were the crawl's peak. So a
//! huge page waits for its [`huge_parse_turn`]: one at a time in the process (other pages parse
//! beside it).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use tokio::sync::{Semaphore, SemaphorePermit};

/// A page body at least this large counts as huge: its parse and commit are followed by a trim,
/// and the end-of-crawl pass cleans it alone (`learn`).
pub const HUGE_PAGE_BYTES: u64 = 1 << 20;

static RELEASES: AtomicU64 = AtomicU64::new(0);
/// What [`release`] calls: the allocator is the process's, so the binary decides
/// ([`enable_release`]).
static RELEASE_WITH: OnceLock<fn()> = OnceLock::new();

/// Let [`release`] give freed heap back to the OS with `give_back` (the `thresher` binary's
/// crawl passes [`jemalloc::purge`]). The first call wins.
pub fn enable_release(give_back: fn()) {
    let _ = RELEASE_WITH.set(give_back);
}

/// The jemalloc the `thresher` binary (and the benchmarks that measure its memory) install as
/// the global allocator: `#[global_allocator]` and the `_rjem_malloc_conf` symbol must be in
/// the binary, so each declares them, with [`jemalloc::CONF`].
pub mod jemalloc {
    /// jemalloc's options (`malloc_conf`, NUL-terminated): a background thread returns pages
    /// freed for 1 s (`dirty_decay_ms`; jemalloc's default is 10 s, which held a finished
    /// site's pass working set through the next one's), straight to the OS (`muzzy_decay_ms`
    /// 0: no lazily-freed stage counted in RSS meanwhile). At 200,000 pages of 40 sites, side
    /// by side: peak RSS glibc 235.8 MB, jemalloc's defaults 226.6, these options 195.5. 1 s,
    /// not 200 ms: 200 ms cut the 200k peak at the pass's start (194.7 → 158.0 MB) but held
    /// more while fetching, and the 1M peak is while fetching (263.4 MB with 1 s, 274.0 with
    /// 200 ms; docs/benchmarks.md, "Memory"). 2 arenas (`narenas`; jemalloc's default is 4
    /// per core): fewer partly used slabs under sled's many small objects, 1M peak 247.0 MB
    /// (docs/benchmarks.md, "Memory"), 10k peak 99 against 107 MB. Thread caches only for
    /// sizes up to 4 KiB (`tcache_max`; jemalloc's default is 32 KiB): each thread kept up to
    /// 20 freed blocks of every larger size class (a page's HTML, its text, sled's nodes) for
    /// itself, and a thread that goes idle — a pass thread between sites, a blocking-pool
    /// thread — keeps them until it allocates again. 10,000 sites × 10 pages: peak RSS 170.0
    /// MB against 208.1 and 211.6 (433 pages/s against 462 and 471); 50 × 200: 103 against 131
    /// MB, 761 against 775 pages/s (medians of 3, alternated). No thread cache at all held
    /// 142–147 MB but cost 12 % of the broad crawl's pages/s (docs/benchmarks.md, "Memory").
    pub const CONF: &[u8; 86] =
        b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2,tcache_max:4096\0";

    /// Return every page jemalloc's arenas hold free to the OS now.
    pub fn purge() {
        // SAFETY: the name is NUL-terminated; "arena.<MALLCTL_ARENAS_ALL>.purge" takes and
        // returns no value (null pointers, length 0) and only returns free pages to the OS.
        unsafe {
            let _ = tikv_jemalloc_sys::mallctl(
                c"arena.4096.purge".as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
        }
    }
}

/// One huge page parses at a time, process-wide.
static HUGE_PARSE: Semaphore = Semaphore::const_new(1);
/// Huge pages parsing now, and the most ever at once.
static HUGE_PARSING: AtomicUsize = AtomicUsize::new(0);
static HUGE_PARSING_MOST: AtomicUsize = AtomicUsize::new(0);

/// A huge page's turn to parse, held until dropped.
pub struct HugeParse {
    _turn: SemaphorePermit<'static>,
}

impl Drop for HugeParse {
    fn drop(&mut self) {
        HUGE_PARSING.fetch_sub(1, Relaxed);
    }
}

/// Wait for the turn to parse a page of `bytes`: at once (`None`) for a page under
/// [`HUGE_PAGE_BYTES`], else once no other huge page is parsing.
pub async fn huge_parse_turn(bytes: u64) -> Option<HugeParse> {
    if bytes < HUGE_PAGE_BYTES {
        return None;
    }
    let turn = HUGE_PARSE
        .acquire()
        .await
        .expect("invariant: the huge-parse semaphore is never closed");
    let now = HUGE_PARSING.fetch_add(1, Relaxed) + 1;
    HUGE_PARSING_MOST.fetch_max(now, Relaxed);
    Some(HugeParse { _turn: turn })
}

/// The most huge pages that were ever parsing at once in this process (for tests).
pub fn huge_parses_at_once() -> usize {
    HUGE_PARSING_MOST.load(Relaxed)
}

/// Work on `bytes` of input is over: if that is a huge page's worth, give the heap's free
/// memory back to the OS. Returns whether it did.
pub fn release_after(bytes: u64) -> bool {
    if bytes < HUGE_PAGE_BYTES {
        return false;
    }
    release();
    true
}

/// Give the heap's free memory back to the OS now (with what the binary passed to
/// [`enable_release`]; otherwise a no-op that is still counted).
pub fn release() {
    RELEASES.fetch_add(1, Relaxed);
    let Some(give_back) = RELEASE_WITH.get() else {
        return;
    };
    let started = std::time::Instant::now();
    give_back();
    tracing::debug!(took = ?started.elapsed(), "freed heap given back to the OS");
}

/// How often a long crawl gives freed heap back ([`Periodic`]).
pub const RELEASE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Releases now and then: over a long crawl RSS drifted to several times the live heap with
/// glibc's arenas (docs/benchmarks.md, "Memory"); with jemalloc a release every few
/// seconds is cheap and bounds what waits for its decay.
#[derive(Debug)]
pub struct Periodic {
    every: std::time::Duration,
    last: std::time::Instant,
}

impl Periodic {
    pub fn new(every: std::time::Duration) -> Periodic {
        Periodic {
            every,
            last: std::time::Instant::now(),
        }
    }

    /// Release if `every` has passed since the last release (or since `new`); returns whether
    /// it did.
    pub fn tick(&mut self) -> bool {
        if self.last.elapsed() < self.every {
            return false;
        }
        self.last = std::time::Instant::now();
        release();
        true
    }
}

/// Run `f` on a thread of its own, so what it allocates is not interleaved with the crawl's
/// long-lived data (sled's tree, the scheduler) allocated on the blocking threads (a new thread
/// takes the next arena, in jemalloc as in glibc); returns its result.
pub fn on_own_heap<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("thresher-huge-parse".into())
            .spawn_scoped(s, f)
            .expect("invariant: a thread can be spawned");
        worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// How many times [`release`] ran in this process (for tests: memory asserted by structure).
pub fn releases() -> u64 {
    RELEASES.load(Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (`links3`): a huge page parsed on the crawl's blocking threads left its freed
    /// tree among the store's allocations made there next; it now parses on a thread of its own.
    #[test]
    fn huge_page_work_runs_on_a_thread_of_its_own() {
        let (name, sum) = on_own_heap(|| {
            let name = std::thread::current().name().map(str::to_string);
            (name, (1..=10u64).sum::<u64>())
        });
        assert_eq!(name.as_deref(), Some("thresher-huge-parse"));
        assert_eq!(sum, 55);
        let panicked = std::panic::catch_unwind(|| on_own_heap(|| panic!("inside")));
        assert!(panicked.is_err());
    }

    #[test]
    fn a_long_crawl_releases_memory_every_interval_and_not_more_often() {
        let mut p = Periodic::new(std::time::Duration::from_millis(40));
        assert!(!p.tick(), "nothing before the first interval");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let before = releases();
        assert!(p.tick());
        assert!(releases() > before);
        assert!(!p.tick(), "the interval starts again at each release");
    }

    #[test]
    fn only_a_huge_page_releases_memory() {
        assert!(!release_after(HUGE_PAGE_BYTES - 1));
        let before = releases();
        assert!(release_after(HUGE_PAGE_BYTES));
        assert!(releases() > before);
    }
}
