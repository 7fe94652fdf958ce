//! What a clean tells its caller while it runs ([`Observer`]: the pages to do, each one done,
//! what is being read; inputs skipped and pages cut by the parser's limits), and the
//! [`Reporter`] that keeps the skipped inputs and cut pages for the outcome.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Told what a clean does as it goes; every method does nothing unless implemented
/// (`thresher clean` shows them as a progress bar and warnings). Called from the clean's worker
/// threads.
pub trait Observer: Sync {
    /// An input, page or WARC record was skipped (also in `Outcome::problems`).
    fn problem(&self, _msg: &str) {}
    /// A page is cleaned only in part: the parser's limits cut it (also in `Outcome::cut`).
    fn cut(&self, _msg: &str) {}
    /// Pages to parse and clean, in all.
    fn total(&self, _pages: u64) {}
    /// One more page parsed (or skipped).
    fn page_done(&self) {}
    /// What is being done now (`reading FILE`, `parsing and cleaning`).
    fn phase(&self, _what: &str) {}
}

/// An observer that hears nothing.
pub struct Quiet;

impl Observer for Quiet {}

/// The observer, and what it was told that the outcome keeps.
pub struct Reporter<'a> {
    pub observer: &'a dyn Observer,
    problems: Mutex<Vec<String>>,
    cut: Mutex<Vec<String>>,
}

impl<'a> Reporter<'a> {
    pub fn new(observer: &'a dyn Observer) -> Reporter<'a> {
        Reporter {
            observer,
            problems: Mutex::new(Vec::new()),
            cut: Mutex::new(Vec::new()),
        }
    }

    pub fn problem(&self, msg: String) {
        self.observer.problem(&msg);
        lock(&self.problems).push(msg);
    }

    /// A page cleaned in part: said, counted, but not a skipped input.
    pub fn cut(&self, msg: String) {
        self.observer.cut(&msg);
        lock(&self.cut).push(msg);
    }

    pub fn take_problems(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.problems))
    }

    pub fn take_cut(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.cut))
    }
}

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
