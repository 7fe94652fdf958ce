//! The crawler: seeds → frontier (per-origin queues in the store) → scheduler → politeness gate
//! (robots.txt, Crawl-delay, governor per origin, backoff) → fetch → parse on the blocking pool →
//! links back to the frontier, page and path set to the store, all in one atomic commit.

pub mod fetch;
pub mod politeness;
pub mod robots;
pub mod scheduler;
pub mod scope;
pub mod seeds;
pub mod sitemap;
pub mod url;
pub mod worker;

pub use scheduler::{run, CrawlSummary, PageSink, RunOptions, StoredPage};

#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("cannot build the HTTP client: {0}")]
    Client(fetch::FetchError),
}
