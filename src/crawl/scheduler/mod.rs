//! The crawl loop: one task owns every origin's in-memory state (queue cursor, politeness,
//! robots, in-flight count, server address) and a timer-ordered set of origins ready to start
//! a request; jobs run as spawned tasks and report back. Of the origins due, those whose site
//! started first go first, so sites are crawled in waves and finish (and get their final
//! template pass) while the crawl runs, rather than all at its end. robots.txt is read before
//! any other URL of an origin (never when `robots.respect` is off). With
//! `crawl.per_ip_concurrency` on, an origin's host name is resolved before its first request,
//! and each request also passes its server's gate (`servers`). A crawl is done when no origin
//! has work it may start and nothing is in flight. The loop and dispatch are here; the gates
//! before a request in `gates`, an origin's next entry in `entries`, a finished job's outcome
//! in `outcomes`.

mod entries;
mod gates;
mod outcomes;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::archive::Archive;
use super::fetch::Fetcher;
use super::politeness::{Backoff, Politeness};
use super::resolve::{self, Addresses, ResolveError, Resolver};
use super::robots::{RobotsEntry, RobotsPolicy};
use super::scope::Scope;
use super::servers::{Admit, Servers};
use super::stats::{CrawlStats, OriginWait, OverBudget};
use super::url as urls;
use super::worker::{
    self, Ctx, Job, JobResult, Processing, Slot, TaskOutput, Verdict, WorkerError,
};
pub use super::worker::{CrawlEvent, EventSink, Partitioned, StoredPage};
use super::CrawlError;
use crate::config::Config;
use crate::store::{
    ChangeKind, Commit, Enqueued, EntryKind, ErrorKind, QueueEntry, RevisitSlot, Store,
};

/// Entries read from sled per refill of an origin's buffer.
const BUFFER: usize = 32;
/// Consecutive failed requests after which an origin is set aside for this run.
const PARK_AFTER_FAILURES: u32 = 10;
/// Matching work (rules × URL bytes) one dispatch may spend skipping disallowed entries before
/// it lets the loop handle other origins (a check costs at most `MAX_RULES` × (URL + pattern)
/// bytes in linear time; this is a few milliseconds).
const MATCH_BUDGET: usize = 16 << 20;
/// Done sites that may wait for their final pass before the crawl starts no new site: text
/// keeps up with fetching (a broad crawl on 2 cores fetched three times faster than one thread
/// passed its sites, and left two thirds of the text to the end), while the sites already
/// started go on and a few passes stay queued so the pass thread never waits.
const PASSES_AHEAD: u64 = 4;
/// How often a crawl held back for passes looks again.
const PASSES_POLL: Duration = Duration::from_millis(20);
/// A crawl held back this long without a pass finishing stops waiting for passes in this run
/// (a pass thread that died would otherwise hold it for ever).
const PASSES_STALL: Duration = Duration::from_secs(120);

/// Dispatches per `dispatch_ready` call before the loop turns (handles finished jobs).
const DISPATCH_BUDGET: usize = 256;
/// A dispatch that started nothing and left its origin due again is a bug; the origin is held
/// this long (and the bug logged) instead of spinning the loop.
const STUCK_HOLD: Duration = Duration::from_millis(250);

/// Knobs of one run that are not crawl settings.
pub struct RunOptions {
    /// After shutdown is requested, how long in-flight requests may finish before they are
    /// abandoned (their URLs stay queued for the next run).
    pub grace: Duration,
    /// A recrawl (`crawl --recrawl`): sitemaps are read again and reorder the revisit queue
    /// (`crawl::recrawl::prepare` queued it).
    pub recrawl: bool,
    /// WARC files or directories to import before crawling (`crawl --import-warc`,
    /// `crawl::import`).
    pub import: Vec<std::path::PathBuf>,
    /// A cluster worker's hooks (`crawl --cluster`): the scheduler dispatches only the sites
    /// `owns` allows, and the workers commit to partition logs and hand links on.
    pub partitioned: Option<Partitioned>,
    /// URLs queued by others while the crawl runs (a cluster worker's inbox links and
    /// takeover imports, committed to the store by whoever sends them): the crawl waits for
    /// more when it has no work, and ends once this closes with nothing left to do.
    pub external: Option<tokio::sync::mpsc::UnboundedReceiver<Vec<Enqueued>>>,
    /// Told the crawl's shared context and its page sink once they exist (a cluster worker
    /// imports a taken-over partition's records with them).
    pub ctx_out: Option<tokio::sync::oneshot::Sender<(Arc<Ctx>, Option<EventSink>)>>,
    /// `false`: import only (`export --cluster` gathers the partition logs' pages this way):
    /// no seed is queued, no request made; the run ends once the import is stored.
    pub fetch: bool,
    /// The crawl's host name resolution; `None`: the system's, under `fetch.resolve` (a test
    /// gives one whose lookups fail without asking a DNS server).
    pub resolver: Option<Arc<Resolver>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            grace: Duration::from_secs(10),
            recrawl: false,
            import: Vec::new(),
            partitioned: None,
            external: None,
            ctx_out: None,
            fetch: true,
            resolver: None,
        }
    }
}

