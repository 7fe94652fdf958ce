//! Showing a crawl: `crawl::stats::CrawlStats` (the figures, which live beside the crawl that
//! bumps them) rendered by a ticker as indicatif bars on a terminal, as a log line every few
//! seconds when stderr is not a terminal, or not at all with `--quiet`. Log lines print through
//! indicatif so bars don't tear. Owns only the rendering: it reads the figures, never changes them.

use std::io::IsTerminal;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::crawl::stats::{CrawlStats, HostStats, OriginWait};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Bars,
    Lines,
    Quiet,
}

impl Mode {
    /// Bars on a terminal, lines otherwise, nothing when quiet.
    pub fn detect(quiet: bool) -> Mode {
        if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bars
        } else {
            Mode::Lines
        }
    }
}

/// Renders `CrawlStats` until dropped or `finish`ed.
pub struct Progress {
    mode: Mode,
    multi: MultiProgress,
    main: ProgressBar,
    hosts: Vec<ProgressBar>,
    /// Lines for origins that wait (robots.txt unreachable, backoff, set aside).
    waits: Vec<ProgressBar>,
    started: Instant,
    last_line: Mutex<Instant>,
    last: Mutex<(Instant, u64)>,
}

const HOST_LINES: usize = 5;
/// Waiting origins shown by name; more are counted on the last line.
const WAIT_LINES: usize = 4;

