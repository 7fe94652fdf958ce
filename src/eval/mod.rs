//! Quality evaluation against gold text: `metric` is score.py's token metric in Rust and
//! `dataset` reads a dataset laid out as `DIR/<site>/<page>.html` + `<page>.gold.txt`.
//! `thresher eval` (`cmd::eval`) runs the detectors over a dataset and scores them with these.
//!
//! Owns: the metric and the dataset layout. Imports no other thresher module: running detectors
//! over a dataset is `cmd::eval`'s job.

pub mod dataset;
pub mod metric;

pub use dataset::{Dataset, DatasetError, Site};
pub use metric::{prf, summarise, tokens, Bag, Prf, SiteScores, Summary};
