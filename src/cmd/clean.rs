//! `thresher clean SITE_DIR... [--warc FILE]... --out OUT`: the crawler's template engine over
//! saved pages (contract: docs/design.md). Every `*.html` of a SITE_DIR is one host's pages and becomes
//! `OUT/<dir name>/<file stem>.txt`; the `response` records of WARC files that hold pages the
//! crawl would store (`cmd::clean::warc`; a noindex one is dropped when parsed) are grouped by host
//! and become `OUT/<site>/<page id>.txt` plus `OUT/<site>/index.tsv` (page id → URL), where
//! `<site>` is the directory the crawl writes the host to (`output::site_dir_name`, port
//! included) and the page id is the 16 hex digits of the xxh3-64 of the record's target URI
//! normalised as the crawl normalises URLs (stable across runs and WARC files, safe in file
//! names). The detector is the config's `[template]` one (`--config`, `--set`) unless
//! `--detector` / `--algorithm` say otherwise.
//!
//! Nothing given is lost silently: an input that cannot be used (not a directory, unreadable, a
//! malformed WARC record) is reported on stderr and in the summary, the rest is cleaned, and the
//! exit code says so (`Outcome::exit_code`). Work runs on all cores (pages parse in parallel,
//! sites clean in parallel) and the output does not depend on the number of threads. Sites are
//! processed in batches of about `BATCH_BYTES` of HTML so memory stays bounded.

mod report;
mod site;
mod warc;

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::xxh3_64;

use crate::cli::CleanArgs;
use crate::config::{ConfigError, Overrides};
use crate::detect::{self, Detector};
use crate::dom::{parse_bytes, Dom};
use crate::output;
use crate::pool;
use report::{lock, Reporter};
pub use site::{Page, Site, Source};
pub use warc::MAX_PAGE_BYTES;
use warc::{sites_from_warcs, Spool};

/// HTML bytes parsed and cleaned per batch of sites.
pub const BATCH_BYTES: u64 = 256 << 20;
/// The largest saved page read from a SITE_DIR; larger files are skipped (reported).
pub const MAX_FILE_BYTES: u64 = 1 << 30;
#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: std::path::PathBuf,
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
    /// 0: everything given was cleaned; 1: cleaning finished but some inputs, pages or WARC
    /// records were skipped (each reported). A run that cleans nothing is an error (2).
    pub fn exit_code(&self) -> ExitCode {
        if self.problems.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    pub fn pages(&self) -> usize {
        self.sites.iter().map(|s| s.pages).sum()
    }
}

pub fn run(args: &CleanArgs) -> Result<Outcome, CleanError> {
    // `[template] detector` / `algorithm` of the config, unless `--detector` / `--algorithm`.
    let mut flags = Overrides::default();
    super::template_overrides(&mut flags, &args.template);
    let detector = super::settings(&args.settings, flags)?.template.detector;
    if args.site_dirs.is_empty() && args.warc.is_empty() {
        return Err(CleanError::Usage(
            "nothing to clean: give SITE_DIR arguments and/or --warc FILE".into(),
        ));
    }
    let started = Instant::now();
    let reporter = Reporter::new(args.quiet);
    let mut sites: Vec<Site> = Vec::new();
    for dir in &args.site_dirs {
        if let Some(site) = site_from_dir(dir, &reporter) {
            sites.push(site);
        }
    }
    // WARC bodies wait on disk, not in memory, until their batch is cleaned.
    let mut spool = None;
    if !args.warc.is_empty() {
        let s = Spool::new(&args.out).map_err(|source| CleanError::Write {
            path: Spool::dir_in(&args.out),
            source,
        })?;
        sites.extend(sites_from_warcs(&args.warc, &s, &reporter));
        spool = Some(s);
    }
    let sites = unique_names(sites, &reporter);
    let jobs = pool::available();
    let summaries = clean_batches(&sites, &args.out, detector, jobs, &reporter)?;
    reporter.bar.finish_and_clear();
    drop(spool);
    let outcome = Outcome {
        sites: summaries,
        problems: reporter.take_problems(),
        cut: std::mem::take(&mut *lock(&reporter.cut)),
        elapsed: started.elapsed(),
    };
    if outcome.pages() == 0 {
        return Err(CleanError::NothingCleaned {
            problems: outcome.problems.len(),
        });
    }
    print_summary(&outcome, detector);
    Ok(outcome)
}

