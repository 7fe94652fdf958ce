//! Inline template learning: threads beside the crawl that hear of every stored page, and per site
//! — once it has `min_pages` — reclusters incrementally every `recluster_pages` new pages or
//! `recluster_interval` (within a second while the crawl leaves the CPU idle), writing cleaned text
//! as it goes. When the crawl is done with a site (nothing left to fetch: its queue is empty or its
//! budget reached), the site's final pass runs then, with the same engine as `thresher clean`, so
//! its text is final while the crawl goes on. It runs off the fetch path (threads of its own), so
//! fetching never waits for it. When the crawl finishes, every site changed since its last final
//! pass goes through the same engine, on all cores; when the crawl is interrupted, it stops after
//! the current step (the next run picks up from the store).
//!
//! Owns: when each site of a crawl is reclustered and cleaned, the learner thread, and the crawl's
//! cleaned-text files and records. Uses `crawl` (the stored-page and done-site notices), `store`,
//! `template` and `detect` (the engine) and `output`; never imports `progress` or `cmd`, and
//! nothing on the fetch path waits for it (docs/design.md, "The incremental step").
//!
//! Steps run on step threads (one per core, a site on one thread at a time) at a lower OS priority
//! (nice 10 on Linux). While the rest of the process leaves half a core idle (a polite crawl), a
//! step runs on every step thread; while fetching needs the CPU, one at a time within a budget
//! (`template.learn_cpu_share` of one core: after a step of `t`, the next waits `t·(1/share − 1)`),
//! so a fast crawl is not slowed. Done sites' passes, whose text is final, run on threads of their
//! own (one per core) at the crawl's priority, with no budget: the crawl needs that work done
//! anyway, and starts no new site while too many wait for it. Steps still pending when the crawl
//! finishes are dropped — the end-of-crawl pass cleans those pages anyway. The end-of-crawl pass
//! runs on the thread that calls [`Learner::finish`], at the crawl's own priority: fetching is over
//! by then, and at nice 10 a busy machine starved it (docs/quality.md, inline cost).

pub mod eras;
mod output;
mod site;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use output::{Output, OutputError, WrittenPage, WrittenSink};
pub use site::{LearnError, SiteLearner, SiteState, Step, MODEL_SAMPLE};

use crate::config::Config;
use crate::crawl::stats::CrawlStats;
use crate::crawl::{CrawlEvent, StoredPage};
use crate::pool;
use crate::store::Store;

enum Msg {
    Page(StoredPage),
    /// The crawl is done with a site: its final pass may run now.
    SiteDone(String),
    /// A site-passes thread ran a done site's final pass (`None`: it had nothing new, or
    /// the pass panicked).
    Passed {
        site: String,
        outcome: Option<(Duration, Result<Step, LearnError>)>,
    },
    /// A step thread ran a step of `site` (`outcome` `None`: the step panicked), and gives
    /// the site's state back.
    Stepped {
        site: String,
        state: Box<SiteState>,
        took: Duration,
        outcome: Option<Result<Step, LearnError>>,
    },
    /// The crawl finished: run the end-of-crawl pass, then stop.
    Finish,
    /// The crawl was interrupted: stop after the current step.
    Stop,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LearnSummary {
    pub steps: u64,
    /// Sites whose final pass ran while the crawl went on (the crawl was done with them), and
    /// sites the end-of-crawl pass took (the crawl was not done with them, or changed them after
    /// their pass).
    pub done_sites: u64,
    pub final_sites: u64,
    /// Pages cleaned by incremental steps (a page may be cleaned more than once).
    pub interim_cleans: u64,
    /// Pages cleaned by final passes (done sites' and the end-of-crawl pass).
    pub final_cleans: u64,
    /// Pages the end-of-crawl pass kept: the same model (fingerprint) had written their text.
    pub final_reused: u64,
    /// Time spent in incremental steps, in the final passes of sites the crawl was done with,
    /// and in the end-of-crawl pass (summed over its threads).
    pub interim_time: Duration,
    pub done_time: Duration,
    pub final_time: Duration,
    pub pages_written: u64,
    /// Sites whose learning failed (the error is logged; the crawl is not affected).
    pub failed_sites: Vec<String>,
    /// What went wrong, one line per failed site (`site: error`), for the summary; a site the
    /// end-of-crawl pass then cleaned is no longer listed.
    pub failures: Vec<String>,
    /// Times the end-of-crawl pass gave the heap's free memory back to the OS
    /// (`memory::release`): once before it, once after each site.
    pub heap_releases: u64,
}

impl LearnSummary {
    /// Sites whose final pass ran, while crawling or at the end.
    pub fn final_passes(&self) -> u64 {
        self.done_sites + self.final_sites
    }

    /// Count a site's final pass: while crawling (`while_crawling`, the crawl was done with the
    /// site) or at the end.
    fn passed(
        &mut self,
        site: &str,
        took: Duration,
        result: Result<Step, LearnError>,
        while_crawling: bool,
    ) {
        if while_crawling {
            self.done_time += took;
        } else {
            self.final_time += took;
        }
        match result {
            Ok(step) => {
                // Earlier failures of the site are made good by its final pass.
                self.failures
                    .retain(|f| !f.starts_with(&format!("{site}: ")));
                self.failed_sites.retain(|s| s != site);
                if while_crawling {
                    self.done_sites += 1;
                } else {
                    self.final_sites += 1;
                }
                self.final_cleans += step.cleaned_now;
                self.final_reused += step.reused;
                self.pages_written += step.written;
            }
            Err(e) => {
                tracing::error!(%site, "final template pass failed: {e}");
                self.failed(site, &e);
            }
        }
    }

