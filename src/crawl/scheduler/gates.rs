//! The scheduler's gates before a request: a cluster worker's partition, the queue read anew, the
//! server's (per-address) politeness and the address resolution behind it, robots.txt first.

use super::*;

impl Scheduler {
    /// A cluster worker's gate: `Some` when the origin may not start a request now (another
    /// worker's partition, a queue to read anew, a handover's delay), with whether the
    /// dispatch progressed; `None` when it may (and always on one machine).
    pub(super) fn partition_gate(
        &mut self,
        id: u32,
        now: Instant,
    ) -> Result<Option<bool>, CrawlError> {
        let Some(p) = &self.ctx.partitioned else {
            return Ok(None);
        };
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if !(p.owns)(&o.site) {
            // Another worker's partition (or none's yet): look again later.
            o.handed = true;
            o.polite.hold_until(now + GATE_HOLD);
            return Ok(Some(false));
        }
        if o.reload {
            return self.reload_queue(id, now).map(Some);
        }
        if std::mem::take(&mut o.handed) && !o.polite.delay().is_zero() {
            // Just became this worker's: its previous owner answered its last request before
            // giving the partition up, so one delay from now keeps the gap.
            o.polite.completed(now);
            return Ok(Some(false));
        }
        Ok(None)
    }

    /// An origin back from another worker: once this worker's own work on it has ended, its
    /// queue is read anew from the store (what the other fetched meanwhile came with the
    /// partition's log, and is consumed without a request). Whether it was read.
    pub(super) fn reload_queue(&mut self, id: u32, now: Instant) -> Result<bool, CrawlError> {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        let site_busy = self.site_in_flight.get(&o.site).copied().unwrap_or(0) > 0;
        if o.in_flight > 0 || site_busy {
            o.polite.hold_until(now + GATE_HOLD);
            return Ok(false);
        }
        let queued = self
            .ctx
            .store
            .queue_lengths()?
            .get(&id)
            .copied()
            .unwrap_or(0);
        let site = o.site.clone();
        let before = o.queued;
        o.reload = false;
        o.cursor = 0;
        o.buffer.clear();
        o.queued = queued;
        self.stats.queued.fetch_add(queued, Relaxed);
        self.stats
            .queued
            .fetch_sub(before.min(self.stats.queued.load(Relaxed)), Relaxed);
        self.stats.host(&site, |h| {
            h.queued = (h.queued + queued).saturating_sub(before)
        });
        Ok(true)
    }

    /// The server gate, before a request of origin `id` starts (its own politeness allowed
    /// it): `None` when it may start (per-server politeness off, its server admits it, or its
    /// name did not resolve but a proxy resolves names); `Some` when it may not yet, with
    /// whether the dispatch progressed: its host name is being looked up, or it waits in its
    /// server's queue (scheduled again once let through).
    pub(super) fn server_gate(&mut self, id: u32, now: Instant) -> Option<bool> {
        if !self.servers.on() {
            return None;
        }
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        // The address is looked up again only with nothing in flight (`Addr`).
        let busy = o.in_flight > 0;
        let server = match o.addr {
            Addr::Known { server, until } if busy || until.is_none_or(|u| u > now) => server,
            Addr::Unresolved { until } if busy || until > now => return None,
            Addr::Resolving => return Some(false),
            _ => {
                let base = o.base()?;
                let port = base.port_or_known_default()?;
                let ip: std::net::IpAddr = match base.host()? {
                    url::Host::Ipv4(ip) => ip.into(),
                    url::Host::Ipv6(ip) => ip.into(),
                    url::Host::Domain(name) => {
                        let name = name.to_string();
                        self.start_resolving(id, name);
                        return Some(true);
                    }
                };
                let server = SocketAddr::new(ip, port);
                o.addr = Addr::Known {
                    server,
                    until: None,
                };
                server
            }
        };
        match self.servers.admit(server, id, now) {
            (Admit::Go, _) => None,
            (Admit::Queued, let_through) => {
                self.let_through.extend(let_through);
                Some(true)
            }
        }
    }

    /// Look origin `id`'s host name up (a task; `resolved` takes the answer).
    pub(super) fn start_resolving(&mut self, id: u32, host: String) {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        o.addr = Addr::Resolving;
        self.resolving += 1;
        let resolver = self.resolver.clone();
        self.tasks.spawn(async move {
            let result = resolver.lookup(&host).await;
            TaskOutput::Resolved {
                origin_id: id,
                result,
            }
        });
    }

