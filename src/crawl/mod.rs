//! The crawler: seeds → frontier (per-origin queues in the store) → scheduler → politeness gate
//! (robots.txt, Crawl-delay, governor per origin, backoff; per server, the address origins
//! resolve to: requests in flight and start spacing) → fetch → parse on the blocking pool →
//! links back to the frontier, page and path set to the store, all in one atomic commit.
//!
//! Owns: the frontier's order, politeness and robots.txt per origin, politeness per server
//! (`servers`) and host name resolution (`resolve`), fetching, URL normalisation and scope, the
//! crawl's WARC archive (`archive`) and importing WARC files (`import`), and the crawl's live
//! figures (`stats`, which `progress` renders). Uses `config`, `dom`, `store` and `warc` (content
//! decoding, record writing); reaches sled only through `store`, and never imports `template`,
//! `learn`, `progress` or `cmd`: the learner hears of stored pages through a callback
//! (docs/design.md, "Layers").

pub mod archive;
pub mod fetch;
pub mod import;
pub mod politeness;
pub mod recrawl;
pub mod resolve;
pub mod robots;
pub mod scheduler;
pub mod scope;
pub mod seeds;
pub mod servers;
pub mod sitemap;
pub mod stats;
pub mod url;
pub mod worker;

pub use scheduler::{
    run, CrawlEvent, CrawlSummary, EventSink, Partitioned, RunOptions, StoredPage,
};

#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("cannot build the HTTP client: {0}")]
    Client(fetch::FetchError),
    /// The WARC archive cannot be written: the crawl stops rather than leave pages out of it.
    #[error("WARC output: {0}")]
    Warc(#[from] crate::warc::files::WarcWriteError),
    /// `--import-warc` failed (a file that cannot be read, the store).
    #[error("WARC import: {0}")]
    Import(#[from] import::ImportError),
    /// A cluster worker's partition log could not be written (the engine is unreachable).
    #[error("partition log: {0}")]
    Partition(String),
}
