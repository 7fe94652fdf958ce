//! thresher's one integration test binary (STYLE.md): one module per area.

mod crawl;
mod eval_cmd;
mod server_selftest;
mod support;