    /// Record that `site` failed (once per site: its first error).
    fn failed(&mut self, site: &str, e: &dyn std::fmt::Display) {
        if !self.failed_sites.iter().any(|s| s == site) {
            self.failed_sites.push(site.to_string());
            self.failures.push(format!("{site}: {e}"));
        }
    }
}

/// The running learner.
pub struct Learner {
    tx: Sender<Msg>,
    /// The learner thread: its summary, and whether the crawl finished (`Msg::Finish`).
    join: JoinHandle<(LearnSummary, bool)>,
    config: Arc<Config>,
    store: Arc<Store>,
    stats: Arc<CrawlStats>,
    /// Told of every page whose cleaned text is written.
    written: Option<WrittenSink>,
}

impl Learner {
    pub fn spawn(config: Arc<Config>, store: Arc<Store>, stats: Arc<CrawlStats>) -> Learner {
        Learner::spawn_notifying(config, store, stats, None)
    }

    /// [`Learner::spawn`], telling `written` (when given) of every page whose cleaned text is
    /// written, by the incremental steps and by the end-of-crawl pass.
    pub fn spawn_notifying(
        config: Arc<Config>,
        store: Arc<Store>,
        stats: Arc<CrawlStats>,
        written: Option<WrittenSink>,
    ) -> Learner {
        let (tx, rx) = mpsc::channel();
        // Done sites' passes run on threads of their own, one per core, at the caller's
        // priority (spawned here, before the learner thread lowers its own): their text is
        // final, so they are work the crawl needs done anyway (at nice 10 a busy crawl starved
        // them), and a broad crawl that waits for them (`CrawlStats::passes_waiting`) should
        // not wait for one core when it has more.
        let (to_passes, sites) = mpsc::channel();
        let sites = Arc::new(std::sync::Mutex::new(sites));
        let stop_passes = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let passes = spawn_pool("site-passes", threads, || {
            let (c, s, st, w, back, stop, sites) = (
                config.clone(),
                store.clone(),
                stats.clone(),
                written.clone(),
                tx.clone(),
                stop_passes.clone(),
                sites.clone(),
            );
            move || site_passes(&c, &s, &st, w, &sites, &back, &stop)
        });
        // Incremental steps run on threads of their own too, one per core, at nice 10: while
        // the crawl leaves the CPU idle (a polite crawl) they take every core it leaves, one
        // site each, so text keeps up with fetching; while it needs the CPU, one at a time
        // within the CPU budget.
        let (to_steps, jobs) = mpsc::channel();
        let jobs = Arc::new(std::sync::Mutex::new(jobs));
        let steps = spawn_pool("site-steps", threads, || {
            let (c, s, w, back, jobs) = (
                config.clone(),
                store.clone(),
                written.clone(),
                tx.clone(),
                jobs.clone(),
            );
            move || site_steps(&c, &s, w, &jobs, &back)
        });
        let steps = Steps {
            clocks: steps.iter().filter_map(thread_clock).collect(),
            to: to_steps,
            join: steps,
        };
        let (c, s, st, w) = (
            config.clone(),
            store.clone(),
            stats.clone(),
            written.clone(),
        );
        let passes = Passes {
            to: to_passes,
            stop: stop_passes,
            join: passes,
            passing: HashSet::new(),
            again: HashSet::new(),
        };
        let join = std::thread::Builder::new()
            .name("learner".into())
            .spawn(move || run(&c, &s, &st, w, rx, passes, steps))
            .expect("invariant: a thread can be spawned");
        Learner {
            tx,
            join,
            config,
            store,
            stats,
            written,
        }
    }

    /// The callback the crawl calls for each stored page and each site it is done with.
    pub fn sink(&self) -> crate::crawl::EventSink {
        let tx = self.tx.clone();
        Arc::new(move |event: CrawlEvent| {
            let _ = tx.send(match event {
                CrawlEvent::Stored(p) => Msg::Page(p),
                CrawlEvent::SiteDone(site) => Msg::SiteDone(site),
            });
        })
    }

    /// The crawl finished: clean every changed site for good, then return. The end-of-crawl
    /// pass runs here, on the caller's thread and at its OS priority (its pool threads are
    /// spawned from it), not on the learner thread at nice 10.
    pub fn finish(self) -> LearnSummary {
        let _ = self.tx.send(Msg::Finish);
        let (mut summary, finished) = self.join.join().unwrap_or_default();
        if finished {
            let out = Output::of(&self.config, self.written.clone());
            let learner = SiteLearner {
                store: &self.store,
                out: &out,
                detector: self.config.template.detector,
            };
            // What fetching freed (bodies, parse trees, sled's batches) stays in the crawl
            // threads' glibc arenas, and the pass's peak sat on top of it: heap 176 MB at a peak
            // RSS of ~330 MB in the 10k benchmark (heaptrack). Given back before the pass and
            // after each site, that peak fell to ~255 MB (docs/benchmarks.md, "Memory: the
            // arenas' free memory under the pass").
            crate::memory::release();
            summary.heap_releases += 1;
            finish_all(&learner, &self.store, &self.stats, &mut summary);
        }
        summary
    }

