//! The scheduler's side of the frontier: an origin's next entry (robots.txt rules, page
//! budgets, revisits), taken from its buffer or the store, and put back when it may not start.

use super::*;

impl Scheduler {
    /// Start the origin's next queued entry: entries robots.txt disallows are consumed without
    /// touching the server (bounded per call in entries and in matching work), a page limit
    /// puts the entry back, politeness may hold it. Whether the dispatch progressed.
    pub(super) fn start_next_entry(&mut self, id: u32, now: Instant) -> Result<bool, CrawlError> {
        let mut work = 0usize;
        for skipped in 0..256 {
            if work > MATCH_BUDGET {
                self.turn_now = true;
                return Ok(true);
            }
            let Some((seq, entry)) = self.next_entry(id)? else {
                return Ok(skipped > 0);
            };
            let site = self.origins[&id].site.clone();
            if entry.kind == EntryKind::Page {
                let limit = self.page_limit(id, &site);
                if limit != Limit::Free {
                    self.unpop(id, seq, entry);
                    if limit == Limit::OverBudget {
                        self.over_budget(id);
                    }
                    return Ok(true);
                }
            }
            let o = self.origins.get_mut(&id).expect("invariant: origin exists");
            let allowed = match (&o.robots, Url::parse(&entry.url)) {
                (Robots::Known { entry: robots, .. }, Ok(u)) => {
                    work += robots.policy.rule_count() * entry.url.len();
                    robots.policy.allowed(&u)
                }
                _ => true,
            };
            if !allowed {
                self.ctx.store.commit(worker::disallowed(id, seq, &entry))?;
                self.revisit_finished(id, seq);
                self.count_error(&site, ErrorKind::RobotsDisallowed);
                continue;
            }
            if let Err(t) = o.polite.try_start(now) {
                o.polite.hold_until(t);
                self.unpop(id, seq, entry);
                return Ok(skipped > 0);
            }
            if let Some(progressed) = self.server_gate(id, now) {
                self.unpop(id, seq, entry);
                return Ok(progressed || skipped > 0);
            }
            self.request_started(id, now);
            self.start_entry(id, site, seq, entry);
            return Ok(true);
        }
        // Many disallowed entries in a row: `schedule` brings it back right away.
        Ok(true)
    }

    /// Whether a page limit (`max_pages`, `max_pages_per_host`) keeps the origin's next page
    /// from starting; if so, the origin's state says how long (the caller puts the page back,
    /// and counts the origin's URLs over budget on `Limit::OverBudget`).
    /// A limit counts the pages in flight too, but only stored pages end it: an in-flight page
    /// that fails gives its slot back (the limit was missed by one).
    pub(super) fn page_limit(&mut self, id: u32, site: &str) -> Limit {
        let crawl = &self.ctx.config.crawl;
        let (max, per_host) = (crawl.max_pages, crawl.max_pages_per_host);
        let stored = self.ctx.store.site_counters(site).pages;
        let in_flight = self.site_in_flight.get(site).copied().unwrap_or(0);
        let total_full = max > 0 && self.stored_total + self.pages_in_flight >= max;
        let site_full = per_host > 0 && stored + in_flight >= per_host;
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if (total_full || site_full) && o.revisits > 0 {
            // A limit holds new pages, not the revisits of stored ones: this origin's revisits
            // go on, its new pages wait for the next run.
            o.pages_blocked = true;
            return Limit::Holds;
        }
        if total_full {
            if self.stored_total >= max {
                self.limit_reached = true;
                self.note_left(format!("max_pages ({max}) reached"));
            } else {
                self.limit_held = true;
            }
            return Limit::Holds;
        }
        if site_full {
            if stored >= per_host {
                return Limit::OverBudget;
            }
            o.held = true;
            self.held_sites
                .entry(site.to_string())
                .or_default()
                .push(id);
            return Limit::Holds;
        }
        Limit::Free
    }

    /// Origin `id`'s site has stored `crawl.max_pages_per_host` pages: the origin is set aside
    /// for the run and the URLs it keeps are counted over budget, not queued.
    pub(super) fn over_budget(&mut self, id: u32) {
        let Some(o) = self.origins.get_mut(&id) else {
            return;
        };
        o.set_aside();
        if std::mem::replace(&mut o.over_budget, true) {
            return;
        }
        let (n, site) = (o.queued, o.site.clone());
        self.stats
            .queued
            .fetch_sub(n.min(self.stats.queued.load(Relaxed)), Relaxed);
        self.stats.over_budget.fetch_add(n, Relaxed);
        self.stats.host(&site, |h| {
            h.queued = h.queued.saturating_sub(n);
            h.over_budget += n;
        });
        self.schedule(id);
        self.tell_if_site_done(&site);
    }

    /// At the start of a run, origins whose site already holds `crawl.max_pages_per_host`
    /// pages are over budget before any request (not even robots.txt): a run with the same
    /// budget ends at once instead of visiting every such origin, and shows their URLs apart
    /// from the queue. Origins with revisits go on (a limit holds new pages, not revisits); a
    /// cluster worker's origins are judged when dispatched (its partitions come and go).
    pub(super) fn over_budget_from_start(&mut self) {
        let per_host = self.ctx.config.crawl.max_pages_per_host;
        if per_host == 0 || self.ctx.partitioned.is_some() {
            return;
        }
        let full: Vec<u32> = self
            .origins
            .iter()
            .filter(|(_, o)| o.queued > 0 && o.revisits == 0)
            .filter(|(_, o)| self.ctx.store.site_counters(&o.site).pages >= per_host)
            .map(|(&id, _)| id)
            .collect();
        for id in full {
            self.over_budget(id);
        }
    }

