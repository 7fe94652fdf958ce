//! One site's template learning during a crawl: the incremental step (new pages join clusters
//! through `HostClusters`; only new pages and pages of clusters whose template changed are
//! cleaned, each cluster's content model cached until its template changes) and the end-of-crawl
//! pass (the whole site reclustered and cleaned by the engine `thresher clean` runs, one
//! cluster's pages in memory at a time; pages whose text the same model already wrote, by its
//! fingerprint, are kept as they are).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use super::eras;
use super::output::{Output, OutputError};
use crate::crawl::url::without_credentials;
use crate::detect::{self, Detector};
use crate::dom::Dom;
use crate::store::pages::PageRef;
use crate::store::{
    now_ms, CleanBatch, ClusterSummary, EraUpdate, RecrawlRun, SiteClusters, Store, StoreError,
};
use crate::template::clean::{Cleaned, ClusterModel, Renders};
use crate::template::incremental::{ClusterId, HostClusters, IncrementalParams};
use crate::template::{engine, support};

/// Pages a cluster's interim content model learns from at most (evenly spread over its
/// members); the end-of-crawl pass always learns from all of them.
pub const MODEL_SAMPLE: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("site {site}: stored clustering state is unreadable: {message}")]
    State { site: String, message: String },
}

/// A site's clustering state is saved to the store when it holds this many percent more pages
/// than at its last save: the bytes written over a site's crawl stay linear in its size (saving
/// at every step wrote a 100,000-page host's whole state, 63 MB, every 50 pages).
pub const SAVE_GROWTH_PERCENT: u64 = 25;

/// ... or when this long has passed since its last save with steps since, so that a slow
/// crawl's saved state is never far behind. What a kill -9 loses between saves is only work:
/// the next run finds those pages unclustered and adds them again.
pub const SAVE_INTERVAL: Duration = Duration::from_secs(60);

/// New pages one incremental step takes at most; the rest wait for the site's next step. After
/// a resume every site has all its unclustered pages pending at once (thousands a site at 1M
/// pages), and one step over them all held their path sets, texts and one write batch of them
/// together: the 1M crawl's peaks while fetching (docs/benchmarks.md, "Memory").
pub const STEP_PAGES: usize = 1024;

/// Texts a step writes per store batch (as the end-of-crawl pass does per `LEARN_SAMPLE`
/// pages), not one batch for all it cleaned.
const STEP_BATCH: usize = engine::LEARN_SAMPLE;

/// What the learner keeps in memory per site between steps.
#[derive(Default)]
pub struct SiteState {
    clusters: Option<HostClusters>,
    /// The first step since the clustering state was last saved; `None`: nothing to save.
    unsaved_since: Option<Instant>,
    /// Pages the state held at its last save.
    saved_pages: u64,
    models: HashMap<ClusterId, ClusterModel>,
    /// The page ids `index.tsv` lists, so that a step adds its pages instead of rescanning
    /// every page of the site (that scan was over half of a step's time on a 10k-page host).
    /// Ids only: the URLs are in the file and the store (holding them here cost about 100
    /// bytes a page for the whole crawl, every site at once).
    index: Option<BTreeSet<u64>>,
}

/// The outcome of a step, for progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Pages cleaned this step (the work done).
    pub cleaned_now: u64,
    /// Pages an end-of-crawl pass kept as they were: their text came from the same model.
    pub reused: u64,
    /// Pages whose text changed and was (re)written this step.
    pub written: u64,
    /// Pages of the site that have cleaned text.
    pub cleaned: u64,
    pub clusters: u64,
}

/// What a whole-site pass did.
#[derive(Default)]
struct Pass {
    /// Pages of the current era the pass went over.
    seen: u64,
    /// Pages cleaned (loaded and run through a model).
    cleaned: u64,
    /// Pages whose text the pass's own model had written already (`model_fingerprint`): kept,
    /// not cleaned again.
    reused: u64,
    clusters: Vec<ClusterSummary>,
    /// Pages whose text changed.
    written: u64,
}

/// Bump when the end-of-crawl engine (`engine::clean_cluster_pages`, `ClusterModel`) would
/// write other text from the same pages: text fingerprinted by the old engine is then cleaned
/// again. (The crate version is part of the fingerprint too.) The test
/// `tests::model_revision_is_bumped_with_the_cleaners_text` pins the engine's text on a fixture
/// of several kinds of site to this number, so a change to the cleaner fails it until both move.
const MODEL_REVISION: u32 = 3;

/// The fingerprint of an end-of-crawl cluster model: everything its text depends on but the
/// page itself — the engine's version, the cluster's label (written with the text), its template
/// and the pages it learns from (id and `engine::sample_key` each, in learning order). A page
/// whose text a model of this fingerprint wrote, and whose bytes have not been replaced since
/// (a replacement removes the page's fingerprint, `Store::put_clean_models`), would get the
/// same text again.
fn model_fingerprint(
    label: ClusterId,
    template: &[u64],
    learners: impl Iterator<Item = (u64, u64)>,
) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&MODEL_REVISION.to_le_bytes());
    h.update(&label.to_le_bytes());
    h.update(&(template.len() as u64).to_le_bytes());
    for p in template {
        h.update(&p.to_le_bytes());
    }
    for (id, key) in learners {
        h.update(&id.to_le_bytes());
        h.update(&key.to_le_bytes());
    }
    h.digest()
}

pub struct SiteLearner<'a> {
    pub store: &'a Store,
    pub out: &'a Output,
    pub detector: Detector,
}

