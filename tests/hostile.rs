//! The hostile-server suite (issue 10, "The hostile web"): one regression test per defect, named
//! after it. `crawl_*` modules cover the crawl side (scheduler, robots.txt, backoff, seeds,
//! memory); `files_*` the file side (output directories, WARC, store damage, index, fetch
//! encodings, inputs) and the bounded fuzz test.

mod crawl_backoff;
mod crawl_freeze;
mod crawl_limits;
mod crawl_memory;
mod crawl_reporting;
mod crawl_robots;
mod crawl_support;
mod files_common;
mod files_escape;
mod files_fetch;
mod files_fuzz;
mod files_index;
mod files_low;
mod files_store;
mod files_warc_memory;
