//! What was learned for one host (`thresher inspect HOST`), as a [`Report`]: the host's
//! clusters (pages, template paths, sample pages) largest first, one page's text blocks marked
//! template / dropped / kept (`marks`), and each cluster's template. [`report::render`] writes it
//! as one self-contained HTML file, [`listing`] as the text `inspect` prints.
//!
//! The marks come from the cluster's content model rebuilt the way the crawl built it (the
//! engine's `learn_cluster` for a final clustering, the stored template for an interim one), and
//! are checked against the cleaned text the crawl stored for the page.
//!
//! Owns: gathering the report from a store and showing it. Uses `store`, `template` (the content
//! model), `detect`, `dom`, `crawl` (URL normalisation, page ids) and `learn` (its model sample).

mod listing;
mod marks;
pub mod report;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::crawl::url::{normalize_url, page_id, site_key};
use crate::detect::Detector;
use crate::dom::Dom;
use crate::store::{ClusterSummary, SiteClusters, Store, StoreError};
use crate::template::engine::learn_cluster;
use crate::template::support::Support;
use crate::template::ClusterModel;

pub use listing::listing;
pub use marks::{MarkedBlock, State, TemplateLine};
pub use report::{Check, ClusterView, PageView, Report, Sample, TemplateView};

/// Sample pages listed per cluster.
const SAMPLES: usize = 3;
/// Template text lines shown per cluster in the report.
const TEMPLATE_LINES: usize = 40;
/// Clusters whose template the report shows (the largest ones).
const TEMPLATE_CLUSTERS: usize = 100;
/// Blocks of the chosen page the report shows.
const PAGE_BLOCKS: usize = 5000;

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("{0} does not exist (no crawl has used it)")]
    Missing(PathBuf),
    #[error(
        "data directory {0} is in use by a running crawl; inspect reads the store itself, so \
         wait for the crawl to finish (or stop it with Ctrl-C) and run inspect again"
    )]
    Locked(PathBuf),
    #[error(transparent)]
    Store(StoreError),
    #[error("no host {host:?} in {data}; known hosts: {known}")]
    UnknownHost {
        host: String,
        data: PathBuf,
        known: String,
    },
    #[error(
        "host {host} has {pages} stored pages but no clustering yet: templates are learned once \
         a host has template.min_pages pages; let the crawl go on (run `thresher crawl` again to \
         resume it) and inspect when it has finished"
    )]
    NotClustered { host: String, pages: u64 },
    #[error("--page {url:?} is not an http(s) URL")]
    BadPage { url: String },
    #[error("no stored page {url} on host {host}; stored pages include: {examples}")]
    UnknownPage {
        url: String,
        host: String,
        examples: String,
    },
    #[error("page {url} belongs to host {site}, not {host}: inspect {site} to see it")]
    OtherHost {
        url: String,
        host: String,
        site: String,
    },
    #[error(
        "page {url} is not in host {host}'s clustering yet (it was stored after the last \
         learning step); finish the crawl and inspect again"
    )]
    PageNotClustered { url: String, host: String },
}

impl From<StoreError> for InspectError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Locked { dir } => InspectError::Locked(dir),
            e => InspectError::Store(e),
        }
    }
}

/// The report on `host` (a site key, case-insensitively, or a URL of the site) in the data
/// directory `data`, its store opened with a page cache of `cache_bytes`; the page shown is
/// `page` (a URL) or the first page of the largest cluster that has cleaned text. The store is
/// read only, and closed again before this returns.
pub fn inspect(
    data: &Path,
    cache_bytes: u64,
    host: &str,
    page: Option<&str>,
) -> Result<Report, InspectError> {
    if !data.exists() {
        return Err(InspectError::Missing(data.to_path_buf()));
    }
    let store = Store::open_existing(data, cache_bytes)?;
    let host = resolve_host(&store, host, data)?;
    build(&store, &host, page)
}

/// The site key `arg` names: a stored site key, case-insensitively, or a URL of the site.
fn resolve_host(store: &Store, arg: &str, data: &Path) -> Result<String, InspectError> {
    let sites: Vec<String> = store.sites().into_iter().map(|(s, _)| s).collect();
    let want = match url::Url::parse(arg) {
        Ok(u) if u.host_str().is_some() => site_key(&u),
        _ => arg.trim().trim_end_matches('/').to_ascii_lowercase(),
    };
    if sites.contains(&want) {
        return Ok(want);
    }
    let known = if sites.is_empty() {
        "none (no page stored yet)".to_string()
    } else {
        let mut k = sites
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if sites.len() > 20 {
            let _ = write!(k, " and {} more (see `thresher status`)", sites.len() - 20);
        }
        k
    };
    Err(InspectError::UnknownHost {
        host: arg.to_string(),
        data: data.to_path_buf(),
        known,
    })
}