/// What a page limit does to an origin's next page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// No limit holds it: it may start.
    Free,
    /// It waits (for pages in flight, or for the rest of the run under `max_pages`).
    Holds,
    /// Its site has stored `crawl.max_pages_per_host` pages: its URLs are over budget.
    OverBudget,
}

/// How long a dispatch puts off an origin whose partition this worker does not hold.
const GATE_HOLD: Duration = Duration::from_millis(500);

#[derive(Clone, Debug, Default)]
pub struct CrawlSummary {
    /// Responses received (any status; a timeout or a refused connection is not one).
    pub fetched: u64,
    pub stored: u64,
    pub errors: u64,
    /// URLs that ended without a page, by kind; `errors` counts the real failures among them
    /// (not the kinds that are skips, `ErrorKind::is_skip`).
    pub errors_by_kind: Vec<(ErrorKind, u64)>,
    /// URLs deliberately not stored: robots.txt disallows them, not HTML, duplicate content.
    pub skipped: u64,
    /// Transient failures whose URL was queued again (429/503, 5xx, timeouts, resets).
    pub retries: u64,
    /// Retries whose Retry-After was above `fetch.max_retry_after` and was capped.
    pub retry_after_capped: u64,
    /// URLs left queued for the next run (those over a host's page budget apart).
    pub queued_left: u64,
    pub elapsed: Duration,
    /// Shutdown was requested before the frontier emptied.
    pub interrupted: bool,
    /// Why work was left in the queues, if it was, for the crawl as a whole (`max_pages`); one
    /// line each, never one per host (hosts over their budget are in `over_budget`).
    pub left_because: Vec<String>,
    /// Hosts that reached `crawl.max_pages_per_host` with URLs left: those URLs are over
    /// budget, not queued (a run with a larger budget takes them up).
    pub over_budget: OverBudget,
    /// Origins set aside or still waiting when the run ended, with why and the URLs they keep
    /// queued for the next run.
    pub set_aside: Vec<OriginWait>,
    /// What `--import-warc` imported before the crawl, when given.
    pub imported: Option<super::import::ImportSummary>,
}

enum Robots {
    /// `robots.respect = false`: robots.txt is never fetched and every URL is allowed.
    Ignored,
    Unknown,
    Fetching,
    Known {
        entry: Box<RobotsEntry>,
        expires: Instant,
    },
    /// Known, and kept only in the store: its site was done (`Scheduler::tell_if_site_done`),
    /// so the entry left memory. Read back before the origin's next request.
    Stored,
}

/// Where an origin's requests go, for per-server politeness. It changes only while none of the
/// origin's requests is in flight, so a request finishes on the server it started on.
#[derive(Clone, Copy, Debug)]
enum Addr {
    /// Not looked up yet (or to be looked up again).
    Unknown,
    Resolving,
    /// Its server (the first address of its host, its port), until `until` (`None`: an IP
    /// literal, for good).
    Known {
        server: SocketAddr,
        until: Option<Instant>,
    },
    /// The lookup failed but requests go through a proxy, which resolves names itself: they
    /// start without a server's gate until `until`.
    Unresolved {
        until: Instant,
    },
}

impl Addr {
    fn server(&self) -> Option<SocketAddr> {
        match self {
            Addr::Known { server, .. } => Some(*server),
            _ => None,
        }
    }
}

/// `SystemTime` deadline → tokio `Instant` (the scheduler's clock).
fn instant_of(t: std::time::SystemTime) -> Instant {
    let now = Instant::now();
    match t.duration_since(std::time::SystemTime::now()) {
        Ok(d) => now + d,
        Err(_) => now,
    }
}