    /// The crawl was interrupted: stop after the current step.
    pub fn stop(self) -> LearnSummary {
        let _ = self.tx.send(Msg::Stop);
        self.join.join().unwrap_or_default().0
    }
}

/// While the crawl leaves the CPU idle, a site's new pages wait at most this long for a step
/// (otherwise until `template.recluster_pages` of them or `recluster_interval`): a polite
/// crawl's text reaches disk seconds after its fetch. Shorter makes more, smaller steps, each
/// re-cleaning the clusters whose template moved.
const IDLE_STEP_AFTER: Duration = Duration::from_secs(1);

/// Cores the rest of the process must leave unused for the learner to skip its CPU budget's
/// rest: half a core idle means fetching and parsing do not need what a step would take (the
/// learner runs at a lower OS priority, so they get it first if they come to).
const IDLE_CORES: f64 = 0.5;

/// How busy the rest of the process (fetching, parsing, storing) kept the CPU over the last
/// window (up to `MAX_WINDOW`): process CPU time minus the learner's own (its thread's and its
/// step threads'), over wall time, on Linux from `getrusage` and the threads' CPU clocks;
/// elsewhere the crawl is always taken as busy (the fixed budget). Steps do not restart the
/// window: their CPU is not in the measure, and with a step ending every few tens of
/// milliseconds on each thread, a window restarted at each never reached `MIN_WINDOW`, so
/// steps ran one at a time on an idle CPU (text at the last fetch of a polite crawl 90–92 %
/// against 97 %, docs/benchmarks.md).
struct CpuGauge {
    cores: f64,
    since: Instant,
    at: Option<CpuTimes>,
    idle: bool,
    /// The step threads' CPU clocks.
    steps: Vec<ThreadClock>,
}

#[derive(Clone, Copy)]
struct CpuTimes {
    process: Duration,
    thread: Duration,
}

impl CpuGauge {
    /// A window shorter than this says nothing yet (the last verdict stands).
    const MIN_WINDOW: Duration = Duration::from_millis(100);
    /// A window is judged and restarted at this age, so the verdict follows the crawl.
    const MAX_WINDOW: Duration = Duration::from_secs(1);

    fn new(steps: Vec<ThreadClock>) -> CpuGauge {
        CpuGauge {
            cores: pool::available() as f64,
            since: Instant::now(),
            at: cpu_times(&steps),
            idle: false,
            steps,
        }
    }

    /// Whether the rest of the process left at least `IDLE_CORES` unused over the window.
    fn crawl_leaves_cpu(&mut self) -> bool {
        #[cfg(test)]
        if tests::ASSUME_IDLE.load(Relaxed) {
            return true;
        }
        self.judge(Instant::now(), cpu_times)
    }

    /// The verdict at `at`, given the CPU times then, sampled only when the window is long
    /// enough to judge (`None`: not measurable, taken as busy).
    fn judge(
        &mut self,
        at: Instant,
        sample: impl FnOnce(&[ThreadClock]) -> Option<CpuTimes>,
    ) -> bool {
        let wall = at.saturating_duration_since(self.since);
        if wall < Self::MIN_WINDOW {
            return self.idle;
        }
        let (Some(then), Some(now)) = (self.at, sample(&self.steps)) else {
            return false;
        };
        let others = (now.process.saturating_sub(then.process))
            .saturating_sub(now.thread.saturating_sub(then.thread));
        let busy = others.as_secs_f64() / wall.as_secs_f64();
        let idle = self.cores - busy >= IDLE_CORES;
        if wall >= Self::MAX_WINDOW {
            self.since = at;
            self.at = Some(now);
        }
        self.idle = idle;
        idle
    }
}

/// A thread's CPU clock (Linux; nothing elsewhere).
#[cfg(target_os = "linux")]
type ThreadClock = libc::clockid_t;
#[cfg(not(target_os = "linux"))]
type ThreadClock = ();

/// The CPU clock of the thread `handle` runs.
#[cfg(target_os = "linux")]
fn thread_clock(handle: &JoinHandle<()>) -> Option<ThreadClock> {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: the thread is alive (its handle is held, not joined); the call writes one
    // clockid into `clock`.
    let r = unsafe { libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut clock) };
    (r == 0).then_some(clock)
}
#[cfg(not(target_os = "linux"))]
fn thread_clock(_: &JoinHandle<()>) -> Option<ThreadClock> {
    None
}

/// CPU time of the whole process, and of the calling thread with the threads of `steps`
/// (user + system).
fn cpu_times(steps: &[ThreadClock]) -> Option<CpuTimes> {
    #[cfg(target_os = "linux")]
    {
        fn usage(who: libc::c_int) -> Option<Duration> {
            // SAFETY: getrusage writes one `rusage` into the zeroed struct we own; no other
            // preconditions.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::getrusage(who, &mut ru) } != 0 {
                return None;
            }
            let tv = |t: libc::timeval| {
                Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
            };
            Some(tv(ru.ru_utime) + tv(ru.ru_stime))
        }
        let mut thread = usage(libc::RUSAGE_THREAD)?;
        for &clock in steps {
            // SAFETY: clock_gettime writes one `timespec` into the zeroed struct we own; a
            // clock of a thread that ended gives an error, counted as nothing.
            let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
            if unsafe { libc::clock_gettime(clock, &mut ts) } == 0 {
                thread += Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
            }
        }
        Some(CpuTimes {
            process: usage(libc::RUSAGE_SELF)?,
            thread,
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = steps;
        None
    }
}

struct Pending {
    pages: Vec<u64>,
    since: Instant,
}

/// The site-passes threads, as the learner thread holds them.
/// The step threads: a job is a site's state and its new pages; the state comes back with
/// the outcome (`Msg::Stepped`), so a site is never stepped by two threads at once.
struct Steps {
    to: Sender<StepJob>,
    join: Vec<JoinHandle<()>>,
    clocks: Vec<ThreadClock>,
}

struct StepJob {
    site: String,
    state: Box<SiteState>,
    pages: Vec<u64>,
}

/// A step thread: incremental steps at nice 10, each outcome and state sent back to the
/// learner thread.
fn site_steps(
    config: &Config,
    store: &Store,
    written: Option<WrittenSink>,
    jobs: &std::sync::Mutex<Receiver<StepJob>>,
    back: &Sender<Msg>,
) {
    lower_priority();
    let out = Output::of(config, written);
    let learner = SiteLearner {
        store,
        out: &out,
        detector: config.template.detector,
    };
    while let Some(StepJob {
        site,
        mut state,
        pages,
    }) = next_shared(jobs)
    {
        let started = Instant::now();
        #[cfg(test)]
        let in_flight = tests::StepInFlight::start(&site);
        let outcome =
            std::panic::catch_unwind(AssertUnwindSafe(|| learner.step(&site, &mut state, &pages)))
                .ok();
        #[cfg(test)]
        drop(in_flight);
        let took = started.elapsed();
        let msg = Msg::Stepped {
            site,
            state,
            took,
            outcome,
        };
        if back.send(msg).is_err() {
            break;
        }
    }
}

/// `n` threads named `name`, each running the body `make` gives it.
fn spawn_pool<F>(name: &str, n: usize, make: impl Fn() -> F) -> Vec<JoinHandle<()>>
where
    F: FnOnce() + Send + 'static,
{
    (0..n)
        .map(|_| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(make())
                .expect("invariant: a thread can be spawned")
        })
        .collect()
}