/// Gather everything the report shows for `host`, with page `page` (a URL) or the default one.
pub fn build(store: &Store, host: &str, page: Option<&str>) -> Result<Report, InspectError> {
    let site_pages = store.site_counters(host).pages;
    let Some(sc) = store.site_clusters(host)? else {
        return Err(InspectError::NotClustered {
            host: host.to_string(),
            pages: site_pages,
        });
    };
    let mut order: Vec<&ClusterSummary> = sc.clusters.iter().collect();
    order.sort_by(|a, b| b.members.len().cmp(&a.members.len()).then(a.id.cmp(&b.id)));
    let (page_id, cluster) = choose_page(store, host, &sc, &order, page)?;

    let meta = store.page(page_id)?;
    let dom = store.dom(host, page_id)?.unwrap_or_default();
    let stored = store.cleaned(page_id)?;
    let (blocks, note) = match sc.detector.parse::<Detector>().ok() {
        Some(Detector::Text(_)) => (
            marks::mark(&dom, &cluster_model(store, host, &sc, cluster)?),
            None,
        ),
        _ => (
            marks::mark_by_lines(&dom, stored.as_ref().map_or("", |c| c.text.as_str())),
            Some(format!(
                "Detector {} learns no path-set template: a block is marked kept when its whole \
                 line is in the page's stored cleaned text, dropped otherwise.",
                sc.detector
            )),
        ),
    };
    let marked = marks::kept_text(&blocks);
    let check = match &stored {
        None => Check::NoCleanedText,
        Some(rec) if rec.text == marked && rec.cluster == cluster.id => Check::Matches,
        Some(rec) => differs(
            &rec.text,
            &marked,
            (rec.cluster != cluster.id).then_some(rec.cluster),
        ),
    };

    let mut clusters = Vec::with_capacity(order.len());
    for (rank, c) in order.iter().enumerate() {
        let mut samples = Vec::new();
        for &id in c.members.iter().take(SAMPLES) {
            if let Some(m) = store.page(id)? {
                samples.push(Sample {
                    url: m.url,
                    title: m.title,
                });
            }
        }
        let template = if rank >= TEMPLATE_CLUSTERS {
            TemplateView::Omitted
        } else if c.id == cluster.id {
            template_view(&dom, meta.as_ref().map(|m| m.url.clone()), c)
        } else {
            match c.members.first() {
                Some(&first) => {
                    let d = store.dom(host, first)?;
                    let url = store.page(first)?.map(|m| m.url);
                    match d {
                        Some(d) => template_view(&d, url, c),
                        None => TemplateView::Unreadable,
                    }
                }
                None => TemplateView::Unreadable,
            }
        };
        clusters.push(ClusterView {
            id: c.id,
            pages: c.members.len(),
            template_paths: c.template.len(),
            samples,
            template,
        });
    }

    let clustered: u64 = sc.clusters.iter().map(|c| c.members.len() as u64).sum();
    let blocks_total = blocks.len();
    Ok(Report {
        host: host.to_string(),
        detector: sc.detector.clone(),
        final_pages: (sc.final_pages > 0).then_some(sc.final_pages),
        site_pages,
        unclustered: site_pages.saturating_sub(clustered),
        redesigns: store.redesigns(host)?,
        clusters,
        page: PageView {
            url: meta
                .as_ref()
                .map_or_else(|| format!("page {page_id:016x}"), |m| m.url.clone()),
            title: meta.and_then(|m| m.title),
            cluster: cluster.id,
            blocks: blocks.into_iter().take(PAGE_BLOCKS).collect(),
            blocks_total,
            check,
            note,
        },
        generated: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    })
}

