//! What the scheduler does with a finished job: the request's outcome (pages stored, robots.txt
//! arrived, URLs enqueued, errors and retries counted), a site done, and the crawl's summary.

use super::*;

/// A job's error that costs one fetch or one page, not the crawl.
enum Lost {
    /// The site's partition is another worker's now.
    Fenced(String),
    /// The job panicked.
    Panic(String),
}

impl Lost {
    /// What `e` costs: the crawl when the store, the WARC output or the partition log failed
    /// (`Err`), else one fetch or page.
    fn of(e: WorkerError) -> Result<Lost, CrawlError> {
        match e {
            WorkerError::Store(e) => Err(CrawlError::Store(e)),
            WorkerError::Warc(e) => Err(CrawlError::Warc(e)),
            WorkerError::Log(e) => Err(CrawlError::Partition(e)),
            WorkerError::Fenced(site) => Ok(Lost::Fenced(site)),
            WorkerError::Panic(msg) => Ok(Lost::Panic(msg)),
        }
    }
}

impl Scheduler {
    pub(super) fn handle(
        &mut self,
        joined: Result<TaskOutput, tokio::task::JoinError>,
    ) -> Result<(), CrawlError> {
        match joined {
            Ok(TaskOutput::Request {
                origin_id,
                kind,
                result,
                processing,
            }) => self.request_done(origin_id, kind, result, processing),
            Ok(TaskOutput::Processed {
                origin_id,
                kind,
                slot,
                result,
            }) => self.processed(origin_id, kind, slot, result),
            Ok(TaskOutput::Resolved { origin_id, result }) => {
                self.resolved(origin_id, result);
                Ok(())
            }
            // Aborted at shutdown: the URL stays queued.
            Err(e) if e.is_cancelled() => Ok(()),
            Err(e) => unreachable!("invariant: tasks catch their panics: {e}"),
        }
    }

    /// A page left the pipeline (fetched and, if it was, processed): its limit slot is free.
    pub(super) fn page_slot_free(&mut self, site: &str) {
        self.pages_in_flight = self.pages_in_flight.saturating_sub(1);
        self.limit_held = false;
        if let Some(n) = self.site_in_flight.get_mut(site) {
            *n = n.saturating_sub(1);
        }
        // Origins held by the site's limit look again (the next dispatch re-checks it).
        for id in self.held_sites.remove(site).unwrap_or_default() {
            if let Some(o) = self.origins.get_mut(&id) {
                o.held = false;
            }
            self.schedule(id);
        }
    }

    pub(super) fn site_of(&self, id: u32) -> String {
        self.origins
            .get(&id)
            .map(|o| o.site.clone())
            .unwrap_or_default()
    }

