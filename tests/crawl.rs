//! Crawler integration tests: `crawl::run` in-process against the local test server; server-side
//! request counts and timestamps say what the crawler did, the store says what it kept.

mod broad;
mod budget;
mod cli;
mod fetching;
mod import;
mod learning;
mod links;
mod politeness;
mod recrawl;
mod resume;
mod robots;
mod servers;
mod warc;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use thresher::config::Config;
use thresher::crawl::stats::CrawlStats;
use thresher::crawl::{self, CrawlSummary, RunOptions};
use thresher::store::Store;
use tokio_util::sync::CancellationToken;

use crate::support::Expect;

/// Test defaults over config/default.toml: no politeness delay, fast robots retries.
pub const BASE: &str = "[crawl]\ndelay = \"0ms\"\n[robots]\nerror_retry = \"200ms\"\n";

/// A crawl's data and output directories.
pub struct Dirs {
    pub tmp: tempfile::TempDir,
}

impl Dirs {
    pub fn new() -> Dirs {
        Dirs {
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn data(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    pub fn out(&self) -> PathBuf {
        self.tmp.path().join("out")
    }

    /// BASE, then `toml` (later keys win table by table), with this crawl's directories.
    pub fn config(&self, toml: &str) -> Config {
        let mut c = Config::from_toml_str(&merge_toml(BASE, toml), Path::new("test.toml"))
            .expect("valid test config");
        c.crawl.data_dir = self.data();
        c.crawl.out_dir = self.out();
        c
    }

    pub fn store(&self) -> Store {
        Store::open(&self.data(), 8 << 20).expect("open the crawl's store")
    }
}

/// Merge two TOML documents (tables merge key by key), as `--config` merges over the defaults.
pub fn merge_toml(a: &str, b: &str) -> String {
    let mut base: toml::Table = a.parse().expect("toml");
    thresher::config::merge(&mut base, b.parse().expect("toml"));
    toml::to_string(&base).expect("toml")
}

/// Run a crawl to the end in `dirs` with `toml` over BASE.
pub async fn crawl(dirs: &Dirs, seeds: &[String], toml: &str) -> CrawlSummary {
    crawl_until(dirs, seeds, toml, CancellationToken::new()).await
}

pub async fn crawl_until(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
    shutdown: CancellationToken,
) -> CrawlSummary {
    run_crawl(dirs, seeds, toml, shutdown, false).await.0
}

/// Run a crawl with inline template learning, as `thresher crawl` does: the learner hears of
/// every stored page, and gets the end-of-crawl pass unless the crawl was interrupted.
pub async fn crawl_learning(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
    shutdown: CancellationToken,
) -> (CrawlSummary, thresher::learn::LearnSummary) {
    let (summary, learned) = run_crawl(dirs, seeds, toml, shutdown, true).await;
    (summary, learned.expect("learning was on"))
}

async fn run_crawl(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
    shutdown: CancellationToken,
    learn: bool,
) -> (CrawlSummary, Option<thresher::learn::LearnSummary>) {
    run_crawl_with(dirs, seeds, toml, shutdown, learn, RunOptions::default()).await
}

/// [`crawl`] with run options of the test's own (a resolver).
pub async fn crawl_with(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
    options: RunOptions,
) -> CrawlSummary {
    run_crawl_with(dirs, seeds, toml, CancellationToken::new(), false, options)
        .await
        .0
}

/// Run a crawl to the end in `dirs` with `toml` over BASE, the scheduler's events recorded in
/// order (what inline learning would hear).
pub async fn crawl_hearing_events(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
) -> (CrawlSummary, Vec<crawl::CrawlEvent>) {
    let config = Arc::new(dirs.config(toml));
    std::fs::create_dir_all(dirs.data()).expect("create the data directory");
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink: crawl::EventSink = {
        let events = events.clone();
        Arc::new(move |e: crawl::CrawlEvent| events.lock().expect("events").push(e))
    };
    let seeds: Vec<url::Url> = seeds.iter().map(|s| s.parse().expect("seed URL")).collect();
    let summary = crawl::run(
        config,
        Arc::new(dirs.store()),
        &seeds,
        CancellationToken::new(),
        Arc::new(CrawlStats::default()),
        Some(sink),
        RunOptions::default(),
    )
    .await
    .expect("the crawl runs");
    let events = events.lock().expect("events").clone();
    (summary, events)
}

/// [`crawl_learning`] with run options of the test's own (`--import-warc`).
pub async fn crawl_learning_with(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
    options: RunOptions,
) -> (CrawlSummary, thresher::learn::LearnSummary) {
    let (summary, learned) =
        run_crawl_with(dirs, seeds, toml, CancellationToken::new(), true, options).await;
    (summary, learned.expect("learning was on"))
}

async fn run_crawl_with(
    dirs: &Dirs,
    seeds: &[String],
    toml: &str,
    shutdown: CancellationToken,
    learn: bool,
    options: RunOptions,
) -> (CrawlSummary, Option<thresher::learn::LearnSummary>) {
    let config = Arc::new(dirs.config(toml));
    std::fs::create_dir_all(dirs.data()).expect("data dir");
    let store = Arc::new(dirs.store());
    let stats = Arc::new(CrawlStats::default());
    let learner = learn
        .then(|| thresher::learn::Learner::spawn(config.clone(), store.clone(), stats.clone()));
    let seeds: Vec<url::Url> = seeds.iter().map(|s| s.parse().expect("seed URL")).collect();
    let summary = crawl::run(
        config,
        store,
        &seeds,
        shutdown,
        stats,
        learner.as_ref().map(thresher::learn::Learner::sink),
        options,
    )
    .await
    .expect("the crawl itself must not fail");
    let interrupted = summary.interrupted;
    let learned = match learner {
        None => None,
        Some(l) => Some(
            tokio::task::spawn_blocking(move || if interrupted { l.stop() } else { l.finish() })
                .await
                .expect("learner thread"),
        ),
    };
    (summary, learned)
}

/// Every file `OUT/<site>/<stem>.txt` under `out`, as (site dir, stem) → text.
pub fn texts(out: &Path) -> BTreeMap<(String, String), String> {
    let mut m = BTreeMap::new();
    for site in std::fs::read_dir(out).unwrap() {
        let site = site.unwrap().path();
        if !site.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&site).unwrap() {
            let f = f.unwrap().path();
            assert!(
                !f.to_string_lossy().ends_with(".tmp"),
                "no half-written files left: {f:?}"
            );
            if f.extension().is_some_and(|x| x == "txt") {
                let key = (
                    site.file_name().unwrap().to_string_lossy().into_owned(),
                    f.file_stem().unwrap().to_string_lossy().into_owned(),
                );
                m.insert(key, std::fs::read_to_string(&f).unwrap());
            }
        }
    }
    m
}

/// URLs of the pages in the store.
pub fn stored_urls(store: &Store) -> BTreeSet<String> {
    store
        .pages()
        .map(|p| p.expect("readable page").1.url)
        .collect()
}

/// The store holds every page `expect` says to store and none it says not to.
pub fn check_stored(expect: &Expect, store: &Store) {
    let stored = stored_urls(store);
    let missing: Vec<&String> = expect.stored.difference(&stored).collect();
    assert!(
        missing.is_empty(),
        "pages not stored: {missing:#?}\nstored: {stored:#?}"
    );
    let wrong: Vec<&String> = expect.not_stored.intersection(&stored).collect();
    assert!(
        wrong.is_empty(),
        "pages stored that must not be: {wrong:#?}"
    );
}

/// The visible text of a stored page, by URL.
pub fn stored_text(store: &Store, url: &str) -> String {
    let id = thresher::crawl::url::page_id(&url.parse().expect("URL"));
    let site = store.page(id).expect("read").expect("page stored").site;
    let dom = store.dom(&site, id).expect("read").expect("page stored");
    thresher::dom::text::visible_text(&dom)
}
