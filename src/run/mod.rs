//! A crawl run: what `thresher crawl` does, as a type a program drives ([`CrawlRun`]). It makes
//! the data directory and opens its store, queues a recrawl's revisits, starts the inline
//! template learner, runs the crawl (`crawl::run`) on its own tokio runtime — as one worker of
//! a cluster when asked (`run::cluster`, `--features cluster`) — then the learner's end-of-crawl
//! pass (or its stop, when the run was interrupted), records how the run ended and keeps the
//! status report for `status`. What happens meanwhile goes to the caller as [`Event`]s; what
//! the run came to is its [`RunReport`]. Running it again on the same data directory resumes.
//!
//! Owns: the order of a run's work, its events, the live status snapshot it writes, and the
//! record of the last run. Uses `config`, `crawl`, `learn`, `status`, `store`, `memory` and
//! `output` (and `cluster` with the feature); never imports `progress`, `cli` or `cmd`: showing a
//! run is its caller's (docs/design.md, "Layers").

#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(feature = "cluster")]
pub mod gather;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use url::Url;

use crate::config::Config;
use crate::crawl::recrawl::Prepared;
use crate::crawl::stats::CrawlStats;
use crate::crawl::{self, CrawlError, CrawlSummary, RunOptions};
use crate::learn::{LearnSummary, Learner, WrittenPage, WrittenSink};
use crate::status::{self, keep_closed_report, write_snapshot, StatusReport, WAITING_META};
use crate::store::{now_ms, ChangeKind, RunInfo, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No seed given and nothing queued or waiting for a revisit in the data directory.
    #[error("no seed URLs and nothing queued in the data directory")]
    NothingToCrawl,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Crawl(#[from] CrawlError),
    /// The cluster engine could not be used (unreachable, not initialised), or the worker's
    /// task failed.
    #[error("{0}")]
    Cluster(String),
    #[error("cannot create {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write cleaned text under --out {path}: {source}")]
    Out {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cleaned text could not be written for {} site(s) (their pages are stored; fix the cause \
         and run the same command again): {}",
        .0.len(),
        .0.join("; ")
    )]
    Learn(Vec<String>),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// What happens during a run, as it happens. Events come from the run's own threads (the
/// learner's among them): a handler should be quick.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The data directory holds an earlier run, which this one resumes.
    Resuming { data_dir: &'a Path, pages: u64 },
    /// A recrawl: an interrupted one left `left` stored pages to revisit, and goes on.
    RecrawlResumed { left: u64 },
    /// A recrawl: the stored pages queued for a revisit, and the sitemaps and feeds read first.
    RecrawlQueued(&'a Prepared),
    /// The crawl's live figures, every 200 ms while it runs.
    Tick(&'a CrawlStats),
    /// A stop was asked for (the run's shutdown token): requests in flight finish and the
    /// state is saved.
    Stopping,
    /// The crawl finished: the learner's end-of-crawl pass starts.
    Learning,
    /// A page's cleaned text was written (by an incremental step or the end-of-crawl pass).
    Written(&'a WrittenPage<'a>),
}

/// A run's event handler.
type Events = Arc<dyn Fn(Event<'_>) + Send + Sync>;

/// What a run came to.
#[derive(Debug)]
pub struct RunReport {
    /// The crawl's summary (with the import's, when WARC files were imported).
    pub crawl: CrawlSummary,
    /// The learner's, when templates were learned inline (`template.inline`).
    pub learned: Option<LearnSummary>,
    /// The crawl's figures as the run ended.
    pub stats: Arc<CrawlStats>,
    /// When the run started (Unix ms).
    pub started_at_ms: u64,
    /// What the revisits found, when the run revisited stored pages.
    pub recrawl: Option<RecrawlChanges>,
}

impl RunReport {
    /// The sites whose cleaned text could not be written, as an error (their pages are
    /// stored; running again writes it).
    pub fn learn_failed(&self) -> Option<RunError> {
        match &self.learned {
            Some(l) if !l.failures.is_empty() => Some(RunError::Learn(l.failures.clone())),
            _ => None,
        }
    }
}

/// The change log's records since a run started: pages by change kind, and the changed pages
/// still waiting for the end-of-crawl pass to settle their text.
#[derive(Clone, Debug, Default)]
pub struct RecrawlChanges {
    pub counts: Vec<(ChangeKind, u64)>,
    pub pending: u64,
}

/// A crawl run, set up and then [run](CrawlRun::run):
///
/// ```no_run
/// use thresher::config::{Config, Overrides};
/// use thresher::run::{CrawlRun, Event};
///
/// let config = Config::load(None, &Overrides::default())?;
/// let seed = url::Url::parse("https://example.com/")?;
/// let report = CrawlRun::new(config)
///     .seeds([seed])
///     .run(|event| {
///         if let Event::Written(page) = event {
///             println!("{}: {} bytes of text", page.path.display(), page.text.len());
///         }
///     })?;
/// println!("{} pages stored", report.crawl.stored);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CrawlRun {
    config: Config,
    seeds: Vec<Url>,
    import: Vec<PathBuf>,
    /// `false`: import only (no seed queued, no request made).
    fetch: bool,
    shutdown: CancellationToken,
    #[cfg(feature = "cluster")]
    cluster: Option<String>,
}

impl CrawlRun {
    /// A run with `config`'s settings (its data directory, output directory, limits).
    pub fn new(config: Config) -> CrawlRun {
        CrawlRun {
            config,
            seeds: Vec::new(),
            import: Vec::new(),
            fetch: true,
            shutdown: CancellationToken::new(),
            #[cfg(feature = "cluster")]
            cluster: None,
        }
    }

    /// Seed URLs to queue (a URL already seen is not queued again; a sitemap URL is read as a
    /// sitemap, `crawl::seeds::is_sitemap`).
    pub fn seeds(mut self, seeds: impl IntoIterator<Item = Url>) -> CrawlRun {
        self.seeds.extend(seeds);
        self
    }

    /// WARC files or directories of them to store before crawling, as if this crawl had
    /// fetched their pages (`crawl --import-warc`).
    pub fn import_warc(mut self, paths: impl IntoIterator<Item = PathBuf>) -> CrawlRun {
        self.import.extend(paths);
        self
    }

    /// Stop the run when `token` is cancelled: requests in flight finish (10 s at most), the
    /// state is saved, and running again resumes.
    pub fn shutdown(mut self, token: CancellationToken) -> CrawlRun {
        self.shutdown = token;
        self
    }

    /// Crawl as one worker of the cluster whose NATS engine is at `urls` (docs/cluster.md).
    #[cfg(feature = "cluster")]
    pub fn cluster(mut self, urls: &str) -> CrawlRun {
        self.cluster = Some(urls.to_string());
        self
    }

    /// A run that stores the pages of WARC `files` and fetches nothing, then learns templates
    /// and writes cleaned text as at a crawl's end (`export --cluster` gathers a cluster's
    /// pages this way). Every host in the files is in scope (the crawls that fetched them
    /// checked theirs); the config's patterns still apply. Importing the same pages again
    /// stores nothing twice.
    pub fn import_only(mut config: Config, files: Vec<PathBuf>) -> CrawlRun {
        config.scope.seed_hosts_only = false;
        config.crawl.warc_dir = None;
        config.recrawl.enabled = false;
        let mut run = CrawlRun::new(config).import_warc(files);
        run.fetch = false;
        run
    }

    /// Run until the crawl ends or the shutdown token is cancelled, telling `events` what
    /// happens. Blocks the calling thread (the run has its own tokio runtime): call it outside
    /// an async runtime, or from `spawn_blocking`.
    pub fn run(
        self,
        events: impl Fn(Event<'_>) + Send + Sync + 'static,
    ) -> Result<RunReport, RunError> {
        let events: Events = Arc::new(events);
        let CrawlRun {
            config,
            seeds,
            import,
            fetch,
            shutdown,
            #[cfg(feature = "cluster")]
            cluster,
        } = self;
        #[cfg(feature = "cluster")]
        let config = match &cluster {
            None => config,
            Some(urls) => cluster::config_for(urls, config)?,
        };
        let store = open_data(&config)?;
        if config.recrawl.enabled {
            start_recrawl(&store, &config, &seeds, &events)?;
        }
        if fetch
            && seeds.is_empty()
            && store.queue_lengths()?.is_empty()
            && store.revisit_lengths()?.is_empty()
        {
            return Err(RunError::NothingToCrawl);
        }
        let info = start_run(&store, &config, &events)?;
        let (runtime, config, stats, learner) = prepare(config, &store, &events)?;
        // A cluster worker's join (`--features cluster`) gives the crawl its hooks here.
        #[allow(unused_mut)]
        let mut options = RunOptions {
            recrawl: config.recrawl.enabled,
            import,
            fetch,
            ..RunOptions::default()
        };
        #[cfg(feature = "cluster")]
        let worker = match &cluster {
            None => None,
            Some(urls) => Some(runtime.block_on(cluster::join(
                urls,
                &config,
                &store,
                &stats,
                &seeds,
                &shutdown,
                &mut options,
            ))?),
        };
        let crawl = Crawl {
            config: config.clone(),
            store: store.clone(),
            stats: stats.clone(),
            events: events.clone(),
            info: info.clone(),
        };
        let (summary, learned) =
            runtime.block_on(crawl.crawl_and_learn(&seeds, shutdown, learner, options));
        #[cfg(feature = "cluster")]
        if let Some(task) = worker {
            runtime
                .block_on(task)
                .map_err(|e| RunError::Cluster(format!("the cluster worker's task failed: {e}")))?
                .map_err(|e| RunError::Cluster(e.to_string()))?;
        }
        let summary = summary?;
        end_run(&store, &config, info.clone(), &summary)?;
        let recrawl = if stats.revisits.load(Relaxed) > 0 {
            let (counts, pending) = store.change_counts(info.started_at_ms)?;
            Some(RecrawlChanges { counts, pending })
        } else {
            None
        };
        Ok(RunReport {
            crawl: summary,
            learned,
            stats,
            started_at_ms: info.started_at_ms,
            recrawl,
        })
    }
}

/// The data directory made and its store opened (and the output directory checked when
/// cleaned text is written inline).
fn open_data(config: &Config) -> Result<Arc<Store>, RunError> {
    std::fs::create_dir_all(&config.crawl.data_dir).map_err(|source| RunError::Dir {
        path: config.crawl.data_dir.clone(),
        source,
    })?;
    if config.template.inline {
        check_out_dir(&config.crawl.out_dir)?;
    }
    let mut store = Store::open(&config.crawl.data_dir, config.store.cache_bytes)?;
    store.set_page_file_bytes(config.store.page_file_bytes);
    Ok(Arc::new(store))
}

/// The output directory must be one thresher can write to, before the crawl starts (not found
/// out from a log line hidden under `-q` after it).
fn check_out_dir(out: &Path) -> Result<(), RunError> {
    let err = |source| RunError::Out {
        path: out.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(out).map_err(err)?;
    let probe =
        crate::output::AtomicFile::create(&out.join(".thresher-write-check")).map_err(err)?;
    drop(probe);
    Ok(())
}

/// A crawl's runtime, shared config and counters, and its inline learner (when on).
type Parts = (
    tokio::runtime::Runtime,
    Arc<Config>,
    Arc<CrawlStats>,
    Option<Learner>,
);

fn prepare(config: Config, store: &Arc<Store>, events: &Events) -> Result<Parts, RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let config = Arc::new(config);
    let stats = Arc::new(CrawlStats::default());
    let written: WrittenSink = {
        let events = events.clone();
        Arc::new(move |page: &WrittenPage<'_>| events(Event::Written(page)))
    };
    let learner = config.template.inline.then(|| {
        Learner::spawn_notifying(config.clone(), store.clone(), stats.clone(), Some(written))
    });
    Ok((runtime, config, stats, learner))
}

/// Record that a run started (and say so when it resumes an earlier one).
fn start_run(store: &Store, config: &Config, events: &Events) -> Result<RunInfo, RunError> {
    let resumed = store.get_meta::<RunInfo>("last_run")?.is_some();
    let info = RunInfo {
        started_at_ms: now_ms(),
        ended_at_ms: 0,
        state: "running".into(),
        pages_fetched: 0,
    };
    store.put_meta("last_run", &info)?;
    if resumed {
        events(Event::Resuming {
            data_dir: &config.crawl.data_dir,
            pages: store.sites().iter().map(|(_, c)| c.pages).sum::<u64>(),
        });
    }
    Ok(info)
}

/// A recrawl: queue the stored pages' revisits and the site's sitemaps and feeds, unless an
/// interrupted recrawl left revisits queued (running the same command again resumes it).
fn start_recrawl(
    store: &Store,
    config: &Config,
    seeds: &[Url],
    events: &Events,
) -> Result<(), RunError> {
    let left: u64 = store.revisit_lengths()?.values().sum();
    if left > 0 {
        events(Event::RecrawlResumed { left });
        return Ok(());
    }
    let older = u64::try_from(config.recrawl.older_than.as_millis()).unwrap_or(u64::MAX);
    let cutoff = now_ms().saturating_sub(older);
    let p = crawl::recrawl::prepare(store, seeds, cutoff)?;
    events(Event::RecrawlQueued(&p));
    Ok(())
}

/// Record how the run ended and what it left waiting, flush, and leave a final status snapshot.
fn end_run(
    store: &Store,
    config: &Config,
    mut info: RunInfo,
    summary: &CrawlSummary,
) -> Result<(), RunError> {
    info.ended_at_ms = now_ms();
    info.state = if summary.interrupted {
        "interrupted"
    } else {
        "finished"
    }
    .into();
    info.pages_fetched = summary.fetched;
    store.put_meta("last_run", &info)?;
    store.put_meta(WAITING_META, &summary.set_aside)?;
    if !summary.interrupted {
        // Recrawls leave replaced pages' bytes behind in the page files.
        let c = store.compact_page_files()?;
        if c.files_removed > 0 {
            tracing::info!(
                files = c.files_removed,
                pages_moved = c.pages_moved,
                bytes_freed = c.bytes_freed,
                "page files compacted"
            );
        }
    }
    store.flush()?;
    // Kept for `status` while the store stays as it is now (`status::ClosedStore`).
    if let (Ok(report), Ok(stamp)) = (StatusReport::from_store(store), store.stamp()) {
        let _ = keep_closed_report(&config.crawl.data_dir, report, stamp);
    }
    Ok(())
}

/// What the crawl on the runtime shares.
struct Crawl {
    config: Arc<Config>,
    store: Arc<Store>,
    stats: Arc<CrawlStats>,
    events: Events,
    info: RunInfo,
}

impl Crawl {
    /// The crawl on the runtime, with ticks and the live status snapshot; then the learner's
    /// end-of-crawl pass (when the crawl finished) or its stop (when it was interrupted).
    async fn crawl_and_learn(
        self,
        seeds: &[Url],
        shutdown: CancellationToken,
        learner: Option<Learner>,
        options: RunOptions,
    ) -> (Result<CrawlSummary, CrawlError>, Option<LearnSummary>) {
        self.say_when_stopping(shutdown.clone());
        let ticker = self.spawn_ticker();
        let sink = learner.as_ref().map(Learner::sink);
        let result = crawl::run(
            self.config,
            self.store,
            seeds,
            shutdown.clone(),
            self.stats,
            sink,
            options,
        )
        .await;
        let learned = match (&result, learner) {
            (Ok(s), Some(l)) if !s.interrupted && !shutdown.is_cancelled() => {
                (self.events)(Event::Learning);
                Some(
                    tokio::task::spawn_blocking(move || l.finish())
                        .await
                        .unwrap_or_default(),
                )
            }
            (_, Some(l)) => Some(
                tokio::task::spawn_blocking(move || l.stop())
                    .await
                    .unwrap_or_default(),
            ),
            (_, None) => None,
        };
        ticker.abort();
        (result, learned)
    }

    /// Say so when a stop is asked for.
    fn say_when_stopping(&self, shutdown: CancellationToken) {
        let events = self.events.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            events(Event::Stopping);
        });
    }

    /// Every 200 ms a tick (and a look at the heap); every 5 s the live status snapshot.
    fn spawn_ticker(&self) -> tokio::task::JoinHandle<()> {
        let (events, stats, run) = (self.events.clone(), self.stats.clone(), self.info.clone());
        let data = self.config.crawl.data_dir.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            let mut n = 0u64;
            let mut trim = crate::memory::Periodic::new(crate::memory::RELEASE_EVERY);
            loop {
                tick.tick().await;
                events(Event::Tick(&stats));
                trim.tick();
                n += 1;
                if n % 25 == 0 {
                    let mut run = run.clone();
                    run.pages_fetched = stats.fetched.load(Relaxed);
                    let report = StatusReport::live(&stats, run, status::dir_size(&data));
                    let _ = write_snapshot(&data, &report);
                }
            }
        })
    }
}