    /// A request finished: politeness moves on, and a fetched page goes to processing.
    pub(super) fn request_done(
        &mut self,
        id: u32,
        kind: Option<EntryKind>,
        result: Result<JobResult, WorkerError>,
        processing: Option<Processing>,
    ) -> Result<(), CrawlError> {
        self.in_flight -= 1;
        self.stats.in_flight.fetch_sub(1, Relaxed);
        self.request_over(id);
        let site = self.site_of(id);
        // Settled when this returns, after the page's processing (if any) has started.
        let _settled = Settled::new(&self.ctx, &site);
        if kind == Some(EntryKind::Page) && processing.is_none() {
            self.page_slot_free(&site);
        }
        let result = match result {
            Ok(r) => r,
            Err(e) => match Lost::of(e)? {
                Lost::Fenced(site) => {
                    // The partition moved: this fetch is not this worker's to commit (its URL
                    // stays queued here, unconsumed; the gate keeps the origin from starting
                    // another).
                    tracing::info!(%site, "partition taken over by another worker; fetch dropped");
                    if let Some(o) = self.origins.get_mut(&id) {
                        o.reload = true;
                        if matches!(o.robots, Robots::Fetching) {
                            o.robots = Robots::Unknown;
                        }
                    }
                    self.schedule(id);
                    return Ok(());
                }
                Lost::Panic(msg) => {
                    // A bug on one page costs that URL for this run (it stays queued), not the
                    // crawl.
                    tracing::error!(origin = id, "job panicked: {msg}");
                    if let Some(o) = self.origins.get_mut(&id) {
                        if matches!(o.robots, Robots::Fetching) {
                            o.robots = Robots::Unknown;
                        }
                    }
                    self.count_error(&site, ErrorKind::Panic);
                    self.schedule(id);
                    return Ok(());
                }
            },
        };
        let slot = result.slot;
        match (processing, kind, slot) {
            (Some(p), Some(kind), Some(slot)) => {
                self.processing += 1;
                if let Some(o) = self.origins.get_mut(&id) {
                    o.processing += 1;
                }
                self.job_started(&site);
                self.tasks.spawn(worker::run_processing(id, kind, slot, p));
            }
            (_, _, Some(slot)) => self.revisit_finished(id, slot),
            _ => {}
        }
        let Some(o) = self.origins.get_mut(&id) else {
            return Ok(());
        };
        o.polite.completed(result.completed_at);
        if kind.is_some() && result.responded {
            self.stats.fetched.fetch_add(1, Relaxed);
            self.summary.fetched += 1;
        }
        if kind.is_some() {
            self.stats.bytes.fetch_add(result.bytes, Relaxed);
            let bytes = result.bytes;
            self.stats.host(&site, |h| h.bytes += bytes);
        }
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        match result.verdict {
            Verdict::Processing | Verdict::Done | Verdict::Stored { .. } => {
                o.failures = 0;
                o.polite.success();
                self.clear_wait(id);
                if let Verdict::Stored { site, page_id } = result.verdict {
                    self.page_stored(site, page_id);
                }
            }
            Verdict::Revisited { kind } => {
                o.failures = 0;
                o.polite.success();
                self.clear_wait(id);
                self.count_revisit(kind, result.bytes);
            }
            Verdict::Replaced { .. } => {}
            Verdict::Failed { kind } => {
                if result.backoff {
                    o.failures += 1;
                } else {
                    o.failures = 0;
                    o.polite.success();
                }
                self.count_error(&site, kind);
            }
            Verdict::Retry { retry_after, cause } => {
                o.failures += 1;
                let wait = o
                    .polite
                    .back_off(result.completed_at, retry_after, self.backoff);
                let until = o.polite.ready_at();
                let why = match retry_after {
                    Some(asked) if asked > wait => format!(
                        "{cause}, Retry-After {}s capped to {} (fetch.max_retry_after); backing off",
                        asked.as_secs(),
                        humantime::format_duration(wait)
                    ),
                    Some(asked) => format!("{cause}, Retry-After {}s; backing off", asked.as_secs()),
                    None => format!("{cause}; backing off {}", humantime::format_duration(wait)),
                };
                self.set_wait(id, why, Some(until));
                self.count_retry(&site, retry_after.is_some_and(|a| a > wait));
            }
            Verdict::Robots { entry, failure } => {
                self.robots_arrived(id, entry, failure, result.completed_at)?;
            }
        }
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        if result.backoff && !o.parked {
            if o.failures >= PARK_AFTER_FAILURES {
                o.set_aside();
                let last = o.waiting.clone().unwrap_or_default();
                let msg = format!(
                    "{} failed {PARK_AFTER_FAILURES} times in a row; set aside for this run",
                    o.key
                );
                // A debug line, not a warning: one per origin would be a line per site in a
                // broad crawl; progress, the summary and `status` show set-aside origins (a
                // few by name, the rest counted).
                tracing::debug!("{msg}");
                self.set_wait(
                    id,
                    format!("failed {PARK_AFTER_FAILURES} times in a row (last: {last}); set aside for this run"),
                    None,
                );
            } else if result.slot.is_some() {
                let wait_from = result.completed_at;
                let o = self.origins.get_mut(&id).expect("invariant: origin exists");
                if o.polite.ready_at() <= wait_from {
                    let wait = o.polite.back_off(wait_from, None, self.backoff);
                    let until = o.polite.ready_at();
                    let why = format!(
                        "{}; backing off {}",
                        o.waiting.clone().unwrap_or_else(|| "request failed".into()),
                        humantime::format_duration(wait)
                    );
                    self.set_wait(id, why, Some(until));
                }
            }
        }
        self.enqueued(result.enqueued);
        self.schedule(id);
        self.tell_if_site_done(&site);
        Ok(())
    }

