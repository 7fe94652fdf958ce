//! Cleaning saved pages (`thresher clean SITE_DIR... [--warc FILE]... --out OUT`): the crawler's
//! template engine over pages already on disk, as a library ([`Clean`]; contract: docs/design.md).
//! Every `*.html` of a SITE_DIR is one host's pages and becomes `OUT/<dir name>/<file stem>.txt`
//! (`.md` in Markdown, [`Clean::format`]); the `response` records of WARC files that hold pages the
//! crawl would store (`clean::warc`; a noindex one is dropped when parsed) are grouped by host and
//! become `OUT/<site>/<page id>.txt` plus `OUT/<site>/index.tsv` (page id → URL), where `<site>` is
//! the directory the crawl writes the host to (`output::site_dir_name`, port included) and the page
//! id is the 16 hex digits of the xxh3-64 of the record's target URI normalised as the crawl
//! normalises URLs (stable across runs and WARC files, safe in file names).
//!
//! Nothing given is lost silently: an input that cannot be used (not a directory, unreadable, a
//! malformed WARC record) is told to the [`Observer`] and kept in the [`Outcome`], and the rest is
//! cleaned. Work runs on all cores (pages parse in parallel, sites clean in parallel) and the
//! output does not depend on the number of threads. Sites are processed in batches of about
//! [`BATCH_BYTES`] of HTML so memory stays bounded.
//!
//! Owns: reading saved pages and WARC files into sites, batching, and the files `clean` writes.
//! Uses `detect` (the engine), `dom`, `crawl` (URL normalisation, the HTML test), `warc`,
//! `output` and `pool`.

mod batch;
mod dir;
mod report;
mod site;
mod warc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::detect::Detector;
use crate::output::parts::MarkdownParts;
use crate::output::{FileFormat, TextFormat};
use crate::pool;
use batch::clean_batches;
pub use batch::BATCH_BYTES;
pub use dir::{site_from_dir, MAX_FILE_BYTES};
use report::Reporter;
pub use report::{Observer, Quiet};
pub use site::{Page, Site, Source};
pub use warc::MAX_PAGE_BYTES;
use warc::{sites_from_warcs, Spool};

#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error("nothing to clean: no site directory and no WARC file given")]
    NothingGiven,
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("nothing was cleaned ({problems} input problem(s), reported above)")]
    NothingCleaned { problems: usize },
}

/// What one site came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteSummary {
    pub name: String,
    pub pages: usize,
    pub clusters: usize,
    pub bytes: u64,
    /// Parse and clean time summed over threads.
    pub cpu: Duration,
}

/// What a run came to.
#[derive(Debug, Default)]
pub struct Outcome {
    pub sites: Vec<SiteSummary>,
    /// Inputs, pages and records that were skipped, one message each.
    pub problems: Vec<String>,
    /// Pages cleaned only in part (the parser's limits cut them), one message each.
    pub cut: Vec<String>,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn pages(&self) -> usize {
        self.sites.iter().map(|s| s.pages).sum()
    }
}

/// A clean of saved pages: site directories and WARC files in, cleaned text under an output
/// directory out.
///
/// ```no_run
/// use thresher::clean::{Clean, Quiet};
///
/// let outcome = Clean::new("out").site_dir("saved/example.com").run(&Quiet)?;
/// for site in &outcome.sites {
///     println!("{}: {} pages in {} clusters", site.name, site.pages, site.clusters);
/// }
/// # Ok::<(), thresher::clean::CleanError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Clean {
    site_dirs: Vec<PathBuf>,
    warcs: Vec<PathBuf>,
    out: PathBuf,
    detector: Detector,
    format: FileFormat,
    jobs: usize,
}

impl Clean {
    /// A clean that writes under `out`, with the default detector (TEXT, `text-max`) on every
    /// core.
    pub fn new(out: impl Into<PathBuf>) -> Clean {
        Clean {
            site_dirs: Vec::new(),
            warcs: Vec::new(),
            out: out.into(),
            detector: Detector::default(),
            format: FileFormat::default(),
            jobs: pool::available(),
        }
    }