/// The next item of a channel a pool of threads shares (`None` once it is closed). The lock is
/// held while waiting: one idle thread waits, the others wait for it.
fn next_shared<T>(rx: &std::sync::Mutex<Receiver<T>>) -> Option<T> {
    rx.lock().ok()?.recv().ok()
}

/// The site-passes threads, and the learner thread's book of the sites handed to them.
struct Passes {
    to: Sender<String>,
    /// Set when the crawl ends: sites not passed yet are left to the end-of-crawl pass.
    stop: Arc<std::sync::atomic::AtomicBool>,
    join: Vec<JoinHandle<()>>,
    /// Sites whose final pass a site-passes thread has (no step may touch them meanwhile).
    passing: HashSet<String>,
    /// Those of them the crawl was done with again since (more pages came).
    again: HashSet<String>,
}

impl Passes {
    /// Hand a done site over, counted as waiting until its pass is back; when its pass is
    /// running, once more after it.
    fn hand(&mut self, stats: &CrawlStats, site: String) {
        if !self.passing.insert(site.clone()) {
            self.again.insert(site);
        } else if self.to.send(site).is_ok() {
            stats.passes_waiting.fetch_add(1, Relaxed);
        }
    }

    /// The crawl ended: sites not passed yet are left; the passes in hand end first.
    fn end(&mut self, stats: &CrawlStats) {
        self.stop.store(true, Relaxed);
        stats.passes_waiting.store(0, Relaxed);
        // Closing the channel lets the threads go once it is empty.
        drop(std::mem::replace(&mut self.to, mpsc::channel().0));
        for thread in self.join.drain(..) {
            let _ = thread.join();
        }
    }

    /// A site's pass is back: count it. Returns the site when the crawl was done with it again
    /// meanwhile (to be handed over again while the crawl runs).
    fn back(
        &mut self,
        stats: &CrawlStats,
        summary: &mut LearnSummary,
        site: String,
        outcome: Option<(Duration, Result<Step, LearnError>)>,
    ) -> Option<String> {
        self.passing.remove(&site);
        let _ = stats
            .passes_waiting
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
        if let Some((took, result)) = outcome {
            if result.is_ok() {
                stats.sites_final.fetch_add(1, Relaxed);
            }
            summary.passed(&site, took, result, true);
        }
        self.again.remove(&site).then_some(site)
    }
}

/// A site-passes thread: done sites' final passes, taken in the order the crawl was done with
/// them (one site is never passed by two threads at once: the learner thread hands a site
/// over again only once its pass is back), each outcome sent back to the learner thread
/// (which keeps the summary).
fn site_passes(
    config: &Config,
    store: &Store,
    stats: &CrawlStats,
    written: Option<WrittenSink>,
    sites: &std::sync::Mutex<Receiver<String>>,
    back: &Sender<Msg>,
    stop: &std::sync::atomic::AtomicBool,
) {
    let out = Output::of(config, written);
    let learner = SiteLearner {
        store,
        out: &out,
        detector: config.template.detector,
    };
    while let Some(site) = next_shared(sites) {
        if stop.load(Relaxed) {
            break;
        }
        let outcome = match learner.needs_final(&site) {
            Ok(true) => final_pass(&learner, stats, &site),
            Ok(false) => None,
            Err(e) => {
                tracing::error!(%site, "template learning: {e}");
                None
            }
        };
        if back.send(Msg::Passed { site, outcome }).is_err() {
            break;
        }
    }
}

