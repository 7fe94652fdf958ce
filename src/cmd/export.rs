//! `thresher export`: stream the cleaned corpus out of a data directory, as JSON Lines (url,
//! host, title, cluster, fetched_at, text) or as one text file per page. Reads only the store, so
//! it works on a finished or an interrupted crawl (it exports what is cleaned).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::cli::ExportArgs;
use crate::crawl::url::{page_stem, without_credentials};
use crate::output::AtomicFile;
use crate::progress::Mode;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("unknown format {0:?} (expected jsonl or text)")]
    Format(String),
    #[error("--format text needs --out DIR")]
    TextNeedsDir,
    #[error("{0} does not exist (no crawl has used it)")]
    Missing(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no such host in the data directory: {0}")]
    UnknownHost(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Jsonl,
    Text,
}

#[derive(Serialize)]
struct Line<'a> {
    url: &'a str,
    host: &'a str,
    title: Option<&'a str>,
    cluster: u32,
    fetched_at: String,
    page_id: String,
    text: &'a str,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    pub exported: u64,
    /// Stored pages without cleaned text yet (their host had too few pages, or the crawl was
    /// stopped before cleaning them).
    pub not_cleaned: u64,
}

pub fn run(args: &ExportArgs) -> Result<ExportSummary, ExportError> {
    let format = match args.format.as_str() {
        "jsonl" => Format::Jsonl,
        "text" => Format::Text,
        other => return Err(ExportError::Format(other.into())),
    };
    if format == Format::Text && args.out.is_none() {
        return Err(ExportError::TextNeedsDir);
    }
    if !args.data.exists() {
        return Err(ExportError::Missing(args.data.clone()));
    }
    let store = Store::open_existing(&args.data, 32 << 20)?;
    let sites: Vec<String> = store.sites().into_iter().map(|(s, _)| s).collect();
    let hosts: Vec<String> = if args.host.is_empty() {
        sites
    } else {
        for h in &args.host {
            if !sites.contains(h) {
                return Err(ExportError::UnknownHost(h.clone()));
            }
        }
        args.host.clone()
    };
    let total: u64 = hosts.iter().map(|h| store.site_counters(h).pages).sum();
    let bar = progress_bar(total, Mode::detect(args.quiet));

    let mut summary = ExportSummary::default();
    match format {
        Format::Jsonl => {
            let write_err = |path: &Path| {
                let path = path.to_path_buf();
                move |source| ExportError::Write { path, source }
            };
            let target = args
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("<stdout>"));
            let written = match &args.out {
                None => write_jsonl(
                    &store,
                    &hosts,
                    &bar,
                    &mut BufWriter::new(std::io::stdout().lock()),
                    &mut summary,
                ),
                // Written atomically: nothing is left behind when it fails (e.g. --out is a
                // directory).
                Some(path) => {
                    let mut file = AtomicFile::create(path).map_err(write_err(path))?;
                    write_jsonl(&store, &hosts, &bar, &mut file, &mut summary)
                        .and_then(|()| file.commit().map_err(Failure::Io))
                }
            };
            match written {
                // `export | head`: the reader has all it wants; stop quietly, as ripgrep does.
                Err(Failure::Io(e))
                    if args.out.is_none() && e.kind() == std::io::ErrorKind::BrokenPipe =>
                {
                    bar.finish_and_clear();
                    return Ok(summary);
                }
                Err(Failure::Io(e)) => return Err(write_err(&target)(e)),
                Err(Failure::Store(e)) => return Err(e.into()),
                Ok(()) => {}
            }
        }
        Format::Text => {
            let dir = args.out.clone().expect("invariant: checked above");
            for host in &hosts {
                let host_dir = dir.join(crate::output::site_dir_name(host));
                std::fs::create_dir_all(&host_dir).map_err(|source| ExportError::Write {
                    path: host_dir.clone(),
                    source,
                })?;
                let mut index = String::new();
                for id in store.site_pages(host)? {
                    bar.inc(1);
                    let (Some(meta), Some(clean)) = (store.page(id)?, store.cleaned(id)?) else {
                        summary.not_cleaned += 1;
                        continue;
                    };
                    let path = host_dir.join(format!("{}.txt", page_stem(id)));
                    crate::output::write_atomic(&path, clean.text.as_bytes())
                        .map_err(|source| ExportError::Write { path, source })?;
                    index.push_str(&format!(
                        "{}\t{}\n",
                        page_stem(id),
                        without_credentials(&meta.url)
                    ));
                    summary.exported += 1;
                }
                let path = host_dir.join("index.tsv");
                crate::output::write_atomic(&path, index.as_bytes())
                    .map_err(|source| ExportError::Write { path, source })?;
            }
        }
    }
    bar.finish_and_clear();
    if !args.quiet {
        eprintln!(
            "Exported {} pages from {} host(s){}.",
            summary.exported,
            hosts.len(),
            if summary.not_cleaned > 0 {
                format!(
                    "; {} stored pages have no cleaned text yet",
                    summary.not_cleaned
                )
            } else {
                String::new()
            }
        );
    }
    Ok(summary)
}

/// Why writing JSON lines stopped.
enum Failure {
    Io(std::io::Error),
    Store(StoreError),
}

/// Every cleaned page of `hosts` as one JSON line each, then a flush.
fn write_jsonl(
    store: &Store,
    hosts: &[String],
    bar: &ProgressBar,
    out: &mut dyn Write,
    summary: &mut ExportSummary,
) -> Result<(), Failure> {
    for host in hosts {
        for id in store.site_pages(host).map_err(Failure::Store)? {
            bar.inc(1);
            let (Some(meta), Some(clean)) = (
                store.page(id).map_err(Failure::Store)?,
                store.cleaned(id).map_err(Failure::Store)?,
            ) else {
                summary.not_cleaned += 1;
                continue;
            };
            let url = without_credentials(&meta.url);
            let line = Line {
                url: &url,
                host,
                title: meta.title.as_deref(),
                cluster: clean.cluster,
                fetched_at: rfc3339(meta.fetched_at_ms),
                page_id: page_stem(id),
                text: &clean.text,
            };
            serde_json::to_writer(&mut *out, &line)
                .map_err(std::io::Error::other)
                .and_then(|()| out.write_all(b"\n"))
                .map_err(Failure::Io)?;
            summary.exported += 1;
        }
    }
    out.flush().map_err(Failure::Io)
}

fn progress_bar(total: u64, mode: Mode) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(total),
        match mode {
            Mode::Bars => ProgressDrawTarget::stderr(),
            _ => ProgressDrawTarget::hidden(),
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{spinner} exporting [{bar:30}] {pos}/{len} pages {per_sec}")
            .expect("invariant: valid template")
            .progress_chars("=> "),
    );
    bar
}

fn rfc3339(ms: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
        .to_string()
}
