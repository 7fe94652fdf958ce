//! Cleaning WARC files (`clean --warc`): the `response` records of WARC files grouped into
//! per-host sites, and the spool their bodies wait in (lz4 files on disk) until their batch is
//! cleaned. Reading the records themselves is `crate::warc`'s; this module decides which
//! records are pages, where their site is and what their page id is (`clean`'s header has the
//! contract). A page is
//! what the crawl would store: a 2xx response whose type is HTML (or, untyped, whose body looks
//! like HTML by the crawl's own test), and not noindex (checked when it is parsed); `revisit`
//! records (the crawl's duplicates and 304s) are not pages, so thresher's own WARC files read
//! back to the pages the crawl cleaned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use xxhash_rust::xxh3::xxh3_64;

use super::report::Reporter;
use super::site::{Page, Site, Source};
use crate::crawl::fetch::looks_like_html;
use crate::crawl::url::{normalize_url, site_key};
use crate::output::site_dir_name;
use crate::warc;

/// The largest decoded HTML body taken from a WARC record. Above the crawler's default body cap
/// (`fetch.max_body_bytes`, 5 MiB), so pages of a crawl run with a larger cap can be read back;
/// what parsing does with a huge page is bounded by the parser's own caps.
pub const MAX_PAGE_BYTES: usize = 16 << 20;

/// The HTML pages of WARC files grouped by host (sorted by host, pages by URL; a URL captured
/// twice keeps its last capture).
pub fn sites_from_warcs(files: &[PathBuf], spool: &Spool, reporter: &Reporter<'_>) -> Vec<Site> {
    let mut hosts: BTreeMap<String, BTreeMap<String, Page>> = BTreeMap::new();
    for file in files {
        reporter
            .observer
            .phase(&format!("reading {}", file.display()));
        let reader = match warc::open(file) {
            Ok(r) => r,
            Err(e) => {
                reporter.problem(format!("cannot read {}: {e}; skipped", file.display()));
                continue;
            }
        };
        for record in reader {
            match record {
                Ok(r) => {
                    let Some((host, page)) = page_from_record(&r, file, spool, reporter) else {
                        continue;
                    };
                    let url = page.url.clone().unwrap_or_default();
                    if let Some(Page {
                        source: Source::Spooled { path, .. },
                        ..
                    }) = hosts.entry(host).or_default().insert(url, page)
                    {
                        // An earlier capture of the URL: its body is not needed any more.
                        let _ = std::fs::remove_file(path);
                    }
                }
                Err(e) => reporter.problem(format!("{}: {e}; skipped", file.display())),
            }
        }
    }
    hosts
        .into_iter()
        .map(|(host, pages)| Site {
            name: site_dir_name(&host),
            origin: format!("WARC host {host}"),
            pages: pages.into_values().collect(),
            index: true,
        })
        .collect()
}

/// A record's page and host when it is a 2xx HTML response; other records are passed over
/// quietly (request, metadata, redirects, images…), broken ones reported.
fn page_from_record(
    r: &warc::Record,
    file: &Path,
    spool: &Spool,
    reporter: &Reporter<'_>,
) -> Option<(String, Page)> {
    if r.warc_type().as_deref() != Some("response") {
        return None;
    }
    let at = || format!("{}: record at byte {}", file.display(), r.offset);
    let Some(uri) = r.target_uri() else {
        reporter.problem(format!(
            "{}: response without WARC-Target-URI; skipped",
            at()
        ));
        return None;
    };
    let url = match url::Url::parse(uri) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
        _ => {
            reporter.problem(format!("{}: bad target URI {uri:?}; skipped", at()));
            return None;
        }
    };
    // DNS records and the like are `response`s too, without an HTTP block: only http(s) here.
    let response = match warc::parse_http_response(&r.block, MAX_PAGE_BYTES) {
        Ok(h) => h,
        Err(e) => {
            reporter.problem(format!("{} ({uri}): {e}; skipped", at()));
            return None;
        }
    };
    if !(200..300).contains(&response.status) {
        return None;
    }
    let html = match response.media_type().as_deref() {
        Some("text/html" | "application/xhtml+xml") => true,
        Some(_) => false,
        None => looks_like_html(&response.body),
    };
    if !html {
        return None;
    }
    // The crawl's site key and URL form, so `clean --warc` writes where the crawl does.
    let url = normalize_url(url.clone()).unwrap_or(url);
    let host = site_key(&url);
    let url = url.to_string();
    let content_type = response.header("Content-Type").map(str::to_string);
    let x_robots_tag = response.header("X-Robots-Tag").map(str::to_string);
    let path = match spool.put(&response.body) {
        Ok(p) => p,
        Err(e) => {
            reporter.problem(format!(
                "{} ({uri}): cannot set the body aside: {e}; skipped",
                at()
            ));
            return None;
        }
    };
    Some((
        host,
        Page {
            stem: format!("{:016x}", xxh3_64(url.as_bytes())),
            url: Some(url),
            source: Source::Spooled {
                path,
                len: response.body.len() as u64,
                content_type,
                x_robots_tag,
            },
        },
    ))
}

/// WARC bodies set aside between reading the WARC files and cleaning their batch, so memory
/// holds one batch of sites (`BATCH_BYTES`, or one site), not the whole WARC: lz4-compressed
/// files in `OUT/.thresher-spool-PID/`, removed when the spool is dropped.
pub struct Spool {
    dir: PathBuf,
    next: AtomicUsize,
}

impl Spool {
    /// The spool under `out` (stale spools there removed first); the error is about
    /// `Spool::dir_in(out)`.
    pub fn new(out: &Path) -> std::io::Result<Spool> {
        Spool::remove_stale(out);
        let dir = Spool::dir_in(out);
        std::fs::create_dir_all(&dir)?;
        Ok(Spool {
            dir,
            next: AtomicUsize::new(0),
        })
    }

    /// This process's spool directory under `out`.
    pub fn dir_in(out: &Path) -> PathBuf {
        out.join(format!(".thresher-spool-{}", std::process::id()))
    }

    /// Spools left by a `clean` that was killed (its process is gone).
    fn remove_stale(out: &Path) {
        let Ok(entries) = std::fs::read_dir(out) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(".thresher-spool-"))
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            #[cfg(unix)]
            // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
            let gone = unsafe { libc::kill(pid, 0) } == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            // Elsewhere there is no cheap liveness check: leave it.
            #[cfg(not(unix))]
            let gone = {
                let _ = pid;
                false
            };
            if gone {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    fn put(&self, body: &[u8]) -> std::io::Result<PathBuf> {
        let path = self
            .dir
            .join(format!("{}.lz4", self.next.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&path, lz4_flex::compress_prepend_size(body))?;
        Ok(path)
    }

    pub fn get(path: &Path) -> std::io::Result<Vec<u8>> {
        lz4_flex::decompress_size_prepended(&std::fs::read(path)?).map_err(std::io::Error::other)
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