    /// Origin `id`'s host name was looked up. A failure is the origin's, as a failed request
    /// is: it backs off (counted as a retry, its wait shown), and is set aside after
    /// `PARK_AFTER_FAILURES` in a row; its URLs stay queued. Through a proxy, which resolves
    /// names itself, a failure only means its requests pass no server's gate for a while.
    pub(super) fn resolved(&mut self, id: u32, result: Result<Addresses, ResolveError>) {
        self.resolving -= 1;
        let now = Instant::now();
        let proxied = self.proxied;
        let Some(o) = self.origins.get_mut(&id) else {
            return;
        };
        let port = o.base().and_then(|b| b.port_or_known_default());
        match (result, port) {
            (Ok(ips), Some(port)) => {
                o.addr = Addr::Known {
                    server: SocketAddr::new(ips[0], port),
                    until: Some(now + resolve::TTL),
                };
            }
            (Ok(_), None) => {
                o.addr = Addr::Unresolved {
                    until: now + resolve::TTL,
                };
            }
            (Err(e), _) if proxied => {
                tracing::debug!(origin = %o.key, "{e}; requests go through the proxy");
                o.addr = Addr::Unresolved {
                    until: now + resolve::FAILURE_TTL,
                };
            }
            (Err(e), _) => {
                o.addr = Addr::Unknown;
                o.failures += 1;
                let site = o.site.clone();
                // A debug line: a broad crawl may have thousands of dead names; the wait,
                // progress, the summary and `status` show them (a few by name, the rest
                // counted).
                tracing::debug!(origin = %o.key, "{e}");
                if o.failures >= PARK_AFTER_FAILURES {
                    o.set_aside();
                    self.set_wait(
                        id,
                        format!("{e}; failed {PARK_AFTER_FAILURES} times in a row, set aside for this run"),
                        None,
                    );
                } else {
                    let wait = o.polite.back_off(now, None, self.backoff);
                    let until = o.polite.ready_at();
                    let why = format!("{e}; backing off {}", humantime::format_duration(wait));
                    self.set_wait(id, why, Some(until));
                    self.count_retry(&site, false);
                }
                self.schedule(id);
                self.tell_if_site_done(&site);
                return;
            }
        }
        self.schedule(id);
    }

    /// A request of origin `id` starts now (it passed its own politeness and its server's
    /// gate): counted in flight for both.
    pub(super) fn request_started(&mut self, id: u32, now: Instant) {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        o.in_flight += 1;
        if let Some(server) = o.addr.server() {
            let let_through = self.servers.started(server, id, now);
            self.let_through.extend(let_through);
        }
    }

    /// A request of origin `id` is over (answered, failed, or dropped): no longer in flight
    /// for it or its server.
    pub(super) fn request_over(&mut self, id: u32) {
        let Some(o) = self.origins.get_mut(&id) else {
            return;
        };
        o.in_flight = o.in_flight.saturating_sub(1);
        if let Some(server) = o.addr.server() {
            let let_through = self.servers.finished(server, Instant::now());
            self.schedule_some(let_through);
        }
    }

    /// robots.txt before any other URL of the origin: `Some` when it decides the dispatch
    /// (robots.txt being fetched, started now, or unreachable and holding the queue), with
    /// whether the dispatch progressed; `None` when the rules are known and fresh.
    pub(super) fn robots_first(&mut self, id: u32, now: Instant) -> Option<bool> {
        let token = &self.ctx.config.fetch.robots_token;
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if matches!(o.robots, Robots::Stored) {
            o.robots = match self.ctx.store.robots::<RobotsEntry>(&o.key) {
                Ok(Some(entry)) => Robots::Known {
                    expires: instant_of(entry.expires_at),
                    entry: Box::new(entry),
                },
                found => {
                    if let Err(e) = found {
                        tracing::warn!(origin = %o.key, "robots entry unreadable, fetched again: {e}");
                    }
                    Robots::Unknown
                }
            };
        }
        let stale = match &o.robots {
            Robots::Ignored => false,
            Robots::Unknown => true,
            Robots::Fetching | Robots::Stored => return Some(false),
            Robots::Known { entry, expires } => {
                *expires <= now || entry.needs_fetch(std::time::SystemTime::now(), token)
            }
        };
        if !stale {
            if let Robots::Known { entry, expires } = &o.robots {
                if matches!(entry.policy, RobotsPolicy::DisallowAll { .. }) {
                    // robots.txt unreachable: hold the queue (don't consume it) until we may
                    // retry. Politeness holds the origin, so `schedule` puts it at that time
                    // (before, it put it back at its past ready time: the loop spun at 100 %
                    // CPU).
                    let at = *expires;
                    o.polite.hold_until(at);
                    return Some(false);
                }
            }
            return None;
        }
        Some(self.start_robots(id, now))
    }

    /// Fetch the origin's robots.txt now, if politeness allows; whether the dispatch
    /// progressed (an origin without a base URL is set aside).
    pub(super) fn start_robots(&mut self, id: u32, now: Instant) -> bool {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        let previous = match &o.robots {
            Robots::Known { entry, .. } => Some(RobotsEntry::clone(entry)),
            _ => None,
        };
        let Some(base) = o.base() else {
            o.set_aside();
            return true;
        };
        if let Err(t) = o.polite.try_start(now) {
            o.polite.hold_until(t);
            return false;
        }
        if let Some(progressed) = self.server_gate(id, now) {
            return progressed;
        }
        self.request_started(id, now);
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        o.robots = Robots::Fetching;
        o.told_done = false;
        let site = o.site.clone();
        self.spawn_request(
            &site,
            Job::Robots {
                origin_id: id,
                origin: base,
                previous,
            },
        );
        true
    }
}
