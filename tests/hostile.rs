//! The hostile suite: one regression test per defect of issue 10, named after it.

mod files_common;
mod files_escape;
mod files_fetch;
mod files_fuzz;
mod files_index;
mod files_low;
mod files_store;
mod files_warc_memory;