/// One origin's crawl state. A broad crawl holds one per origin it knows (100,000 and more), in
/// a table sized for all of them, so what most origins never need stays out of line: the robots
/// entry is boxed, the rate limiter is boxed (`Politeness`), and the base URL is parsed from the
/// key when a request needs it.
struct Origin {
    key: String,
    site: String,
    /// Its entries in sled not yet started (`buffer` holds the next of them).
    queued: u64,
    cursor: u64,
    buffer: VecDeque<(u64, QueueEntry)>,
    in_flight: usize,
    /// Its fetched responses being parsed and stored.
    processing: usize,
    polite: Politeness,
    robots: Robots,
    failures: u32,
    robots_failures: u32,
    /// Set aside for this run (its URLs stay queued).
    parked: bool,
    /// Its site reached `crawl.max_pages_per_host`: set aside, its URLs counted over budget
    /// (`queued` still counts them, as the store does).
    over_budget: bool,
    /// Its site's page limit is taken by pages still in flight: it waits for one of them to
    /// finish (one that fails gives its slot back, so the site still reaches its limit).
    held: bool,
    /// Why it waits or was set aside, as last published to the progress.
    waiting: Option<String>,
    /// Inline learning was told its site is done (`CrawlEvent::SiteDone`) and it has started
    /// nothing since.
    told_done: bool,
    /// Its time in `ready` (or in `due`), if it is there.
    scheduled: Option<Instant>,
    /// Its site's start rank (`Scheduler::rank`), once it has started something.
    rank: Option<u64>,
    /// Stored pages waiting in its revisit queue (not started).
    revisits: u64,
    /// Revisit slots started and not yet committed (still in the store's queue).
    taken: std::collections::HashSet<RevisitSlot>,
    /// A page limit holds its FIFO queue while revisits remain: only revisits start.
    pages_blocked: bool,
    /// A cluster worker's origin whose last request may have been another worker's (its
    /// partition was not this worker's, or not yet): once the partition is, its first request
    /// here waits one crawl delay, so the origin sees no gap under the delay across a handover.
    handed: bool,
    /// A cluster worker's origin whose fetch was dropped because its partition moved (the
    /// entry stays in the store's queue, behind the cursor): once the partition is this
    /// worker's again, its queue is read from the store anew.
    reload: bool,
    /// Its server, for per-server politeness (`Addr::Unknown` while that is off).
    addr: Addr,
}

impl Origin {
    /// Its base URL (`None` for a key that is no URL: such an origin is set aside).
    fn base(&self) -> Option<Url> {
        Url::parse(&self.key).ok()
    }

    fn has_work(&self) -> bool {
        (!self.pages_blocked && (self.queued > 0 || !self.buffer.is_empty())) || self.revisits > 0
    }

    /// Set it aside for this run (nothing of it starts again until the next run). The entries
    /// it buffered stay in the store's queue: the buffer goes (a broad crawl sets thousands of
    /// origins aside at their budget, each holding up to `BUFFER` entries), and the cursor
    /// moves back to the first of them.
    fn set_aside(&mut self) {
        self.parked = true;
        if let Some(&(seq, _)) = self.buffer.front() {
            self.cursor = seq;
        }
        self.buffer = VecDeque::new();
    }

    /// Nothing of it is in flight and nothing more will start in this run (its queue is
    /// empty, or it is over budget or set aside).
    fn finished(&self) -> bool {
        self.in_flight == 0
            && self.processing == 0
            && !self.held
            && (self.parked || !self.has_work())
    }

    /// URLs it keeps queued (in the store, not yet started), those over budget apart.
    fn queued_now(&self) -> u64 {
        if self.over_budget {
            0
        } else {
            self.queued
        }
    }
}

/// Unix ms of a scheduler deadline.
fn unix_ms(at: Instant) -> u64 {
    let now = Instant::now();
    let ms = crate::store::now_ms();
    if at >= now {
        ms + u64::try_from((at - now).as_millis()).unwrap_or(u64::MAX / 2)
    } else {
        ms.saturating_sub(u64::try_from((now - at).as_millis()).unwrap_or(0))
    }
}

pub struct Scheduler {
    ctx: Arc<Ctx>,
    stats: Arc<CrawlStats>,
    events: Option<EventSink>,
    origins: HashMap<u32, Origin>,
    /// Each site's origins, to tell when a site is done.
    site_origins: HashMap<String, Vec<u32>>,
    /// Origins that may start something, by the time they may.
    ready: BTreeSet<(Instant, u32)>,
    /// Origins whose time has come, by their site's start rank (`u64::MAX` for a site not
    /// started yet), then time: the site that started first is served first. Round-robin over
    /// due origins would bring every site of a broad crawl to its budget in the crawl's last
    /// moments; this way about `concurrency / per_origin_concurrency` sites run at a time and
    /// the others wait for their turn, as Heritrix activates a new host queue only when the
    /// active ones have nothing ready.
    due: BTreeSet<(u64, Instant, u32)>,
    /// The next site start rank.
    next_rank: u64,
    /// Held back for passes since when, and the sites final and passes waiting then
    /// (`PASSES_STALL`: either changing is progress).
    held_for_passes: Option<(Instant, (u64, u64))>,
    /// Passes stalled: no more holding back for them in this run.
    passes_stalled: bool,
    tasks: JoinSet<TaskOutput>,
    /// Requests in flight (what politeness and the concurrency cap count).
    in_flight: usize,
    /// Fetched pages being parsed and stored.
    processing: usize,
    max_processing: usize,
    pages_in_flight: u64,
    site_in_flight: HashMap<String, u64>,
    stored_total: u64,
    /// `max_pages` pages are stored: nothing more may start.
    limit_reached: bool,
    /// `max_pages` is taken by pages stored or still in flight: no page starts until one of
    /// those finishes (a failed one gives its slot back).
    limit_held: bool,
    /// Origins held until a page of their site finishes (see `Origin::held`), by site.
    held_sites: HashMap<String, Vec<u32>>,
    summary: CrawlSummary,
    backoff: Backoff,
    /// A dispatch used up its matching budget: let the loop turn before dispatching more.
    turn_now: bool,
    /// Revisits queued and not started, over all origins: page limits do not stop them.
    revisits_left: u64,
    /// Per-server politeness (`crawl.per_ip_concurrency`).
    servers: Servers,
    resolver: Arc<Resolver>,
    /// Host name lookups in flight (they count against `crawl.concurrency` as requests do).
    resolving: usize,
    /// Origins a server let through during the current dispatch, scheduled when it is over.
    let_through: Vec<u32>,
    /// Requests go through a proxy: a name this machine cannot resolve is no failure.
    proxied: bool,
}