    /// A fetched page was parsed and committed.
    pub(super) fn processed(
        &mut self,
        id: u32,
        kind: EntryKind,
        slot: Slot,
        result: Result<worker::Processed, WorkerError>,
    ) -> Result<(), CrawlError> {
        self.processing -= 1;
        if let Some(o) = self.origins.get_mut(&id) {
            o.processing = o.processing.saturating_sub(1);
        }
        let site = self.site_of(id);
        let _settled = Settled::new(&self.ctx, &site);
        if kind == EntryKind::Page {
            self.page_slot_free(&site);
        }
        self.revisit_finished(id, slot);
        match result {
            Err(e) => match Lost::of(e)? {
                Lost::Fenced(site) => {
                    tracing::info!(%site, "partition taken over by another worker; page dropped");
                    if let Some(o) = self.origins.get_mut(&id) {
                        o.reload = true;
                    }
                }
                Lost::Panic(msg) => {
                    // The page's URL stays queued for the next run.
                    tracing::error!(origin = id, "page processing panicked: {msg}");
                    self.count_error(&site, ErrorKind::Panic);
                }
            },
            Ok(p) => {
                match p.verdict {
                    Verdict::Stored { site, page_id } => self.page_stored(site, page_id),
                    Verdict::Replaced { site, page_id } => {
                        self.stats.replaced.fetch_add(1, Relaxed);
                        if let Some(sink) = &self.events {
                            sink(CrawlEvent::Stored(StoredPage { site, page_id }));
                        }
                    }
                    Verdict::Failed { kind } => self.count_error(&site, kind),
                    _ => {}
                }
                self.enqueued(p.enqueued);
            }
        }
        // A freed page slot may let a site under its page limit continue.
        self.schedule(id);
        self.tell_if_site_done(&site);
        Ok(())
    }

    /// Tell inline learning that `site` is done for this run (`CrawlEvent::SiteDone`) when
    /// every origin of it is finished and it has not been told since one of them last started
    /// something, so the site's final template pass runs now, not when the whole crawl ends.
    /// A cluster worker's sites are not told of: their partitions move between workers.
    pub(super) fn tell_if_site_done(&mut self, site: &str) {
        let (Some(sink), None) = (&self.events, &self.ctx.partitioned) else {
            return;
        };
        let Some(ids) = self.site_origins.get(site) else {
            return;
        };
        let finished = ids
            .iter()
            .all(|id| self.origins.get(id).is_none_or(Origin::finished));
        let told = ids
            .iter()
            .all(|id| self.origins.get(id).is_none_or(|o| o.told_done));
        if !finished || told {
            tracing::trace!(site, finished, told, "site not done");
            return;
        }
        tracing::debug!(site, "the crawl is done with the site");
        for id in ids {
            if let Some(o) = self.origins.get_mut(id) {
                o.told_done = true;
                // Every entry known is in the store (`robots_arrived`, `add_origin`): a broad
                // crawl's done sites need not hold theirs.
                if matches!(o.robots, Robots::Known { .. }) {
                    o.robots = Robots::Stored;
                }
            }
        }
        sink(CrawlEvent::SiteDone(site.to_string()));
    }

