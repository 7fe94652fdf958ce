//! The template engine: pure functions, no tokio and no I/O. A host's pages arrive as path sets
//! (`Dom::path_set`); `support` derives essential paths, `mdl` prices a clustering, `minhash`
//! and `lsh` sketch and index clusters, `cluster` groups pages by template (TEXT-MDL/HASH/MAX),
//! `incremental` keeps a crawling host's clustering up to date, and `engine` turns a host's
//! parsed pages into cleaned text. The crawler and `thresher clean` both call `engine`, so the
//! two always agree.

pub mod cluster;
pub mod engine;
pub mod incremental;
pub mod lsh;
pub mod mdl;
pub mod minhash;
pub mod support;
pub mod synth;

pub use cluster::{Algorithm, Clustering};
pub use engine::{clean_site, SiteResult};
