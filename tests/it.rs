//! thresher's one integration test binary (docs/design.md, "Tests"): one module per command or
//! component.

mod clean_cmd;
mod clean_quality;
#[cfg(feature = "cluster")]
mod cluster;
mod crawl;
mod docs_hygiene;
mod eval_cmd;
mod export;
mod hostile;
mod inspect_cmd;
mod layers;
mod markdown;
mod page_kinds;
mod server_selftest;
mod support;
// The long-crawl benchmark's procedural universe, tested in `universe_server`.
#[path = "../benches/universe/mod.rs"]
mod universe;
mod universe_server;
