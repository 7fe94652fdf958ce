//! Detectors compared on a dataset with gold text (what `thresher eval DATASET_DIR [--detector
//! all] [--out OUT]` prints): one table per dataset (pages, clusters, P/R/F1 with score.py's
//! metric, seconds, MB/s), and an overall one across datasets, so anyone can reproduce
//! docs/detectors.md.
//!
//! Each site's pages are read and parsed once; every detector then cleans the parsed pages.
//! A detector's seconds are end-to-end like `thresher clean`'s: the site's parse time plus its
//! own run, summed over sites; every run is single-threaded, and sites run in parallel on the
//! available cores, so the figures do not depend on the thread count (machine load aside).
//! Scores never depend on it. `--detector text` is TEXT with the configured
//! `template.algorithm` ([`parse_detectors`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::dataset::{read_text, Dataset, DatasetError, Site};
use super::metric::{prf, summarise, tokens, Bag, SiteScores, Summary};
use crate::detect::{self, Detector};
use crate::dom::{parse_bytes, Dom};
use crate::pool;
use crate::template::{Algorithm, Renders};

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Usage(String),
}

/// A dataset's name: its directory's last component.
pub fn dataset_name(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// One detector across datasets: the mean over datasets of their macro P/R/F1, pages and
/// seconds summed, and each dataset's macro F1.
#[derive(Clone, Debug, PartialEq)]
pub struct OverallRow {
    pub detector: Detector,
    pub pages: usize,
    pub p: f64,
    pub r: f64,
    pub f1: f64,
    pub seconds: f64,
    pub per_dataset: Vec<f64>,
}

/// The overall rows, one per detector of the first report (every report has the same
/// detectors, in the same order).
pub fn overall(reports: &[Report]) -> Vec<OverallRow> {
    let Some(first) = reports.first() else {
        return Vec::new();
    };
    let n = reports.len() as f64;
    (0..first.rows.len())
        .map(|k| {
            let rows: Vec<&Row> = reports.iter().map(|r| &r.rows[k]).collect();
            let mean = |f: fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
            OverallRow {
                detector: first.rows[k].detector,
                pages: rows.iter().map(|r| r.summary.pages).sum(),
                p: mean(|r| r.summary.macro_.p),
                r: mean(|r| r.summary.macro_.r),
                f1: mean(|r| r.summary.macro_.f1),
                seconds: rows.iter().map(|r| r.seconds).sum(),
                per_dataset: rows.iter().map(|r| r.summary.macro_.f1).collect(),
            }
        })
        .collect()
}

/// The overall table: one row per detector, its mean macro P/R/F1 over the datasets, then each
/// dataset's macro F1.
pub fn render_overall(reports: &[Report]) -> String {
    let names: Vec<String> = reports.iter().map(|r| dataset_name(&r.dataset)).collect();
    let mut s = format!(
        "overall: {} datasets ({})\n",
        reports.len(),
        names.join(", ")
    );
    let _ = write!(
        s,
        "{:<14} {:>6} {:>6} {:>6} {:>6} {:>8}",
        "detector", "pages", "P", "R", "F1", "seconds"
    );
    for name in &names {
        let _ = write!(s, " {name:>w$}", w = name.len().max(6));
    }
    s.push('\n');
    for row in overall(reports) {
        let _ = write!(
            s,
            "{:<14} {:>6} {:>6.3} {:>6.3} {:>6.3} {:>8.2}",
            row.detector.name(),
            row.pages,
            row.p,
            row.r,
            row.f1,
            row.seconds
        );
        for (f1, name) in row.per_dataset.iter().zip(&names) {
            let _ = write!(s, " {f1:>w$.3}", w = name.len().max(6));
        }
        s.push('\n');
    }
    s.push_str(
        "P/R/F1: mean over the datasets of each dataset's macro figure; then each dataset's \
         macro F1.\n",
    );
    s
}

/// `all` = every detector (each TEXT algorithm and every baseline), else one detector's name.
/// `--detector`'s detectors: `all` of them, or the one named (`text` takes `algorithm`, the
/// configured `template.algorithm`).
pub fn parse_detectors(arg: &str, algorithm: Algorithm) -> Result<Vec<Detector>, EvalError> {
    if arg == "all" {
        return Ok(Detector::all());
    }
    Detector::from_parts(arg, algorithm)
        .map(|d| vec![d])
        .map_err(EvalError::Usage)
}

/// One detector's figures over a dataset.
#[derive(Clone, Debug)]
pub struct Row {
    pub detector: Detector,
    /// Clusters over all sites.
    pub clusters: usize,
    pub summary: Summary,
    /// Parse + detect time, summed over sites.
    pub seconds: f64,
    /// The detect part of `seconds`.
    pub detect_seconds: f64,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub dataset: PathBuf,
    pub sites: usize,
    pub html_pages: usize,
    pub bytes: u64,
    pub rows: Vec<Row>,
}

/// What one site yields: its size, parse time and each detector's outcome.
struct SiteRun {
    pages: usize,
    bytes: u64,
    parse: Duration,
    runs: Vec<DetectorRun>,
}

struct DetectorRun {
    clusters: usize,
    detect: Duration,
    scores: SiteScores,
}

/// One site of a dataset parsed and scored (what [`evaluate`] tells its caller as it goes).
#[derive(Clone, Copy, Debug)]
pub struct SiteDone<'a> {
    pub site: &'a str,
    pub pages: usize,
    pub bytes: u64,
    pub parse: Duration,
}