/// A SITE_DIR's `*.html` pages, sorted by file name; `None` (reported) when it is unusable.
fn site_from_dir(dir: &Path, reporter: &Reporter) -> Option<Site> {
    let shown = dir.display();
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) => {
            reporter.problem(format!("cannot read {shown}: {e}; skipped"));
            return None;
        }
    };
    if !meta.is_dir() {
        reporter.problem(format!(
            "{shown} is not a directory (SITE_DIR arguments are directories of *.html pages; \
             use --warc for WARC files); skipped"
        ));
        return None;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::canonicalize(dir)
                .ok()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        });
    let Some(name) = name else {
        reporter.problem(format!(
            "{shown} has no directory name to write under; skipped"
        ));
        return None;
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            reporter.problem(format!("cannot read {shown}: {e}; skipped"));
            return None;
        }
    };
    let mut pages: Vec<Page> = Vec::new();
    for entry in entries {
        let path = match entry {
            Ok(e) => e.path(),
            Err(e) => {
                reporter.problem(format!("cannot list {shown}: {e}"));
                continue;
            }
        };
        let is_html = path
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("html"));
        if !is_html {
            continue;
        }
        // Regular files only (a symlink counts by its target): a FIFO would block the read
        // forever, a device such as /dev/zero never ends.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => continue,
            Ok(m) if !m.is_file() => {
                reporter.problem(format!(
                    "{} is not a regular file (a FIFO, socket or device); skipped",
                    path.display()
                ));
                continue;
            }
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                reporter.problem(format!(
                    "{} is {} bytes, over the {MAX_FILE_BYTES}-byte limit for one page; skipped",
                    path.display(),
                    m.len()
                ));
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                reporter.problem(format!("cannot read {}: {e}; skipped", path.display()));
                continue;
            }
        }
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        pages.push(Page {
            stem,
            url: None,
            source: Source::File(path),
        });
    }
    if pages.is_empty() {
        reporter.problem(format!("{shown} holds no *.html pages; skipped"));
        return None;
    }
    pages.sort_by(|a, b| a.stem.cmp(&b.stem));
    Some(Site {
        name,
        origin: shown.to_string(),
        pages,
        index: false,
    })
}

/// Two inputs that would write the same `OUT/<name>/`: the later one is skipped (reported).
fn unique_names(sites: Vec<Site>, reporter: &Reporter) -> Vec<Site> {
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
    let reporter = Reporter::new(true);
    let summaries = clean_batches(sites, out, detector, jobs, &reporter)?;
    Ok((summaries, reporter.take_problems()))
}

fn clean_batches(
    sites: &[Site],
    out: &Path,
    detector: Detector,
    jobs: usize,
    reporter: &Reporter,
) -> Result<Vec<SiteSummary>, CleanError> {
    let sizes: Vec<u64> = sites.iter().map(site_bytes).collect();
    reporter
        .bar
        .set_length(sites.iter().map(|s| s.pages.len() as u64).sum());
    let mut summaries = Vec::with_capacity(sites.len());
    let mut start = 0;
    while start < sites.len() {
        // A batch: sites until BATCH_BYTES of HTML (at least one site).
        let mut end = start;
        let mut bytes = 0u64;
        while end < sites.len() && (end == start || bytes < BATCH_BYTES) {
            bytes += sizes[end];
            end += 1;
        }
        summaries.extend(clean_batch(
            &sites[start..end],
            &sizes[start..end],
            out,
            detector,
            jobs,
            reporter,
        )?);
        start = end;
    }
    Ok(summaries)
}