/// The learner thread: incremental steps until the crawl ends. Returns the summary and whether
/// the crawl finished (then `Learner::finish` runs the end-of-crawl pass).
fn run(
    config: &Config,
    store: &Store,
    stats: &CrawlStats,
    written: Option<WrittenSink>,
    rx: Receiver<Msg>,
    mut passes: Passes,
    steps: Steps,
) -> (LearnSummary, bool) {
    lower_priority();
    let out = Output::of(config, written);
    let learner = SiteLearner {
        store,
        out: &out,
        detector: config.template.detector,
    };
    let t = &config.template;
    let mut states: HashMap<String, SiteState> = HashMap::new();
    let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
    let mut summary = LearnSummary::default();

    // Pages stored by an earlier run that never reached the clustering; and each site's
    // directory brought back in step with the store (a kill -9 between text files and index).
    for (site, _) in store.sites() {
        match out.reconcile(store, &site) {
            Ok(true) => tracing::info!(%site, "output directory brought in step with the store"),
            Ok(false) => {}
            Err(e) => {
                tracing::error!(%site, "cannot bring the output directory in step: {e}");
                summary.failed(&site, &e);
            }
        }
        let state = states.entry(site.clone()).or_default();
        match learner.unclustered(&site, state) {
            Ok(ids) if !ids.is_empty() => {
                pending.insert(
                    site,
                    Pending {
                        pages: ids,
                        since: Instant::now(),
                    },
                );
            }
            Ok(_) => {}
            Err(e) => tracing::error!(%site, "template learning: {e}"),
        }
    }

    // Sites whose step a step thread has (their state with it), and those of them the crawl
    // was done with meanwhile (their pass waits for the step).
    let mut stepping: HashSet<String> = HashSet::new();
    let mut done_while_stepping: HashSet<String> = HashSet::new();
    let tick = t
        .recluster_interval
        .clamp(Duration::from_millis(50), IDLE_STEP_AFTER);
    // No step before this: the CPU budget's rest after the last one, unless the crawl leaves
    // the CPU idle.
    let mut rested_at = Instant::now();
    let mut gauge = CpuGauge::new(steps.clocks.clone());
    let finish = 'events: loop {
        // Wait for an event (or the tick), then take everything queued behind it, so a step is
        // chosen with all news at hand and `Finish` is never stuck behind page events.
        let mut msg = match rx.recv_timeout(tick) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break false,
        };
        while let Some(m) = msg.take().or_else(|| rx.try_recv().ok()) {
            match m {
                Msg::Page(p) => pending
                    .entry(p.site.clone())
                    .or_insert_with(|| Pending {
                        pages: Vec::new(),
                        since: Instant::now(),
                    })
                    .pages
                    .push(p.page_id),
                Msg::SiteDone(site) => {
                    // Its final pass cleans every page; no step need run before it.
                    pending.remove(&site);
                    states.remove(&site);
                    if stepping.contains(&site) {
                        done_while_stepping.insert(site);
                    } else {
                        passes.hand(stats, site);
                    }
                }
                Msg::Stepped {
                    site,
                    state,
                    took,
                    outcome,
                } => {
                    stepping.remove(&site);
                    rested_at = Instant::now() + took.mul_f64(1.0 / t.learn_cpu_share - 1.0);
                    let whole = stepped(stats, &mut summary, &site, took, outcome);
                    if done_while_stepping.remove(&site) {
                        passes.hand(stats, site);
                    } else if whole {
                        states.insert(site, *state);
                    }
                }
                Msg::Passed { site, outcome } => {
                    if let Some(site) = passes.back(stats, &mut summary, site, outcome) {
                        passes.hand(stats, site);
                    }
                }
                Msg::Finish => break 'events true,
                Msg::Stop => break 'events false,
            }
        }
        // Steps for the sites most due: while the crawl leaves the CPU idle, one on each step
        // thread; else one at a time, after the CPU budget's rest. While the crawl leaves the
        // CPU idle, a site's new pages wait at most `IDLE_STEP_AFTER`.
        let idle = gauge.crawl_leaves_cpu();
        let room = if idle { steps.join.len() } else { 1 };
        while stepping.len() < room && (idle || Instant::now() >= rested_at) {
            let due = pending
                .iter()
                .filter(|(site, p)| {
                    let enough = store.site_counters(site).pages >= t.min_pages;
                    enough
                        && !passes.passing.contains(*site)
                        && !stepping.contains(*site)
                        && (p.pages.len() as u64 >= t.recluster_pages
                            || p.since.elapsed() >= t.recluster_interval
                            || (idle && p.since.elapsed() >= IDLE_STEP_AFTER))
                })
                .max_by_key(|(_, p)| p.pages.len())
                .map(|(s, _)| s.clone());
            let Some(site) = due else {
                break;
            };
            let mut p = pending
                .remove(&site)
                .expect("invariant: chosen from pending");
            if p.pages.len() > site::STEP_PAGES {
                let rest = p.pages.split_off(site::STEP_PAGES);
                pending.insert(
                    site.clone(),
                    Pending {
                        pages: rest,
                        since: p.since,
                    },
                );
            }
            let job = StepJob {
                state: Box::new(states.remove(&site).unwrap_or_default()),
                site: site.clone(),
                pages: p.pages,
            };
            if steps.to.send(job).is_err() {
                tracing::error!("template learning: the step threads are gone");
                break 'events false;
            }
            stepping.insert(site);
        }
    };
    // The steps in hand end first (their states come back, to be saved when interrupted).
    while !stepping.is_empty() {
        match rx.recv() {
            Ok(Msg::Stepped {
                site,
                state,
                took,
                outcome,
            }) => {
                stepping.remove(&site);
                if stepped(stats, &mut summary, &site, took, outcome)
                    && !done_while_stepping.contains(&site)
                {
                    states.insert(site, *state);
                }
            }
            Ok(Msg::Passed { site, outcome }) => {
                passes.back(stats, &mut summary, site, outcome);
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    drop(steps.to);
    for thread in steps.join {
        let _ = thread.join();
    }
    // Sites not passed yet are left to the end-of-crawl pass (or the next run); the pass in
    // hand ends first, so no pass runs beside the end-of-crawl pass.
    passes.end(stats);
    while let Ok(m) = rx.try_recv() {
        if let Msg::Passed { site, outcome } = m {
            passes.back(stats, &mut summary, site, outcome);
        }
    }
    if finish {
        // Pending incremental work is superseded: the end-of-crawl pass (`Learner::finish`)
        // cleans every page of every changed site.
        drop(pending);
        drop(states);
    } else {
        // Interrupted: keep what the steps since each site's last save learned.
        for (site, state) in &mut states {
            if let Err(e) = learner.save(site, state) {
                tracing::error!(%site, "cannot save the clustering state: {e}");
            }
        }
    }
    (summary, finish)
}

/// Count a step a step thread ran (`outcome` `None`: it panicked); whether it ended whole
/// (its state may be kept).
fn stepped(
    stats: &CrawlStats,
    summary: &mut LearnSummary,
    site: &str,
    took: Duration,
    outcome: Option<Result<Step, LearnError>>,
) -> bool {
    summary.interim_time += took;
    match outcome {
        Some(Ok(step)) => {
            summary.steps += 1;
            summary.interim_cleans += step.cleaned_now;
            summary.pages_written += step.written;
            report(stats, site, step);
            true
        }
        Some(Err(e)) => {
            tracing::error!(%site, "template learning step failed: {e}");
            summary.failed(site, &e);
            true
        }
        None => {
            tracing::error!(%site, "template learning step panicked");
            summary.failed(site, &"the step panicked");
            false
        }
    }
}

/// The end-of-crawl pass over every site changed since its last one, sites spread over the
/// cores (nothing else runs by then). Each site's result does not depend on the others.
fn finish_all(
    learner: &SiteLearner,
    store: &Store,
    stats: &CrawlStats,
    summary: &mut LearnSummary,
) {
    let mut sites = Vec::new();
    for (site, c) in store.sites() {
        match learner.needs_final(&site) {
            Ok(true) => {
                let huge = has_huge_page(store, &site, c.bytes);
                sites.push((site, c.pages, huge));
            }
            Ok(false) => {}
            Err(e) => tracing::error!(%site, "template learning: {e}"),
        }
    }
    // Biggest first, so no large site starts last.
    sites.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    // Sites with a huge page take their pass one at a time (`HUGE_PASS`), and give the memory
    // it freed back before the next: two such passes at once each held a multi-megabyte page's
    // DOM, the crawl's peak. Other sites' passes still run beside them.
    // The pool's threads are spawned from this thread (`Learner::finish`'s caller, not the
    // learner thread), so they run at the crawl's priority. A site whose pass panics is left out
    // of the summary; the other sites' results are kept.
    let results = pool::parallel_map(&sites, pool::available(), |(site, _, huge)| {
        #[cfg(test)]
        tests::note_pass_priority(site);
        let alone = huge.then(|| HUGE_PASS.lock().unwrap_or_else(|p| p.into_inner()));
        #[cfg(test)]
        let in_flight = huge.then(tests::HugePass::start);
        let result = final_pass(learner, stats, site);
        // After each site, so no site's freed DOMs wait in an arena under the next one's.
        crate::memory::release();
        #[cfg(test)]
        drop(in_flight);
        drop(alone);
        result.map(|(took, result)| (site.clone(), took, result))
    });
    summary.heap_releases += sites.len() as u64;
    for (site, took, result) in results.into_iter().flatten() {
        summary.passed(&site, took, result, false);
    }
}

/// A site's final pass (the engine `thresher clean` runs), its progress reported; `None` when
/// it panicked (logged by the panic hook; the site is left for a later pass).
fn final_pass(
    learner: &SiteLearner,
    stats: &CrawlStats,
    site: &str,
) -> Option<(Duration, Result<Step, LearnError>)> {
    let started = Instant::now();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        learner.finish(site, &mut SiteState::default())
    }))
    .ok()?;
    if let Ok(step) = &result {
        report(stats, site, *step);
    }
    Some((started.elapsed(), result))
}

