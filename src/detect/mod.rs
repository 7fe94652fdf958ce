//! Template detectors behind `--detector`: the TEXT engine (`template`) and the literature's
//! baselines (`node_hash`, `shingles`, `table_chunks`; docs/detectors.md gives their sources and
//! parameters). Every detector turns one host's parsed pages into a `SiteResult`, so `clean`,
//! `crawl` and `eval` treat them alike.
//!
//! Owns: the detectors and the `Detector` switch. Pure like `template`, and built only on `dom`
//! and `template`: no I/O, no tokio, no store, nothing from `crawl`, `learn` or `cmd`.

pub mod node_hash;
pub mod shingles;
pub mod table_chunks;

use std::fmt;
use std::str::FromStr;

use crate::dom::layout::Layout;
use crate::dom::render::{render, Format, Markdown};
use crate::dom::Dom;
use crate::template::{self, Algorithm, Clustering, SiteResult};

/// Which renderings `clean_site` makes (the template engine's).
pub use crate::template::Renders;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Detector {
    /// TEXT-* clustering plus content extraction (the default, with its algorithm).
    Text(Algorithm),
    /// Gibson, Punera & Tomkins 2005, DOM-based: subtree hashes counted across the site.
    NodeHash,
    /// Gibson, Punera & Tomkins 2005, text-based: W-token shingles frequent across sampled pages.
    Shingles,
    /// Ma, Goharian, Chowdhury & Chung 2003: text chunks between table tags with a high
    /// document frequency.
    TableChunks,
}

impl Default for Detector {
    fn default() -> Self {
        Detector::Text(Algorithm::default())
    }
}

impl Detector {
    /// The baselines from the literature, in the order `eval` lists them.
    pub const BASELINES: [Detector; 3] = [
        Detector::NodeHash,
        Detector::Shingles,
        Detector::TableChunks,
    ];

    /// The detector named `name`; `text` takes its clustering `algorithm`.
    pub fn from_parts(name: &str, algorithm: Algorithm) -> Result<Detector, String> {
        match name {
            "text" => Ok(Detector::Text(algorithm)),
            other => other.parse(),
        }
    }

    /// Every detector, each TEXT algorithm separately (for `eval --detector all`).
    pub fn all() -> Vec<Detector> {
        Algorithm::ALL
            .into_iter()
            .map(Detector::Text)
            .chain(Detector::BASELINES)
            .collect()
    }

    /// The name `--detector` takes (a TEXT detector is named by its algorithm).
    pub fn name(self) -> &'static str {
        match self {
            Detector::Text(a) => a.name(),
            Detector::NodeHash => "node-hash",
            Detector::Shingles => "shingles",
            Detector::TableChunks => "table-chunks",
        }
    }
}

impl fmt::Display for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Detector {
    type Err = String;

    /// `text` (the default TEXT algorithm), `text-max`, `text-mdl`, … (a TEXT algorithm), or a
    /// baseline's name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "text" {
            return Ok(Detector::default());
        }
        if let Some(d) = Detector::BASELINES.into_iter().find(|d| d.name() == s) {
            return Ok(d);
        }
        s.parse::<Algorithm>().map(Detector::Text).map_err(|_| {
            let names: Vec<&str> = Detector::all().iter().map(|d| d.name()).collect();
            format!(
                "unknown detector {s:?} (expected text or one of {})",
                names.join(", ")
            )
        })
    }
}

/// Run `detector` over one host's pages (each baseline with its published default parameters),
/// rendering what `renders` asks for (the baselines, which are for measuring, render both).
pub fn clean_site(detector: Detector, doms: &[Dom], renders: Renders) -> SiteResult {
    match detector {
        Detector::Text(a) => template::clean_site(doms, a, renders),
        Detector::NodeHash => node_hash::clean_site(doms, &node_hash::Params::default()),
        Detector::Shingles => shingles::clean_site(doms, &shingles::Params::default()),
        Detector::TableChunks => table_chunks::clean_site(doms, &table_chunks::Params::default()),
    }
}

/// A baseline's result: the baselines do not cluster (one cluster of every page) and learn no
/// path-set template; each page's text is rendered without the text nodes marked in `dropped`
/// (`dropped[page][node]`).
fn unclustered(doms: &[Dom], dropped: &[Vec<bool>]) -> SiteResult {
    let clustering = if doms.is_empty() {
        Clustering::default()
    } else {
        Clustering {
            clusters: vec![(0..doms.len() as u32).collect()],
        }
    };
    let (texts, markdowns) = doms
        .iter()
        .zip(dropped)
        .map(|(dom, drop)| {
            let layout = Layout::new(dom);
            let markdown = Format::Markdown(Markdown::for_page(dom));
            (
                render(dom, &layout, |i| !drop[i], &Format::Text),
                render(dom, &layout, |i| !drop[i], &markdown),
            )
        })
        .unzip();
    SiteResult {
        templates: vec![Vec::new(); clustering.clusters.len()],
        clustering,
        texts,
        markdowns,
        bylines: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str() {
        for d in Detector::all() {
            assert_eq!(d.name().parse::<Detector>(), Ok(d));
            assert_eq!(d.to_string(), d.name());
        }
        assert_eq!("text".parse::<Detector>(), Ok(Detector::default()));
        assert!("nonsense".parse::<Detector>().is_err());
    }

    #[test]
    fn all_lists_every_text_algorithm_and_every_baseline_once() {
        let all = Detector::all();
        assert_eq!(all.len(), Algorithm::ALL.len() + Detector::BASELINES.len());
        let mut names: Vec<&str> = all.iter().map(|d| d.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }

    #[test]
    fn from_parts_gives_text_its_algorithm_and_ignores_it_for_baselines() {
        assert_eq!(
            Detector::from_parts("text", Algorithm::TextMdl),
            Ok(Detector::Text(Algorithm::TextMdl))
        );
        assert_eq!(
            Detector::from_parts("shingles", Algorithm::TextMdl),
            Ok(Detector::Shingles)
        );
    }

    #[test]
    fn baselines_return_one_cluster_and_a_text_per_page() {
        let doms: Vec<Dom> = (0..3)
            .map(|i| crate::dom::parse_html(&format!("<p>page {i}</p>")).dom)
            .collect();
        for d in Detector::BASELINES {
            let r = clean_site(d, &doms, Renders::Both);
            assert_eq!(r.clustering.clusters, vec![vec![0, 1, 2]], "{d}");
            assert_eq!(r.texts.len(), 3, "{d}");
        }
        assert!(clean_site(Detector::NodeHash, &[], Renders::Both)
            .texts
            .is_empty());
    }
}
