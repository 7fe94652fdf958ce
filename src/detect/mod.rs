//! Template detectors behind `--detector`: the TEXT engine (`template`) and the literature's
//! baselines. Every detector turns one host's parsed pages into a `SiteResult`, so `clean`,
//! `crawl` and `eval` treat them alike.

use std::fmt;
use std::str::FromStr;

use crate::dom::Dom;
use crate::template::{self, Algorithm, SiteResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Detector {
    /// TEXT-* clustering plus content extraction (the default, with its algorithm).
    Text(Algorithm),
}

impl Default for Detector {
    fn default() -> Self {
        Detector::Text(Algorithm::default())
    }
}

impl Detector {
    /// The detector named `name`; `text` takes its clustering `algorithm`.
    pub fn from_parts(name: &str, algorithm: Algorithm) -> Result<Detector, String> {
        match name {
            "text" => Ok(Detector::Text(algorithm)),
            other => other.parse(),
        }
    }

    /// Every detector, each TEXT algorithm separately (for `eval --detector all`).
    pub fn all() -> Vec<Detector> {
        Algorithm::ALL.into_iter().map(Detector::Text).collect()
    }
}

impl fmt::Display for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detector::Text(a) => write!(f, "{a}"),
        }
    }
}

impl FromStr for Detector {
    type Err = String;

    /// `text-max`, `text-mdl`, … (a TEXT algorithm), or a baseline's name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "text" {
            return Ok(Detector::default());
        }
        s.parse::<Algorithm>()
            .map(Detector::Text)
            .map_err(|_| format!("unknown detector {s:?} (expected text, or a TEXT algorithm)"))
    }
}

/// Run `detector` over one host's pages.
pub fn clean_site(detector: Detector, doms: &[Dom]) -> SiteResult {
    match detector {
        Detector::Text(a) => template::clean_site(doms, a),
    }
}
