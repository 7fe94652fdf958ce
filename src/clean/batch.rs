//! Cleaning sites in batches of about `BATCH_BYTES` of HTML: every page of a batch is one task
//! on the worker pool, and the task that parses a site's last page cleans and writes the site
//! (byte-identical pages once, as the crawl stores them), so cleaning overlaps parsing.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::xxh3_64;

use super::dir::read_capped;
use super::report::{lock, Reporter};
use super::site::{Page, Site, Source};
use super::warc::Spool;
use super::{CleanError, SiteSummary};
use crate::detect::{self, Detector, Renders};
use crate::dom::{parse_bytes, Dom};
use crate::output;
use crate::output::FileFormat;
use crate::pool;

/// HTML bytes parsed and cleaned per batch of sites.
pub const BATCH_BYTES: u64 = 256 << 20;

pub(super) fn clean_batches(
    sites: &[Site],
    out: &Path,
    detector: Detector,
    format: FileFormat,
    jobs: usize,
    reporter: &Reporter<'_>,
) -> Result<Vec<SiteSummary>, CleanError> {
    let sizes: Vec<u64> = sites.iter().map(site_bytes).collect();
    reporter
        .observer
        .total(sites.iter().map(|s| s.pages.len() as u64).sum());
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
            format,
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
    format: FileFormat,
    jobs: usize,
    reporter: &Reporter<'_>,
) -> Result<Vec<SiteSummary>, CleanError> {
    reporter.observer.phase("parsing and cleaning");
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
            *lock(&results[s]) = match clean_one_site(site, &done, out, detector, format) {
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
fn parse_page(
    site: &Site,
    page: &Page,
    reporter: &Reporter<'_>,
) -> Option<(Dom, u64, Duration, u64)> {
    let t = Instant::now();
    // A page that cannot be read is reported, counted as done and skipped.
    let skip = |what: String, e: std::io::Error| {
        reporter.problem(format!("{what} (site {}): {e}; page skipped", site.name));
        reporter.observer.page_done();
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
    let mut parsed = parse_bytes(&bytes, content_type);
    if let Some(url) = &page.url {
        parsed.locate(url);
    }
    if crawled.is_some_and(|tag| parsed.robots.with_header(Some(tag)).noindex) {
        // The crawl stores no noindex page: not a page of the site (and not a problem).
        reporter.observer.page_done();
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
    reporter.observer.page_done();
    Some((parsed.dom, bytes.len() as u64, t.elapsed(), xxh3_64(&bytes)))
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
    format: FileFormat,
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
    // Only the format written is rendered.
    let renders = match format.format {
        output::TextFormat::Text => Renders::Text,
        output::TextFormat::Markdown => Renders::Markdown,
    };
    let result = if distinct.len() == parsed.doms.len() {
        detect::clean_site(detector, &parsed.doms, renders)
    } else {
        let doms: Vec<Dom> = distinct.iter().map(|&i| parsed.doms[i].clone()).collect();
        detect::clean_site(detector, &doms, renders)
    };
    let files: Vec<Cow<'_, str>> = (0..result.texts.len())
        .map(|k| format.body(&result.texts[k], &result.markdowns[k]))
        .collect();
    let texts: Vec<&str> = of.iter().map(|&k| files[k].as_ref()).collect();
    let written = write_site(&out.join(&site.name), site, &parsed.pages, &texts, format);
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
    texts: &[&str],
    format: FileFormat,
) -> Result<(), CleanError> {
    std::fs::create_dir_all(dir).map_err(|source| CleanError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    for (page, text) in pages.iter().zip(texts) {
        let name = format!("{}.{}", page.stem, format.extension());
        write_atomic(&dir.join(name), text.as_bytes())?;
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
