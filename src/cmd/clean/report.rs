//! Messages to the user while `clean` runs: the progress bar, and warnings printed through it
//! and kept for the summary (inputs skipped, pages cut by the parser's limits).

use std::sync::{Mutex, MutexGuard, PoisonError};

use indicatif::{ProgressBar, ProgressStyle};

/// Messages to the user: through the progress bar, so lines do not tear it.
pub struct Reporter {
    pub bar: ProgressBar,
    problems: std::sync::Mutex<Vec<String>>,
    pub cut: std::sync::Mutex<Vec<String>>,
}

impl Reporter {
    pub fn new(quiet: bool) -> Reporter {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(0).with_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} pages {msg}",
                )
                .expect("invariant: the template is valid"),
            )
        };
        Reporter {
            bar,
            problems: std::sync::Mutex::new(Vec::new()),
            cut: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub fn problem(&self, msg: String) {
        self.bar.suspend(|| eprintln!("thresher: warning: {msg}"));
        self.problems
            .lock()
            .expect("invariant: no panic while holding the lock")
            .push(msg);
    }

    /// A page cleaned in part: said, counted, but not a skipped input.
    pub fn cut(&self, msg: String) {
        self.bar.suspend(|| eprintln!("thresher: warning: {msg}"));
        lock(&self.cut).push(msg);
    }

    pub fn take_problems(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .problems
                .lock()
                .expect("invariant: no panic while holding the lock"),
        )
    }
}

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