/// Held by the end-of-crawl pass of a site with a huge page: one at a time in the process.
static HUGE_PASS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether `site` (holding `bytes` of page bodies) has a page of at least
/// [`crate::memory::HUGE_PAGE_BYTES`]: only a site holding that much in all is looked at, page
/// by page until one is found. A page that cannot be read counts as not huge.
fn has_huge_page(store: &Store, site: &str, bytes: u64) -> bool {
    if bytes < crate::memory::HUGE_PAGE_BYTES {
        return false;
    }
    let Ok(ids) = store.site_pages(site) else {
        return false;
    };
    ids.into_iter().any(|id| {
        store
            .page(id)
            .ok()
            .flatten()
            .is_some_and(|m| m.body_bytes >= crate::memory::HUGE_PAGE_BYTES)
    })
}

/// Let fetching and parsing have the cores first (Linux: this thread's nice value; threads it
/// spawns inherit it). Elsewhere a no-op.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on our own thread id has no memory-safety preconditions; failure
    // (e.g. a sandbox forbidding it) only leaves the priority unchanged.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}

fn report(stats: &CrawlStats, site: &str, step: Step) {
    let mut delta_cleaned = 0i64;
    let mut delta_clusters = 0i64;
    stats.host(site, |h| {
        delta_cleaned = step.cleaned as i64 - h.cleaned as i64;
        delta_clusters = step.clusters as i64 - h.clusters as i64;
        h.cleaned = step.cleaned;
        h.clusters = step.clusters;
    });
    add(&stats.cleaned, delta_cleaned);
    add(&stats.templates, delta_clusters);
}