fn clean_batch(
    sites: &[Site],
    sizes: &[u64],
    out: &Path,
    detector: Detector,
    jobs: usize,
    reporter: &Reporter,
) -> Result<Vec<SiteSummary>, CleanError> {
    reporter.bar.set_message("parsing and cleaning");
    // Every page of the batch is one task; the task that parses a site's last page cleans and
    // writes the site and frees its DOMs, so cleaning overlaps parsing and no core waits at a
    // barrier. Sites are parsed biggest first, so the last one to finish is a small one.
    let mut order: Vec<usize> = (0..sites.len()).collect();
    order.sort_by_key(|&s| (std::cmp::Reverse(sizes[s]), s));
    let tasks: Vec<(usize, usize)> = order
        .iter()
        .flat_map(|&s| (0..sites[s].pages.len()).map(move |p| (s, p)))
        .collect();
    type Slot = Option<(Dom, u64, Duration, u64)>;
    let slots: Vec<Mutex<Vec<Slot>>> = sites
        .iter()
        .map(|site| Mutex::new(site.pages.iter().map(|_| None).collect()))
        .collect();
    let left: Vec<AtomicUsize> = sites
        .iter()
        .map(|site| AtomicUsize::new(site.pages.len()))
        .collect();
    let results: Vec<Mutex<Option<Result<SiteSummary, CleanError>>>> =
        sites.iter().map(|_| Mutex::new(None)).collect();
    pool::parallel_map(&tasks, jobs, |&(s, p)| {
        let site = &sites[s];
        let parsed = parse_page(site, &site.pages[p], reporter);
        lock(&slots[s])[p] = parsed;
        if left[s].fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut done = Parsed::default();
            let parsed = std::mem::take(&mut *lock(&slots[s]));
            for (page, slot) in site.pages.iter().zip(parsed) {
                if let Some((dom, len, took, hash)) = slot {
                    done.pages.push(page);
                    done.doms.push(dom);
                    done.hashes.push(hash);
                    done.bytes += len;
                    done.cpu += took;
                }
            }
            *lock(&results[s]) = match clean_one_site(site, &done, out, detector) {
                // One site's output that cannot be written is that site's problem: the other
                // sites are still cleaned (nothing cleaned at all is still an error).
                Some(Err(e)) => {
                    reporter.problem(format!("site {}: {e}; its pages are skipped", site.name));
                    None
                }
                other => other,
            };
        }
    });
    results
        .into_iter()
        .filter_map(|r| r.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect::<Result<Vec<_>, _>>()
}

/// HTML bytes of a site (one `stat` per saved file: compute once).
fn site_bytes(site: &Site) -> u64 {
    site.pages.iter().map(|p| p.source.len()).sum()
}

/// Read (if saved as a file) and parse one page; a page that cannot be read is reported. Gives
/// the DOM, the byte count, the time taken and the xxh3 of the bytes (the crawler's duplicate key).
fn parse_page(site: &Site, page: &Page, reporter: &Reporter) -> Option<(Dom, u64, Duration, u64)> {
    let t = Instant::now();
    // A page that cannot be read is reported, counted as done and skipped.
    let skip = |what: String, e: std::io::Error| {
        reporter.problem(format!("{what} (site {}): {e}; page skipped", site.name));
        reporter.bar.inc(1);
    };
    // A crawled page's X-Robots-Tag (`Some("")` when it had none): set for WARC pages only.
    let mut crawled: Option<&str> = None;
    let (bytes, content_type) = match &page.source {
        Source::File(path) => match read_capped(path) {
            Ok(bytes) => (std::borrow::Cow::Owned(bytes), None),
            Err(e) => {
                skip(format!("cannot read {}", path.display()), e);
                return None;
            }
        },
        Source::Body {
            bytes,
            content_type,
        } => (
            std::borrow::Cow::Borrowed(&bytes[..]),
            content_type.as_deref(),
        ),
        Source::Spooled {
            path,
            content_type,
            x_robots_tag,
            ..
        } => match Spool::get(path) {
            Ok(bytes) => {
                crawled = Some(x_robots_tag.as_deref().unwrap_or_default());
                (std::borrow::Cow::Owned(bytes), content_type.as_deref())
            }
            Err(e) => {
                let what = format!(
                    "cannot read back a WARC body set aside in {}",
                    path.display()
                );
                skip(what, e);
                return None;
            }
        },
    };
    let parsed = parse_bytes(&bytes, content_type);
    if crawled.is_some_and(|tag| parsed.robots.with_header(Some(tag)).noindex) {
        // The crawl stores no noindex page: not a page of the site (and not a problem).
        reporter.bar.inc(1);
        return None;
    }
    if parsed.truncated {
        let name = page.url.clone().unwrap_or_else(|| match &page.source {
            Source::File(p) => p.display().to_string(),
            _ => page.stem.clone(),
        });
        reporter.cut(format!(
            "{name} (site {}): the parser's limits (nesting depth {}, {} s per page) cut the \
             page; its text is cleaned only up to the cut",
            site.name,
            crate::dom::parse::MAX_DEPTH,
            crate::dom::parse::PARSE_BUDGET.as_secs()
        ));
    }
    reporter.bar.inc(1);
    Some((parsed.dom, bytes.len() as u64, t.elapsed(), xxh3_64(&bytes)))
}

/// A saved page's bytes: a regular file, at most `MAX_FILE_BYTES` (checked again on the open
/// file: it may have changed since it was listed).
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    #[cfg(unix)]
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking, so a FIFO put in place after the listing does not hang the open.
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?
    };
    #[cfg(not(unix))]
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "over the {MAX_FILE_BYTES}-byte limit for one page"
        )));
    }
    Ok(bytes)
}

