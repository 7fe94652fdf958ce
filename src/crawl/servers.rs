//! Per-server politeness: a server is the address and port origins resolve to, and many
//! origins may share one (name-based shared hosting, a CDN edge). Each server has at most
//! `crawl.per_ip_concurrency` requests in flight and its request starts at least `spacing`
//! apart; origins it holds back wait in its queue, first come first served, and are let
//! through one at a time: the origin let through holds the server's *turn* until it starts a
//! request or gives the turn up (then the next is let through), so an idle server with origins
//! waiting always has one of them on its way, and a server with 10,000 origins costs one wake-up
//! per request, not 10,000.
//!
//! Pure bookkeeping, no I/O: the scheduler asks [`Servers::admit`] before each request, tells
//! [`Servers::started`] and [`Servers::finished`], and schedules each origin these let through.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use tokio::time::Instant;

/// Idle servers are forgotten every this many finished requests (those whose spacing has
/// passed: nothing of them is left to remember).
const SWEEP_EVERY: u64 = 4096;

#[derive(Debug)]
struct Server {
    in_flight: usize,
    /// No request to it may start before this.
    next_start: Instant,
    /// Origins held back, in arrival order (one may be in here twice; `Servers::waiting` says
    /// which entries still count).
    queue: VecDeque<u32>,
    /// The origin let through and not yet started: no other may start meanwhile.
    turn: Option<u32>,
}

/// What [`Servers::admit`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Start the request (then tell `started`).
    Go,
    /// The origin waits in the server's queue: schedule it only once it is let through.
    Queued,
}

#[derive(Debug)]
pub struct Servers {
    /// Requests in flight per server; 0: no limit (every origin is admitted at once).
    limit: usize,
    /// Least time between two request starts to one server.
    spacing: Duration,
    servers: HashMap<SocketAddr, Server>,
    /// Origins in some server's queue (an origin waits for one server at a time).
    waiting: HashSet<u32>,
    finished: u64,
}

impl Servers {
    pub fn new(limit: usize, spacing: Duration) -> Servers {
        Servers {
            limit,
            spacing,
            servers: HashMap::new(),
            waiting: HashSet::new(),
            finished: 0,
        }
    }

    /// Whether servers are limited at all (`crawl.per_ip_concurrency` > 0).
    pub fn on(&self) -> bool {
        self.limit > 0
    }

    /// Origin `id` waits in a server's queue (the scheduler does not schedule it).
    pub fn is_waiting(&self, id: u32) -> bool {
        self.waiting.contains(&id)
    }

    /// The earliest a request to `server` may start, if it is held back at all.
    pub fn not_before(&self, server: SocketAddr) -> Option<Instant> {
        self.servers.get(&server).map(|s| s.next_start)
    }

    /// May origin `id` start a request to `server` now? `Go`, or it joins the server's queue.
    /// Either way the caller schedules whatever origin comes back (`Some`: let through now).
    pub fn admit(&mut self, server: SocketAddr, id: u32, now: Instant) -> (Admit, Option<u32>) {
        if !self.on() {
            return (Admit::Go, None);
        }
        let s = self.servers.entry(server).or_insert_with(|| Server {
            in_flight: 0,
            next_start: now,
            queue: VecDeque::new(),
            turn: None,
        });
        let others_turn = s.turn.is_some_and(|t| t != id);
        let nobody_ahead = s.turn == Some(id) || s.queue.is_empty();
        if !others_turn && nobody_ahead && s.in_flight < self.limit && s.next_start <= now {
            return (Admit::Go, None);
        }
        if s.turn == Some(id) {
            // Let through too early (the server's time moved): it goes back in the queue.
            s.turn = None;
        }
        if self.waiting.insert(id) {
            s.queue.push_back(id);
        }
        (Admit::Queued, self.let_through(server))
    }

    /// Origin `id` started a request to `server` at `now` (after `admit` said `Go`). `Some`:
    /// an origin let through, as the server has room for another.
    pub fn started(&mut self, server: SocketAddr, id: u32, now: Instant) -> Option<u32> {
        let s = self.servers.get_mut(&server)?;
        if s.turn == Some(id) {
            s.turn = None;
        }
        s.in_flight += 1;
        s.next_start = s.next_start.max(now + self.spacing);
        self.let_through(server)
    }

    /// A request to `server` finished. `Some`: an origin let through.
    pub fn finished(&mut self, server: SocketAddr, now: Instant) -> Option<u32> {
        let s = self.servers.get_mut(&server)?;
        s.in_flight = s.in_flight.saturating_sub(1);
        let next = self.let_through(server);
        self.finished += 1;
        if self.finished % SWEEP_EVERY == 0 {
            self.servers.retain(|_, s| !idle(s, now));
        }
        next
    }

    /// Origin `id` holds a server's turn but will not use it now (it was dispatched and did not
    /// start a request, or it has nothing to start): the next origin is let through.
    pub fn pass(&mut self, server: SocketAddr, id: u32) -> Option<u32> {
        let s = self.servers.get_mut(&server)?;
        if s.turn != Some(id) {
            return None;
        }
        s.turn = None;
        self.let_through(server)
    }

