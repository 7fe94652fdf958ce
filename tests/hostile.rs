//! The hostile-server suite (issue 10, "The hostile web"): each test names the defect it keeps
//! fixed. `crawl_*` modules cover the crawl side (scheduler, robots.txt, backoff, seeds, memory).

mod crawl_backoff;
mod crawl_freeze;
mod crawl_robots;
mod crawl_support;