    /// A directory of one site's saved pages (`*.html`), written to `OUT/<its name>/`.
    pub fn site_dir(mut self, dir: impl Into<PathBuf>) -> Clean {
        self.site_dirs.push(dir.into());
        self
    }

    /// A WARC file (`.warc` or `.warc.gz`) of saved responses; its pages are grouped by host.
    pub fn warc(mut self, file: impl Into<PathBuf>) -> Clean {
        self.warcs.push(file.into());
        self
    }

    pub fn detector(mut self, detector: Detector) -> Clean {
        self.detector = detector;
        self
    }

    /// The files' format: plain text (`.txt`, the default) or Markdown (`.md`).
    pub fn format(mut self, format: TextFormat) -> Clean {
        self.format.format = format;
        self
    }

    /// What Markdown files keep beyond the text (links and images by default).
    pub fn markdown(mut self, parts: MarkdownParts) -> Clean {
        self.format.markdown = parts;
        self
    }

    /// Worker threads (the output does not depend on them).
    pub fn jobs(mut self, jobs: usize) -> Clean {
        self.jobs = jobs.max(1);
        self
    }

    /// Read, clean and write every site given, telling `observer` as it goes. An input that
    /// cannot be used is skipped (told and kept in [`Outcome::problems`]); a run that cleans
    /// nothing at all is an error.
    pub fn run(&self, observer: &dyn Observer) -> Result<Outcome, CleanError> {
        if self.site_dirs.is_empty() && self.warcs.is_empty() {
            return Err(CleanError::NothingGiven);
        }
        let started = Instant::now();
        let reporter = Reporter::new(observer);
        let mut sites: Vec<Site> = Vec::new();
        for dir in &self.site_dirs {
            if let Some(site) = site_from_dir(dir, &reporter) {
                sites.push(site);
            }
        }
        // WARC bodies wait on disk, not in memory, until their batch is cleaned.
        let mut spool = None;
        if !self.warcs.is_empty() {
            let s = Spool::new(&self.out).map_err(|source| CleanError::Write {
                path: Spool::dir_in(&self.out),
                source,
            })?;
            sites.extend(sites_from_warcs(&self.warcs, &s, &reporter));
            spool = Some(s);
        }
        let sites = unique_names(sites, &reporter);
        let summaries = clean_batches(
            &sites,
            &self.out,
            self.detector,
            self.format,
            self.jobs,
            &reporter,
        )?;
        drop(spool);
        let outcome = Outcome {
            sites: summaries,
            problems: reporter.take_problems(),
            cut: reporter.take_cut(),
            elapsed: started.elapsed(),
        };
        if outcome.pages() == 0 {
            return Err(CleanError::NothingCleaned {
                problems: outcome.problems.len(),
            });
        }
        Ok(outcome)
    }
}

/// Two inputs that would write the same `OUT/<name>/`: the later one is skipped (reported).
fn unique_names(sites: Vec<Site>, reporter: &Reporter<'_>) -> Vec<Site> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::with_capacity(sites.len());
    for site in sites {
        if let Some(first) = seen.get(&site.name) {
            reporter.problem(format!(
                "{} would write OUT/{}/ like {first}; skipped",
                site.origin, site.name
            ));
            continue;
        }
        seen.insert(site.name.clone(), site.origin.clone());
        out.push(site);
    }
    out
}

/// Parse, clean and write `sites` under `out` with `jobs` threads; the summaries come back in
/// input order. Output does not depend on `jobs`.
pub fn clean_sites(
    sites: &[Site],
    out: &Path,
    detector: Detector,
    jobs: usize,
) -> Result<(Vec<SiteSummary>, Vec<String>), CleanError> {
    let reporter = Reporter::new(&Quiet);
    let summaries = clean_batches(sites, out, detector, FileFormat::default(), jobs, &reporter)?;
    Ok((summaries, reporter.take_problems()))
}
