//! Per-origin politeness: when the next request to an origin may start. Two rules, both kept:
//! a `governor` limiter per origin spaces request *starts* by the origin's delay (config delay
//! raised by Crawl-delay), and the next start also waits `delay` after the previous response
//! *completed* — so the server never sees two requests closer than the delay, whatever the
//! network adds. 429/503 and transient errors push the origin back (Retry-After, else
//! exponential backoff), and a success resets the backoff.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter as Limiter, Quota, RateLimiter};
use tokio::time::Instant;

pub struct Politeness {
    delay: Duration,
    /// Boxed: a `Politeness` sits in each origin of a broad crawl's table, where the limiter
    /// (only with a delay) would more than double its size.
    limiter: Option<Box<Limiter>>,
    /// No request may start before this.
    next_allowed: Instant,
    backoff_exp: u32,
}

/// Backoff settings (from `FetchConfig`).
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
    pub max_retry_after: Duration,
}

impl Politeness {
    pub fn new(delay: Duration) -> Politeness {
        Politeness {
            delay,
            limiter: limiter_for(delay),
            next_allowed: Instant::now(),
            backoff_exp: 0,
        }
    }

    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Change the origin's delay (robots.txt Crawl-delay arrived).
    pub fn set_delay(&mut self, delay: Duration) {
        if delay != self.delay {
            self.delay = delay;
            self.limiter = limiter_for(delay);
        }
    }

    /// Earliest time the next request may start.
    pub fn ready_at(&self) -> Instant {
        self.next_allowed
    }

    /// Try to start a request now: `Err(t)` says to come back at `t`.
    pub fn try_start(&mut self, now: Instant) -> Result<(), Instant> {
        if now < self.next_allowed {
            return Err(self.next_allowed);
        }
        if let Some(l) = &self.limiter {
            if let Err(not_until) = l.check() {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                return Err(now + wait);
            }
        }
        Ok(())
    }

    /// A request to this origin finished at `at` (successfully or not, it reached the server or
    /// tried to).
    pub fn completed(&mut self, at: Instant) {
        self.next_allowed = self.next_allowed.max(at + self.delay);
    }

    /// The origin answered well: forget past backoff.
    pub fn success(&mut self) {
        self.backoff_exp = 0;
    }

    /// The origin asked us to slow down (429/503) or failed transiently: wait `retry_after` if
    /// given (capped), else base·2^k (capped). Returns the wait chosen.
    pub fn back_off(&mut self, at: Instant, retry_after: Option<Duration>, b: Backoff) -> Duration {
        let wait = match retry_after {
            Some(r) => r.min(b.max_retry_after),
            None => {
                let factor = 2u32.saturating_pow(self.backoff_exp.min(20));
                b.base.saturating_mul(factor).min(b.max)
            }
        };
        self.backoff_exp = self.backoff_exp.saturating_add(1);
        self.next_allowed = self.next_allowed.max(at + wait.max(self.delay));
        wait
    }

    /// Nothing may start before `at` (robots.txt unavailable, retry later).
    pub fn hold_until(&mut self, at: Instant) {
        self.next_allowed = self.next_allowed.max(at);
    }
}

fn limiter_for(delay: Duration) -> Option<Box<Limiter>> {
    if delay.is_zero() {
        return None;
    }
    // One request per `delay`, no burst.
    Quota::with_period(delay).map(|q| Box::new(RateLimiter::direct(q.allow_burst(NonZeroU32::MIN))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Backoff = Backoff {
        base: Duration::from_secs(2),
        max: Duration::from_secs(60),
        max_retry_after: Duration::from_secs(3600),
    };

    // Real time, not paused: governor keeps its own clock, which tokio's pause does not move.
    #[tokio::test]
    async fn next_start_waits_delay_after_completion() {
        let mut p = Politeness::new(Duration::from_millis(100));
        let t0 = Instant::now();
        assert!(p.try_start(t0).is_ok());
        p.completed(t0 + Duration::from_millis(30));
        assert_eq!(
            p.try_start(t0 + Duration::from_millis(50)),
            Err(t0 + Duration::from_millis(130))
        );
        tokio::time::sleep_until(t0 + Duration::from_millis(130)).await;
        assert!(p.try_start(Instant::now()).is_ok());
    }

    #[test]
    fn governor_spaces_starts_even_without_completions() {
        let mut p = Politeness::new(Duration::from_secs(10));
        let now = Instant::now();
        assert!(p.try_start(now).is_ok());
        let again = p.try_start(now).unwrap_err();
        assert!(again > now + Duration::from_secs(9), "{:?}", again - now);
    }

    #[test]
    fn backoff_doubles_caps_and_resets() {
        let mut p = Politeness::new(Duration::ZERO);
        let now = Instant::now();
        let waits: Vec<u64> = (0..7).map(|_| p.back_off(now, None, B).as_secs()).collect();
        assert_eq!(waits, vec![2, 4, 8, 16, 32, 60, 60]);
        p.success();
        assert_eq!(p.back_off(now, None, B), Duration::from_secs(2));
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let mut p = Politeness::new(Duration::ZERO);
        let now = Instant::now();
        assert_eq!(
            p.back_off(now, Some(Duration::from_secs(7)), B),
            Duration::from_secs(7)
        );
        assert_eq!(p.ready_at(), now + Duration::from_secs(7));
        let capped = Backoff {
            max_retry_after: Duration::from_secs(5),
            ..B
        };
        assert_eq!(
            p.back_off(now, Some(Duration::from_secs(99)), capped),
            Duration::from_secs(5)
        );
    }
}
