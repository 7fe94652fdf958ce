//! `thresher clean SITE_DIR... [--warc FILE]... --out OUT`: the template engine over saved pages
//! (`clean::Clean`, the library's; its header has the contract). This turns the flags into a
//! clean — the detector is the config's `[template]` one (`--config`, `--set`) unless
//! `--detector` / `--algorithm` say otherwise — shows a progress bar with the warnings above it,
//! and prints the summary. The exit code says whether every input was used: 0 yes, 1 some input,
//! page or WARC record was skipped (each reported); a run that cleans nothing is an error (2).

use std::io::Write;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};

use crate::clean::{Clean, CleanError, Observer, Outcome};
use crate::cli::CleanArgs;
use crate::config::{ConfigError, Overrides};
use crate::detect::Detector;
use crate::output::TextFormat;

#[derive(Debug, thiserror::Error)]
pub enum CleanCmdError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Clean(#[from] CleanError),
}

pub fn run(args: &CleanArgs) -> Result<ExitCode, CleanCmdError> {
    // `[template] detector` / `algorithm` of the config, unless `--detector` / `--algorithm`.
    let mut flags = Overrides::default();
    super::template_overrides(&mut flags, &args.template);
    let config = super::settings(&args.settings, flags)?;
    let detector = config.template.detector;
    if args.site_dirs.is_empty() && args.warc.is_empty() {
        return Err(CleanCmdError::Usage(
            "nothing to clean: give SITE_DIR arguments and/or --warc FILE".into(),
        ));
    }
    let format = TextFormat::named(&args.format).ok_or_else(|| {
        CleanCmdError::Usage(format!(
            "--format {}: expected one of {}",
            args.format,
            TextFormat::NAMES.join(", ")
        ))
    })?;
    let mut clean = Clean::new(&args.out)
        .detector(detector)
        .format(format)
        .markdown(config.markdown);
    for dir in &args.site_dirs {
        clean = clean.site_dir(dir);
    }
    for file in &args.warc {
        clean = clean.warc(file);
    }
    let bar = Bar::new(args.quiet);
    let outcome = clean.run(&bar);
    bar.0.finish_and_clear();
    let outcome = outcome?;
    // Write errors are ignored: a closed pipe (`| head`) must not turn a finished run into a
    // panic.
    let _ = write_summary(&mut std::io::stdout().lock(), &outcome, detector);
    Ok(if outcome.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The progress bar, with the warnings printed through it so lines do not tear it.
struct Bar(ProgressBar);

impl Bar {
    fn new(quiet: bool) -> Bar {
        Bar(if quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(0).with_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} pages {msg}",
                )
                .expect("invariant: the template is valid"),
            )
        })
    }

    fn warn(&self, msg: &str) {
        self.0.suspend(|| eprintln!("thresher: warning: {msg}"));
    }
}

impl Observer for Bar {
    fn problem(&self, msg: &str) {
        self.warn(msg);
    }

    fn cut(&self, msg: &str) {
        self.warn(msg);
    }

    fn total(&self, pages: u64) {
        self.0.set_length(pages);
    }

    fn page_done(&self) {
        self.0.inc(1);
    }

    fn phase(&self, what: &str) {
        self.0.set_message(what.to_string());
    }
}

/// Sites the summary names (most pages first); the rest are counted.
const SUMMARY_SITES: usize = 10;

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
    // The biggest sites by name, the rest counted: a clean of 1,000 sites printed 1,000 lines.
    let mut sites: Vec<_> = o.sites.iter().collect();
    sites.sort_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.name.cmp(&b.name)));
    for s in sites.iter().take(SUMMARY_SITES) {
        writeln!(
            w,
            "  {:width$}  {:>6}  {:>8}  {:>8.2}",
            s.name,
            s.pages,
            s.clusters,
            s.cpu.as_secs_f64()
        )?;
    }
    if let Some(rest) = sites.get(SUMMARY_SITES..).filter(|r| !r.is_empty()) {
        let pages: usize = rest.iter().map(|s| s.pages).sum();
        let cpu: f64 = rest.iter().map(|s| s.cpu.as_secs_f64()).sum();
        writeln!(
            w,
            "  … and {} more sites ({pages} pages, {cpu:.2} cpu s)",
            rest.len()
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
