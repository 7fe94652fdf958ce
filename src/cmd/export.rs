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
    let format = Format::parse(&args.format)?;
    if format == Format::Text && args.out.is_none() {
        return Err(ExportError::TextNeedsDir);
    }
    if !args.data.exists() {
        return Err(ExportError::Missing(args.data.clone()));
    }
    let store = Store::open_existing(&args.data, 32 << 20)?;
    let hosts = chosen_hosts(&store, &args.host)?;
    let total: u64 = hosts.iter().map(|h| store.site_counters(h).pages).sum();
    let bar = progress_bar(total, Mode::detect(args.quiet));

    let mut summary = ExportSummary::default();
    match format {
        Format::Jsonl => {
            if export_jsonl(&store, &hosts, args.out.as_deref(), &bar, &mut summary)?
                == Ended::ReaderGone
            {
                bar.finish_and_clear();
                return Ok(summary);
            }
        }
        Format::Text => {
            let dir = args.out.as_deref().expect("invariant: checked above");
            for host in &hosts {
                export_host_text(&store, host, dir, &bar, &mut summary)?;
            }
        }
    }
    bar.finish_and_clear();
    if !args.quiet {
        report(&summary, hosts.len());
    }
    Ok(summary)
}

impl Format {
    fn parse(name: &str) -> Result<Format, ExportError> {
        match name {
            "jsonl" => Ok(Format::Jsonl),
            "text" => Ok(Format::Text),
            other => Err(ExportError::Format(other.into())),
        }
    }
}

/// The hosts to export: every site in the store, or the ones asked for (each must be there).
fn chosen_hosts(store: &Store, asked: &[String]) -> Result<Vec<String>, ExportError> {
    let sites: Vec<String> = store.sites().into_iter().map(|(s, _)| s).collect();
    if asked.is_empty() {
        return Ok(sites);
    }
    for h in asked {
        if !sites.contains(h) {
            return Err(ExportError::UnknownHost(h.clone()));
        }
    }
    Ok(asked.to_vec())
}

/// How a JSON Lines export ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// Every page was written.
    Done,
    /// stdout's reader closed the pipe (`export | head`): it has all it wants.
    ReaderGone,
}

/// The JSON Lines export to `out` (stdout when `None`).
fn export_jsonl(
    store: &Store,
    hosts: &[String],
    out: Option<&Path>,
    bar: &ProgressBar,
    summary: &mut ExportSummary,
) -> Result<Ended, ExportError> {
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ExportError::Write { path, source }
    };
    let target = out.map_or_else(|| PathBuf::from("<stdout>"), Path::to_path_buf);
    let written = match out {
        None => write_jsonl(
            store,
            hosts,
            bar,
            &mut BufWriter::new(std::io::stdout().lock()),
            summary,
        ),
        // Written atomically: nothing is left behind when it fails (e.g. --out is a
        // directory).
        Some(path) => {
            let mut file = AtomicFile::create(path).map_err(write_err(path))?;
            write_jsonl(store, hosts, bar, &mut file, summary)
                .and_then(|()| file.commit().map_err(Failure::Io))
        }
    };
    match written {
        // `export | head`: stop quietly, as ripgrep does.
        Err(Failure::Io(e)) if out.is_none() && e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(Ended::ReaderGone)
        }
        Err(Failure::Io(e)) => Err(write_err(&target)(e)),
        Err(Failure::Store(e)) => Err(e.into()),
        Ok(()) => Ok(Ended::Done),
    }
}

/// One host's cleaned pages as `DIR/<site>/<page id>.txt`, plus its `index.tsv`.
fn export_host_text(
    store: &Store,
    host: &str,
    dir: &Path,
    bar: &ProgressBar,
    summary: &mut ExportSummary,
) -> Result<(), ExportError> {
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
        .map_err(|source| ExportError::Write { path, source })
}

/// The closing line on stderr.
fn report(summary: &ExportSummary, hosts: usize) {
    eprintln!(
        "Exported {} pages from {} host(s){}.",
        summary.exported,
        hosts,
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