/// Crawl until the frontier is empty, a limit is reached, or `shutdown` is cancelled.
pub async fn run(
    config: Arc<Config>,
    store: Arc<Store>,
    seeds: &[Url],
    shutdown: CancellationToken,
    stats: Arc<CrawlStats>,
    events: Option<EventSink>,
    mut options: RunOptions,
) -> Result<CrawlSummary, CrawlError> {
    let started = std::time::Instant::now();
    if !config.robots.respect {
        tracing::warn!(
            "robots.txt is ignored (robots.respect = false): not fetched, its rules, Crawl-delay \
             and Sitemap lines not obeyed; crawl.delay and per-origin limits still apply"
        );
    }
    let archive = match Archive::open(&config)? {
        Some((archive, recovered)) => {
            for r in recovered {
                tracing::info!(
                    file = %r.path.display(),
                    kept = r.kept,
                    cut = r.cut,
                    "finished a WARC file an interrupted run left open"
                );
            }
            Some(Arc::new(archive))
        }
        None => None,
    };
    let resolver = options
        .resolver
        .take()
        .unwrap_or_else(|| Arc::new(Resolver::new(&config.fetch)));
    let fetcher = Fetcher::new(
        &config.fetch,
        resolver.clone(),
        config.crawl.per_origin_concurrency,
    )
    .map_err(CrawlError::Client)?
    .capturing(archive.is_some());
    let proxied = fetcher.proxied();
    let scope = Scope::new(&config.scope, seeds);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let ctx = Arc::new(Ctx {
        config: config.clone(),
        store: store.clone(),
        fetcher,
        scope,
        cpu: Arc::new(Semaphore::new(cores)),
        archive: archive.clone(),
        recrawl: options.recrawl,
        partitioned: options.partitioned.clone(),
    });
    if let Some(out) = options.ctx_out.take() {
        let _ = out.send((ctx.clone(), events.clone()));
    }

    // Imported pages first: their URLs enter the seen set, so neither the seeds nor their
    // links queue what the files hold.
    let imported = if options.import.is_empty() {
        // A cluster worker's takeovers import from partition logs, again at each takeover.
        if options.partitioned.is_none() {
            super::import::check_finished(&store)?;
        }
        None
    } else {
        let files = super::import::warc_files(&options.import)?;
        let imported =
            super::import::import(&ctx, &files, events.as_ref(), &shutdown, None).await?;
        tracing::info!(
            files = imported.files,
            responses = imported.responses,
            pages = imported.pages,
            already = imported.already,
            redirects = imported.redirects,
            skipped = imported.skipped,
            problems = imported.problems,
            secs = imported.elapsed.as_secs_f64(),
            "imported WARC files"
        );
        if imported.interrupted {
            let finished = archive.as_deref().map(Archive::finish).transpose();
            store.flush()?;
            finished?;
            return Ok(CrawlSummary {
                interrupted: true,
                elapsed: started.elapsed(),
                imported: Some(imported),
                ..CrawlSummary::default()
            });
        }
        Some(imported)
    };

    // Seeds go through the seen set, so a resumed crawl does not queue them twice (the store
    // applies them in bounded batches).
    // A cluster worker's seeds go to their partitions' owners instead (they set the scope
    // here all the same).
    let mut c = Commit::new();
    for s in seeds
        .iter()
        .filter(|_| options.partitioned.is_none() && options.fetch)
    {
        let mut entry = QueueEntry::page(s.to_string(), 0);
        if super::seeds::is_sitemap(s) {
            entry.kind = EntryKind::Sitemap;
        }
        c.discover(urls::origin_key(s), entry);
    }
    store.commit(c)?;

    let mut s = Scheduler {
        backoff: Backoff {
            base: config.fetch.backoff_base,
            max: config.fetch.backoff_max,
            max_retry_after: config.fetch.max_retry_after,
        },
        ctx,
        stats,
        events,
        origins: HashMap::new(),
        site_origins: HashMap::new(),
        ready: BTreeSet::new(),
        due: BTreeSet::new(),
        next_rank: 0,
        held_for_passes: None,
        passes_stalled: false,
        tasks: JoinSet::new(),
        in_flight: 0,
        processing: 0,
        // Enough parsed-page backlog to keep every core busy, not so much that bodies pile up.
        max_processing: 4 * cores + 8,
        pages_in_flight: 0,
        site_in_flight: HashMap::new(),
        stored_total: store.sites().iter().map(|(_, c)| c.pages).sum(),
        limit_reached: false,
        limit_held: false,
        held_sites: HashMap::new(),
        summary: CrawlSummary::default(),
        turn_now: false,
        revisits_left: 0,
        servers: Servers::new(
            config.crawl.per_ip_concurrency,
            server_spacing(config.crawl.delay, config.crawl.per_ip_concurrency),
        ),
        resolver,
        resolving: 0,
        let_through: Vec::new(),
        proxied,
    };
    let lengths = store.queue_lengths()?;
    let revisits = store.revisit_lengths()?;
    let records = store.origins();
    // Sized once: growing a table of 100,000 origins doubles it, and holds the old half beside
    // the new one while it moves them.
    s.origins.reserve(records.len());
    s.site_origins.reserve(records.len());
    for rec in records {
        let queued = lengths.get(&rec.id).copied().unwrap_or(0);
        s.add_origin(rec.id, &rec.key, queued);
        let n = revisits.get(&rec.id).copied().unwrap_or(0);
        if n > 0 {
            if let Some(o) = s.origins.get_mut(&rec.id) {
                o.revisits = n;
            }
            s.revisits_left += n;
            s.stats.queued.fetch_add(n, Relaxed);
            s.schedule(rec.id);
        }
    }
    for (site, c) in store.sites() {
        s.stats.host(&site, |h| h.fetched = c.pages);
    }
    s.stats
        .page_budget
        .store(config.crawl.max_pages_per_host, Relaxed);
    s.over_budget_from_start();
    s.stats.stored.store(s.stored_total, Relaxed);

    let mut external = options.external.take();
    let result = s.main_loop(&shutdown, &options, &mut external).await;
    // The archive's last file is made durable before the store's last flush: every page the
    // store keeps has its records on disk.
    let finished = archive.as_deref().map(Archive::finish).transpose();
    let mut summary = s.finish();
    // Every host over budget is known by the end of any run (judged at its start), so the set
    // replaces the last run's.
    let over = &summary.over_budget;
    store.set_over_budget(over.budget, &over.hosts)?;
    store.flush()?;
    finished?;
    summary.elapsed = started.elapsed();
    summary.imported = imported;
    result.map(|()| summary)
}

