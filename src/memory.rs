//! Giving freed heap back to the OS (glibc's `malloc_trim`): after work on a huge page, every
//! few seconds of a crawl, and around the end-of-crawl pass; and how many arenas hold it.
//!
//! Owns: when freed memory is returned. Imports no other thresher module.
//!
//! glibc keeps what a thread frees in that thread's arena for reuse; parsing a multi-megabyte
//! page (its DOM, its hundreds of thousands of links, their queue entries, sled's batches) on
//! the blocking pool leaves hundreds of MB of such free memory spread over the arenas, and a
//! crawl's peak RSS was mostly that (issue 10, docs/robustness.md: `links3` 540 MB of RSS for a
//! live heap of 141 MB). [`release_after`] trims every arena once such work is over. A trim
//! walks the arenas' free lists (a few milliseconds for hundreds of MB); it is asked for only
//! after pages of at least [`HUGE_PAGE_BYTES`], so an ordinary crawl's fetching never pays for
//! it. The end-of-crawl pass asks for one before it and one after each site (`learn`): its peak
//! sat on top of what fetching had freed (issue 11, docs/benchmarks.md).
//!
//! Parsing such a page holds its html5ever tree and its flat copy at once (about 200 MB for a
//! 4.95 MB page of 230,000 links); two of them parsing on two cores were the crawl's peak. So a
//! huge page waits for its [`huge_parse_turn`]: one at a time in the process (other pages parse
//! beside it).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

use tokio::sync::{Semaphore, SemaphorePermit};

/// A page body at least this large counts as huge: its parse and commit are followed by a trim,
/// and the end-of-crawl pass cleans it alone (`learn`).
pub const HUGE_PAGE_BYTES: u64 = 1 << 20;

static RELEASES: AtomicU64 = AtomicU64::new(0);
/// Whether [`release`] trims the heap: the allocator is the process's, so the binary decides
/// ([`enable_release`]); a library caller keeps its own allocator's behaviour.
static TRIM: AtomicBool = AtomicBool::new(false);

/// Let [`release`] give freed heap back to the OS (the `thresher` binary's crawl does).
pub fn enable_release() {
    TRIM.store(true, Relaxed);
}

/// glibc arenas per core the crawl allows (glibc's default is 8). A crawl runs ~90 threads
/// (the blocking pool's commits and parses); on 2 cores they spread over 16 arenas that each
/// kept 6–16 MB after every trim (`/proc/PID/smaps` at 416,000 pages). 4, not 1: one per core
/// cost ~10 % of the 10k crawl's pages/s (malloc contention), 4 per core nothing measurable,
/// with peak RSS 95 → 90 MB at 10k (docs/benchmarks.md, "Flat memory").
pub const ARENAS_PER_CORE: usize = 4;

/// Cap glibc's arenas at [`ARENAS_PER_CORE`] per core. Process-wide: the binary calls it for
/// the crawl, before its threads start. Elsewhere a no-op.
pub fn cap_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arenas = i32::try_from(cores.max(2) * ARENAS_PER_CORE).unwrap_or(i32::MAX);
        // SAFETY: mallopt only changes an allocator parameter (glibc takes its lock to do
        // so); a refused setting leaves the default.
        unsafe {
            let _ = libc::mallopt(libc::M_ARENA_MAX, arenas);
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

/// Give the heap's free memory back to the OS now (every arena; Linux with glibc, once the
/// binary has called [`enable_release`]; otherwise a no-op that is still counted).
pub fn release() {
    RELEASES.fetch_add(1, Relaxed);
    if !TRIM.load(Relaxed) {
        return;
    }
    let started = std::time::Instant::now();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's arenas to the OS (taking each
    // arena's lock); it has no preconditions and is safe with other threads allocating.
    unsafe {
        let _ = libc::malloc_trim(0);
    }
    tracing::debug!(took = ?started.elapsed(), "freed heap given back to the OS");
}

/// How often a long crawl gives freed heap back ([`Periodic`]).
pub const RELEASE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Trims now and then: glibc keeps what the crawl's threads free in their arenas, and over a
/// long crawl RSS drifted to several times the live heap (docs/benchmarks.md, "Flat memory").
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

/// Run `f` on a thread of its own, so what it allocates comes from a glibc arena the crawl's
/// long-lived data (sled's tree, the scheduler) does not share; returns its result.
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

    /// Issue 10 (`links3`): a huge page parsed on the crawl's blocking threads left its freed
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