impl SiteLearner<'_> {
    fn paths_of<'s>(&'s self, site: &'s str) -> impl FnMut(u64) -> Vec<u64> + 's {
        move |id| {
            self.store
                .path_set(site, id)
                .ok()
                .flatten()
                .unwrap_or_default()
        }
    }

    fn load_state(&self, site: &str, state: &mut SiteState) -> Result<(), LearnError> {
        let Detector::Text(algorithm) = self.detector else {
            return Ok(());
        };
        if state.clusters.is_none() {
            let hc = match self.store.clusters_raw(site)? {
                Some(bytes) => HostClusters::from_bytes(&bytes).map_err(|e| LearnError::State {
                    site: site.to_string(),
                    message: e.to_string(),
                })?,
                None => HostClusters::new(IncrementalParams {
                    algorithm,
                    ..IncrementalParams::default()
                }),
            };
            state.clusters = Some(hc);
        }
        Ok(())
    }

    /// Pages of `site` the site's clustering does not hold yet (after a resume).
    pub fn unclustered(&self, site: &str, state: &mut SiteState) -> Result<Vec<u64>, LearnError> {
        self.load_state(site, state)?;
        let old = self.old_era(site)?;
        let mut ids = self.store.site_pages(site)?;
        ids.retain(|id| !old.contains(id));
        Ok(match &state.clusters {
            Some(hc) => ids
                .into_iter()
                .filter(|&id| hc.cluster_of(id).is_none())
                .collect(),
            None => ids,
        })
    }

    /// Add `new` pages to the site's clustering and clean what changed.
    pub fn step(&self, site: &str, state: &mut SiteState, new: &[u64]) -> Result<Step, LearnError> {
        if !matches!(self.detector, Detector::Text(_)) {
            // The baselines have no incremental form: rerun them on the whole site (its current
            // era).
            let old = self.old_era(site)?;
            return self.whole_site(site, state, false, &old);
        }
        self.load_state(site, state)?;
        let new_paths: Vec<(u64, Vec<u64>)> = new
            .iter()
            .filter_map(|&id| {
                self.store
                    .path_set(site, id)
                    .ok()
                    .flatten()
                    .map(|p| (id, p))
            })
            .collect();
        let mut hc = state.clusters.take().expect("invariant: loaded above");
        // Pages a recrawl replaced leave the clustering with the path set it knew them by,
        // then come back with their new one (docs/recrawl.md, "Learning").
        let mut replaced = Vec::new();
        for &id in new {
            if hc.cluster_of(id).is_some() {
                if let Some(p) = self.store.pending_change(site, id)? {
                    replaced.push((id, p.old_paths));
                }
            }
        }
        let removal = if replaced.is_empty() {
            Default::default()
        } else {
            hc.remove_pages(&replaced, self.paths_of(site))
        };
        drop(replaced);
        let changes = hc.add_pages(&new_paths, self.paths_of(site));
        // A rebuild keeps cluster ids where membership overlaps and lists only the clusters
        // whose template changed: other clusters' models stay valid.
        for c in changes
            .retemplated
            .iter()
            .chain(&changes.removed)
            .chain(&removal.retemplated)
            .chain(&removal.removed)
        {
            state.models.remove(c);
        }
        let mut to_clean: BTreeSet<u64> = hc.pages_to_clean(&changes).into_iter().collect();
        to_clean.extend(hc.pages_to_clean(&removal));
        // While a recrawl's replaced pages wait for the site's end-of-crawl pass, a step cleans
        // only its own pages: if that pass finds a redesign, the old era's pages keep their text
        // files untouched, so no step may rewrite them first (the pass re-cleans the current
        // era whole either way).
        if self.store.has_pending_changes(site)? {
            let own: HashSet<u64> = new.iter().copied().collect();
            to_clean.retain(|id| own.contains(id));
        }
        let mut by_cluster: BTreeMap<ClusterId, Vec<u64>> = BTreeMap::new();
        for id in to_clean {
            if let Some(c) = hc.cluster_of(id) {
                by_cluster.entry(c).or_default().push(id);
            }
        }
        let mut batch = CleanBatch::default();
        let mut written = 0;
        let mut cleaned_now = 0;
        let mut cleaned = Vec::new();
        for (c, pages) in by_cluster {
            let model = match state.models.entry(c) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let members = hc.members(c).unwrap_or(&[]);
                    let template = hc.template(c).unwrap_or(&[]);
                    e.insert(self.learn(site, members, template)?)
                }
            };
            for id in pages {
                if let Some(dom) = self.store.dom(site, id)? {
                    cleaned_now += 1;
                    let page = model.clean_page(&dom);
                    written += u64::from(self.write(&mut batch, site, id, c, page)?);
                    cleaned.push(id);
                    if cleaned.len() % STEP_BATCH == 0 {
                        self.store.put_clean_batch(std::mem::take(&mut batch))?;
                    }
                }
            }
        }
        self.store.put_clean_batch(batch)?;
        let clusters = hc.clusters().count() as u64;
        let pages = hc.len() as u64;
        state.clusters = Some(hc);
        let since = *state.unsaved_since.get_or_insert_with(Instant::now);
        if 100 * pages >= (100 + SAVE_GROWTH_PERCENT) * state.saved_pages
            || since.elapsed() >= SAVE_INTERVAL
        {
            self.save(site, state)?;
        }
        self.update_index(site, state, &cleaned)?;
        Ok(Step {
            cleaned_now,
            reused: 0,
            written,
            cleaned: pages,
            clusters,
        })
    }

    /// Save the site's clustering state and its summary (what `status` and `inspect` read),
    /// if a step changed them since the last save.
    pub fn save(&self, site: &str, state: &mut SiteState) -> Result<(), LearnError> {
        let Some(hc) = &state.clusters else {
            return Ok(());
        };
        if state.unsaved_since.is_none() {
            return Ok(());
        }
        self.store.put_clusters_raw(site, &hc.to_bytes())?;
        let summary = SiteClusters {
            detector: self.detector.to_string(),
            final_pages: 0,
            clusters: hc
                .clusters()
                .map(|c| ClusterSummary {
                    id: c,
                    members: hc.members(c).unwrap_or(&[]).to_vec(),
                    template: hc.template(c).unwrap_or(&[]).to_vec(),
                })
                .collect(),
            updated_at_ms: now_ms(),
        };
        self.store.put_site_clusters(site, &summary)?;
        state.saved_pages = hc.len() as u64;
        state.unsaved_since = None;
        Ok(())
    }

    /// The TEXT end-of-crawl pass: the site's incremental clustering is reclustered from scratch
    /// (the batch algorithm `thresher clean` runs, on the same pages: the same partition), and
    /// every page is cleaned under it by the engine `clean` uses — but pages whose current text
    /// a model of the same fingerprint wrote (`model_fingerprint`), which would get it again. Cluster labels stay the
    /// incremental state's ids, so a later resume continues from them.
    ///
    /// Clustering needs only the stored path sets; pages are then loaded, learned from and
    /// cleaned one cluster at a time, so memory holds the largest cluster's DOMs, not the site's.
    /// Pages of earlier template eras (`old`) are left out: not clustered, not cleaned, their
    /// files untouched; the clustering forgets those it held. Returns the pages cleaned, their
    /// clusters and the pages whose text changed.
    fn final_text_pass(
        &self,
        site: &str,
        state: &mut SiteState,
        old: &BTreeSet<u64>,
    ) -> Result<Pass, LearnError> {
        // Each page's `p` record read once: its reference then reads the path set now and
        // the DOM later, and clustering takes the path sets from memory (every `p` read pulls
        // a leaf of the whole tree into sled's cache).
        let (ids, records) = self.site_records(
            site,
            |store, site, id| {
                let at = store.page_ref(id)?;
                Ok(store.path_set_at(site, id, at.as_ref())?.map(|p| (at, p)))
            },
            old,
        )?;
        let (refs, sets): (Vec<Option<PageRef>>, Vec<Vec<u64>>) = records.into_iter().unzip();
        let mut in_memory = |id: u64| match ids.binary_search(&id) {
            Ok(i) => sets[i].clone(),
            Err(_) => self.paths_of(site)(id),
        };
        self.load_state(site, state)?;
        let mut hc = state.clusters.take().expect("invariant: loaded above");
        let mut paths = self.paths_of(site);
        let leaving: Vec<(u64, Vec<u64>)> = old
            .iter()
            .filter(|&&id| hc.cluster_of(id).is_some())
            .map(|&id| (id, paths(id)))
            .collect();
        if !leaving.is_empty() {
            hc.remove_pages(&leaving, self.paths_of(site));
        }
        drop(leaving);
        // Borrowed, not cloned: after a crawl nearly every page is missing, and a copy of the
        // site's path sets was a third of the pass's working set.
        let missing: Vec<(u64, &[u64])> = ids
            .iter()
            .zip(&sets)
            .filter(|(&id, _)| hc.cluster_of(id).is_none())
            .map(|(&id, p)| (id, p.as_slice()))
            .collect();
        if !missing.is_empty() {
            hc.add_pages(&missing, &mut in_memory);
        }
        drop(missing);
        // The support `clean` computes from the pages as they are now (a recrawl may have
        // replaced some since they were added): the same support, the same partition.
        hc.reset_support(support::Support::from_pages(sets.iter().map(Vec::as_slice)));
        hc.recluster(&mut in_memory);
        let index: HashMap<u64, u32> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let keys: Vec<u64> = sets.iter().map(|s| engine::sample_key(s)).collect();
        // Each path set gives way to its essential set as that is made, so the two are never
        // both held whole.
        let essential: Vec<Vec<u64>> = sets
            .into_iter()
            .map(|s| hc.support().essential(&s))
            .collect();
        let mut labels: Vec<ClusterId> = hc.clusters().collect();
        labels.sort_unstable();
        let mut pass = Pass {
            seen: ids.len() as u64,
            ..Pass::default()
        };
        for &label in &labels {
            let mut members: Vec<u32> = hc
                .members(label)
                .unwrap_or(&[])
                .iter()
                .filter_map(|id| index.get(id).copied())
                .collect();
            members.sort_unstable();
            if members.len() > engine::LEARN_SAMPLE {
                let summary = self.stream_cluster(
                    site, label, &members, &ids, &refs, &essential, &keys, &mut pass,
                )?;
                pass.clusters.push(summary);
                continue;
            }
            // The model learns from every member: its inputs are the template and the members'
            // pages, so text written by a model of the same fingerprint is this model's text.
            let template =
                support::template(members.iter().map(|&m| essential[m as usize].as_slice()));
            let fingerprint = model_fingerprint(
                label,
                &template,
                members.iter().map(|&m| (ids[m as usize], keys[m as usize])),
            );
            let member_ids: Vec<u64> = members.iter().map(|&m| ids[m as usize]).collect();
            if self.certified(&member_ids, fingerprint)? {
                pass.reused += member_ids.len() as u64;
                pass.clusters.push(ClusterSummary {
                    id: label,
                    members: member_ids,
                    template,
                });
                continue;
            }
            let mut doms = Vec::with_capacity(members.len());
            let mut kept = Vec::with_capacity(members.len());
            for &m in &members {
                let m_at = refs[m as usize].as_ref();
                if let Some(d) = self.store.dom_at(site, ids[m as usize], m_at)? {
                    doms.push(d);
                    kept.push(m);
                }
            }
            let pages: Vec<&Dom> = doms.iter().collect();
            let sets: Vec<&[u64]> = kept
                .iter()
                .map(|&m| essential[m as usize].as_slice())
                .collect();
            let (template, cleaned) = engine::clean_cluster_pages(&pages, &sets);
            drop(pages);
            drop(doms);
            pass.cleaned += kept.len() as u64;
            // The texts, bylines and fingerprint of the cluster in one batch.
            let mut batch = CleanBatch::default();
            for (&m, page) in kept.iter().zip(cleaned) {
                let id = ids[m as usize];
                pass.written += u64::from(self.write(&mut batch, site, id, label, page)?);
            }
            let kept_ids: Vec<u64> = kept.iter().map(|&m| ids[m as usize]).collect();
            // A member without a DOM left the model's inputs short of the fingerprint's.
            if kept.len() == members.len() {
                batch.certify(&kept_ids, fingerprint);
            }
            self.store.put_clean_batch(batch)?;
            pass.clusters.push(ClusterSummary {
                id: label,
                members: kept_ids,
                template,
            });
        }
        self.store.put_clusters_raw(site, &hc.to_bytes())?;
        state.saved_pages = hc.len() as u64;
        state.unsaved_since = None;
        state.clusters = Some(hc);
        state.models.clear();
        Ok(pass)
    }

    /// A cluster larger than `engine::LEARN_SAMPLE` in the end-of-crawl pass: its model learns
    /// from the sample `engine::clean_cluster` would pick (only those DOMs in memory at once),
    /// then each page is loaded, cleaned and written in turn — the same text as `clean`, with
    /// memory bounded by the sample rather than the cluster. Pages whose text this same model
    /// (fingerprint) wrote are not cleaned again; when every page's was, nothing is loaded.
    /// Returns the cluster's summary; counts go to `pass`.
    #[allow(clippy::too_many_arguments)]
    fn stream_cluster(
        &self,
        site: &str,
        label: ClusterId,
        members: &[u32],
        ids: &[u64],
        refs: &[Option<PageRef>],
        essential: &[Vec<u64>],
        keys: &[u64],
        pass: &mut Pass,
    ) -> Result<ClusterSummary, LearnError> {
        let template = support::template(members.iter().map(|&m| essential[m as usize].as_slice()));
        let member_keys: Vec<u64> = members.iter().map(|&m| keys[m as usize]).collect();
        let chosen = engine::learn_sample(&member_keys);
        let fingerprint = model_fingerprint(
            label,
            &template,
            chosen
                .iter()
                .map(|&k| (ids[members[k] as usize], member_keys[k])),
        );
        // The model's own inputs must be the pages it was learned from (a page replaced since
        // lost its fingerprint), then each page stands on its own.
        let sample_ids: Vec<u64> = chosen.iter().map(|&k| ids[members[k] as usize]).collect();
        let mut stale = Vec::new();
        if self.certified(&sample_ids, fingerprint)? {
            for &m in members {
                let id = ids[m as usize];
                if self.store.clean_model(id)? != Some(fingerprint) {
                    stale.push(id);
                }
            }
            if stale.is_empty() {
                pass.reused += members.len() as u64;
                return Ok(ClusterSummary {
                    id: label,
                    members: members.iter().map(|&m| ids[m as usize]).collect(),
                    template,
                });
            }
        } else {
            stale = members.iter().map(|&m| ids[m as usize]).collect();
        }
        let stale: HashSet<u64> = stale.into_iter().collect();
        let mut sample = Vec::new();
        let mut sample_ids = Vec::new();
        for &k in &chosen {
            let m = members[k] as usize;
            let id = ids[m];
            if let Some(d) = self.store.dom_at(site, id, refs[m].as_ref())? {
                sample.push(d);
                sample_ids.push(id);
            }
        }
        let whole_sample = sample_ids.len() == chosen.len();
        let sample_doms: Vec<&Dom> = sample.iter().collect();
        // The sample's own texts come with its learning, as in `engine::clean_cluster`.
        let (model, sample_cleaned) = ClusterModel::learn_and_clean_pages(&sample_doms, &template);
        drop(sample_doms);
        drop(sample);
        pass.cleaned += sample_ids.len() as u64;
        let mut kept: Vec<u64> = Vec::with_capacity(members.len());
        let mut batch = CleanBatch::default();
        for (&id, page) in sample_ids.iter().zip(sample_cleaned) {
            pass.written += u64::from(self.write(&mut batch, site, id, label, page)?);
            kept.push(id);
        }
        if whole_sample {
            batch.certify(&sample_ids, fingerprint);
        }
        self.store.put_clean_batch(batch)?;
        let in_sample: HashSet<u64> = sample_ids.into_iter().collect();
        for chunk in members.chunks(engine::LEARN_SAMPLE) {
            let mut batch = CleanBatch::default();
            let mut certify = Vec::new();
            for &m in chunk {
                let id = ids[m as usize];
                if in_sample.contains(&id) {
                    continue;
                }
                if !stale.contains(&id) {
                    kept.push(id);
                    pass.reused += 1;
                    continue;
                }
                if let Some(dom) = self.store.dom_at(site, id, refs[m as usize].as_ref())? {
                    let page = model.clean_page(&dom);
                    pass.cleaned += 1;
                    pass.written += u64::from(self.write(&mut batch, site, id, label, page)?);
                    kept.push(id);
                    certify.push(id);
                }
            }
            if whole_sample {
                batch.certify(&certify, fingerprint);
            }
            self.store.put_clean_batch(batch)?;
        }
        kept.sort_unstable();
        Ok(ClusterSummary {
            id: label,
            members: kept,
            template,
        })
    }

    /// Whether the model of fingerprint `fingerprint` wrote the current cleaned text of every
    /// page of `ids` (then those texts are what that model writes: its inputs are unchanged).
    fn certified(&self, ids: &[u64], fingerprint: u64) -> Result<bool, LearnError> {
        for &id in ids {
            if self.store.clean_model(id)? != Some(fingerprint) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One cleaned page's text file and byline (`Output::file`), its records added to `batch`:
    /// whether its text was written.
    fn write(
        &self,
        batch: &mut CleanBatch,
        site: &str,
        id: u64,
        cluster: u32,
        page: Cleaned,
    ) -> Result<bool, LearnError> {
        Ok(self.out.file(self.store, batch, site, id, cluster, page)?)
    }

    /// The site's page ids, ascending, with one stored record each (pages without it skipped).
    /// Pages in `skip` (an earlier era's) are left out.
    fn site_records<T>(
        &self,
        site: &str,
        get: impl Fn(&Store, &str, u64) -> Result<Option<T>, StoreError>,
        skip: &BTreeSet<u64>,
    ) -> Result<(Vec<u64>, Vec<T>), LearnError> {
        let mut ids = Vec::new();
        let mut records = Vec::new();
        for id in self.store.site_pages(site)? {
            if skip.contains(&id) {
                continue;
            }
            if let Some(r) = get(self.store, site, id)? {
                ids.push(id);
                records.push(r);
            }
        }
        Ok((ids, records))
    }

    /// A whole site at once through `detect::clean_site` (a baseline detector, or TEXT's
    /// interim whole-site pass): every page's DOM in memory, but those of earlier eras (`old`).
    fn in_memory_pass(&self, site: &str, old: &BTreeSet<u64>) -> Result<Pass, LearnError> {
        let (ids, doms) = self.site_records(site, Store::dom, old)?;
        let result = detect::clean_site(self.detector, &doms, Renders::Both);
        drop(doms);
        let assignment = result.clustering.assignment(ids.len());
        let mut batch = CleanBatch::default();
        let mut written = 0;
        let mut markdowns = result.markdowns.into_iter();
        let mut bylines = result.bylines.into_iter();
        for ((&id, text), &c) in ids.iter().zip(result.texts).zip(&assignment) {
            let page = Cleaned {
                markdown: markdowns.next().unwrap_or_else(|| text.clone()),
                byline: bylines.next().unwrap_or_default(),
                text,
            };
            written += u64::from(self.out.file(self.store, &mut batch, site, id, c, page)?);
        }
        self.store.put_clean_batch(batch)?;
        let clusters = result
            .clustering
            .clusters
            .iter()
            .enumerate()
            .map(|(c, members)| ClusterSummary {
                id: c as u32,
                members: members.iter().map(|&m| ids[m as usize]).collect(),
                template: result.templates.get(c).cloned().unwrap_or_default(),
            })
            .collect();
        Ok(Pass {
            seen: ids.len() as u64,
            cleaned: ids.len() as u64,
            reused: 0,
            clusters,
            written,
        })
    }

    /// Add the pages just cleaned to the site's `index.tsv`: appended to the file, once the
    /// site's rows are known (read from the store at the site's first step of a run, when the
    /// file is written whole).
    fn update_index(
        &self,
        site: &str,
        state: &mut SiteState,
        cleaned: &[u64],
    ) -> Result<(), LearnError> {
        let Some(listed) = &mut state.index else {
            let rows = self.out.index_rows(self.store, site)?;
            self.out.write_index(site, &rows)?;
            state.index = Some(rows.into_keys().collect());
            return Ok(());
        };
        let mut added = Vec::new();
        for &id in cleaned {
            if listed.contains(&id) {
                continue;
            }
            if let Some(meta) = self.store.page(id)? {
                listed.insert(id);
                added.push((id, without_credentials(&meta.url).into_owned()));
            }
        }
        self.out.append_index(self.store, site, &added)?;
        Ok(())
    }

    /// A content model from (a sample of) a cluster's members.
    fn learn(
        &self,
        site: &str,
        members: &[u64],
        template: &[u64],
    ) -> Result<ClusterModel, LearnError> {
        let stride = members.len().div_ceil(MODEL_SAMPLE).max(1);
        let mut doms: Vec<Dom> = Vec::new();
        for &id in members.iter().step_by(stride) {
            if let Some(d) = self.store.dom(site, id)? {
                doms.push(d);
            }
        }
        let refs: Vec<&Dom> = doms.iter().collect();
        Ok(ClusterModel::learn(&refs, template))
    }

    /// Has the site changed since its last end-of-crawl pass?
    pub fn needs_final(&self, site: &str) -> Result<bool, LearnError> {
        let pages = self.store.site_counters(site).pages;
        let changed = match self.store.site_clusters(site)? {
            Some(s) => s.final_pages != pages || s.detector != self.detector.to_string(),
            None => pages > 0,
        };
        // A recrawl replaced pages: same count, new text to settle.
        Ok(changed || self.store.has_pending_changes(site)?)
    }

    /// The site's pages of earlier template eras that stay as they are: every old-era page but
    /// those a recrawl replaced since (they rejoin the current era at the next pass).
    fn old_era(&self, site: &str) -> Result<BTreeSet<u64>, LearnError> {
        let mut old = BTreeSet::new();
        for id in self.store.old_era_pages(site)?.into_keys() {
            if self.store.pending_change(site, id)?.is_none() {
                old.insert(id);
            }
        }
        Ok(old)
    }

    /// The end-of-crawl pass: the site's current template era through the same engine as
    /// `thresher clean`; then the recrawl's replaced pages get their change kind from their
    /// final text. When most replaced pages came back with a new structure (`eras`), that is a
    /// redesign: the pages the recrawl neither replaced nor added stay in the era it ends, and
    /// the pass re-learns and re-cleans only the new era's pages (docs/recrawl.md, "Redesigns:
    /// template eras").
    pub fn finish(&self, site: &str, state: &mut SiteState) -> Result<Step, LearnError> {
        let marked = self.store.old_era_pages(site)?;
        if !self.store.has_pending_changes(site)? {
            let old = marked.into_keys().collect();
            return self.whole_site(site, state, true, &old);
        }
        // Only a recrawl's replaced pages can show a redesign: the previous clustering is read
        // for them alone (a large site's summary lists every page).
        let before = self.store.site_clusters(site)?;
        let mut detector = eras::Detector::default();
        let mut update = EraUpdate::default();
        let mut replaced = HashSet::new();
        let mut first_replaced = u64::MAX;
        for item in self.store.pending_changes(site) {
            let (id, pending) = item?;
            replaced.insert(id);
            first_replaced = first_replaced.min(pending.at_ms);
            if marked.contains_key(&id) {
                // An old-era page replaced: it rejoins the current era, whatever its
                // structure now, and is no evidence of a new redesign (it catches up with one
                // already recorded).
                update.rejoined.push(id);
                continue;
            }
            let now = self.store.path_set(site, id)?.unwrap_or_default();
            detector.page(id, &pending, &now);
        }
        let mut old: BTreeSet<u64> = marked
            .keys()
            .filter(|id| !replaced.contains(id))
            .copied()
            .collect();
        if detector.is_redesign() {
            update.era = 1 + self.store.redesigns(site)?.len() as u32;
            update.old_pages = self.left_in_old_era(site, &old, &replaced, first_replaced)?;
            old.extend(&update.old_pages);
        }
        let step = self.whole_site(site, state, true, &old)?;
        let after = self.store.site_clusters(site)?;
        update.redesign = detector.finish(now_ms(), before.as_ref(), after.as_ref());
        if let Some(r) = &update.redesign {
            tracing::info!(
                site,
                pages = r.pages,
                replaced = r.replaced,
                kept = update.old_pages.len(),
                "redesign: most replaced pages have a new structure; the new era learned again, \
                 the old era's pages kept as they were"
            );
        }
        self.store.resolve_changes(site, &update)?;
        Ok(step)
    }

    /// The pages a redesign leaves in the era it ends: those whose bytes predate the recrawl
    /// that found it — not replaced, and either not fetched since it started (`--older-than`
    /// kept them out, or it never reached them) or revisited with the same bytes (a 304),
    /// gone or failed. Pages first stored since are the new era's. The recrawl started at its
    /// recorded start, or at its first replaced page if that is earlier (a `--recrawl` run
    /// again after an interrupted one restarts the record).
    fn left_in_old_era(
        &self,
        site: &str,
        already: &BTreeSet<u64>,
        replaced: &HashSet<u64>,
        first_replaced: u64,
    ) -> Result<Vec<u64>, LearnError> {
        let started = self
            .store
            .get_meta::<RecrawlRun>("recrawl")?
            .map_or(first_replaced, |r| r.started_at_ms.min(first_replaced));
        let revisited = self.store.revisited_since(started)?;
        let mut old = Vec::new();
        for id in self.store.site_pages(site)? {
            if already.contains(&id) || replaced.contains(&id) {
                continue;
            }
            let Some(meta) = self.store.page(id)? else {
                continue;
            };
            if meta.fetched_at_ms < started || revisited.contains(&id) {
                old.push(id);
            }
        }
        Ok(old)
    }

    /// A pass over the site's current era: every page but `old` (earlier eras' pages, whose
    /// text stays). The pages the pass does not see still count in `final_pages`, so the site
    /// is not taken for changed.
    fn whole_site(
        &self,
        site: &str,
        state: &mut SiteState,
        is_final: bool,
        old: &BTreeSet<u64>,
    ) -> Result<Step, LearnError> {
        let pass = match self.detector {
            Detector::Text(_) if is_final => self.final_text_pass(site, state, old)?,
            _ => self.in_memory_pass(site, old)?,
        };
        let all = pass.seen + old.len() as u64;
        let summary = SiteClusters {
            detector: self.detector.to_string(),
            final_pages: if is_final { all } else { 0 },
            clusters: pass.clusters,
            updated_at_ms: now_ms(),
        };
        self.store.put_site_clusters(site, &summary)?;
        let rows = self.out.index_rows(self.store, site)?;
        self.out.write_index(site, &rows)?;
        state.index = Some(rows.into_keys().collect());
        Ok(Step {
            cleaned_now: pass.cleaned,
            reused: pass.reused,
            written: pass.written,
            cleaned: all,
            clusters: summary.clusters.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    const SITE: &str = "a.example";

    /// Page `n` of a two-layout site, stored as the crawler stores it; (id, URL).
    fn store_page(store: &Store, n: usize) -> (u64, String) {
        let url = format!("http://{SITE}/p{n}");
        let nav = if n % 2 == 0 {
            "<nav>Home News Sport</nav>"
        } else {
            "<ul><li>Shop</li><li>Help</li></ul>"
        };
        let html = format!(
            "<html><body>{nav}<h1>Story {n}</h1><p>Paragraph {n} of page {n}, all its own.</p>\
             <footer>© A Example</footer></body></html>"
        );
        let id = 1000 + n as u64 * 7919;
        store_html(store, id, &url, &html);
        (id, url)
    }

    /// Store page `id` of the test site at `url` with `html`, as the crawler stores it.
    fn store_html(store: &Store, id: u64, url: &str, html: &str) {
        crate::store::testing::store_html(store, id, url, SITE, html, None);
    }

    /// Page `n` of a site of two unlike layouts (even: an article page; odd: a table-laid
    /// listing), which cluster apart; stored as the crawler stores it. Its id.
    fn store_two_layout_page(store: &Store, n: usize) -> u64 {
        let html = if n % 2 == 0 {
            format!(
                "<html><body><header><nav><ul><li>Home</li><li>World</li><li>Sport</li>\
                 <li>Arts</li></ul></nav></header><main><article><h1>Story {n}</h1>\
                 <p>First paragraph of story {n}, with words of its own.</p>\
                 <p>Second paragraph of story {n}: more words, other words.</p></article>\
                 <aside><h3>Most read</h3><ol><li>One</li><li>Two</li></ol></aside></main>\
                 <footer><p>© A Example</p></footer></body></html>"
            )
        } else {
            format!(
                "<html><body><table><tr><td><b>Catalogue</b></td><td><i>Help</i></td></tr>\
                 <tr><td colspan=2><h2>Listing {n}</h2><dl><dt>Item {n}</dt>\
                 <dd>Described at length for listing {n}.</dd></dl></td></tr>\
                 <tr><td><small>Terms</small></td><td><small>Contact</small></td></tr>\
                 </table></body></html>"
            )
        };
        let id = 5000 + n as u64 * 7919;
        store_html(store, id, &format!("http://{SITE}/l{n}"), &html);
        id
    }

    fn text_learner<'a>(store: &'a Store, out: &'a Output) -> SiteLearner<'a> {
        SiteLearner {
            store,
            out,
            detector: Detector::default(),
        }
    }

    /// Store the pages numbered `numbers`, noting each one's id and URL in `pages`.
    fn store_pages(
        store: &Store,
        numbers: std::ops::Range<usize>,
        pages: &mut BTreeMap<u64, String>,
    ) -> Vec<u64> {
        numbers
            .map(|n| {
                let (id, url) = store_page(store, n);
                pages.insert(id, url);
                id
            })
            .collect()
    }

    /// What index.tsv must hold for these pages: every one, sorted by page id.
    fn expected_index(pages: &BTreeMap<u64, String>) -> String {
        let mut tsv = String::from("page_id\turl\n");
        for (id, url) in pages {
            tsv.push_str(&format!("{id:016x}\t{url}\n"));
        }
        tsv
    }

    /// The engine's text and bylines on three clusters — stories with more-stories lists
    /// (articles), a manual's chapters of contents links (site mode), one page (page mode) —
    /// hashed. `MODEL_REVISION` is pinned to it.
    fn engine_text_hash() -> u64 {
        let words = [
            "harbour", "council", "museum", "bridge", "library", "festival", "energy",
        ];
        let w = |k: usize| words[k % words.len()];
        let prose = |i: usize, p: usize| -> String {
            (0..4)
                .map(|s| {
                    format!(
                        "The {} of day {i} met the {} on point {p}.{s}, and the {} agreed. ",
                        w(i + s),
                        w(i * 3 + p),
                        w(p + s * 2)
                    )
                })
                .collect()
        };
        let story = |i: usize| -> String {
            let body: String = (0..5).map(|p| format!("<p>{}</p>", prose(i, p))).collect();
            let more: String = (0..3)
                .map(|k| {
                    format!(
                        "<li><a href=/s/{i}{k}>Teaser {i}{k} on the {}</a></li>",
                        w(i + k)
                    )
                })
                .collect();
            format!(
                "<body><nav><a href=/>Home</a> <a href=/world>World</a></nav><div class=story>\
                 <h1>Headline {i}</h1><p class=meta>By Ann Reporter | June {i}, 2024</p>{body}\
                 <h3>More stories</h3><ul>{more}</ul></div><div id=comments><p>Reader {i} says \
                 the {} is wrong.</p></div><footer>Example News</footer></body>",
                w(i)
            )
        };
        let chapter = |c: usize| -> String {
            let toc: String = (0..6)
                .map(|k| {
                    format!(
                        "<li><a href=/c{c}/{k}>{c}.{k} Setting up the {}</a></li>",
                        w(c + k)
                    )
                })
                .collect();
            format!(
                "<body><nav><a href=/>Manual</a></nav><div class=body><h1>Chapter {c}</h1>\
                 <p>{}</p><ul>{toc}</ul><dl><dt>Parameters:</dt><dd>{}</dd></dl>\
                 <pre>let x = {c};</pre><h3>Blanket implementations</h3>\
                 <p>Performs the conversion.</p></div><footer>Manual footer</footer></body>",
                prose(c, 0),
                prose(c, 1)
            )
        };
        let clusters: Vec<Vec<String>> = vec![
            (0..6).map(story).collect(),
            (0..5).map(chapter).collect(),
            vec![story(9)],
        ];
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for pages in &clusters {
            let doms: Vec<Dom> = pages.iter().map(|p| parse_html(p).dom).collect();
            let refs: Vec<&Dom> = doms.iter().collect();
            let essential = engine::essential_sets(&doms);
            let sets: Vec<&[u64]> = essential.iter().map(Vec::as_slice).collect();
            for page in engine::clean_cluster_pages(&refs, &sets).1 {
                h.update(page.text.as_bytes());
                h.update(format!("{:?}", page.byline).as_bytes());
            }
        }
        h.digest()
    }

    #[test]
    fn model_revision_is_bumped_with_the_cleaners_text() {
        // A stored fingerprint vouches that the engine would write the same text again; an
        // engine that writes other text must bump MODEL_REVISION, and pin the new hash here.
        assert_eq!(
            (MODEL_REVISION, engine_text_hash()),
            (3, 0x6b57_dfa3_5254_9ace),
            "the cleaner's text changed: bump MODEL_REVISION and pin the new hash"
        );
    }

    #[test]
    fn index_tsv_kept_by_steps_lists_every_cleaned_page() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("data"), 8 << 20).unwrap();
        let out = Output::new(&dir.path().join("out"));
        let learner = text_learner(&store, &out);
        let mut state = SiteState::default();
        let mut pages = BTreeMap::new();
        let index = || std::fs::read_to_string(out.site_dir(SITE).join("index.tsv")).unwrap();
        for batch in [0..8, 8..12, 12..13] {
            let ids = store_pages(&store, batch, &mut pages);
            learner.step(SITE, &mut state, &ids).unwrap();
            assert_eq!(index(), expected_index(&pages), "after a step");
        }
        learner.finish(SITE, &mut state).unwrap();
        assert_eq!(
            index(),
            expected_index(&pages),
            "after the end-of-crawl pass"
        );
        let (id, url) = store_page(&store, 13);
        pages.insert(id, url);
        learner.step(SITE, &mut state, &[id]).unwrap();
        assert_eq!(index(), expected_index(&pages), "after a step following it");
    }

    #[test]
    fn a_step_appends_its_rows_to_the_index_instead_of_rewriting_it() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("data"), 8 << 20).unwrap();
        let out = Output::new(&dir.path().join("out"));
        let learner = text_learner(&store, &out);
        let mut state = SiteState::default();
        let path = out.site_dir(SITE).join("index.tsv");
        let ids: Vec<u64> = (0..8).map(|n| store_page(&store, n).0).collect();
        learner.step(SITE, &mut state, &ids).unwrap();
        let (first, inode) = (
            std::fs::read_to_string(&path).unwrap(),
            std::fs::metadata(&path).unwrap().ino(),
        );
        let (id, url) = store_page(&store, 8);
        learner.step(SITE, &mut state, &[id]).unwrap();
        let second = std::fs::read_to_string(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode, "rewritten");
        assert_eq!(second, format!("{first}{id:016x}\t{url}\n"));
    }

    /// The learner keeps only the ids index.tsv lists (not their URLs): an index file gone
    /// between steps is written again whole, from the store.
    #[test]
    fn an_index_removed_between_steps_is_rewritten_whole_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("data"), 8 << 20).unwrap();
        let out = Output::new(&dir.path().join("out"));
        let learner = text_learner(&store, &out);
        let mut state = SiteState::default();
        let path = out.site_dir(SITE).join("index.tsv");
        let mut pages = BTreeMap::new();
        let ids = store_pages(&store, 0..8, &mut pages);
        learner.step(SITE, &mut state, &ids).unwrap();
        std::fs::remove_file(&path).unwrap();
        let (id, url) = store_page(&store, 8);
        pages.insert(id, url);
        learner.step(SITE, &mut state, &[id]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            expected_index(&pages)
        );
    }

    #[test]
    fn the_clustering_state_is_saved_as_it_grows_not_at_every_step() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("data"), 8 << 20).unwrap();
        let out = Output::new(&dir.path().join("out"));
        let learner = text_learner(&store, &out);
        let saved = || {
            let bytes = store.clusters_raw(SITE).unwrap().unwrap_or_default();
            HostClusters::from_bytes(&bytes).map_or(0, |hc| hc.len())
        };
        let mut state = SiteState::default();
        let ids: Vec<u64> = (0..8).map(|n| store_page(&store, n).0).collect();
        learner.step(SITE, &mut state, &ids).unwrap();
        assert_eq!(saved(), 8, "the first step saves");
        let id = store_page(&store, 8).0;
        learner.step(SITE, &mut state, &[id]).unwrap();
        assert_eq!(saved(), 8, "9 pages are not 25 % more than 8");
        let id = store_page(&store, 9).0;
        learner.step(SITE, &mut state, &[id]).unwrap();
        assert_eq!(saved(), 10, "10 pages are");
        let id = store_page(&store, 10).0;
        learner.step(SITE, &mut state, &[id]).unwrap();
        assert_eq!(saved(), 10);
        // What an interrupted run saves on its way out; and a fresh learner (a resumed run)
        // finds only the pages of the last save clustered.
        let mut resumed = SiteState::default();
        assert_eq!(learner.unclustered(SITE, &mut resumed).unwrap(), vec![id]);
        learner.save(SITE, &mut state).unwrap();
        assert_eq!(saved(), 11);
        let mut resumed = SiteState::default();
        assert!(learner.unclustered(SITE, &mut resumed).unwrap().is_empty());
    }

    #[test]
    fn a_cluster_past_the_learning_sample_streams_to_the_same_text_as_clean() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("data"), 8 << 20).unwrap();
        let out = Output::new(&dir.path().join("out"));
        let learner = text_learner(&store, &out);
        for n in 0..2 * (engine::LEARN_SAMPLE + 20) {
            store_page(&store, n);
        }
        learner.finish(SITE, &mut SiteState::default()).unwrap();
        let summary = store.site_clusters(SITE).unwrap().unwrap();
        assert!(summary
            .clusters
            .iter()
            .any(|c| c.members.len() > engine::LEARN_SAMPLE));
        assert_text_equals_clean(&store);
        // Nothing changed: every page is kept, none loaded.
        let again = learner.finish(SITE, &mut SiteState::default()).unwrap();
        assert_eq!((again.cleaned_now, again.reused), (0, again.cleaned));
        // A page more: the clusters that took it re-learn and re-clean (a streamed one only
        // where its sample or template moved), and the text is still `clean`'s.
        store_page(&store, 2 * (engine::LEARN_SAMPLE + 20));
        let more = learner.finish(SITE, &mut SiteState::default()).unwrap();
        assert!(more.cleaned_now > 0, "{more:?}");
        assert_text_equals_clean(&store);
    }

    /// Every page's stored text is what `engine::clean_cluster` gives its cluster of the site's
    /// last end-of-crawl pass (with support over all the site's pages, as `clean` counts it).
    fn assert_text_equals_clean(store: &Store) {
        let ids = store.site_pages(SITE).unwrap();
        let sets: Vec<Vec<u64>> = ids
            .iter()
            .map(|&id| store.path_set(SITE, id).unwrap().unwrap())
            .collect();
        let essential = engine::essential_from_sets(&sets);
        let summary = store.site_clusters(SITE).unwrap().unwrap();
        assert_eq!(
            summary
                .clusters
                .iter()
                .map(|c| c.members.len())
                .sum::<usize>(),
            ids.len()
        );
        for c in &summary.clusters {
            let doms: Vec<Dom> = c
                .members
                .iter()
                .map(|&id| store.dom(SITE, id).unwrap().unwrap())
                .collect();
            let pages: Vec<&Dom> = doms.iter().collect();
            let refs: Vec<&[u64]> = c
                .members
                .iter()
                .map(|id| essential[ids.binary_search(id).unwrap()].as_slice())
                .collect();
            let (template, texts) = engine::clean_cluster(&pages, &refs);
            assert_eq!(template, c.template);
            for (id, text) in c.members.iter().zip(texts) {
                let record = store.cleaned(*id).unwrap().unwrap();
                assert_eq!(record.text, text, "page {id}");
                assert_eq!(record.cluster, c.id, "page {id}");
            }
        }
    }

    /// The end-of-crawl pass cleans a page again only when the model its text came from is not
    /// the one the pass would use: a cluster nothing changed in keeps its text, one
    /// that took a page is re-cleaned whole, and so is one whose text something else wrote.
    #[test]
    fn the_end_of_crawl_pass_recleans_only_pages_whose_model_changed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("data"), 8 << 20).unwrap();
        let out = Output::new(&dir.path().join("out"));
        let learner = text_learner(&store, &out);
        let mut state = SiteState::default();
        let ids: Vec<u64> = (0..12).map(|n| store_two_layout_page(&store, n)).collect();
        learner.step(SITE, &mut state, &ids).unwrap();
        let first = learner.finish(SITE, &mut state).unwrap();
        assert_eq!((first.cleaned_now, first.reused), (12, 0), "{first:?}");
        assert_text_equals_clean(&store);
        let clusters = store.site_clusters(SITE).unwrap().unwrap().clusters;
        assert_eq!(clusters.len(), 2, "the two layouts");
        let odd = clusters
            .iter()
            .find(|c| c.members.contains(&ids[1]))
            .unwrap()
            .members
            .clone();
        assert_eq!(odd.len(), 6);

        // Nothing changed: no page cleaned again.
        let same = learner.finish(SITE, &mut state).unwrap();
        assert_eq!((same.cleaned_now, same.reused), (0, 12), "{same:?}");

        // An even page more: its cluster's model changed (a new member to learn from), the odd
        // one's did not.
        let id = store_two_layout_page(&store, 12);
        learner.step(SITE, &mut state, &[id]).unwrap();
        let stamps = |ids: &[u64]| -> Vec<u64> {
            ids.iter()
                .map(|&id| store.cleaned(id).unwrap().unwrap().updated_at_ms)
                .collect()
        };
        let odd_before = stamps(&odd);
        let grown = learner.finish(SITE, &mut state).unwrap();
        assert_eq!((grown.cleaned_now, grown.reused), (7, 6), "{grown:?}");
        assert_eq!(stamps(&odd), odd_before, "the odd pages' records untouched");
        assert_text_equals_clean(&store);

        // Other text written for an odd page (what an incremental step does with its interim
        // model): the page, and so its cluster, no longer carry the pass's model.
        let mut record = store.cleaned(odd[0]).unwrap().unwrap();
        record.text.push_str("\ninterim line");
        store.put_cleaned_many(&[(odd[0], record)]).unwrap();
        let rewritten = learner.finish(SITE, &mut state).unwrap();
        assert_eq!(
            (rewritten.cleaned_now, rewritten.reused),
            (6, 7),
            "{rewritten:?}"
        );
        assert_text_equals_clean(&store);
        assert_eq!(
            std::fs::read_to_string(
                out.site_dir(SITE)
                    .join(format!("{}.txt", crate::crawl::url::page_stem(odd[0])))
            )
            .unwrap(),
            store.cleaned(odd[0]).unwrap().unwrap().text,
            "the file rewritten too"
        );
    }
}
