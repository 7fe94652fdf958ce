//! One module per `thresher` subcommand: each turns its `cli` args into work and a summary.

pub mod clean;
pub mod crawl;
pub mod eval;
pub mod status;
