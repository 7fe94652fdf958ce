//! thresher: a polite crawler that learns each site's page templates while it crawls and keeps the
//! pages' real content. The components, in data-flow order:
//!
//! - `config`: validated settings (defaults in `config/default.toml`, a user file, flags).
//! - `crawl`: seeds → frontier → politeness gate (robots.txt, Crawl-delay, backoff) → fetch →
//!   parse → links back to the frontier, page and path set to the store.
//! - `dom`: bytes → text → html5ever → a flat `Send` arena with DOM path hashes; visible text.
//! - `store`: the only code that touches sled (frontier, seen set, origins, pages, clusterings).
//! - `template`: pure template engine (support, MDL, MinHash, TEXT-MDL/HASH/MAX, cleaning).
//! - `learn`: inline template learning while crawling (incremental, then an end-of-crawl pass).
//! - `detect`: every template detector behind `--detector` (TEXT and the literature's baselines).
//! - `eval`: score.py's token metric and dataset layout, for `thresher eval`.
//! - `output`: files under an output directory: site key → directory name, atomic writes.
//! - `memory`: giving the heap freed by work on a huge page back to the OS (the binary's jemalloc).
//! - `pool`: the one worker pool (`parallel_map`: scoped threads, results in input order).
//! - `warc`: reading saved crawls (WARC records and the HTTP responses in them) for `clean`, and
//!   writing records and rotating files for the crawl's WARC archive (`crawl::archive`).
//! - `cluster` (`--features cluster`): coordination on NATS JetStream — the cluster's spec,
//!   buckets and streams, site → partition, fenced partition leases (docs/cluster.md).
//! - `cmd`: one module per subcommand; `cli` holds the raw flags.
//! - `corpus`: the exported corpus: records with metadata (canonical, language, dates, author,
//!   template ratio), deduplication across hosts, JSON Lines / Parquet / text writers.
//! - `progress`: showing a running crawl (bars or log lines) from its figures, `crawl::stats`.
//! - `status`: a data directory's report (pages, queues, errors per host) and the snapshot of it
//!   a running crawl writes; `cmd::status` shows it.
//!
//! Layers (docs/design.md, "Layers: who may import whom"): a module imports only from modules
//! below it. `dom`, `memory`, `output`, `pool`, `warc`, `eval` and `cluster` import no other
//! thresher module; `template` builds on `dom`; `detect` on `template`; `config` and `store` on
//! those; `crawl` on `config`, `store` and `memory`; `learn`, `corpus` and `progress` on `crawl`;
//! `status` on `progress`; `cli` names `corpus`, `detect` and `template` choices; `cmd` on
//! everything; `main.rs` on `cmd`. Nothing below `cmd` imports it, no two files import each other
//! (both checked by `tests/layers.rs`), sled is reached only through `store` and html5ever only
//! through `dom`.

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
pub mod learn;
pub mod memory;
pub mod output;
pub mod pool;
pub mod progress;
pub mod status;
pub mod store;
pub mod template;
pub mod warc;
