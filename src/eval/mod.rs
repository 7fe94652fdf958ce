//! Quality evaluation against gold text: `metric` is score.py's token metric in Rust, `dataset`
//! reads a dataset laid out as `DIR/<site>/<page>.html` + `<page>.gold.txt`, and `report` runs
//! detectors over a dataset and scores them (what `thresher eval` prints).
//!
//! Owns: the metric, the dataset layout and the comparison of detectors. `metric` and `dataset`
//! import no other thresher module; `report` runs the detectors (`detect`, `dom`, `pool`).

pub mod dataset;
pub mod metric;
pub mod report;

pub use dataset::{Dataset, DatasetError, Site};
pub use metric::{prf, summarise, tokens, Bag, Prf, SiteScores, Summary};
pub use report::{evaluate, overall, parse_detectors, render_overall, EvalError, Report, Row};