impl Scheduler {
    async fn main_loop(
        &mut self,
        shutdown: &CancellationToken,
        options: &RunOptions,
        external: &mut Option<tokio::sync::mpsc::UnboundedReceiver<Vec<Enqueued>>>,
    ) -> Result<(), CrawlError> {
        loop {
            self.stats.loop_turns.fetch_add(1, Relaxed);
            if shutdown.is_cancelled() {
                self.summary.interrupted = true;
                return self.drain(options.grace).await;
            }
            if options.fetch {
                self.dispatch_ready()?;
            }
            let busy = self.in_flight + self.processing + self.resolving;
            // With a limit reached nothing more may start (but revisits): origins still in
            // `ready` wait for nothing.
            // A cluster worker's crawl is over once its worker says so (`external` closed):
            // the origins left are other workers' partitions, gated here.
            let cluster_over = self.ctx.partitioned.is_some() && external.is_none();
            let import_only = !options.fetch;
            if busy == 0
                && (self.nothing_ready() || self.limits_stop() || cluster_over || import_only)
                && external.is_none()
            {
                return Ok(());
            }
            // Wake for the next due origin only when something could be started then: at the
            // concurrency cap or with a full processing backlog, only a finished task helps.
            let wake = if !self.has_capacity() {
                None
            } else if self.due.is_empty() {
                self.ready.first().map(|&(t, _)| t)
            } else if self.held_for_passes.is_some() {
                let next = self.ready.first().map(|&(t, _)| t);
                let poll = Instant::now() + PASSES_POLL;
                Some(next.map_or(poll, |t| t.min(poll)))
            } else {
                Some(Instant::now())
            };
            tokio::select! {
                _ = shutdown.cancelled() => {}
                Some(joined) = self.tasks.join_next(), if busy > 0 => {
                    self.handle(joined)?;
                }
                _ = sleep_until(wake), if wake.is_some() => {}
                more = recv(external), if external.is_some() => match more {
                    Some(list) => self.enqueued(list),
                    // The sender is done: end once the work in hand is.
                    None => *external = None,
                },
            }
        }
    }

