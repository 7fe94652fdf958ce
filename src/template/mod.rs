//! The template engine: pure functions, no tokio and no I/O. A host's pages arrive as path sets
//! (`Dom::path_set`); `support` derives essential paths, `cluster` groups pages by template,
//! and `engine` turns a host's parsed pages into cleaned text. The crawler and `thresher clean`
//! both call `engine`, so the two always agree.

pub mod cluster;
pub mod engine;
pub mod support;

pub use cluster::{Algorithm, Clustering};
pub use engine::{clean_site, SiteResult};