    /// Whether origin `id` holds `server`'s turn.
    pub fn has_turn(&self, server: SocketAddr, id: u32) -> bool {
        self.servers
            .get(&server)
            .is_some_and(|s| s.turn == Some(id))
    }

    /// Servers remembered (tests, and the memory a broad crawl keeps).
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The next origin of `server`'s queue gets the turn, if the server has room and nobody
    /// holds it.
    fn let_through(&mut self, server: SocketAddr) -> Option<u32> {
        let s = self.servers.get_mut(&server)?;
        if s.turn.is_some() || s.in_flight >= self.limit {
            return None;
        }
        while let Some(id) = s.queue.pop_front() {
            if self.waiting.remove(&id) {
                s.turn = Some(id);
                return Some(id);
            }
        }
        None
    }
}

/// Nothing in flight, nobody waiting or let through, and its spacing has passed.
fn idle(s: &Server, now: Instant) -> bool {
    s.in_flight == 0 && s.queue.is_empty() && s.turn.is_none() && s.next_start <= now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn one_at_a_time_then_the_waiting_origins_in_order() {
        let mut s = Servers::new(1, Duration::ZERO);
        let (a, now) = (addr(80), Instant::now());
        assert_eq!(s.admit(a, 1, now), (Admit::Go, None));
        assert_eq!(s.started(a, 1, now), None);
        assert_eq!(s.admit(a, 2, now), (Admit::Queued, None));
        assert_eq!(s.admit(a, 3, now), (Admit::Queued, None));
        assert_eq!(s.admit(a, 2, now), (Admit::Queued, None), "queued once");
        assert!(s.is_waiting(2) && s.is_waiting(3));
        // Another server is not held back by this one.
        assert_eq!(s.admit(addr(81), 9, now), (Admit::Go, None));
        assert_eq!(s.finished(a, now), Some(2), "first come, first let through");
        assert!(!s.is_waiting(2) && s.has_turn(a, 2));
        assert_eq!(
            s.admit(a, 4, now),
            (Admit::Queued, None),
            "2 holds the turn"
        );
        assert_eq!(s.admit(a, 2, now), (Admit::Go, None));
        assert_eq!(s.started(a, 2, now), None);
        assert_eq!(s.finished(a, now), Some(3));
        assert_eq!(s.pass(a, 3), Some(4), "3 gave its turn up: 4 is next");
        assert_eq!(s.pass(a, 3), None, "only the holder passes");
    }

    #[test]
    fn a_limit_above_one_lets_several_through() {
        let mut s = Servers::new(2, Duration::ZERO);
        let (a, now) = (addr(80), Instant::now());
        for id in 1..=2 {
            assert_eq!(s.admit(a, id, now), (Admit::Go, None));
            s.started(a, id, now);
        }
        assert_eq!(s.admit(a, 3, now), (Admit::Queued, None));
        assert_eq!(s.admit(a, 4, now), (Admit::Queued, None));
        assert_eq!(s.finished(a, now), Some(3));
        assert_eq!(s.finished(a, now), None, "3 holds the turn: one at a time");
        assert_eq!(s.admit(a, 3, now), (Admit::Go, None));
        assert_eq!(s.started(a, 3, now), Some(4), "room for one more");
    }

    #[test]
    fn starts_are_spaced_and_an_early_origin_goes_back_in_line() {
        let spacing = Duration::from_millis(100);
        let mut s = Servers::new(4, spacing);
        let (a, t0) = (addr(80), Instant::now());
        assert_eq!(s.admit(a, 1, t0), (Admit::Go, None));
        // Room for more, but the next start is 100 ms away: 2 waits and is let through, to be
        // scheduled at `not_before`.
        assert_eq!(s.started(a, 1, t0), None);
        assert_eq!(s.admit(a, 2, t0), (Admit::Queued, Some(2)));
        assert_eq!(s.not_before(a), Some(t0 + spacing));
        assert_eq!(s.admit(a, 3, t0), (Admit::Queued, None));
        // 2 comes back too early: back in line, behind 3, who is let through.
        assert_eq!(s.admit(a, 2, t0), (Admit::Queued, Some(3)));
        assert_eq!(s.admit(a, 3, t0 + spacing), (Admit::Go, None));
        assert_eq!(s.started(a, 3, t0 + spacing), Some(2));
        assert_eq!(s.not_before(a), Some(t0 + 2 * spacing));
    }

    #[test]
    fn no_limit_admits_everything_and_remembers_nothing() {
        let mut s = Servers::new(0, Duration::from_secs(1));
        let (a, now) = (addr(80), Instant::now());
        for id in 0..10 {
            assert_eq!(s.admit(a, id, now), (Admit::Go, None));
            assert_eq!(s.started(a, id, now), None);
        }
        assert!(s.is_empty());
    }

    #[test]
    fn idle_servers_are_forgotten() {
        let mut s = Servers::new(1, Duration::ZERO);
        let now = Instant::now();
        for port in 0..SWEEP_EVERY as u16 {
            let a = addr(port);
            s.admit(a, 1, now);
            s.started(a, 1, now);
            s.finished(a, now);
        }
        assert!(s.is_empty(), "{} servers kept", s.len());
    }
}