    pub(super) fn page_stored(&mut self, site: String, page_id: u64) {
        self.stored_total += 1;
        self.summary.stored += 1;
        self.stats.stored.fetch_add(1, Relaxed);
        self.stats.host(&site, |h| h.fetched += 1);
        if let Some(sink) = &self.events {
            sink(CrawlEvent::Stored(StoredPage { site, page_id }));
        }
        // The limit ends the run as soon as it is reached, not when a page entry next asks to
        // start (meanwhile other origins' robots.txt and sitemaps were still fetched).
        let max = self.ctx.config.crawl.max_pages;
        if max > 0 && self.stored_total >= max && !self.limit_reached {
            self.limit_reached = true;
            self.note_left(format!("max_pages ({max}) reached"));
        }
    }

    pub(super) fn robots_arrived(
        &mut self,
        id: u32,
        entry: RobotsEntry,
        failure: Option<String>,
        completed_at: Instant,
    ) -> Result<(), CrawlError> {
        let cfg = self.ctx.config.clone();
        let delay = self.effective_delay(&entry.policy);
        let o = self.origins.get_mut(&id).expect("invariant: origin exists");
        let key = o.key.clone();
        self.ctx.store.put_robots(&key, &entry)?;
        let expires = instant_of(entry.expires_at);
        let mut parked_msg = None;
        let mut wait = None;
        let mut robots_retry = false;
        if entry.unreachable_since.is_some() {
            // 5xx / unreachable (RFC 9309 §2.3.1.4): disallowed for now (or the last good copy
            // stays in force); after `unreachable_retries` retries, set the origin aside.
            o.robots_failures += 1;
            let cause = failure.unwrap_or_else(|| "no answer".into());
            let retries = cfg.robots.unreachable_retries;
            if matches!(entry.policy, RobotsPolicy::DisallowAll { .. }) {
                if o.robots_failures > retries {
                    o.set_aside();
                    let msg = format!(
                        "{key}: robots.txt unreachable ({cause}) {} times in a row; set aside, its URLs stay queued",
                        o.robots_failures
                    );
                    parked_msg = Some(msg);
                    wait = Some((
                        format!(
                            "robots.txt unreachable: {cause}; {} attempts failed, set aside for this run",
                            o.robots_failures
                        ),
                        None,
                    ));
                } else {
                    wait = Some((
                        format!(
                            "robots.txt unreachable: {cause}; retry {}/{retries}",
                            o.robots_failures
                        ),
                        Some(expires),
                    ));
                    robots_retry = true;
                }
            } else {
                tracing::info!(
                    "{key}: robots.txt unreachable ({cause}); the last good copy stays in force"
                );
            }
        } else {
            o.robots_failures = 0;
        }
        o.polite.set_delay(delay);
        // The robots.txt request itself counts: the first page waits the new delay after it.
        o.polite.completed(completed_at);
        let base = o.base();
        let sitemaps: Vec<String> = if entry.unreachable_since.is_none() {
            entry.policy.sitemaps().to_vec()
        } else {
            Vec::new()
        };
        o.robots = Robots::Known {
            entry: Box::new(entry),
            expires,
        };
        if let Some(msg) = parked_msg {
            // Listed in the summary's set-aside origins (with its queued URLs), not here.
            tracing::debug!("{msg}");
        }
        match wait {
            Some((why, until)) => self.set_wait(id, why, until),
            None => self.clear_wait(id),
        }
        if robots_retry {
            // Counted with the other transient failures, so progress never shows a waiting
            // crawl as "errors 0, retries 0" with nothing said.
            let site = self.site_of(id);
            self.count_retry(&site, false);
        }
        if cfg.robots.sitemaps && !sitemaps.is_empty() {
            let robots_url = base.as_ref().and_then(|b| b.join("/robots.txt").ok());
            let mut c = Commit::new();
            for sm in sitemaps {
                let Some(u) = robots_url.as_ref().and_then(|b| urls::normalize(b, &sm)) else {
                    continue;
                };
                if self.ctx.scope.check_host(&u).is_ok() {
                    c.discover(
                        urls::origin_key(&u),
                        QueueEntry {
                            kind: EntryKind::Sitemap,
                            ..QueueEntry::page(u.to_string(), 0)
                        },
                    );
                }
            }
            if !c.is_empty() {
                let out = self.ctx.store.commit(c)?;
                self.enqueued(out.enqueued);
            }
        }
        Ok(())
    }

