//! The template engine: pure functions, no tokio and no I/O. A host's pages arrive as path sets
//! (`Dom::path_set`); `support` derives essential paths, `cluster` groups pages by template,
//! `clean` learns each cluster's content model (with `content`) and cleans its pages, and
//! `engine` runs the whole pipeline over a host's parsed pages. The crawler and `thresher clean`
//! both call `engine`, so the two always agree.

pub mod clean;
pub mod cluster;
pub mod content;
pub mod engine;
pub mod support;

pub use clean::ClusterModel;
pub use cluster::{Algorithm, Clustering};
pub use engine::{clean_site, SiteResult};