/// Run `detectors` over every site of `dataset` (sites in parallel) and score them, telling
/// `on_site` of each site done; with `out`, also write `out/<detector>/<site>/<page>.txt`.
pub fn evaluate(
    dataset: &Dataset,
    detectors: &[Detector],
    out: Option<&Path>,
    on_site: &(dyn Fn(SiteDone<'_>) + Sync),
) -> Result<Report, EvalError> {
    let done = pool::parallel_map(&dataset.sites, pool::available(), |site| {
        let run = eval_site(site, detectors, out);
        if let Ok(r) = &run {
            on_site(SiteDone {
                site: &site.name,
                pages: r.pages,
                bytes: r.bytes,
                parse: r.parse,
            });
        }
        run
    });
    let runs: Vec<SiteRun> = done.into_iter().collect::<Result<_, _>>()?;

    let rows = detectors
        .iter()
        .enumerate()
        .map(|(k, &detector)| {
            let sites: Vec<SiteScores> = runs.iter().map(|r| r.runs[k].scores.clone()).collect();
            Row {
                detector,
                clusters: runs.iter().map(|r| r.runs[k].clusters).sum(),
                summary: summarise(&sites),
                seconds: runs
                    .iter()
                    .map(|r| (r.parse + r.runs[k].detect).as_secs_f64())
                    .sum(),
                detect_seconds: runs.iter().map(|r| r.runs[k].detect.as_secs_f64()).sum(),
            }
        })
        .collect();
    Ok(Report {
        dataset: dataset.root.clone(),
        sites: dataset.sites.len(),
        html_pages: runs.iter().map(|r| r.pages).sum(),
        bytes: runs.iter().map(|r| r.bytes).sum(),
        rows,
    })
}

fn eval_site(
    site: &Site,
    detectors: &[Detector],
    out: Option<&Path>,
) -> Result<SiteRun, EvalError> {
    let mut raw = Vec::with_capacity(site.html.len());
    for (_, path) in &site.html {
        raw.push(std::fs::read(path).map_err(|source| DatasetError::Read {
            path: path.clone(),
            source,
        })?);
    }
    let bytes = raw.iter().map(|b| b.len() as u64).sum();
    let started = Instant::now();
    let doms: Vec<Dom> = raw.iter().map(|b| parse_bytes(b, None).dom).collect();
    let parse = started.elapsed();
    drop(raw);

    let mut gold: Vec<(&str, Bag)> = Vec::with_capacity(site.gold.len());
    for (id, path) in &site.gold {
        gold.push((id, tokens(&read_text(path)?)));
    }

    let mut runs = Vec::with_capacity(detectors.len());
    for &d in detectors {
        let started = Instant::now();
        let result = detect::clean_site(d, &doms, Renders::Text);
        let detect = started.elapsed();
        let texts: HashMap<&str, &str> = site
            .html
            .iter()
            .map(|(id, _)| id.as_str())
            .zip(result.texts.iter().map(String::as_str))
            .collect();
        if let Some(out) = out {
            write_texts(&out.join(d.name()).join(&site.name), &texts)?;
        }
        let pages = gold
            .iter()
            .map(|(id, g)| {
                let pred = texts.get(id).map(|t| tokens(t)).unwrap_or_default();
                prf(&pred, g)
            })
            .collect();
        runs.push(DetectorRun {
            clusters: result.clustering.clusters.len(),
            detect,
            scores: SiteScores {
                site: site.name.clone(),
                pages,
            },
        });
    }
    Ok(SiteRun {
        pages: doms.len(),
        bytes,
        parse,
        runs,
    })
}

fn write_texts(dir: &Path, texts: &HashMap<&str, &str>) -> Result<(), EvalError> {
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EvalError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(err(dir))?;
    for (id, text) in texts {
        let path = dir.join(format!("{id}.txt"));
        std::fs::write(&path, text).map_err(err(&path))?;
    }
    Ok(())
}

impl Report {
    /// The comparison table, one row per detector.
    pub fn render(&self) -> String {
        let mb = self.bytes as f64 / 1e6;
        let gold: usize = self.rows.first().map_or(0, |r| r.summary.pages);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "dataset {}: {} sites, {} pages ({} with gold), {:.1} MB of HTML",
            self.dataset.display(),
            self.sites,
            self.html_pages,
            gold,
            mb
        );
        let _ = writeln!(
            s,
            "{:<14} {:>5} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7}",
            "detector",
            "pages",
            "clusters",
            "P",
            "R",
            "F1",
            "F1-pages",
            "seconds",
            "detect",
            "MB/s"
        );
        for r in &self.rows {
            let m = &r.summary.macro_;
            let rate = if r.seconds > 0.0 { mb / r.seconds } else { 0.0 };
            let _ = writeln!(
                s,
                "{:<14} {:>5} {:>8} {:>6.3} {:>6.3} {:>6.3} {:>8.3} {:>8.2} {:>8.2} {:>7.1}",
                r.detector.name(),
                r.summary.pages,
                r.clusters,
                m.p,
                m.r,
                m.f1,
                r.summary.pages_mean.f1,
                r.seconds,
                r.detect_seconds,
                rate
            );
        }
        s.push_str(
            "P/R/F1: macro (mean over sites of the mean over pages), score.py's metric; \
             F1-pages: mean over pages.\nseconds: parse + detect, summed over sites \
             (single-threaded runs; detect: its detect part); MB/s: HTML MB (10^6 bytes) / \
             seconds.\n",
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(name: &str, f1: [f64; 2], pages: usize) -> Report {
        let row = |detector: Detector, f1: f64| Row {
            detector,
            clusters: 1,
            summary: Summary {
                pages,
                macro_: crate::eval::metric::Prf { p: f1, r: 1.0, f1 },
                pages_mean: crate::eval::metric::Prf::default(),
            },
            seconds: 1.5,
            detect_seconds: 0.5,
        };
        Report {
            dataset: PathBuf::from(format!("/data/{name}")),
            sites: 1,
            html_pages: pages,
            bytes: 0,
            rows: vec![
                row(Detector::NodeHash, f1[0]),
                row(Detector::Shingles, f1[1]),
            ],
        }
    }

    #[test]
    fn overall_is_the_mean_of_the_datasets_macro_figures() {
        let reports = [report("a", [0.5, 0.9], 10), report("b", [0.7, 0.6], 30)];
        let rows = overall(&reports);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].detector, Detector::NodeHash);
        assert!((rows[0].f1 - 0.6).abs() < 1e-12);
        assert!((rows[1].f1 - 0.75).abs() < 1e-12);
        assert_eq!(rows[1].per_dataset, vec![0.9, 0.6]);
        assert_eq!(rows[0].pages, 40);
        assert!((rows[0].seconds - 3.0).abs() < 1e-12);
        let table = render_overall(&reports);
        assert!(table.starts_with("overall: 2 datasets (a, b)"), "{table}");
    }

    #[test]
    fn all_means_every_detector_and_names_are_checked() {
        let a = Algorithm::TextHash;
        assert_eq!(parse_detectors("all", a).unwrap(), Detector::all());
        assert_eq!(
            parse_detectors("node-hash", a).unwrap(),
            vec![Detector::NodeHash]
        );
        assert_eq!(
            parse_detectors("text", a).unwrap(),
            vec![Detector::Text(a)],
            "text takes the configured algorithm"
        );
        assert_eq!(
            parse_detectors("text-mdl", a).unwrap(),
            vec![Detector::Text(Algorithm::TextMdl)]
        );
        assert!(matches!(
            parse_detectors("bogus", a),
            Err(EvalError::Usage(_))
        ));
    }
}