/// One site's pages that parsed.
#[derive(Default)]
struct Parsed<'a> {
    pages: Vec<&'a Page>,
    doms: Vec<Dom>,
    /// Per page, the xxh3 of its bytes.
    hashes: Vec<u64>,
    bytes: u64,
    cpu: Duration,
}

/// Clean and write one site; `None` when none of its pages parsed.
fn clean_one_site(
    site: &Site,
    parsed: &Parsed,
    out: &Path,
    detector: Detector,
) -> Option<Result<SiteSummary, CleanError>> {
    if parsed.doms.is_empty() {
        return None;
    }
    let t = Instant::now();
    // Byte-identical pages are one page, as in the crawl (which stores one copy and records the
    // others as duplicates): the site is learned from its distinct pages, and a copy gets the
    // text of its first occurrence, so `clean` and the crawl agree on the same files.
    let mut first: HashMap<u64, usize> = HashMap::new();
    let mut distinct: Vec<usize> = Vec::new();
    let of: Vec<usize> = parsed
        .hashes
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            *first.entry(h).or_insert_with(|| {
                distinct.push(i);
                distinct.len() - 1
            })
        })
        .collect();
    let result = if distinct.len() == parsed.doms.len() {
        detect::clean_site(detector, &parsed.doms)
    } else {
        let doms: Vec<Dom> = distinct.iter().map(|&i| parsed.doms[i].clone()).collect();
        detect::clean_site(detector, &doms)
    };
    let texts: Vec<String> = of.iter().map(|&k| result.texts[k].clone()).collect();
    let written = write_site(&out.join(&site.name), site, &parsed.pages, &texts);
    Some(written.map(|()| SiteSummary {
        name: site.name.clone(),
        pages: parsed.doms.len(),
        clusters: result.clustering.clusters.len(),
        bytes: parsed.bytes,
        cpu: parsed.cpu + t.elapsed(),
    }))
}

fn write_site(
    dir: &Path,
    site: &Site,
    pages: &[&Page],
    texts: &[String],
) -> Result<(), CleanError> {
    std::fs::create_dir_all(dir).map_err(|source| CleanError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    for (page, text) in pages.iter().zip(texts) {
        write_atomic(&dir.join(format!("{}.txt", page.stem)), text.as_bytes())?;
    }
    if site.index {
        let mut index = String::from("page\turl\n");
        for page in pages {
            index.push_str(&format!(
                "{}\t{}\n",
                page.stem,
                page.url.as_deref().unwrap_or("")
            ));
        }
        write_atomic(&dir.join("index.tsv"), index.as_bytes())?;
    }
    Ok(())
}

/// [`output::write_atomic`] with the path in the error.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CleanError> {
    output::write_atomic(path, bytes).map_err(|source| CleanError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The summary on stdout. Write errors are ignored: a closed pipe (`| head`) must not turn a
/// finished run into a panic.
fn print_summary(o: &Outcome, detector: Detector) {
    let _ = write_summary(&mut std::io::stdout().lock(), o, detector);
}

fn write_summary(w: &mut impl Write, o: &Outcome, detector: Detector) -> std::io::Result<()> {
    let bytes: u64 = o.sites.iter().map(|s| s.bytes).sum();
    let secs = o.elapsed.as_secs_f64();
    writeln!(
        w,
        "cleaned {} pages of {} sites ({:.1} MB) in {:.2} s ({:.1} MB/s), detector {detector}",
        o.pages(),
        o.sites.len(),
        bytes as f64 / 1e6,
        secs,
        bytes as f64 / 1e6 / secs.max(1e-9),
    )?;
    let width = o
        .sites
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        w,
        "  {:width$}  {:>6}  {:>8}  {:>8}",
        "site", "pages", "clusters", "cpu s"
    )?;
    for s in &o.sites {
        writeln!(
            w,
            "  {:width$}  {:>6}  {:>8}  {:>8.2}",
            s.name,
            s.pages,
            s.clusters,
            s.cpu.as_secs_f64()
        )?;
    }
    if !o.cut.is_empty() {
        writeln!(
            w,
            "{} page(s) cleaned only in part (the parser's limits cut them), each reported above",
            o.cut.len()
        )?;
    }
    if !o.problems.is_empty() {
        writeln!(
            w,
            "{} input problem(s), each reported above; exit code 1",
            o.problems.len()
        )?;
    }
    Ok(())
}