    /// Let in-flight jobs finish for up to `grace`, then abandon them.
    async fn drain(&mut self, grace: Duration) -> Result<(), CrawlError> {
        let deadline = Instant::now() + grace;
        while self.in_flight + self.processing + self.resolving > 0 {
            match tokio::time::timeout_at(deadline, self.tasks.join_next()).await {
                Ok(Some(joined)) => self.handle(joined)?,
                Ok(None) => break,
                Err(_) => {
                    tracing::warn!(
                        abandoned = self.in_flight,
                        "shutdown: abandoning in-flight requests (their URLs stay queued)"
                    );
                    self.tasks.abort_all();
                    while self.tasks.join_next().await.is_some() {}
                    break;
                }
            }
        }
        Ok(())
    }

    /// A request or a page's processing started for `site` (a cluster worker counts them per
    /// partition, to hand a partition back only once its work in hand is committed).
    fn job_started(&self, site: &str) {
        if let Some(p) = &self.ctx.partitioned {
            (p.started)(site);
        }
    }

    /// Spawn `job`, a request for `site`, counted in flight until its outcome comes back.
    fn spawn_request(&mut self, site: &str, job: Job) {
        self.in_flight += 1;
        self.stats.in_flight.fetch_add(1, Relaxed);
        self.job_started(site);
        self.tasks.spawn(worker::run_task(self.ctx.clone(), job));
    }

    fn add_origin(&mut self, id: u32, key: &str, queued: u64) {
        let base = Url::parse(key).ok();
        let site = base
            .as_ref()
            .map_or_else(|| key.to_string(), urls::site_key);
        let delay = self.ctx.config.crawl.delay;
        let mut origin = Origin {
            key: key.to_string(),
            site: site.clone(),
            queued,
            cursor: 0,
            buffer: VecDeque::new(),
            in_flight: 0,
            processing: 0,
            polite: Politeness::new(delay),
            robots: if self.ctx.config.robots.respect {
                Robots::Unknown
            } else {
                Robots::Ignored
            },
            failures: 0,
            robots_failures: 0,
            parked: false,
            over_budget: false,
            held: false,
            waiting: None,
            told_done: false,
            scheduled: None,
            rank: None,
            revisits: 0,
            taken: std::collections::HashSet::new(),
            pages_blocked: false,
            handed: self.ctx.partitioned.is_some(),
            reload: false,
            addr: Addr::Unknown,
        };
        let mut waits_for_robots = None;
        let cached = match origin.robots {
            Robots::Ignored => None,
            _ => self.ctx.store.robots::<RobotsEntry>(key).ok().flatten(),
        };
        if let Some(entry) = cached {
            origin.polite.set_delay(self.effective_delay(&entry.policy));
            if let (Some(_), RobotsPolicy::DisallowAll { reason }) =
                (entry.unreachable_since, &entry.policy)
            {
                waits_for_robots = Some(format!(
                    "robots.txt unreachable in an earlier run ({reason}); retry"
                ));
            }
            // Kept even when expired: it is refreshed before the next request, and stays in
            // force if robots.txt is unreachable then.
            origin.robots = Robots::Known {
                expires: instant_of(entry.expires_at),
                entry: Box::new(entry),
            };
        }
        self.stats.queued.fetch_add(queued, Relaxed);
        self.stats.host(&site, |h| h.queued += queued);
        let expires = match &origin.robots {
            Robots::Known { expires, .. } => Some(*expires),
            _ => None,
        };
        self.origins.insert(id, origin);
        self.site_origins.entry(site).or_default().push(id);
        if let (Some(why), Some(at)) = (waits_for_robots, expires) {
            if at > Instant::now() && queued > 0 {
                self.set_wait(id, why, Some(at));
            }
        }
        self.schedule(id);
    }

    /// Publish why origin `id` waits until `until` (`None`: set aside for this run).
    fn set_wait(&mut self, id: u32, reason: String, until: Option<Instant>) {
        let Some(o) = self.origins.get_mut(&id) else {
            return;
        };
        o.waiting = Some(reason.clone());
        self.stats.set_wait(OriginWait {
            origin: o.key.clone(),
            reason,
            until_ms: until.map(unix_ms),
            queued: o.queued_now(),
        });
    }

    /// Origin `id` got an answer: it no longer waits.
    fn clear_wait(&mut self, id: u32) {
        if let Some(o) = self.origins.get_mut(&id) {
            if o.waiting.take().is_some() {
                self.stats.clear_wait(&o.key);
            }
        }
    }

