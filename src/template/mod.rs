//! The template engine: pure functions, no tokio and no I/O. A host's pages arrive as path sets
//! (`Dom::path_set`); `support` derives essential paths, `mdl` prices a clustering, `minhash`
//! and `lsh` sketch and index clusters, `cluster` groups pages by template (TEXT-MDL/HASH/MAX),
//! `incremental` keeps a crawling host's clustering up to date, `clean` learns each cluster's
//! content model (with `content`) and cleans its pages (reading their bylines with `byline`), and `engine` runs the whole pipeline over
//! a host's parsed pages. The crawler and `thresher clean` both call `engine`, so the two agree.
//!
//! Owns: the TEXT algorithms and the cleaner. Pure: no tokio, no threads, no I/O, no sled, and
//! only `dom` from thresher. Results never depend on page order or thread count (ties broken by
//! content hashes, integer weights). docs/design.md explains the algorithms.

pub mod byline;
pub mod clean;
pub mod cluster;
pub mod content;
pub mod engine;
pub mod incremental;
pub mod lsh;
pub mod mdl;
pub mod minhash;
pub mod support;
pub mod synth;

pub use clean::{Cleaned, ClusterModel, Renders};
pub use cluster::{Algorithm, Clustering};
pub use engine::{clean_site, SiteResult};
