//! `thresher export`: stream the cleaned corpus out of a data directory — JSON Lines (plain,
//! `.gz` or `.zst`), Parquet, or one text file per page — with per-page metadata and optional
//! deduplication (`corpus` does the work; this parses the flags, shows a progress bar and prints
//! the summary). Reads only the store, so it works on a finished or an interrupted crawl (it
//! exports what is cleaned). With `--cluster`, a cluster crawl's corpus is gathered into the data
//! directory first (`run::gather`).

use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::ExportArgs;
use crate::config::ConfigError;
use crate::corpus::write::{jsonl::JsonlSink, parquet::ParquetSink, text};
use crate::corpus::{self, CorpusError, Dedup, Field, Format, Options, Sink, Summary};
use crate::progress::Mode;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("--format text and markdown need --out DIR")]
    TextNeedsDir,
    #[error("--format parquet needs --out FILE")]
    ParquetNeedsFile,
    #[error("{0} does not exist (no crawl has used it)")]
    Missing(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    #[error("no such host in the data directory: {0}")]
    UnknownHost(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--cluster`: gathering the corpus failed, or this build has no cluster mode.
    #[error("{0}")]
    Cluster(String),
}

pub fn run(args: &ExportArgs) -> Result<Summary, ExportError> {
    let config = super::settings(&args.settings, super::data_override(args.data.as_deref()))?;
    let data = &config.crawl.data_dir;
    let format = Format::choose(args.format.as_deref(), args.out.as_deref())?;
    let dedup = Dedup::parse(&args.dedup)?;
    let fields = match format {
        Format::Text if args.fields.is_some() => return Err(CorpusError::TextHasNoFields.into()),
        Format::Text if dedup == Dedup::Mark => return Err(CorpusError::TextCannotMark.into()),
        Format::Text => text::FIELDS.to_vec(),
        Format::Markdown if args.fields.is_some() => {
            return Err(CorpusError::TextHasNoFields.into())
        }
        Format::Markdown if dedup == Dedup::Mark => return Err(CorpusError::TextCannotMark.into()),
        Format::Markdown => text::MARKDOWN_FIELDS.to_vec(),
        Format::Jsonl | Format::Parquet => Field::parse_list(args.fields.as_deref())?,
    };
    match (format, &args.out) {
        (Format::Text | Format::Markdown, None) => return Err(ExportError::TextNeedsDir),
        (Format::Parquet, None) => return Err(ExportError::ParquetNeedsFile),
        _ => {}
    }
    if let Some(urls) = &args.cluster {
        gather(urls, &config, args.quiet)?;
    }
    if !data.exists() {
        return Err(ExportError::Missing(data.clone()));
    }
    let store = Store::open_existing(data, config.store.cache_bytes)?;
    let hosts = chosen_hosts(&store, &args.host)?;
    let total: u64 = hosts.iter().map(|h| store.site_counters(h).pages).sum();
    let bar = progress_bar(total, Mode::detect(args.quiet));

    let out = args.out.as_deref();
    let mut sink: Box<dyn Sink> = match (format, out) {
        (Format::Text, Some(dir)) => Box::new(text::TextSink::new(dir, false)),
        (Format::Markdown, Some(dir)) => Box::new(text::TextSink::new(dir, true)),
        (Format::Parquet, Some(file)) => Box::new(ParquetSink::create(file, &fields)?),
        _ => Box::new(JsonlSink::create(out, &fields)?),
    };
    let opts = Options {
        fields,
        dedup,
        hosts,
        jobs: crate::pool::available(),
        markdown: config.markdown,
    };
    let done = corpus::export(&store, &opts, sink.as_mut(), || bar.inc(1)).and_then(|summary| {
        sink.finish()?;
        Ok(summary)
    });
    bar.finish_and_clear();
    match done {
        // `export | head`: the reader has all it wants; stop quietly, as ripgrep does.
        Err(CorpusError::Write { source, .. })
            if out.is_none() && source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            Ok(Summary::default())
        }
        Err(e) => Err(e.into()),
        Ok(summary) => {
            if !args.quiet {
                eprintln!("{}", report(&summary, opts.hosts.len(), dedup));
            }
            Ok(summary)
        }
    }
}

/// `--cluster URLS`: the cluster's corpus gathered into the data directory first.
fn gather(urls: &str, config: &crate::config::Config, quiet: bool) -> Result<(), ExportError> {
    #[cfg(feature = "cluster")]
    {
        let progress = crate::progress::Progress::new(Mode::detect(quiet));
        let shown = progress.clone();
        let gathered = crate::run::gather::gather(urls, config, move |event| {
            super::crawl::show(&shown, event)
        });
        progress.finish();
        let gathering = gathered.map_err(|e| ExportError::Cluster(e.to_string()))?;
        if !quiet {
            eprintln!("{}", gathering.line(&config.crawl.data_dir));
        }
        Ok(())
    }
    #[cfg(not(feature = "cluster"))]
    {
        let _ = (urls, config, quiet);
        Err(ExportError::Cluster(
            super::cluster::ClusterCmdError::NotBuilt.to_string(),
        ))
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

/// The closing line (printed on stderr).
pub fn report(summary: &Summary, hosts: usize, dedup: Dedup) -> String {
    let mut line = format!("Exported {} pages from {} host(s)", summary.exported, hosts);
    let (exact, near) = match dedup {
        Dedup::Mark => (summary.marked_exact, summary.marked_near),
        _ => (summary.dropped_exact, summary.dropped_near),
    };
    match dedup {
        Dedup::None => {}
        Dedup::Exact => line.push_str(&format!("; dropped {exact} exact duplicates")),
        Dedup::Near => line.push_str(&format!(
            "; dropped {} duplicates ({exact} exact, {near} near)",
            exact + near
        )),
        Dedup::Mark => line.push_str(&format!(
            "; marked {} duplicates with dup_of ({exact} exact, {near} near)",
            exact + near
        )),
    }
    if summary.not_cleaned > 0 {
        line.push_str(&format!(
            "; {} stored pages have no cleaned text yet",
            summary.not_cleaned
        ));
    }
    line.push('.');
    line
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
        ProgressStyle::with_template(
            "{spinner} exporting [{bar:30}] {pos}/{len} pages {per_sec} eta {eta}",
        )
        .expect("invariant: valid template")
        .progress_chars("=> "),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "cluster"))]
    #[test]
    fn without_the_feature_export_cluster_says_how_to_build_it_and_writes_nothing() {
        use clap::Parser;
        let dir = tempfile::tempdir().expect("tmp");
        let data = dir.path().join("data");
        let cli = crate::cli::Cli::parse_from([
            "thresher".as_ref(),
            "export".as_ref(),
            "--cluster".as_ref(),
            "nats://h:4222".as_ref(),
            "--data".as_ref(),
            data.as_os_str(),
        ]);
        let crate::cli::Command::Export(args) = cli.command else {
            panic!("parsed as another command");
        };
        let e = run(&args).unwrap_err();
        assert!(e.to_string().contains("--features cluster"), "{e}");
        assert!(!data.exists());
    }

    #[test]
    fn the_summary_says_how_many_duplicates_went_and_why() {
        let s = Summary {
            exported: 10,
            not_cleaned: 2,
            dropped_exact: 3,
            dropped_near: 4,
            ..Summary::default()
        };
        assert_eq!(
            report(&s, 2, Dedup::Near),
            "Exported 10 pages from 2 host(s); dropped 7 duplicates (3 exact, 4 near); 2 stored \
             pages have no cleaned text yet."
        );
        assert_eq!(
            report(&s, 1, Dedup::Exact),
            "Exported 10 pages from 1 host(s); dropped 3 exact duplicates; 2 stored pages have \
             no cleaned text yet."
        );
        let m = Summary {
            exported: 5,
            marked_exact: 1,
            marked_near: 2,
            ..Summary::default()
        };
        assert_eq!(
            report(&m, 1, Dedup::Mark),
            "Exported 5 pages from 1 host(s); marked 3 duplicates with dup_of (1 exact, 2 near)."
        );
        assert_eq!(
            report(&m, 1, Dedup::None),
            "Exported 5 pages from 1 host(s)."
        );
    }
}