    fn effective_delay(&self, policy: &RobotsPolicy) -> Duration {
        let cfg = &self.ctx.config.crawl;
        let crawl_delay = policy.crawl_delay().unwrap_or(Duration::ZERO);
        cfg.delay.max(crawl_delay.min(cfg.max_crawl_delay))
    }

    /// Put origin `id` in the ready set if it may start something (and origins its server
    /// lets through, when it gives up its server's turn).
    fn schedule(&mut self, id: u32) {
        let mut next = Some(id);
        while let Some(id) = next {
            next = self.schedule_one(id);
        }
    }

    /// [`Self::schedule`] for one origin, when `id` is one (`Servers` let it through).
    fn schedule_some(&mut self, id: Option<u32>) {
        if let Some(id) = id {
            self.schedule(id);
        }
    }

    /// Put origin `id` in the ready set, at the later of its own time and its server's, if it
    /// may start something; `Some`: the origin its server lets through because `id` gave the
    /// server's turn up (it holds it and starts nothing now).
    fn schedule_one(&mut self, id: u32) -> Option<u32> {
        let per_origin = self.ctx.config.crawl.per_origin_concurrency;
        let o = self.origins.get_mut(&id)?;
        let idle = o.in_flight < per_origin && !matches!(o.robots, Robots::Fetching);
        let limited = self.limit_reached && o.revisits == 0;
        // An origin waiting for its address or in its server's queue is scheduled once it has
        // the address or is let through.
        let held = matches!(o.addr, Addr::Resolving) || self.servers.is_waiting(id);
        let wanted = !o.parked && !o.held && idle && o.has_work() && !limited && !held;
        let server = o.addr.server();
        let at = wanted.then(|| {
            let own = o.polite.ready_at();
            server
                .and_then(|s| self.servers.not_before(s))
                .map_or(own, |t| own.max(t))
        });
        if o.scheduled != at {
            if let Some(old) = o.scheduled.take() {
                if !self.ready.remove(&(old, id)) {
                    self.due.remove(&(o.rank.unwrap_or(u64::MAX), old, id));
                }
            }
            if let Some(t) = at {
                self.ready.insert((t, id));
                o.scheduled = Some(t);
            }
        }
        match (at, server) {
            (None, Some(s)) => self.servers.pass(s, id),
            _ => None,
        }
    }

    /// Room for another request: under the concurrency cap, and the pages already fetched are
    /// being parsed fast enough (the backlog bounds the response bodies held in memory).
    fn has_capacity(&self) -> bool {
        self.in_flight + self.resolving < self.ctx.config.crawl.concurrency
            && self.processing < self.max_processing
            && !self.limits_stop()
            && (!self.limit_held || self.revisits_left > 0)
    }

    /// A page limit is reached and no revisit is left to start: nothing more may start.
    fn limits_stop(&self) -> bool {
        self.limit_reached && self.revisits_left == 0
    }

    /// Start what is due. Every dispatch either starts a job, consumes queue entries, or moves
    /// its origin to a later time: an origin that is due again after a dispatch that did none
    /// of these would spin the loop (a freeze once seen on a hostile origin), so it is held back
    /// and logged.
    fn dispatch_ready(&mut self) -> Result<(), CrawlError> {
        let now = Instant::now();
        let mut budget = DISPATCH_BUDGET;
        self.turn_now = false;
        while self.has_capacity() && budget > 0 && !self.turn_now {
            budget -= 1;
            self.move_due(now);
            let Some(&(rank, t, id)) = self.due.first() else {
                break;
            };
            if rank == u64::MAX && self.hold_for_passes(now) {
                break;
            }
            self.due.remove(&(rank, t, id));
            if let Some(o) = self.origins.get_mut(&id) {
                o.scheduled = None;
            }
            self.stats.dispatches.fetch_add(1, Relaxed);
            let turn = self
                .origins
                .get(&id)
                .and_then(|o| o.addr.server())
                .filter(|&s| self.servers.has_turn(s, id));
            let progressed = self.dispatch(id, now)?;
            if progressed {
                self.rank(id);
            }
            if let Some(s) = turn {
                // Let through by its server and started nothing: the next one's turn.
                let next = self.servers.pass(s, id);
                self.let_through.extend(next);
            }
            // Scheduled now that the dispatch is over (an entry it took is back in its queue).
            for other in std::mem::take(&mut self.let_through) {
                self.schedule(other);
            }
            self.schedule(id);
            let due_again = self
                .origins
                .get(&id)
                .and_then(|o| o.scheduled)
                .is_some_and(|at| at <= now);
            if due_again && !progressed {
                let o = self.origins.get_mut(&id).expect("invariant: origin exists");
                tracing::error!(
                    origin = %o.key,
                    "scheduler bug: dispatch made no progress; holding the origin back"
                );
                o.polite.hold_until(now + STUCK_HOLD);
                self.schedule(id);
            }
        }
        Ok(())
    }

