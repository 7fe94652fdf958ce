//! The cleaned text files a crawl has on disk over time: a thread counts `OUT/<site>/*.txt`
//! (and `*.md`) again and again while the crawler runs, each scan at least `every` after the
//! previous one and spaced so scanning takes at most a twentieth of one core (but at most 5 s
//! apart), and keeps each scan's (start, end, count). From them: the latest count (the series) and the count at an
//! instant found afterwards, such as the server's last page request.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest wait between counts, whatever a count costs (a count of 110,000 files took up
/// to 0.8 s on a loaded machine: 20 times that left 16 s between counts).
const MAX_EVERY: Duration = Duration::from_secs(5);

/// One scan of the output directory.
#[derive(Clone, Copy, Debug)]
pub struct Scan {
    /// Seconds since the benchmark's start when the scan began and ended.
    pub started_s: f64,
    pub ended_s: f64,
    pub files: u64,
}

/// The counting thread.
pub struct TextCounter {
    stop: Arc<AtomicBool>,
    /// The last scan's count + 1 (0: no scan yet).
    latest: Arc<AtomicU64>,
    handle: JoinHandle<Vec<Scan>>,
}

impl TextCounter {
    /// Start counting the text files under `out`; times count from `t0`.
    pub fn start(out: PathBuf, t0: Instant, every: Duration) -> TextCounter {
        let stop = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(AtomicU64::new(0));
        let (s, l) = (stop.clone(), latest.clone());
        let handle = std::thread::Builder::new()
            .name("text-counter".into())
            .spawn(move || {
                let mut scans = Vec::new();
                while !s.load(Relaxed) {
                    let began = Instant::now();
                    let files = count(&out);
                    let took = began.elapsed();
                    scans.push(Scan {
                        started_s: (began - t0).as_secs_f64(),
                        ended_s: (began + took - t0).as_secs_f64(),
                        files,
                    });
                    l.store(files + 1, Relaxed);
                    let pause = every.max((took * 20).min(MAX_EVERY)).saturating_sub(took);
                    let until = Instant::now() + pause;
                    while !s.load(Relaxed) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(20).min(pause));
                    }
                }
                scans
            })
            .expect("spawn the text counter");
        TextCounter {
            stop,
            latest,
            handle,
        }
    }

    /// The latest scan's count (`None`: no scan has ended yet).
    pub fn latest(&self) -> Option<u64> {
        self.latest.load(Relaxed).checked_sub(1)
    }

    /// Stop and hand back every scan.
    pub fn finish(self) -> Scans {
        self.stop.store(true, Relaxed);
        Scans(self.handle.join().unwrap_or_default())
    }
}

/// The scans of a run, in order.
#[derive(Default)]
pub struct Scans(pub Vec<Scan>);

impl Scans {
    /// The count of the last scan that ended at or before `t`: a lower bound of the text files
    /// on disk at `t`, at most [`Scans::max_gap_s`] old (`None`: no scan ended by then).
    pub fn at(&self, t: f64) -> Option<u64> {
        self.0
            .iter()
            .rev()
            .find(|s| s.ended_s <= t)
            .map(|s| s.files)
    }

    /// The mean time a scan took, in milliseconds.
    pub fn mean_ms(&self) -> Option<f64> {
        let n = self.0.len();
        (n > 0)
            .then(|| self.0.iter().map(|s| s.ended_s - s.started_s).sum::<f64>() * 1e3 / n as f64)
    }

    /// The largest gap between the starts of consecutive scans, in seconds: how stale a count
    /// read with [`Scans::at`] can be.
    pub fn max_gap_s(&self) -> Option<f64> {
        self.0
            .windows(2)
            .map(|w| w[1].started_s - w[0].started_s)
            .reduce(f64::max)
    }
}

/// The cleaned text files under `out`: `*.txt` and `*.md` one level down (a site's directory),
/// not the temporary `.NAME.tmp` files an atomic write leaves while it runs.
pub fn count(out: &Path) -> u64 {
    let Ok(sites) = std::fs::read_dir(out) else {
        return 0;
    };
    let mut n = 0;
    for site in sites.flatten() {
        let Ok(files) = std::fs::read_dir(site.path()) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name();
            let name = name.as_encoded_bytes();
            if !name.starts_with(b".") && (name.ends_with(b".txt") || name.ends_with(b".md")) {
                n += 1;
            }
        }
    }
    n
}