    /// Count the entry's request as in flight (`request_started` counted it for its origin
    /// and server) and spawn its job.
    pub(super) fn start_entry(&mut self, id: u32, site: String, seq: Slot, entry: QueueEntry) {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        o.told_done = false;
        if entry.kind == EntryKind::Page {
            self.pages_in_flight += 1;
            *self.site_in_flight.entry(site.clone()).or_default() += 1;
        }
        let last = self.last_known(id, &site);
        if entry.kind == EntryKind::Revisit {
            self.stats.revisits.fetch_add(1, Relaxed);
        }
        self.spawn_request(
            &site,
            Job::Entry {
                origin_id: id,
                slot: seq,
                entry,
                last,
            },
        );
    }

    /// Origin `id` just started what is its last request as far as the crawl knows: nothing
    /// is queued behind it, or its site's page budget is taken with it. Such a request asks
    /// the server to close the connection: a broad crawl moves on from thousands of sites a
    /// minute, and a connection kept idle for each would hold a descriptor (the 30 s idle pool
    /// once held 20,000). Wrong now and then (links the page brings, a page that fails), it
    /// costs one new connection.
    pub(super) fn last_known(&self, id: u32, site: &str) -> bool {
        let Some(o) = self.origins.get(&id) else {
            return false;
        };
        let per_host = self.ctx.config.crawl.max_pages_per_host;
        let budget_taken = per_host > 0 && o.revisits == 0 && {
            let stored = self.ctx.store.site_counters(site).pages;
            stored + self.site_in_flight.get(site).copied().unwrap_or(0) >= per_host
        };
        !o.has_work() || budget_taken
    }

    /// The origin's next entry: its FIFO queue first (robots.txt's sitemaps, new links), then
    /// its revisit queue in priority order (read one at a time: a sitemap just read may have
    /// moved pages up).
    pub(super) fn next_entry(&mut self, id: u32) -> Result<Option<(Slot, QueueEntry)>, CrawlError> {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if !o.pages_blocked {
            if let Some((seq, entry)) = self.next_queued(id)? {
                return Ok(Some((Slot::Queue(seq), entry)));
            }
        }
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if o.revisits == 0 {
            return Ok(None);
        }
        let next = self.ctx.store.revisits_of(id, &o.taken, 1)?.pop();
        let site = o.site.clone();
        match next {
            Some((slot, entry)) => {
                o.taken.insert(slot);
                o.revisits -= 1;
                self.revisits_left = self.revisits_left.saturating_sub(1);
                self.stats.queued.fetch_sub(1, Relaxed);
                self.stats
                    .host(&site, |h| h.queued = h.queued.saturating_sub(1));
                Ok(Some((Slot::Revisit(slot), entry)))
            }
            None => {
                // Counts drifted from the store: trust the store.
                self.revisits_left = self.revisits_left.saturating_sub(o.revisits);
                self.stats
                    .queued
                    .fetch_sub(o.revisits.min(self.stats.queued.load(Relaxed)), Relaxed);
                o.revisits = 0;
                Ok(None)
            }
        }
    }

    /// A revisit's slot left the store's queue (committed): forget it was taken.
    pub(super) fn revisit_finished(&mut self, id: u32, slot: Slot) {
        if let (Slot::Revisit(r), Some(o)) = (slot, self.origins.get_mut(&id)) {
            o.taken.remove(&r);
        }
    }

    /// The origin's next entry of its FIFO queue, refilling its buffer from sled.
    pub(super) fn next_queued(&mut self, id: u32) -> Result<Option<(u64, QueueEntry)>, CrawlError> {
        let store = self.ctx.store.clone();
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if o.buffer.is_empty() && o.queued > 0 {
            let batch = store.queue_from(id, o.cursor, BUFFER)?;
            if batch.is_empty() {
                // Counts drifted from the store (should not happen): trust the store.
                self.stats
                    .queued
                    .fetch_sub(o.queued.min(self.stats.queued.load(Relaxed)), Relaxed);
                o.queued = 0;
            }
            for (seq, entry) in batch {
                o.cursor = seq + 1;
                o.buffer.push_back((seq, entry));
            }
        }
        let next = o.buffer.pop_front();
        if next.is_some() {
            o.queued = o.queued.saturating_sub(1);
            self.stats.queued.fetch_sub(1, Relaxed);
            let site = o.site.clone();
            self.stats
                .host(&site, |h| h.queued = h.queued.saturating_sub(1));
        }
        Ok(next)
    }

    /// Put back an entry `next_entry` gave out but that was not started: it stays queued, in
    /// the counts too (the progress, the summary and `status` then agree on what is queued).
    pub(super) fn unpop(&mut self, id: u32, slot: Slot, entry: QueueEntry) {
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        match slot {
            Slot::Queue(seq) => {
                o.buffer.push_front((seq, entry));
                o.queued += 1;
            }
            Slot::Revisit(r) => {
                o.taken.remove(&r);
                o.revisits += 1;
                self.revisits_left += 1;
            }
        }
        let site = o.site.clone();
        self.stats.queued.fetch_add(1, Relaxed);
        self.stats.host(&site, |h| h.queued += 1);
    }
}