    pub(super) fn enqueued(&mut self, list: Vec<Enqueued>) {
        for e in list {
            if !self.origins.contains_key(&e.origin_id) {
                self.add_origin(e.origin_id, &e.origin_key, 0);
            }
            let o = self
                .origins
                .get_mut(&e.origin_id)
                .expect("invariant: just added");
            o.queued += 1;
            let site = o.site.clone();
            if o.over_budget {
                self.stats.over_budget.fetch_add(1, Relaxed);
                self.stats.host(&site, |h| h.over_budget += 1);
            } else {
                self.stats.queued.fetch_add(1, Relaxed);
                self.stats.host(&site, |h| h.queued += 1);
            }
            self.schedule(e.origin_id);
        }
    }

    /// A revisit ended with `kind` (no new page to learn from).
    pub(super) fn count_revisit(&mut self, kind: ChangeKind, bytes: u64) {
        let counter = match kind {
            ChangeKind::Unchanged if bytes == 0 => &self.stats.not_modified,
            ChangeKind::Unchanged => &self.stats.same_bytes,
            ChangeKind::Gone => &self.stats.gone,
            _ => &self.stats.revisit_failed,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// A transient failure queued its URL again (the origin backs off).
    pub(super) fn count_retry(&mut self, site: &str, capped: bool) {
        self.summary.retries += 1;
        if capped {
            self.summary.retry_after_capped += 1;
        }
        self.stats.retries.fetch_add(1, Relaxed);
        self.stats.host(site, |h| h.retries += 1);
    }

    /// A URL ended without a page: counted once, in `stats` (what progress, the live status
    /// and the summary all read).
    pub(super) fn count_error(&mut self, site: &str, kind: ErrorKind) {
        self.stats.count_failure(site, kind);
    }

    pub(super) fn note_left(&mut self, why: String) {
        if !self.summary.left_because.contains(&why) {
            self.summary.left_because.push(why);
        }
    }

    pub(super) fn finish(mut self) -> CrawlSummary {
        self.summary.queued_left = self.origins.values().map(Origin::queued_now).sum();
        let mut over: HashMap<&str, u64> = HashMap::new();
        for o in self
            .origins
            .values()
            .filter(|o| o.over_budget && o.queued > 0)
        {
            *over.entry(o.site.as_str()).or_default() += o.queued;
        }
        self.summary.over_budget = OverBudget::new(
            self.ctx.config.crawl.max_pages_per_host,
            over.into_iter().map(|(site, n)| (site.to_string(), n)),
        );
        let mut ids: Vec<u32> = self
            .origins
            .iter()
            .filter(|(_, o)| o.waiting.is_some() && o.has_work() && !o.over_budget)
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        // By origin: a run that ends with 200,000 origins waiting must not search a list for
        // each of them (that made SIGINT take minutes).
        let waits: HashMap<String, OriginWait> = self
            .stats
            .waits()
            .into_iter()
            .map(|w| (w.origin.clone(), w))
            .collect();
        for id in ids {
            let o = &self.origins[&id];
            let mut w = waits.get(&o.key).cloned().unwrap_or_default();
            w.origin.clone_from(&o.key);
            w.queued = o.queued_now();
            self.stats.set_wait(w.clone());
            self.summary.set_aside.push(w);
        }
        self.summary.errors_by_kind = self.stats.failures();
        self.summary.errors = self.stats.errors.load(Relaxed);
        self.summary.skipped = self.stats.skipped.load(Relaxed);
        self.summary
    }
}
