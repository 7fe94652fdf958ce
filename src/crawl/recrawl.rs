//! `crawl --recrawl` before the run starts (docs/recrawl.md): every stored page fetched before
//! the cutoff goes into its origin's revisit queue (oldest fetch first), and the site's
//! sitemaps (robots.txt `Sitemap:` lines, sitemap seeds) and feeds (`<link rel=alternate>`
//! RSS/Atom on the site's shallowest pages) are queued to be read first: while the crawl reads
//! them, a `<lastmod>` newer than a page's fetch, or a feed item, moves the page up
//! (`worker::promote_revisits`). The requests themselves are conditional GETs
//! (`fetch::Validators`), under the same politeness as any other.

use std::collections::HashMap;

use url::Url;

use super::robots::RobotsEntry;
use super::{seeds, url as urls};
use crate::store::{
    class, now_ms, Commit, EntryKind, QueueEntry, RecrawlRun, RevisitSlot, Store, StoreError,
};

/// Pages per site whose HTML is read for feed links (the shallowest ones: a site announces its
/// feeds on its home page and its section pages).
pub const FEED_PAGES: usize = 3;

/// What `prepare` queued.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Stored pages queued for a revisit (already queued ones not counted again).
    pub revisits: u64,
    /// Sitemaps and feeds queued to be read first.
    pub sitemaps: u64,
    pub feeds: u64,
}

/// Queue the revisits of every stored page fetched before `cutoff_ms`, and the site's sitemaps
/// and feeds; record the recrawl in the store (meta `recrawl`, for `status`).
pub fn prepare(store: &Store, seeds: &[Url], cutoff_ms: u64) -> Result<Prepared, StoreError> {
    let started_at_ms = now_ms();
    let mut out = Prepared::default();
    let mut list = Vec::new();
    // Per site, its shallowest pages (depth, id) for feed discovery.
    let mut shallow: HashMap<String, Vec<(u32, u64)>> = HashMap::new();
    for item in store.pages() {
        let (id, meta) = item?;
        let Ok(url) = Url::parse(&meta.url) else {
            continue;
        };
        let pages = shallow.entry(meta.site.clone()).or_default();
        pages.push((meta.depth, id));
        if pages.len() > 4 * FEED_PAGES {
            pages.sort_unstable();
            pages.truncate(FEED_PAGES);
        }
        if meta.fetched_at_ms >= cutoff_ms {
            continue;
        }
        let Some(origin) = store.origin_id(&urls::origin_key(&url)) else {
            continue;
        };
        let slot = RevisitSlot {
            origin,
            class: class::AGE,
            order: meta.fetched_at_ms,
            page: id,
        };
        let entry = QueueEntry {
            kind: EntryKind::Revisit,
            ..QueueEntry::page(meta.url.clone(), meta.depth)
        };
        list.push((slot, entry));
    }
    out.revisits = store.queue_revisits(&list)?;
    drop(list);

    let mut c = Commit::new();
    let mut queued = std::collections::HashSet::new();
    let mut queue = |c: &mut Commit, u: Url| {
        if queued.insert(u.to_string()) {
            let entry = QueueEntry {
                kind: EntryKind::Sitemap,
                ..QueueEntry::page(u.to_string(), 0)
            };
            c.requeue(urls::origin_key(&u), entry);
            true
        } else {
            false
        }
    };
    for s in seeds.iter().filter(|s| seeds::is_sitemap(s)) {
        out.sitemaps += u64::from(queue(&mut c, s.clone()));
    }
    for origin in store.origins() {
        let Ok(Some(entry)) = store.robots::<RobotsEntry>(&origin.key) else {
            continue;
        };
        let Some(robots_url) = Url::parse(&origin.key)
            .ok()
            .and_then(|b| b.join("/robots.txt").ok())
        else {
            continue;
        };
        for sm in entry.policy.sitemaps() {
            if let Some(u) = urls::normalize(&robots_url, sm) {
                out.sitemaps += u64::from(queue(&mut c, u));
            }
        }
    }
    let mut sites: Vec<(String, Vec<(u32, u64)>)> = shallow.into_iter().collect();
    sites.sort();
    for (_, mut pages) in sites {
        pages.sort_unstable();
        for &(_, id) in pages.iter().take(FEED_PAGES) {
            for feed in feeds_of(store, id)? {
                out.feeds += u64::from(queue(&mut c, feed));
            }
        }
    }
    store.commit(c)?;
    store.put_meta(
        "recrawl",
        &RecrawlRun {
            started_at_ms,
            cutoff_ms,
            queued: out.revisits,
        },
    )?;
    Ok(out)
}

/// The RSS/Atom feeds a stored page announces, resolved against its URL.
fn feeds_of(store: &Store, id: u64) -> Result<Vec<Url>, StoreError> {
    let (Some(meta), Some(html)) = (store.page(id)?, store.html(id)?) else {
        return Ok(Vec::new());
    };
    let Ok(base) = Url::parse(&meta.url) else {
        return Ok(Vec::new());
    };
    let text = crate::dom::charset::decode_html(&html, meta.content_type.as_deref()).text;
    Ok(crate::dom::meta::scan(&text)
        .feeds
        .iter()
        .filter_map(|f| urls::normalize(&base, f))
        .filter(|u| u.host_str() == base.host_str())
        .collect())
}