/// The page to show and its cluster: `--page` (by final or first-requested URL), or the first
/// page of the largest cluster that has cleaned text (its first page if none has).
fn choose_page<'a>(
    store: &Store,
    host: &str,
    sc: &'a SiteClusters,
    order: &[&'a ClusterSummary],
    page: Option<&str>,
) -> Result<(u64, &'a ClusterSummary), InspectError> {
    let Some(raw) = page else {
        let c = order
            .iter()
            .find(|c| !c.members.is_empty())
            .ok_or_else(|| InspectError::NotClustered {
                host: host.to_string(),
                pages: store.site_counters(host).pages,
            })?;
        // A page with content shows all three marks; a list page may have none kept.
        for &id in &c.members {
            if store.cleaned(id)?.is_some_and(|r| !r.text.is_empty()) {
                return Ok((id, c));
            }
        }
        return Ok((c.members[0], c));
    };
    let url = url::Url::parse(raw.trim())
        .ok()
        .and_then(normalize_url)
        .ok_or_else(|| InspectError::BadPage {
            url: raw.to_string(),
        })?;
    let mut id = page_id(&url);
    let found = store.page(id)?;
    if let Some(m) = found.as_ref().filter(|m| m.site != host) {
        return Err(InspectError::OtherHost {
            url: url.to_string(),
            host: host.to_string(),
            site: m.site.clone(),
        });
    }
    if found.is_none() {
        // The URL first requested, when a redirect stored the page under another one.
        let mut by_requested = None;
        for pid in store.site_pages(host)? {
            if let Some(m) = store.page(pid)? {
                if m.requested.as_deref() == Some(url.as_str()) {
                    by_requested = Some(pid);
                    break;
                }
            }
        }
        match by_requested {
            Some(pid) => id = pid,
            None => {
                let mut examples = Vec::new();
                for &pid in order.iter().flat_map(|c| c.members.first()).take(3) {
                    if let Some(m) = store.page(pid)? {
                        examples.push(m.url);
                    }
                }
                return Err(InspectError::UnknownPage {
                    url: url.to_string(),
                    host: host.to_string(),
                    examples: examples.join(", "),
                });
            }
        }
    }
    let cluster = sc
        .clusters
        .iter()
        .find(|c| c.members.contains(&id))
        .ok_or_else(|| InspectError::PageNotClustered {
            url: url.to_string(),
            host: host.to_string(),
        })?;
    Ok((id, cluster))
}

/// The content model of `cluster`, built as the crawl built it: for a final clustering the
/// engine's `learn_cluster` over all members, with essential paths counted over the whole site
/// (`engine::essential_sets`, from the stored path sets); for an interim one the stored template
/// and an evenly spread sample of members, as the incremental step does.
fn cluster_model(
    store: &Store,
    host: &str,
    sc: &SiteClusters,
    cluster: &ClusterSummary,
) -> Result<ClusterModel, InspectError> {
    if sc.final_pages == 0 {
        let stride = cluster
            .members
            .len()
            .div_ceil(crate::learn::MODEL_SAMPLE)
            .max(1);
        let doms = load_doms(store, host, cluster.members.iter().step_by(stride).copied())?;
        let refs: Vec<&Dom> = doms.iter().map(|(_, d)| d).collect();
        return Ok(ClusterModel::learn(&refs, &cluster.template));
    }
    // Support over every page of the site, streamed: one path set in memory at a time.
    let mut support = Support::default();
    for id in store.site_pages(host)? {
        if let Some(set) = store.path_set(host, id)? {
            support.add(&set);
        }
    }
    let doms = load_doms(store, host, cluster.members.iter().copied())?;
    let mut essential = Vec::with_capacity(doms.len());
    for (id, _) in &doms {
        essential.push(support.essential(&store.path_set(host, *id)?.unwrap_or_default()));
    }
    let refs: Vec<&Dom> = doms.iter().map(|(_, d)| d).collect();
    let sets: Vec<&[u64]> = essential.iter().map(Vec::as_slice).collect();
    Ok(learn_cluster(&refs, &sets).1)
}

fn load_doms(
    store: &Store,
    host: &str,
    ids: impl Iterator<Item = u64>,
) -> Result<Vec<(u64, Dom)>, InspectError> {
    let mut out = Vec::new();
    for id in ids {
        if let Some(d) = store.dom(host, id)? {
            out.push((id, d));
        }
    }
    Ok(out)
}

fn template_view(dom: &Dom, url: Option<String>, c: &ClusterSummary) -> TemplateView {
    let (lines, text_paths) = marks::template_lines(dom, &c.template, TEMPLATE_LINES);
    TemplateView::Lines {
        from: url.unwrap_or_default(),
        lines,
        text_paths,
    }
}

fn differs(stored: &str, marked: &str, stored_cluster: Option<u32>) -> Check {
    let s: Vec<&str> = stored.lines().collect();
    let m: Vec<&str> = marked.lines().collect();
    let first_difference = (0..s.len().max(m.len()))
        .find(|&k| s.get(k) != m.get(k))
        .map(|k| {
            let line = |v: &[&str]| v.get(k).map_or(String::new(), |l| l.to_string());
            (k + 1, line(&s), line(&m))
        });
    Check::Differs {
        stored_cluster,
        stored_lines: s.len(),
        marked_lines: m.len(),
        first_difference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differs_points_at_the_first_different_line() {
        let c = differs("a\nb\nc\n", "a\nx\n", Some(3));
        assert_eq!(
            c,
            Check::Differs {
                stored_cluster: Some(3),
                stored_lines: 3,
                marked_lines: 2,
                first_difference: Some((2, "b".into(), "x".into())),
            }
        );
        let c = differs("a\n", "a\nb\n", None);
        let Check::Differs {
            first_difference, ..
        } = c
        else {
            panic!("differs");
        };
        assert_eq!(first_difference, Some((2, String::new(), "b".into())));
    }
}
