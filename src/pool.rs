//! The one worker pool: [`parallel_map`] runs a function over a slice on scoped threads and
//! returns the results in input order, so what a caller computes from them does not depend on
//! the number of threads or on which thread finished first.
//!
//! Owns: spreading independent work over cores. Imports no other thresher module.
//!
//! The threads are spawned by the calling thread, so they inherit its OS priority (on Linux, its
//! nice value): a caller decides the priority of its work (`learn`'s end-of-crawl pass runs at
//! the crawl's, from `Learner::finish`'s caller). A process-wide pool (rayon's global one) would
//! not have that property.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of threads worth running: the available cores, at least 1.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` over `items` on up to `jobs` threads; results in input order. Items are handed out in
/// input order (a shared index), so callers that want the big items to start first sort them
/// so. With one job or one item, `f` runs on the calling thread. A panic in `f` reaches the
/// caller once every thread has stopped.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if jobs <= 1 || items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = items.iter().map(|_| None).collect();
    let mut panic = None;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.min(items.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return done;
                        };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        for w in workers {
            match w.join() {
                Ok(done) => {
                    for (i, r) in done {
                        slots[i] = Some(r);
                    }
                }
                Err(payload) => panic = Some(payload),
            }
        }
    });
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
    slots
        .into_iter()
        .map(|r| r.expect("invariant: every item was mapped"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order_for_any_job_count() {
        let items: Vec<u64> = (0..100).collect();
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for jobs in [0, 1, 2, 3, 8, 200] {
            assert_eq!(parallel_map(&items, jobs, |x| x * x), want, "jobs {jobs}");
        }
        assert!(parallel_map(&[] as &[u64], 4, |x| *x).is_empty());
    }

    #[test]
    fn a_panic_reaches_the_caller() {
        let items: Vec<u32> = (0..10).collect();
        let r = std::panic::catch_unwind(|| {
            parallel_map(&items, 4, |&x| {
                assert!(x != 7, "seven");
                x
            })
        });
        assert!(r.is_err());
    }
}