    /// Move the origins whose time has come from `ready` to `due`.
    fn move_due(&mut self, now: Instant) {
        while let Some(&(t, id)) = self.ready.first() {
            if t > now {
                break;
            }
            self.ready.remove(&(t, id));
            let rank = self.origins.get(&id).and_then(|o| o.rank);
            self.due.insert((rank.unwrap_or(u64::MAX), t, id));
        }
    }

    /// Give origin `id` its site's start rank when it started something for the first time:
    /// the rank of another origin of its site that started before it, else the next one.
    fn rank(&mut self, id: u32) {
        let Some(o) = self.origins.get(&id) else {
            return;
        };
        if o.rank.is_some() {
            return;
        }
        let sibling = self.site_origins.get(&o.site).and_then(|ids| {
            ids.iter()
                .filter_map(|other| self.origins.get(other).and_then(|o| o.rank))
                .min()
        });
        let rank = sibling.unwrap_or_else(|| {
            self.next_rank += 1;
            self.next_rank
        });
        // Not in `due` here (taken out for its dispatch; `schedule` puts it back in `ready`
        // only), so no key there goes stale.
        self.origins
            .get_mut(&id)
            .expect("invariant: origin exists")
            .rank = Some(rank);
    }

    /// Whether a new site waits for done sites' final passes (`PASSES_AHEAD`); keeps
    /// `held_for_passes` and gives up on passes that stall.
    fn hold_for_passes(&mut self, now: Instant) -> bool {
        let waiting = self.stats.passes_waiting.load(Relaxed);
        if self.passes_stalled || self.events.is_none() || waiting <= PASSES_AHEAD {
            self.held_for_passes = None;
            return false;
        }
        let progress = (self.stats.sites_final.load(Relaxed), waiting);
        match self.held_for_passes {
            Some((since, before)) if before == progress => {
                if now.duration_since(since) >= PASSES_STALL {
                    tracing::warn!(
                        waiting,
                        "no site's final pass finished in {PASSES_STALL:?}; new sites start without waiting for passes"
                    );
                    self.passes_stalled = true;
                    self.held_for_passes = None;
                    return false;
                }
            }
            _ => self.held_for_passes = Some((now, progress)),
        }
        true
    }

    /// No origin may start anything, now or later.
    fn nothing_ready(&self) -> bool {
        self.ready.is_empty() && self.due.is_empty()
    }

    /// Start the origin's next job (robots.txt first), if politeness allows. `Ok(true)` when
    /// it started a job or consumed queue entries.
    fn dispatch(&mut self, id: u32, now: Instant) -> Result<bool, CrawlError> {
        if !self.origins.contains_key(&id) {
            return Ok(false);
        }
        if let Some(progressed) = self.partition_gate(id, now)? {
            return Ok(progressed);
        }
        if let Some(progressed) = self.robots_first(id, now) {
            return Ok(progressed);
        }
        self.start_next_entry(id, now)
    }
}

/// Tells a cluster worker that a job it heard start ([`Scheduler::job_started`]) is over, when
/// dropped: at the end of the function that holds it, whichever way it returns.
struct Settled(Option<(Partitioned, String)>);

impl Settled {
    fn new(ctx: &Ctx, site: &str) -> Settled {
        Settled(ctx.partitioned.clone().map(|p| (p, site.to_string())))
    }
}

impl Drop for Settled {
    fn drop(&mut self) {
        if let Some((p, site)) = &self.0 {
            (p.settled)(site);
        }
    }
}

/// The least time between two request starts to one server: the crawl delay shared by the
/// requests it may have in flight, so a server hosting many sites gets at most
/// `per_ip_concurrency` requests per `delay`, as that many sites of their own would (none
/// with the limit off or no delay).
fn server_spacing(delay: Duration, per_ip_concurrency: usize) -> Duration {
    match u32::try_from(per_ip_concurrency) {
        Ok(0) => Duration::ZERO,
        Ok(n) => delay / n,
        Err(_) => Duration::ZERO,
    }
}

/// The next list from `external` (pending forever when there is none: its arm is off then).
async fn recv(
    external: &mut Option<tokio::sync::mpsc::UnboundedReceiver<Vec<Enqueued>>>,
) -> Option<Vec<Enqueued>> {
    match external {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    /// A broad crawl keeps an `Origin` per origin it knows in one table (100,000 × the size,
    /// rounded up to a power of two buckets): what few origins need stays out of line.
    #[test]
    fn an_origin_in_the_table_stays_small() {
        let size = std::mem::size_of::<super::Origin>();
        assert!(size <= 384, "Origin is {size} bytes");
    }
}
