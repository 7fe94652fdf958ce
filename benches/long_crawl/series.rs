//! The long-crawl benchmark's measurements: the sample taken every interval (one TSV row), the
//! one-second timeline of pages served, and what the summary derives from it (pages/s per tenth
//! of the crawl, the first and last tenth).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

/// One row of the series.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Sample {
    /// Seconds since the first crawler process started.
    pub t_s: f64,
    /// Which crawler process (0; 1 after a kill -9 and restart).
    pub run: u32,
    /// Page requests the universe answered so far (its own count).
    pub pages: u64,
    /// Pages per second since the previous sample.
    pub pages_per_s: f64,
    /// Distinct pages served so far.
    pub unique: u64,
    pub rss_mb: f64,
    /// The process's own peak so far (VmHWM).
    pub hwm_mb: f64,
    /// The data directory on disk (allocated blocks, as du counts).
    pub store_mb: f64,
    /// From the crawl's status snapshot (`DATA/status.json`, written every 5 s): pages stored,
    /// URLs queued, pages with cleaned text (`None` when the snapshot lists only the busiest
    /// hosts), and the learner's backlog (stored − cleaned, or stored − text files then).
    pub stored: Option<u64>,
    pub queued: Option<u64>,
    pub cleaned: Option<u64>,
    /// Cleaned text files on disk in the output directory (the latest count).
    pub texts: Option<u64>,
    pub backlog: Option<u64>,
    /// The machine's 1-minute load average (/proc/loadavg): how shared the 2 cores were.
    pub load1: f64,
    /// What the crawler is doing: `crawl` (pages still coming) or `final` (no page for 5 s:
    /// the end-of-crawl pass).
    pub phase: &'static str,
}

impl Sample {
    pub const HEADER: &'static str = "t_s\trun\tpages\tpages_per_s\tunique\trss_mb\thwm_mb\t\
                                      store_mb\tstored\tqueued\tcleaned\ttexts\tbacklog\tload1\t\
                                      phase";

    pub fn tsv(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        format!(
            "{:.1}\t{}\t{}\t{:.1}\t{}\t{:.1}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t{:.2}\t{}",
            self.t_s,
            self.run,
            self.pages,
            self.pages_per_s,
            self.unique,
            self.rss_mb,
            self.hwm_mb,
            self.store_mb,
            opt(self.stored),
            opt(self.queued),
            opt(self.cleaned),
            opt(self.texts),
            opt(self.backlog),
            self.load1,
            self.phase
        )
    }
}

/// Append-only TSV file: each row is written and flushed at once, so an interrupted run leaves
/// its series.
pub struct TsvFile(std::fs::File);

impl TsvFile {
    pub fn create(path: &Path) -> std::io::Result<TsvFile> {
        let mut f = std::fs::File::create(path)?;
        writeln!(f, "{}", Sample::HEADER)?;
        Ok(TsvFile(f))
    }

    pub fn push(&mut self, s: &Sample) {
        let _ = writeln!(self.0, "{}", s.tsv());
        let _ = self.0.flush();
    }
}

/// Pages served over time, one point a second: (seconds since start, pages).
#[derive(Default)]
pub struct Timeline(pub Vec<(f64, u64)>);

impl Timeline {
    pub fn push(&mut self, t: f64, pages: u64) {
        self.0.push((t, pages));
    }

    /// When `pages` reached `n` (linear between the points), `None` if it never did.
    pub fn time_at(&self, n: f64) -> Option<f64> {
        let mut prev = (0.0, 0u64);
        for &(t, p) in &self.0 {
            if p as f64 >= n {
                let (t0, p0) = prev;
                if p == p0 {
                    return Some(t);
                }
                return Some(t0 + (t - t0) * (n - p0 as f64) / (p - p0) as f64);
            }
            prev = (t, p);
        }
        None
    }

    /// Pages/s within each tenth of the crawl's pages (from the first page on, so the child's
    /// start-up is not in the first tenth).
    pub fn tenths(&self) -> Vec<f64> {
        let total = self.0.last().map_or(0, |p| p.1) as f64;
        if total < 10.0 {
            return Vec::new();
        }
        let Some(start) = self.time_at(1.0) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut t_prev = start;
        for k in 1..=10 {
            let n = total * k as f64 / 10.0;
            let Some(t) = self.time_at(n) else { break };
            // The first tenth starts at page 1, not 0.
            let pages = if k == 1 { n - 1.0 } else { total / 10.0 };
            out.push(pages / (t - t_prev).max(1e-3));
            t_prev = t;
        }
        out
    }
}

/// The 1-minute load average.
pub fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// "12.3 MB"-style megabytes (10^6 bytes).
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The tenths as "812 / 790 / …".
pub fn show_tenths(tenths: &[f64]) -> String {
    let mut s = String::new();
    for (i, r) in tenths.iter().enumerate() {
        if i > 0 {
            s.push_str(" / ");
        }
        let _ = write!(s, "{r:.0}");
    }
    s
}