impl Progress {
    pub fn new(mode: Mode) -> Arc<Progress> {
        let multi = MultiProgress::with_draw_target(match mode {
            Mode::Bars => ProgressDrawTarget::stderr_with_hz(5),
            _ => ProgressDrawTarget::hidden(),
        });
        let main = multi.add(ProgressBar::new(0));
        main.set_style(
            ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} fetched/known  {msg}",
            )
            .expect("invariant: valid template")
            .progress_chars("=> "),
        );
        let hosts = (0..HOST_LINES)
            .map(|_| {
                let b = multi.add(ProgressBar::new(0));
                b.set_style(
                    ProgressStyle::with_template("  {msg}").expect("invariant: valid template"),
                );
                b
            })
            .collect();
        let waits = (0..=WAIT_LINES)
            .map(|_| {
                let b = multi.add(ProgressBar::new(0));
                b.set_style(
                    ProgressStyle::with_template("  {msg}").expect("invariant: valid template"),
                );
                b
            })
            .collect();
        Arc::new(Progress {
            mode,
            multi,
            main,
            hosts,
            waits,
            started: Instant::now(),
            last_line: Mutex::new(Instant::now()),
            last: Mutex::new((Instant::now(), 0)),
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Print a line without tearing the bars (stderr).
    pub fn println(&self, line: &str) {
        match self.mode {
            Mode::Bars => self.multi.suspend(|| eprintln!("{line}")),
            Mode::Lines => eprintln!("{line}"),
            Mode::Quiet => {}
        }
    }

    /// Redraw from `stats` (call a few times a second).
    pub fn tick(&self, stats: &CrawlStats) {
        if self.mode == Mode::Quiet {
            return;
        }
        let fetched = stats.fetched.load(Relaxed);
        let queued = stats.queued.load(Relaxed);
        let rate = {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            let dt = last.0.elapsed().as_secs_f64();
            let r = if dt > 0.0 {
                (fetched.saturating_sub(last.1)) as f64 / dt
            } else {
                0.0
            };
            if dt >= 1.0 {
                *last = (Instant::now(), fetched);
            }
            r
        };
        let summary = summary_line(stats, rate);
        match self.mode {
            Mode::Bars => {
                self.main.set_length(fetched + queued);
                self.main.set_position(fetched);
                self.main.set_message(summary);
                let busiest = stats.busiest(HOST_LINES);
                for (i, bar) in self.hosts.iter().enumerate() {
                    bar.set_message(
                        busiest
                            .get(i)
                            .map_or(String::new(), |(h, s)| host_line(h, s)),
                    );
                }
                let waits = wait_lines(&stats.waits());
                for (i, bar) in self.waits.iter().enumerate() {
                    bar.set_message(waits.get(i).cloned().unwrap_or_default());
                }
            }
            Mode::Lines => {
                let mut last = self.last_line.lock().unwrap_or_else(|p| p.into_inner());
                if last.elapsed() >= Duration::from_secs(5) {
                    *last = Instant::now();
                    eprintln!(
                        "[{:>6.0}s] fetched {fetched} queued {queued}  {summary}",
                        self.started.elapsed().as_secs_f64()
                    );
                    for line in wait_lines(&stats.waits()) {
                        eprintln!("  {line}");
                    }
                }
            }
            Mode::Quiet => {}
        }
    }

    pub fn finish(&self) {
        for b in self.hosts.iter().chain(&self.waits) {
            b.finish_and_clear();
        }
        self.main.finish_and_clear();
    }
}

/// The crawl-wide figures shown beside the main bar and in each plain progress line (URLs
/// over a host's page budget and sites whose text is final, when there are any).
fn summary_line(stats: &CrawlStats, rate: f64) -> String {
    let over = stats.over_budget.load(Relaxed);
    let mut over = if over > 0 {
        format!("  over budget {over}")
    } else {
        String::new()
    };
    let sites_final = stats.sites_final.load(Relaxed);
    if sites_final > 0 {
        over.push_str(&format!("  sites final {sites_final}"));
    }
    format!(
        "{:.0} pages/s  {}  stored {}  errors {}  skipped {}  retries {}  waiting {}  in flight {}  templates {}  cleaned {}{over}",
        rate,
        human_bytes(stats.bytes.load(Relaxed)),
        stats.stored.load(Relaxed),
        stats.errors.load(Relaxed),
        stats.skipped.load(Relaxed),
        stats.retries.load(Relaxed),
        stats.waiting(),
        stats.in_flight.load(Relaxed),
        stats.templates.load(Relaxed),
        stats.cleaned.load(Relaxed),
    )
}

/// `waiting: <origin> — <why> at <when>` per waiting origin, the ones past `WAIT_LINES` counted.
fn wait_lines(waits: &[OriginWait]) -> Vec<String> {
    let mut lines: Vec<String> = waits
        .iter()
        .take(WAIT_LINES)
        .map(|w| {
            let what = if w.until_ms.is_some() {
                "waiting"
            } else {
                "set aside"
            };
            format!("{what}: {}", w.line())
        })
        .collect();
    if waits.len() > WAIT_LINES {
        lines.push(format!(
            "… and {} more origins waiting (thresher status lists them)",
            waits.len() - WAIT_LINES
        ));
    }
    lines
}

fn host_line(host: &str, s: &HostStats) -> String {
    format!(
        "{host:<32} fetched {:>6}  queued {:>6}  errors {:>4}  templates {:>3}  cleaned {:>6}",
        s.fetched, s.queued, s.errors, s.clusters, s.cleaned
    )
}

/// `12.3 MB`
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A `tracing` writer that prints through `Progress` (so log lines don't tear the bars).
#[derive(Clone)]
pub struct LogWriter(pub Arc<Progress>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let s = String::from_utf8_lossy(buf);
        let line = s.trim_end_matches('\n');
        if self.0.mode() == Mode::Bars {
            self.0.multi.suspend(|| eprintln!("{line}"));
        } else {
            eprintln!("{line}");
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_show_rate_bytes_errors_templates_and_cleaned() {
        let s = CrawlStats::default();
        s.bytes.store(2_500_000, Relaxed);
        s.stored.store(40, Relaxed);
        s.errors.store(3, Relaxed);
        s.templates.store(7, Relaxed);
        s.cleaned.store(35, Relaxed);
        assert_eq!(
            summary_line(&s, 12.4),
            "12 pages/s  2.5 MB  stored 40  errors 3  skipped 0  retries 0  waiting 0  in flight 0  templates 7  cleaned 35"
        );
        s.over_budget.store(12, Relaxed);
        assert!(summary_line(&s, 12.4).ends_with("cleaned 35  over budget 12"));
        s.sites_final.store(4, Relaxed);
        assert!(summary_line(&s, 12.4).ends_with("cleaned 35  over budget 12  sites final 4"));
        s.host("a.example", |h| {
            h.fetched = 40;
            h.queued = 9;
            h.errors = 3;
            h.clusters = 2;
            h.cleaned = 35;
        });
        let (host, h) = s.busiest(1).remove(0);
        let line = host_line(&host, &h);
        assert!(line.starts_with("a.example "), "{line}");
        for part in [
            "fetched     40",
            "queued      9",
            "errors    3",
            "templates   2",
            "cleaned     35",
        ] {
            assert!(line.contains(part), "{part:?} in {line:?}");
        }
    }

    #[test]
    fn human_bytes_units() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(12_345_678), "12.3 MB");
    }
}
