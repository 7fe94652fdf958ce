//! thresher: a polite web crawler that learns each site's page templates while it crawls and
//! keeps the pages' real content — the text without navigation, headers, footers and other
//! template text. The `thresher` binary is a thin layer over this library; a program can do
//! what each of its commands does.
//!
//! # Using it as a library
//!
//! Crawl a few seeds and read each page's cleaned text as it is written ([`run::CrawlRun`],
//! what `thresher crawl` runs; `examples/crawl_and_read.rs` runs this against a site it serves
//! itself):
//!
//! ```no_run
//! use thresher::config::Config;
//! use thresher::run::{CrawlRun, Event};
//!
//! let mut config = Config::default(); // config/default.toml
//! config.crawl.data_dir = "crawl-data".into(); // the store: resume state, pages, templates
//! config.crawl.out_dir = "crawl-text".into(); // OUT/<site>/<page id>.txt
//! config.crawl.max_pages = 100;
//! let seed = url::Url::parse("https://example.com/")?;
//! let report = CrawlRun::new(config).seeds([seed]).run(|event| {
//!     if let Event::Written(page) = event {
//!         let url = page.url().unwrap_or_default(); // one store read
//!         println!("{url}: {} lines", page.text.lines().count());
//!     }
//! })?;
//! println!("{} pages stored", report.crawl.stored);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Clean a directory of one site's saved pages, as `thresher clean` does ([`clean::Clean`];
//! `examples/clean_site.rs`):
//!
//! ```no_run
//! use thresher::clean::{Clean, Quiet};
//!
//! let outcome = Clean::new("out").site_dir("saved/example.com").run(&Quiet)?;
//! println!("{} pages cleaned", outcome.pages());
//! # Ok::<(), thresher::clean::CleanError>(())
//! ```
//!
//! Or clean pages held in memory, with no file at all: parse each with [`dom::parse_bytes`],
//! then learn the site's templates and clean every page at once with [`detect::clean_site`]:
//!
//! ```
//! use thresher::detect::{clean_site, Detector};
//! use thresher::dom::parse_bytes;
//! use thresher::template::Renders;
//!
//! let pages: Vec<String> = (1..=6)
//!     .map(|i| {
//!         format!(
//!             "<html><body><nav><a href=/>Home</a> <a href=/about>About us</a></nav>\
//!              <p>Article {i} says something of its own, different on every page.</p>\
//!              <footer>Copyright the site</footer></body></html>"
//!         )
//!     })
//!     .collect();
//! let doms: Vec<_> = pages.iter().map(|p| parse_bytes(p.as_bytes(), None).dom).collect();
//! let result = clean_site(Detector::default(), &doms, Renders::Both);
//! assert!(result.texts[0].contains("Article 1 says something"));
//! assert!(!result.texts[0].contains("Copyright"));
//! assert!(result.markdowns[0].contains("Article 1 says something"));
//! ```
//!
//! The rest of what the commands do is here too: [`status::report`] (a data directory's status),
//! [`inspect::inspect`] (what was learned for one host, and its HTML report),
//! [`corpus::export()`] (the cleaned corpus as JSON Lines, Parquet or text, with metadata and
//! deduplication), [`eval::evaluate`] (detectors scored against gold text), and, with the
//! `cluster` feature, a crawl across machines (`CrawlRun::cluster`, `run::gather`).
//! `examples/read_export.rs` reads an export back.
//!
//! # The components, in data-flow order
//!
//! - [`config`]: validated settings (defaults in `config/default.toml`, a user file, flags).
//! - [`crawl`]: seeds → frontier → politeness gate (robots.txt, Crawl-delay, backoff) → fetch →
//!   parse → links back to the frontier, page and path set to the store.
//! - [`dom`]: bytes → text → html5ever → a flat `Send` arena with DOM path hashes; visible text.
//! - [`store`]: the only code that touches sled (frontier, seen set, origins, pages, clusterings).
//! - [`template`]: pure template engine (support, MDL, MinHash, TEXT-MDL/HASH/MAX, cleaning).
//! - [`detect`]: every template detector behind `--detector` (TEXT and the literature's
//!   baselines).
//! - [`learn`]: inline template learning while crawling (incremental, then an end-of-crawl
//!   pass).
//! - [`run`]: a crawl run as a program drives it: the store opened, the learner, the crawl, the
//!   end-of-crawl pass, events and the run's report; a cluster worker (`--features cluster`).
//! - [`clean`]: the template engine over saved pages (site directories, WARC files).
//! - [`inspect`]: what was learned for one host, as a report (text and HTML).
//! - [`eval`]: score.py's token metric, the dataset layout, detectors compared on a dataset.
//! - [`corpus`]: the exported corpus: records with metadata (canonical, language, dates, author,
//!   template ratio), deduplication across hosts, JSON Lines / Parquet / text writers.
//! - [`status`]: a data directory's report (pages, queues, errors per host) and the snapshot of
//!   it a running crawl writes.
//! - [`progress`]: showing a running crawl (bars or log lines) from its figures
//!   (`crawl::stats`).
//! - [`output`]: files under an output directory: site key → directory name, atomic writes.
//! - [`memory`]: giving the heap freed by work on a huge page back to the OS (the binary's
//!   jemalloc).
//! - [`pool`]: the one worker pool (`parallel_map`: scoped threads, results in input order).
//! - [`warc`]: reading saved crawls (WARC records and the HTTP responses in them) and writing
//!   records and rotating files for the crawl's WARC archive (`crawl::archive`).
//! - `cluster` (`--features cluster`): coordination on NATS JetStream — the cluster's spec,
//!   buckets and streams, site → partition, fenced partition leases (docs/cluster.md).
//! - [`cmd`]: the binary's commands, one module each: flags in, a library call, the result
//!   printed; [`cli`] holds the raw flags.
//!
//! Layers (docs/design.md, "Layers: who may import whom"): a module imports only from modules
//! below it. `dom`, `memory`, `output`, `pool`, `warc` and `cluster` import no other thresher
//! module; `template` builds on `dom`; `detect` on `template`; `eval` on `detect`; `config` and
//! `store` on those; `crawl` on `config`, `store` and `memory`; `learn`, `clean`, `inspect`,
//! `corpus` and `progress` on `crawl`; `status` on `progress`; `run` on `learn`, `status` and
//! `cluster`; `cli` names `corpus`, `detect` and `template` choices; `cmd` on everything;
//! `main.rs` on `cmd`. Nothing below `cmd` imports it, no two files import each other, and a
//! `cmd` file runs no work of its own (all checked by `tests/layers.rs`); sled is reached only
//! through `store` and html5ever only through `dom`.

pub mod clean;
pub mod cli;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod cmd;
pub mod config;
pub mod corpus;
pub mod crawl;
pub mod detect;
pub mod dom;
pub mod eval;
pub mod inspect;
pub mod learn;
pub mod memory;
pub mod output;
pub mod pool;
pub mod progress;
pub mod run;
pub mod status;
pub mod store;
pub mod template;
pub mod warc;
