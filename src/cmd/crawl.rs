//! `thresher crawl`: flags and seeds in, a crawl run (`run::CrawlRun`, the library's) with its
//! events shown as progress bars or log lines, a graceful stop when the caller cancels (the
//! binary does on SIGINT, SIGTERM, SIGHUP: finish in-flight work and flush), the summary out.
//! Running the same command again resumes from the data directory.

mod summary;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::cli::CrawlArgs;
use crate::config::{ConfigError, Overrides};
use crate::crawl::{seeds, CrawlSummary};
use crate::progress::Progress;
use crate::run::{CrawlRun, Event, RunError};
use summary::{import_line, learn_line, recrawl_line, render_summary};

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
    Run(#[from] RunError),
    /// `--cluster` in a build without the cluster mode.
    #[error("{0}")]
    Cluster(String),
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
        .set_some("crawl.format", args.format.clone(), "--format")
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
        .extend("fetch.resolve", &args.resolve, "--resolve")
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
    let config = super::settings(&args.settings, overrides(args))?;
    let data_dir = config.crawl.data_dir.clone();
    let out_dir = config.crawl.out_dir.clone();
    let mut crawl = CrawlRun::new(config)
        .import_warc(args.import_warc.clone())
        .shutdown(shutdown);
    if let Some(urls) = &args.cluster {
        crawl = with_cluster(crawl, urls)?;
    }
    let crawl = crawl.seeds(seeds_of(args)?);
    let shown = progress.clone();
    let report = crawl.run(move |event| show(&shown, event));
    if let Ok(r) = &report {
        progress.tick(&r.stats);
    }
    progress.finish();
    let report = report.map_err(|e| match e {
        RunError::NothingToCrawl => CrawlCmdError::NoSeeds(seeds_from(args)),
        e => e.into(),
    })?;
    if let Some(l) = &report.learned {
        if !args.quiet || std::env::var_os("THRESHER_LEARN_STATS").is_some() {
            eprintln!("{}", learn_line(l));
        }
    }
    if let Some(i) = &report.crawl.imported {
        eprintln!("{}", import_line(i));
    }
    eprint!(
        "{}",
        render_summary(&report.crawl, &data_dir, &out_dir, args)
    );
    if let Some(changes) = &report.recrawl {
        eprintln!("{}", recrawl_line(&report.stats, changes));
    }
    match report.learn_failed() {
        Some(e) => Err(e.into()),
        None => Ok(report.crawl),
    }
}

/// A run's events as progress: its bars and lines.
pub fn show(progress: &Progress, event: Event<'_>) {
    match event {
        Event::Tick(stats) => progress.tick(stats),
        Event::Resuming { data_dir, pages } => progress.println(&format!(
            "Resuming the crawl in {} ({pages} pages stored so far).",
            data_dir.display()
        )),
        Event::RecrawlResumed { left } => progress.println(&format!(
            "Resuming the recrawl: {left} stored pages still to revisit."
        )),
        Event::RecrawlQueued(p) => progress.println(&format!(
            "Recrawl: {} stored pages to revisit with conditional GETs; {} sitemaps and {} feeds \
             to read first.",
            p.revisits, p.sitemaps, p.feeds
        )),
        Event::Stopping => progress.println(
            "Stopping: finishing requests in flight and saving state (Ctrl-C again to quit now).",
        ),
        Event::Learning => progress
            .println("Crawl done; learning templates for changed sites and writing cleaned text."),
        Event::Written(_) => {}
    }
}

/// `--cluster URLS`: the run as a cluster worker, or the error of a build without the cluster
/// mode.
fn with_cluster(crawl: CrawlRun, urls: &str) -> Result<CrawlRun, CrawlCmdError> {
    #[cfg(feature = "cluster")]
    {
        Ok(crawl.cluster(urls))
    }
    #[cfg(not(feature = "cluster"))]
    {
        let _ = (crawl, urls);
        Err(CrawlCmdError::Cluster(
            super::cluster::ClusterCmdError::NotBuilt.to_string(),
        ))
    }
}

/// Where the seeds were looked for, for the error that there are none.
fn seeds_from(args: &CrawlArgs) -> String {
    match (&args.seeds, args.urls.is_empty()) {
        (Some(file), false) => format!("the command line or {}", file.display()),
        (Some(file), true) => file.display().to_string(),
        (None, false) => "the command line".to_string(),
        (None, true) => DEFAULT_SEEDS.to_string(),
    }
}

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

/// The seed URLs of `path`; lines that are not one are reported (even with `--quiet`: the
/// user's input was skipped) and left out.
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
