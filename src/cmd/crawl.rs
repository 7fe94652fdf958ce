//! `thresher crawl`: config and seeds in, a crawl run on a tokio runtime with progress, a
//! graceful stop when the caller cancels (the binary does on SIGINT, SIGTERM, SIGHUP: finish
//! in-flight work and flush), a summary out. Running the same command again resumes from the
//! data directory.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cli::CrawlArgs;
use crate::config::{Config, ConfigError, Overrides};
use crate::crawl::stats::CrawlStats;
use crate::crawl::{self, seeds, CrawlError, CrawlSummary, RunOptions};
use crate::learn::{LearnSummary, Learner};
use crate::progress::{human_bytes, Progress};
use crate::status::{
    keep_closed_report, write_snapshot, HostRow, StatusReport, LIVE_ROWS, WAITING_META,
};
use crate::store::{now_ms, RunInfo, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum CrawlCmdError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot read seeds file {path}: {source}")]
    Seeds {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no valid seed URLs in {0} and nothing queued in the data directory")]
    NoSeeds(String),
    #[error("seed URL {url:?}: {reason}")]
    SeedArg { url: String, reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Crawl(#[from] CrawlError),
    /// `--cluster`: the engine could not be used (unreachable, not initialised), or this build
    /// has no cluster mode.
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

/// The crawl flags as config overrides (one path for every flag; `--set` goes over them in
/// `cmd::settings`).
pub fn overrides(args: &CrawlArgs) -> Overrides {
    let path =
        |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
    let mut o = super::data_override(args.data.as_deref());
    o.set_some("crawl.out_dir", path(&args.out), "--out")
        .set_some("crawl.warc_dir", path(&args.warc_out), "--warc-out")
        .set_some(
            "crawl.max_pages",
            args.max_pages.map(to_toml_int),
            "--max-pages",
        )
        .set_some("crawl.max_depth", args.max_depth, "--max-depth")
        .set_some(
            "crawl.concurrency",
            args.concurrency.map(|c| to_toml_int(c as u64)),
            "--concurrency",
        )
        .set_some(
            "crawl.delay",
            args.delay
                .map(|d| humantime::format_duration(d).to_string()),
            "--delay",
        )
        .set_some("fetch.user_agent", args.user_agent.clone(), "--user-agent")
        .set_some("fetch.proxy", args.proxy.clone(), "--proxy")
        .set_some("robots.respect", args.respect_robots, "--respect-robots")
        .extend("scope.include", &args.include, "--include")
        .extend("scope.exclude", &args.exclude, "--exclude")
        .extend("scope.allow_hosts", &args.allow_host, "--allow-host")
        .extend("fetch.headers", &args.header, "--header")
        .set_some(
            "recrawl.older_than",
            args.older_than
                .map(|d| humantime::format_duration(d).to_string()),
            "--older-than",
        );
    super::template_overrides(&mut o, &args.template);
    if args.recrawl {
        o.set("recrawl.enabled", true, "--recrawl");
    }
    if let Some(cookie) = &args.cookie {
        o.extend("fetch.headers", &[format!("Cookie: {cookie}")], "--cookie");
    }
    o
}

/// A count as a TOML integer (TOML integers are i64; larger counts saturate).
fn to_toml_int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Run the crawl `args` asks for until it ends or `shutdown` is cancelled (the binary cancels
/// it on SIGINT, SIGTERM or SIGHUP): in-flight work then finishes, state is saved, and the
/// summary says how to resume. `progress` shows it (the binary routes log lines through it).
pub fn run(
    args: &CrawlArgs,
    shutdown: CancellationToken,
    progress: Arc<Progress>,
) -> Result<CrawlSummary, CrawlCmdError> {
    let mut config = super::settings(&args.settings, overrides(args))?;
    if let Some(urls) = &args.cluster {
        // The engine first: a worker that cannot use it writes nothing at all.
        check_cluster(urls)?;
    }
    if args.cluster.is_some() && config.crawl.warc_dir.is_none() {
        // A cluster worker's partition logs carry each fetch's WARC records, which the
        // archive builds: it keeps its own files too.
        config.crawl.warc_dir = Some(config.crawl.data_dir.join("warc"));
    }
    let seeds = seeds_of(args)?;
    let store = open_data(&config)?;
    if config.recrawl.enabled {
        start_recrawl(&store, &config, &seeds, &progress)?;
    }
    if seeds.is_empty() && store.queue_lengths()?.is_empty() && store.revisit_lengths()?.is_empty()
    {
        let from = match (&args.seeds, args.urls.is_empty()) {
            (Some(file), false) => format!("the command line or {}", file.display()),
            (Some(file), true) => file.display().to_string(),
            (None, false) => "the command line".to_string(),
            (None, true) => DEFAULT_SEEDS.to_string(),
        };
        return Err(CrawlCmdError::NoSeeds(from));
    }
    let info = start_run(&store, &config, &progress)?;

    let (runtime, config, stats, learner) = prepare(config, &store)?;
    let mut options = RunOptions {
        recrawl: config.recrawl.enabled,
        import: args.import_warc.clone(),
        ..RunOptions::default()
    };
    let worker = match &args.cluster {
        None => None,
        Some(urls) => Some(join_cluster(
            &runtime,
            urls,
            &config,
            &store,
            &stats,
            &seeds,
            &shutdown,
            &mut options,
        )?),
    };
    let (summary, learned) = runtime.block_on(crawl_and_learn(
        config.clone(),
        store.clone(),
        &seeds,
        shutdown,
        stats.clone(),
        learner,
        progress.clone(),
        info.clone(),
        options,
    ));
    if let Some(task) = worker {
        runtime
            .block_on(task)
            .map_err(|e| CrawlCmdError::Cluster(format!("the cluster worker's task failed: {e}")))?
            .map_err(|e| CrawlCmdError::Cluster(e.to_string()))?;
    }
    progress.tick(&stats);
    progress.finish();
    let summary = summary?;
    if let Some(l) = &learned {
        if !args.quiet || std::env::var_os("THRESHER_LEARN_STATS").is_some() {
            eprintln!("{}", learn_line(l));
        }
    }
    end_run(&store, &config, info.clone(), &summary)?;
    if let Some(i) = &summary.imported {
        eprintln!("{}", import_line(i));
    }
    eprint!("{}", render_summary(&summary, &config, args));
    if stats.revisits.load(Relaxed) > 0 {
        eprintln!("{}", recrawl_line(&store, &stats, info.started_at_ms)?);
    }
    match learned {
        Some(l) if !l.failures.is_empty() => Err(CrawlCmdError::Learn(l.failures)),
        _ => Ok(summary),
    }
}

/// The data directory made and its store opened (and the output directory checked when
/// cleaned text is written inline).
fn open_data(config: &Config) -> Result<Arc<Store>, CrawlCmdError> {
    std::fs::create_dir_all(&config.crawl.data_dir).map_err(|source| CrawlCmdError::Dir {
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

/// A crawl's runtime, shared config and counters, and its inline learner (when on).
type Prepared = (
    tokio::runtime::Runtime,
    Arc<Config>,
    Arc<CrawlStats>,
    Option<Learner>,
);

fn prepare(config: Config, store: &Arc<Store>) -> Result<Prepared, CrawlCmdError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CrawlCmdError::Runtime)?;
    let config = Arc::new(config);
    let stats = Arc::new(CrawlStats::default());
    let learner = config
        .template
        .inline
        .then(|| Learner::spawn(config.clone(), store.clone(), stats.clone()));
    Ok((runtime, config, stats, learner))
}

/// Store the pages of WARC `files` in `config`'s data directory as a crawl's import would,
/// fetching nothing, then learn templates and write cleaned text as at a crawl's end
/// (`export --cluster` gathers the partition logs' pages this way). Every host in the files is
/// in scope (they were fetched by crawls that checked theirs); the config's patterns still
/// apply. Importing the same pages again stores nothing twice.
#[cfg(feature = "cluster")]
pub(super) fn import_only(
    mut config: Config,
    files: Vec<PathBuf>,
    progress: Arc<Progress>,
) -> Result<(CrawlSummary, Option<LearnSummary>), CrawlCmdError> {
    config.scope.seed_hosts_only = false;
    config.crawl.warc_dir = None;
    config.recrawl.enabled = false;
    let store = open_data(&config)?;
    let info = start_run(&store, &config, &progress)?;
    let (runtime, config, stats, learner) = prepare(config, &store)?;
    let options = RunOptions {
        import: files,
        fetch: false,
        ..RunOptions::default()
    };
    let (summary, learned) = runtime.block_on(crawl_and_learn(
        config.clone(),
        store.clone(),
        &[],
        CancellationToken::new(),
        stats.clone(),
        learner,
        progress.clone(),
        info.clone(),
        options,
    ));
    progress.finish();
    let summary = summary?;
    end_run(&store, &config, info, &summary)?;
    match learned {
        Some(l) if !l.failures.is_empty() => Err(CrawlCmdError::Learn(l.failures)),
        learned => Ok((summary, learned)),
    }
}

/// `--cluster URLS`: join the cluster as a worker; the crawl gets its hooks in `options`, and
/// the worker's task is returned to be awaited once the crawl ends.
#[allow(clippy::too_many_arguments)]
fn join_cluster(
    runtime: &tokio::runtime::Runtime,
    urls: &str,
    config: &Config,
    store: &Arc<Store>,
    stats: &Arc<CrawlStats>,
    seeds: &[url::Url],
    shutdown: &CancellationToken,
    options: &mut RunOptions,
) -> Result<ClusterTask, CrawlCmdError> {
    #[cfg(feature = "cluster")]
    {
        let worker = runtime
            .block_on(super::crawl_cluster::start(
                urls,
                config,
                store.clone(),
                stats.clone(),
                seeds.to_vec(),
                shutdown.clone(),
            ))
            .map_err(|e| CrawlCmdError::Cluster(e.to_string()))?;
        options.partitioned = Some(worker.hooks);
        options.external = Some(worker.external);
        options.ctx_out = Some(worker.ctx_out);
        Ok(worker.task)
    }
    #[cfg(not(feature = "cluster"))]
    {
        let _ = (
            runtime, urls, config, store, stats, seeds, shutdown, options,
        );
        Err(CrawlCmdError::Cluster(
            super::cluster::ClusterCmdError::NotBuilt.to_string(),
        ))
    }
}

/// `--cluster URLS`: the engine answers and the cluster is initialised (else the error says
/// which), before the crawl touches its data directory.
fn check_cluster(urls: &str) -> Result<(), CrawlCmdError> {
    #[cfg(feature = "cluster")]
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(CrawlCmdError::Runtime)?;
        runtime
            .block_on(async {
                let engine = crate::cluster::Engine::connect(urls).await?;
                engine.spec().await.map(|_| ())
            })
            .map_err(|e| CrawlCmdError::Cluster(e.to_string()))
    }
    #[cfg(not(feature = "cluster"))]
    {
        let _ = urls;
        Err(CrawlCmdError::Cluster(
            super::cluster::ClusterCmdError::NotBuilt.to_string(),
        ))
    }
}

/// The worker task of a cluster crawl.
#[cfg(feature = "cluster")]
type ClusterTask = tokio::task::JoinHandle<Result<(), super::crawl_cluster::WorkerError>>;
#[cfg(not(feature = "cluster"))]
type ClusterTask = tokio::task::JoinHandle<Result<(), std::convert::Infallible>>;

/// The crawl on the runtime, with progress ticking and the live status snapshot; then the
/// learner's end-of-crawl pass (when the crawl finished) or its stop (when it was interrupted),
/// while the bars still show progress.
#[allow(clippy::too_many_arguments)]
async fn crawl_and_learn(
    config: Arc<Config>,
    store: Arc<Store>,
    seeds: &[url::Url],
    shutdown: CancellationToken,
    stats: Arc<CrawlStats>,
    learner: Option<Learner>,
    progress: Arc<Progress>,
    info: RunInfo,
    options: RunOptions,
) -> (Result<CrawlSummary, CrawlError>, Option<LearnSummary>) {
    say_when_stopping(shutdown.clone(), progress.clone());
    let ticker = spawn_ticker(
        progress.clone(),
        stats.clone(),
        config.crawl.data_dir.clone(),
        info,
    );
    let sink = learner.as_ref().map(Learner::sink);
    let result = crawl::run(config, store, seeds, shutdown.clone(), stats, sink, options).await;
    let learned = match (&result, learner) {
        (Ok(s), Some(l)) if !s.interrupted && !shutdown.is_cancelled() => {
            progress.println(
                "Crawl done; learning templates for changed sites and writing cleaned text.",
            );
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

/// The seed URLs of `path`; lines that are not one are reported (even with `--quiet`: the
/// user's input was skipped) and left out.
/// The seeds file read when no seed is given on the command line.
pub const DEFAULT_SEEDS: &str = "seeds.txt";

/// The seeds of a run: the URLs given as arguments (a bad one is an error), then those of the
/// `--seeds` file (a bad line is reported and skipped), which defaults to `seeds.txt` when no
/// URL is given. Repeats are queued once.
fn seeds_of(args: &CrawlArgs) -> Result<Vec<url::Url>, CrawlCmdError> {
    let mut seeds = Vec::new();
    for u in &args.urls {
        let url = seeds::parse_seed(u).map_err(|e| CrawlCmdError::SeedArg {
            url: u.clone(),
            reason: e.to_string(),
        })?;
        seeds.push(url);
    }
    let file = match &args.seeds {
        Some(file) => Some(file.clone()),
        None if args.urls.is_empty() => Some(std::path::PathBuf::from(DEFAULT_SEEDS)),
        None => None,
    };
    if let Some(file) = file {
        seeds.extend(read_seeds(&file)?);
    }
    let mut seen = std::collections::HashSet::new();
    seeds.retain(|u| seen.insert(u.as_str().to_string()));
    Ok(seeds)
}

fn read_seeds(path: &std::path::Path) -> Result<Vec<url::Url>, CrawlCmdError> {
    let bytes = std::fs::read(path).map_err(|source| CrawlCmdError::Seeds {
        path: path.to_path_buf(),
        source,
    })?;
    let (text, not_utf8) = seeds::decode_seeds(&bytes);
    let (seeds, mut bad) = seeds::parse_seeds(&text);
    bad.extend(not_utf8);
    bad.sort_by_key(|e| e.line);
    for e in &bad {
        eprintln!("{}", e.display_in(path));
    }
    Ok(seeds)
}

/// Record that a run started (and say so when it resumes an earlier one).
fn start_run(
    store: &Store,
    config: &Config,
    progress: &Progress,
) -> Result<RunInfo, CrawlCmdError> {
    let resumed = store.get_meta::<RunInfo>("last_run")?.is_some();
    let info = RunInfo {
        started_at_ms: now_ms(),
        ended_at_ms: 0,
        state: "running".into(),
        pages_fetched: 0,
    };
    store.put_meta("last_run", &info)?;
    if resumed {
        progress.println(&format!(
            "Resuming the crawl in {} ({} pages stored so far).",
            config.crawl.data_dir.display(),
            store.sites().iter().map(|(_, c)| c.pages).sum::<u64>()
        ));
    }
    Ok(info)
}

/// `--recrawl`: queue the stored pages' revisits and the site's sitemaps and feeds, unless an
/// interrupted recrawl left revisits queued (running the same command again resumes it).
fn start_recrawl(
    store: &Store,
    config: &Config,
    seeds: &[url::Url],
    progress: &Progress,
) -> Result<(), CrawlCmdError> {
    let left: u64 = store.revisit_lengths()?.values().sum();
    if left > 0 {
        progress.println(&format!(
            "Resuming the recrawl: {left} stored pages still to revisit."
        ));
        return Ok(());
    }
    let older = u64::try_from(config.recrawl.older_than.as_millis()).unwrap_or(u64::MAX);
    let cutoff = now_ms().saturating_sub(older);
    let p = crawl::recrawl::prepare(store, seeds, cutoff)?;
    progress.println(&format!(
        "Recrawl: {} stored pages to revisit with conditional GETs; {} sitemaps and {} feeds to \
         read first.",
        p.revisits, p.sitemaps, p.feeds
    ));
    Ok(())
}

/// What the recrawl found, one line: requests answered 304 and the other kinds (template churn
/// and new content once the end-of-crawl pass settled the text).
fn recrawl_line(store: &Store, stats: &CrawlStats, since_ms: u64) -> Result<String, StoreError> {
    let (counts, pending) = store.change_counts(since_ms)?;
    let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let mut line = format!(
        "Recrawl: {} pages revisited, {} answered 304 Not Modified, {} the same bytes, {} new \
         bytes; by kind: {}",
        stats.revisits.load(Relaxed),
        stats.not_modified.load(Relaxed),
        stats.same_bytes.load(Relaxed),
        stats.replaced.load(Relaxed),
        if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds.join(", ")
        }
    );
    if pending > 0 {
        line.push_str(&format!(
            "; {pending} changed pages wait for the end-of-crawl pass to settle their text"
        ));
    }
    line.push('.');
    Ok(line)
}

/// What the template learner did, one line.
fn learn_line(l: &LearnSummary) -> String {
    format!(
        "Templates: {} incremental steps ({} page cleanings, {:.1}s), end-of-crawl pass over {} \
         sites ({} pages cleaned, {} kept from the same model, {:.1}s); {} files written.",
        l.steps,
        l.interim_cleans,
        l.interim_time.as_secs_f64(),
        l.final_sites,
        l.final_cleans,
        l.final_reused,
        l.final_time.as_secs_f64(),
        l.pages_written
    )
}

/// Record how the run ended and what it left waiting, flush, and leave a final status snapshot.
fn end_run(
    store: &Store,
    config: &Config,
    mut info: RunInfo,
    summary: &CrawlSummary,
) -> Result<(), CrawlCmdError> {
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

/// `--out` must be a directory thresher can write to, before the crawl starts (not found out
/// from a log line hidden under `-q` after it).
fn check_out_dir(out: &std::path::Path) -> Result<(), CrawlCmdError> {
    let err = |source| CrawlCmdError::Out {
        path: out.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(out).map_err(err)?;
    let probe =
        crate::output::AtomicFile::create(&out.join(".thresher-write-check")).map_err(err)?;
    drop(probe);
    Ok(())
}

/// Say so when a stop is asked for (the binary catches the signals).
fn say_when_stopping(shutdown: CancellationToken, progress: Arc<Progress>) {
    tokio::spawn(async move {
        shutdown.cancelled().await;
        progress.println(
            "Stopping: finishing requests in flight and saving state (Ctrl-C again to quit now).",
        );
    });
}

fn spawn_ticker(
    progress: Arc<Progress>,
    stats: Arc<CrawlStats>,
    data: PathBuf,
    run: RunInfo,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(200));
        let mut n = 0u64;
        let mut trim = crate::memory::Periodic::new(crate::memory::RELEASE_EVERY);
        loop {
            tick.tick().await;
            progress.tick(&stats);
            trim.tick();
            n += 1;
            if n % 25 == 0 {
                let mut run = run.clone();
                run.pages_fetched = stats.fetched.load(Relaxed);
                let _ = write_snapshot(&data, &live_report(&stats, run, dir_size(&data)));
            }
        }
    })
}

/// The status snapshot a running crawl can give without scanning the store.
fn live_report(stats: &CrawlStats, run: RunInfo, store_bytes: u64) -> StatusReport {
    let (busiest, hosts_total) = (stats.busiest(LIVE_ROWS), stats.host_count());
    let (waiting, waiting_total) = stats.waits_first(LIVE_ROWS);
    let hosts: Vec<HostRow> = busiest
        .into_iter()
        .map(|(host, h)| HostRow {
            host,
            pages: h.fetched,
            bytes: h.bytes,
            queued: h.queued,
            errors: h.errors,
            clusters: h.clusters,
            cleaned: h.cleaned,
            // A running crawl does not read the store's redesign records.
            eras: 0,
        })
        .collect();
    StatusReport {
        generated_at_ms: now_ms(),
        live: true,
        last_run: Some(run),
        pages: stats.stored.load(Relaxed),
        queued: stats.queued.load(Relaxed),
        errors_by_kind: stats.failures(),
        store_bytes,
        hosts_more: (hosts_total - hosts.len()) as u64,
        waiting_more: (waiting_total - waiting.len()) as u64,
        recrawl: None,
        redesigns: Vec::new(),
        closed: None,
        hosts,
        waiting,
    }
}

/// Set-aside origins the run's summary names; the rest are counted (a run over 200,000 dead
/// origins printed 200,000 lines).
const SUMMARY_ORIGINS: usize = 20;

fn render_summary(s: &CrawlSummary, config: &Config, args: &CrawlArgs) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let _ = writeln!(
        out,
        "{} {} responses, {} pages stored, {} errors, {} skipped in {:.1}s ({:.0} pages/s).",
        if s.interrupted {
            "Interrupted after"
        } else {
            "Crawled"
        },
        s.fetched,
        s.stored,
        s.errors,
        s.skipped,
        secs,
        s.fetched as f64 / secs
    );
    for (kind, n) in &s.errors_by_kind {
        let skip = if kind.is_skip() { "  (skipped)" } else { "" };
        let _ = writeln!(out, "  {:<28} {n:>8}{skip}", kind.name());
    }
    if s.retries > 0 {
        let capped = if s.retry_after_capped > 0 {
            format!(
                " ({} with a Retry-After above fetch.max_retry_after, capped)",
                s.retry_after_capped
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{} transient failures were retried{capped}.",
            s.retries
        );
    }
    for why in &s.left_because {
        let _ = writeln!(out, "Left queued: {why}.");
    }
    if !s.set_aside.is_empty() {
        let urls: u64 = s.set_aside.iter().map(|w| w.queued).sum();
        let n = s.set_aside.len();
        let _ = writeln!(
            out,
            "{n} {} unreachable or set aside; {} {urls} {} queued for the next run:",
            if n == 1 { "origin" } else { "origins" },
            if n == 1 { "it keeps" } else { "they keep" },
            if urls == 1 { "URL" } else { "URLs" },
        );
        for w in s.set_aside.iter().take(SUMMARY_ORIGINS) {
            let _ = writeln!(out, "  {}", w.line());
        }
        if n > SUMMARY_ORIGINS {
            let _ = writeln!(
                out,
                "  … and {} more (thresher status --data {} lists them all)",
                n - SUMMARY_ORIGINS,
                config.crawl.data_dir.display()
            );
        }
    }
    let _ = writeln!(
        out,
        "Data: {} ({} on disk); cleaned text: {}",
        config.crawl.data_dir.display(),
        human_bytes(dir_size(&config.crawl.data_dir)),
        config.crawl.out_dir.display()
    );
    if s.interrupted || s.queued_left > 0 {
        let _ = writeln!(
            out,
            "{} URLs still queued. To resume: {}",
            s.queued_left,
            args.command_line()
        );
    }
    out
}

fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// What `--import-warc` did, in one line.
fn import_line(i: &crawl::import::ImportSummary) -> String {
    format!(
        "Imported from {} WARC file(s) in {:.1} s: {} responses, {} pages stored, {} already \
         stored, {} redirect targets queued, {} skipped (out of scope, not HTML or another \
         status), {} unreadable records.",
        i.files,
        i.elapsed.as_secs_f64(),
        i.responses,
        i.pages,
        i.already,
        i.redirects,
        i.skipped,
        i.problems
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::stats::OriginWait;
    use crate::store::ErrorKind;

    /// Issue 10: a run ending with 200,000 origins set aside listed every one of them.
    #[test]
    fn the_summary_names_a_few_set_aside_origins_and_counts_the_rest() {
        let summary = CrawlSummary {
            set_aside: (0..25)
                .map(|i| OriginWait {
                    origin: format!("http://10.0.0.{i}:1"),
                    reason: "robots.txt unreachable: connect failed".into(),
                    until_ms: None,
                    queued: 1,
                })
                .collect(),
            ..CrawlSummary::default()
        };
        let args = CrawlArgs {
            seeds: Some("s.txt".into()),
            settings: Default::default(),
            data: None,
            out: None,
            warc_out: None,
            import_warc: Vec::new(),
            cluster: None,
            max_pages: None,
            max_depth: None,
            concurrency: None,
            delay: None,
            user_agent: None,
            template: Default::default(),
            respect_robots: None,
            urls: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            allow_host: Vec::new(),
            header: Vec::new(),
            cookie: None,
            proxy: None,
            recrawl: false,
            older_than: None,
            quiet: false,
            verbose: 0,
        };
        let text = render_summary(&summary, &Config::default(), &args);
        assert!(
            text.contains("25 origins unreachable or set aside"),
            "{text}"
        );
        assert_eq!(
            text.matches("robots.txt unreachable").count(),
            SUMMARY_ORIGINS,
            "{text}"
        );
        assert!(text.contains("… and 5 more"), "{text}");
    }

    /// Issue 10: the live `status` of a running crawl said "Last run: never" and "0 B", and
    /// listed no errors.
    #[test]
    fn live_status_shows_the_running_crawl_its_store_and_its_errors() {
        let stats = CrawlStats::default();
        stats.count_failure("a.example", ErrorKind::Http(404));
        stats.count_failure("a.example", ErrorKind::Duplicate);
        let run = RunInfo {
            started_at_ms: now_ms(),
            ended_at_ms: 0,
            state: "running".into(),
            pages_fetched: 3,
        };
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("db"), vec![0u8; 4096]).expect("write");
        let text = live_report(&stats, run, dir_size(dir.path())).render();
        assert!(!text.contains("never"), "{text}");
        assert!(text.contains("still running"), "{text}");
        assert!(text.contains("store on disk: 4.1 KB"), "{text}");
        assert!(text.contains("http-404"), "{text}");
        assert!(
            text.contains("duplicate") && text.contains("(skipped)"),
            "{text}"
        );
    }
}