fn add(counter: &std::sync::atomic::AtomicU64, delta: i64) {
    if delta >= 0 {
        counter.fetch_add(delta as u64, Relaxed);
    } else {
        counter.fetch_sub(delta.unsigned_abs(), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The nice values the end-of-crawl pass ran at (one per site), for the test below.
    static PASS_PRIORITIES: Mutex<Vec<(String, i32)>> = Mutex::new(Vec::new());

    /// This thread's nice value (Linux; 0 elsewhere).
    fn nice() -> i32 {
        #[cfg(target_os = "linux")]
        // SAFETY: getpriority on our own thread id has no memory-safety preconditions.
        unsafe {
            libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
        }
        #[cfg(not(target_os = "linux"))]
        0
    }

    pub(super) fn note_pass_priority(site: &str) {
        PASS_PRIORITIES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((site.to_string(), nice()));
    }

    /// Passes of sites with a huge page running now, and the most ever at once.
    static HUGE_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static HUGE_MOST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// One huge site's pass, from its start to its drop.
    pub(super) struct HugePass;

    impl HugePass {
        pub(super) fn start() -> HugePass {
            let now = HUGE_IN_FLIGHT.fetch_add(1, Relaxed) + 1;
            HUGE_MOST.fetch_max(now, Relaxed);
            // Widen the window in which a second pass would overlap (not a timed assertion:
            // the test counts overlaps, never measures time).
            std::thread::sleep(Duration::from_millis(100));
            HugePass
        }
    }

    impl Drop for HugePass {
        fn drop(&mut self) {
            HUGE_IN_FLIGHT.fetch_sub(1, Relaxed);
        }
    }

    fn store_page(store: &Store, site: &str, n: u64) {
        store_page_of(store, site, n, None);
    }

    /// Steps running now (their sites), the most of `side-*` sites ever at once, and whether
    /// one site was ever stepped twice at once.
    static STEPS_IN_FLIGHT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static STEPS_MOST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static SITE_TWICE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Every learner takes the crawl as leaving the CPU idle, whatever else the test process
    /// runs meanwhile (other tests).
    pub(super) static ASSUME_IDLE: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    fn cpu(process_ms: u64, learner_ms: u64) -> Option<CpuTimes> {
        Some(CpuTimes {
            process: Duration::from_millis(process_ms),
            thread: Duration::from_millis(learner_ms),
        })
    }

    /// Steps end every few tens of milliseconds on an idle CPU; each look at the gauge in
    /// between must keep the idle verdict (the window restarted at each step end never grew
    /// long enough to give one, so steps ran one at a time).
    #[test]
    fn an_idle_verdict_holds_while_steps_end_in_quick_succession() {
        let start = Instant::now();
        let mut gauge = CpuGauge {
            cores: 2.0,
            since: start,
            at: cpu(0, 0),
            idle: false,
            steps: Vec::new(),
        };
        let ms = |n: u64| start + Duration::from_millis(n);
        // Before MIN_WINDOW: no verdict, and no clock read.
        assert!(!gauge.judge(ms(50), |_| panic!("clocks read inside MIN_WINDOW")));
        // The crawl takes 0.25 of a core, the steps the rest of two: idle at every look,
        // including those just after the window restarts at MAX_WINDOW.
        for t in (150..3000).step_by(30) {
            let (crawl, steps) = (t / 4, t * 3 / 2);
            assert!(
                gauge.judge(ms(t), |_| cpu(crawl + steps, steps)),
                "busy at {t} ms"
            );
        }
        // The crawl takes both cores: busy once a window says so.
        let mut t = 3000;
        let busy = loop {
            t += 30;
            let crawl = 750 + (t - 3000) * 2;
            if !gauge.judge(ms(t), |_| cpu(crawl + 4500, 4500)) {
                break t;
            }
        };
        assert!(busy <= 3000 + 1100, "still idle at {busy} ms");
    }

    /// One step, from its start to its drop.
    pub(super) struct StepInFlight(String);

    impl StepInFlight {
        pub(super) fn start(site: &str) -> StepInFlight {
            let mut now = STEPS_IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
            if now.iter().any(|s| s == site) {
                SITE_TWICE.store(true, Relaxed);
            }
            now.push(site.to_string());
            // The test below's sites only (other tests' learners step theirs meanwhile).
            let ours = now.iter().filter(|s| s.starts_with("side-")).count();
            STEPS_MOST.fetch_max(ours, Relaxed);
            StepInFlight(site.to_string())
        }
    }

    impl Drop for StepInFlight {
        fn drop(&mut self) {
            let mut now = STEPS_IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(k) = now.iter().position(|s| *s == self.0) {
                now.remove(k);
            }
        }
    }

    /// With the process idle (as in a polite crawl), steps of different sites run on the step
    /// threads at once, and a site is never stepped by two threads at once.
    #[test]
    fn while_the_crawl_leaves_the_cpu_idle_sites_are_stepped_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.crawl.out_dir = dir.path().join("out");
        let store = Arc::new(Store::open(&dir.path().join("data"), 8 << 20).unwrap());
        let sites = ["side-a.example", "side-b.example", "side-c.example"];
        let pages = 400;
        for site in sites {
            for n in 0..pages {
                store_page(&store, site, n);
            }
        }
        let stats = Arc::new(CrawlStats::default());
        // Every page is unclustered when the learner starts, as after a resume, and the CPU
        // is idle, as in a polite crawl (taken so: other tests run beside this one).
        ASSUME_IDLE.store(true, Relaxed);
        let learner = Learner::spawn(Arc::new(config), store, stats.clone());
        let all = pages * sites.len() as u64;
        let deadline = Instant::now() + Duration::from_secs(120);
        while stats.cleaned.load(Relaxed) < all && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let summary = learner.stop();
        ASSUME_IDLE.store(false, Relaxed);
        assert_eq!(stats.cleaned.load(Relaxed), all, "{summary:?}");
        assert!(!SITE_TWICE.load(Relaxed), "a site stepped twice at once");
        if pool::available() >= 2 {
            assert!(STEPS_MOST.load(Relaxed) >= 2, "{summary:?}");
        }
    }

    /// Page `n` of `site`; `body_bytes` overrides the recorded body size (a huge page without
    /// generating megabytes).
    fn store_page_of(store: &Store, site: &str, n: u64, body_bytes: Option<u64>) {
        let url = format!("http://{site}/p{n}");
        let html = format!(
            "<html><body><nav>Home News</nav><h1>Story {n}</h1><p>Paragraph {n} of its own.</p>\
             <footer>© {site}</footer></body></html>"
        );
        let id = xxhash_rust::xxh3::xxh3_64(url.as_bytes());
        crate::store::testing::store_html(store, id, &url, site, &html, body_bytes);
    }

    /// A learner over a store of six pages for each of `sites`, writing under the returned
    /// directory's `out`.
    fn learner_over(sites: &[&str]) -> (tempfile::TempDir, Arc<Store>, Learner) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.crawl.out_dir = dir.path().join("out");
        let store = Arc::new(Store::open(&dir.path().join("data"), 8 << 20).unwrap());
        for site in sites {
            for n in 0..6 {
                store_page(&store, site, n);
            }
        }
        let learner = Learner::spawn(
            Arc::new(config),
            store.clone(),
            Arc::new(CrawlStats::default()),
        );
        (dir, store, learner)
    }

    /// Regression: after a resume of the 1M crawl every site had thousands of unclustered pages
    /// pending, and one step over them all was the crawl's peak while fetching.
    #[test]
    fn after_a_resume_a_step_takes_at_most_step_pages_of_a_sites_pending_pages() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.crawl.out_dir = dir.path().join("out");
        config.template.learn_cpu_share = 1.0;
        let store = Arc::new(Store::open(&dir.path().join("data"), 8 << 20).unwrap());
        let pages = site::STEP_PAGES as u64 + 76;
        for n in 0..pages {
            store_page(&store, "resumed.example", n);
        }
        let stats = Arc::new(CrawlStats::default());
        // Every page is unclustered when the learner starts, as after a resume.
        let learner = Learner::spawn(Arc::new(config), store, stats.clone());
        let deadline = Instant::now() + Duration::from_secs(120);
        while stats.cleaned.load(Relaxed) < pages && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(stats.cleaned.load(Relaxed), pages, "every page clustered");
        let summary = learner.stop();
        assert_eq!(summary.steps, 2, "{summary:?}");
    }

    #[test]
    fn the_end_of_crawl_pass_runs_at_the_callers_priority_not_the_learners() {
        // Two sites, so the pass spreads them over pool threads (one would run inline).
        let (dir, _store, learner) = learner_over(&["a.example", "b.example"]);
        let caller = nice();
        let summary = learner.finish();
        assert_eq!(summary.final_sites, 2, "{summary:?}");
        // This test's sites only (the other tests' passes note theirs too).
        let seen: Vec<i32> = PASS_PRIORITIES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(site, _)| site == "a.example" || site == "b.example")
            .map(|&(_, p)| p)
            .collect();
        assert_eq!(seen.len(), 2);
        assert!(
            seen.iter().all(|&p| p == caller),
            "pass at {seen:?}, caller at {caller} (the learner thread runs at nice 10)"
        );
        for site in ["a.example", "b.example"] {
            let files = std::fs::read_dir(dir.path().join("out").join(site))
                .unwrap()
                .count();
            assert_eq!(files, 7, "{site}: 6 text files and index.tsv");
        }
    }

    /// Regression: the crawl threads' arenas kept what fetching freed under the pass's peak.
    #[test]
    fn the_end_of_crawl_pass_gives_freed_heap_back_before_it_and_after_each_site() {
        let (_dir, store, learner) =
            learner_over(&["trim-a.example", "trim-b.example", "trim-c.example"]);
        let summary = learner.finish();
        assert_eq!(summary.final_sites, 3, "{summary:?}");
        assert_eq!(summary.heap_releases, 1 + 3, "{summary:?}");
        // Interrupted, there is no pass and nothing to give back.
        let learner = Learner::spawn(
            Arc::new(Config::default()),
            store,
            Arc::new(CrawlStats::default()),
        );
        assert_eq!(learner.stop().heap_releases, 0);
    }

    #[test]
    fn end_of_crawl_pass_of_two_sites_with_huge_pages_held_both_doms_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.crawl.out_dir = dir.path().join("out");
        let store = Arc::new(Store::open(&dir.path().join("data"), 8 << 20).unwrap());
        // Two sites with a huge page each, one without: the huge ones' passes take turns.
        for site in ["huge-a.example", "huge-b.example", "small.example"] {
            for n in 0..6 {
                let huge = site != "small.example" && n == 0;
                let bytes = huge.then_some(crate::memory::HUGE_PAGE_BYTES);
                store_page_of(&store, site, n, bytes);
            }
        }
        assert!(has_huge_page(
            &store,
            "huge-a.example",
            2 * crate::memory::HUGE_PAGE_BYTES
        ));
        assert!(!has_huge_page(
            &store,
            "small.example",
            2 * crate::memory::HUGE_PAGE_BYTES
        ));
        let released = crate::memory::releases();
        let learner = Learner::spawn(
            Arc::new(config),
            store.clone(),
            Arc::new(CrawlStats::default()),
        );
        let summary = learner.finish();
        assert_eq!(summary.final_sites, 3, "{summary:?}");
        assert_eq!(HUGE_IN_FLIGHT.load(Relaxed), 0);
        assert_eq!(
            HUGE_MOST.load(Relaxed),
            1,
            "two huge sites' passes ran at once"
        );
        assert!(
            crate::memory::releases() >= released + 2,
            "memory released after each huge site's pass"
        );
    }
}
