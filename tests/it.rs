//! thresher's one integration test binary (STYLE.md): one module per command or component.

mod clean_cmd;
mod crawl;
mod eval_cmd;
mod hostile;
mod inspect_cmd;
mod server_selftest;
mod support;
