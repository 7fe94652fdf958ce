//! Deterministic news-like sites: `SiteSpec` → `NewsSite` (home, sections with numbered
//! pagination, articles in 1–3 template variants, static pages, unlinked orphans). The generator
//! knows each page's in-scope links (so the reachable set and link depths are exact) and each
//! article's true text (title + body paragraphs, without nav, byline, related links, share bar or
//! comments). Pages are served from shared `Bytes` parts, so a universe of many sites is cheap to
//! hold and to serve (the crawl benchmark's 50 × 200 pages).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::endpoint::{Endpoint, Site};
use super::lorem::{self, Rng};
use super::templates::{self, Chrome};

/// Section slugs, in order; a site uses the first `SiteSpec::sections`.
pub const SECTIONS: &[&str] = &[
    "news", "business", "culture", "sport", "science", "travel", "opinion", "food",
];

/// Static pages linked from every footer (as many as the page budget allows).
const STATICS: &[&str] = &[
    "about",
    "contact",
    "privacy",
    "terms",
    "advertise",
    "careers",
    "newsletter",
    "corrections",
];

#[derive(Clone, Debug)]
pub struct SiteSpec {
    pub seed: u64,
    /// HTML pages reachable from `/`: home + list pages + static pages + articles, exactly.
    pub pages: usize,
    pub sections: usize,
    pub per_list_page: usize,
    /// Article template variants (1..=3), assigned by section.
    pub variants: usize,
    /// Body paragraphs per article (inclusive range).
    pub paragraphs: (usize, usize),
    /// Pad every page with shared head markup (inline style and script) to about this many
    /// bytes on average; 0 = no padding (pages are then ~4–8 KB).
    pub page_bytes: usize,
    /// Articles served under `/drafts/` but linked from nowhere.
    pub orphans: usize,
    /// Absolute URLs on other hosts linked from every footer (out of scope).
    pub external: Vec<String>,
    /// Paragraphs shared by many sites (the benchmark); `None` = fresh text per article.
    pub pool: Option<Arc<ParagraphPool>>,
}

impl SiteSpec {
    /// A small site for crawl tests: `pages` pages, 3 sections, 3 variants, 2 orphans.
    pub fn small(seed: u64, pages: usize) -> SiteSpec {
        SiteSpec {
            seed,
            pages,
            sections: 3,
            per_list_page: 6,
            variants: 3,
            paragraphs: (3, 6),
            page_bytes: 0,
            orphans: 2,
            external: Vec::new(),
            pool: None,
        }
    }
}

/// Pre-rendered `<p>` paragraphs shared across sites, with their text.
pub struct ParagraphPool {
    texts: Vec<String>,
    html: Vec<Bytes>,
}

impl std::fmt::Debug for ParagraphPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParagraphPool({} paragraphs)", self.texts.len())
    }
}

impl ParagraphPool {
    pub fn new(seed: u64, n: usize) -> ParagraphPool {
        let mut rng = Rng::new(seed);
        let texts: Vec<String> = (0..n)
            .map(|_| {
                let k = rng.range(3, 6);
                lorem::paragraph(&mut rng, k)
            })
            .collect();
        let html = texts
            .iter()
            .map(|t| Bytes::from(format!("<p>{}</p>\n", lorem::escape(t))))
            .collect();
        ParagraphPool { texts, html }
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Home,
    /// Page `page` (from 1) of a section's list.
    List {
        section: usize,
        page: usize,
    },
    Article {
        section: usize,
        variant: usize,
    },
    Static,
    /// An article no page links to.
    Orphan,
}

#[derive(Clone, Debug)]
pub struct Page {
    pub path: String,
    pub kind: Kind,
    pub title: String,
    /// In-scope links (root-relative paths) in document order, repeats removed.
    pub links: Vec<String>,
    /// The main content's blocks (articles: title, then paragraphs); empty for other pages.
    pub content: Vec<String>,
    pub(super) parts: Vec<Bytes>,
}

impl Page {
    pub fn is_article(&self) -> bool {
        matches!(self.kind, Kind::Article { .. } | Kind::Orphan)
    }

    /// The page's true text, one block per line (the `clean` output format).
    pub fn true_text(&self) -> String {
        let mut s = self.content.join("\n");
        s.push('\n');
        s
    }

    pub fn html(&self) -> Bytes {
        Bytes::from(self.parts.concat())
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint::html_parts(self.parts.clone())
    }
}

/// Article data before rendering.
pub(super) struct Draft {
    pub(super) path: String,
    pub(super) title: String,
    pub(super) section: usize,
    pub(super) paragraphs: Vec<Para>,
    pub(super) byline: String,
    pub(super) date: String,
    pub(super) related: Vec<usize>,
    pub(super) prev_next: (Option<usize>, Option<usize>),
    pub(super) comments: Vec<(String, String)>,
}

/// A body paragraph: pooled (shared bytes) or owned.
pub(super) enum Para {
    Pooled(usize),
    Own(String),
}

pub struct NewsSite {
    pub name: String,
    pub pages: Vec<Page>,
    index: HashMap<String, usize>,
}

impl NewsSite {
    pub fn generate(spec: &SiteSpec) -> NewsSite {
        let sections = spec.sections.clamp(1, SECTIONS.len());
        let per = spec.per_list_page.max(1);
        let (articles, statics) = budget(spec.pages, sections, per);
        let mut rng = Rng::new(spec.seed);
        let name = format!(
            "The {} {}",
            lorem::title(&mut rng, 1, 1),
            rng.pick(&["Lantern", "Courier", "Ledger", "Gazette", "Herald", "Tribune", "Post"])
        );

        // Articles: newest first, dealt to sections round-robin.
        let mut pool_next = (spec.seed as usize).wrapping_mul(7919);
        let drafts_for = |count: usize, rng: &mut Rng, pool_next: &mut usize, orphan: bool| {
            (0..count)
                .map(|i| {
                    let mut r = rng.fork(i as u64 + if orphan { 1 << 32 } else { 0 });
                    draft(spec, sections, i, orphan, &mut r, pool_next)
                })
                .collect::<Vec<Draft>>()
        };
        let mut drafts = drafts_for(articles, &mut rng, &mut pool_next, false);
        let orphans = drafts_for(spec.orphans, &mut rng, &mut pool_next, true);
        link_articles(&mut drafts, sections, &mut rng);

        let chrome = Chrome::new(&name, spec, sections, &STATICS[..statics], &drafts);
        let mut pages = Vec::new();
        pages.push(templates::home(&chrome, &drafts));
        for s in 0..sections {
            let members: Vec<usize> = (0..drafts.len()).filter(|i| i % sections == s).collect();
            let n = members.len().div_ceil(per).max(1);
            for p in 1..=n {
                let slice =
                    &members[((p - 1) * per).min(members.len())..(p * per).min(members.len())];
                pages.push(templates::list(&chrome, &drafts, s, p, n, slice));
            }
        }
        for name in &STATICS[..statics] {
            pages.push(templates::static_page(
                &chrome,
                name,
                &mut rng.fork(name.len() as u64),
            ));
        }
        for d in &drafts {
            pages.push(templates::article(&chrome, &drafts, d, spec));
        }
        for d in &orphans {
            let mut page = templates::article(&chrome, &orphans, d, spec);
            page.kind = Kind::Orphan;
            pages.push(page);
        }
        templates::pad(&chrome, &mut pages, spec.page_bytes);
        let index = pages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.path.clone(), i))
            .collect();
        NewsSite { name, pages, index }
    }

    pub fn page(&self, path: &str) -> Option<&Page> {
        self.index.get(path).map(|&i| &self.pages[i])
    }

    pub fn articles(&self) -> impl Iterator<Item = &Page> {
        self.pages
            .iter()
            .filter(|p| matches!(p.kind, Kind::Article { .. }))
    }

    /// Link hops from `/` to every page reachable from it (BFS over in-scope links).
    pub fn depths(&self) -> BTreeMap<String, u32> {
        let mut depth = BTreeMap::new();
        let mut queue = VecDeque::from([("/".to_string(), 0u32)]);
        depth.insert("/".to_string(), 0);
        while let Some((path, d)) = queue.pop_front() {
            let Some(page) = self.page(&path) else {
                continue;
            };
            for link in &page.links {
                if !depth.contains_key(link) {
                    depth.insert(link.clone(), d + 1);
                    queue.push_back((link.clone(), d + 1));
                }
            }
        }
        depth
    }

    /// Every path reachable from `/` (all pages but the orphans).
    pub fn reachable(&self) -> BTreeSet<String> {
        self.depths().into_keys().collect()
    }

    /// Paths reachable within `max_depth` hops of `/`.
    pub fn reachable_within(&self, max_depth: u32) -> BTreeSet<String> {
        self.depths()
            .into_iter()
            .filter(|(_, d)| *d <= max_depth)
            .map(|(p, _)| p)
            .collect()
    }

    /// Compare what `origin` served with this site: every reachable page requested exactly once,
    /// nothing else requested but `also` (e.g. `["/robots.txt"]`) — orphans, 404s, duplicates
    /// and misses are all listed in the error.
    pub fn check_fetched_once(
        &self,
        origin: &super::server::Origin,
        also: &[&str],
    ) -> Result<(), String> {
        let counts = origin.hit_counts();
        let reachable = self.reachable();
        let mut errors = Vec::new();
        for path in &reachable {
            match counts.get(path) {
                None => errors.push(format!("{path}: never requested")),
                Some(1) => {}
                Some(n) => errors.push(format!("{path}: requested {n} times")),
            }
        }
        for (target, n) in &counts {
            if !reachable.contains(target) && !also.contains(&target.as_str()) {
                errors.push(format!("{target}: requested {n} times but not reachable"));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }

    /// The routes to serve (all pages, orphans included; no robots.txt).
    pub fn site(&self) -> Site {
        self.pages
            .iter()
            .fold(Site::new(), |site, p| site.route(&p.path, p.endpoint()))
    }

    /// A sitemap listing every article under `base` (e.g. `origin.base()`).
    pub fn sitemap(&self, base: &str) -> String {
        let urls: Vec<String> = self
            .articles()
            .map(|p| format!("{base}{}", p.path))
            .collect();
        super::sites::sitemap_urlset(&urls)
    }

    /// Write every article as `DIR/<n>.html` with its truth in `DIR/<n>.gold.txt` (the datasets'
    /// layout, for `thresher clean` tests). Returns the stems in order.
    pub fn write_dataset(&self, dir: &Path) -> std::io::Result<Vec<String>> {
        std::fs::create_dir_all(dir)?;
        let mut stems = Vec::new();
        for (n, page) in self.articles().enumerate() {
            let stem = format!("{n:04}");
            std::fs::write(dir.join(format!("{stem}.html")), page.html())?;
            std::fs::write(dir.join(format!("{stem}.gold.txt")), page.true_text())?;
            stems.push(stem);
        }
        Ok(stems)
    }
}

/// Split a page budget into (articles, static pages) so that home + list pages + statics +
/// articles == `pages` exactly.
fn budget(pages: usize, sections: usize, per: usize) -> (usize, usize) {
    let lists = |a: usize| -> usize {
        (0..sections)
            .map(|s| {
                let members = a / sections + usize::from(s < a % sections);
                members.div_ceil(per).max(1)
            })
            .sum()
    };
    let wanted_statics = if pages >= 30 { 4 } else { 0 };
    let fixed = |a: usize| 1 + lists(a) + wanted_statics + a;
    assert!(
        fixed(1) <= pages,
        "a site of {pages} pages cannot hold {sections} sections (need at least {})",
        fixed(1)
    );
    let mut a = 1;
    while fixed(a + 1) <= pages {
        a += 1;
    }
    let statics = pages - (1 + lists(a) + a);
    assert!(
        statics <= STATICS.len(),
        "page budget rounding: {statics} statics"
    );
    (a, statics)
}

fn draft(
    spec: &SiteSpec,
    sections: usize,
    i: usize,
    orphan: bool,
    rng: &mut Rng,
    pool_next: &mut usize,
) -> Draft {
    let section = i % sections;
    let title = lorem::title(rng, 4, 9);
    let slug: String = title
        .to_lowercase()
        .split(' ')
        .filter(|w| w.bytes().all(|b| b.is_ascii_alphanumeric()))
        .take(5)
        .collect::<Vec<_>>()
        .join("-");
    let year = 2024 - (i / 40).min(5);
    let path = if orphan {
        format!("/drafts/{slug}-{i}.html")
    } else {
        format!("/{}/{year}/{slug}-{i}.html", SECTIONS[section])
    };
    let n = rng.range(spec.paragraphs.0, spec.paragraphs.1.max(spec.paragraphs.0));
    let paragraphs = (0..n)
        .map(|_| match &spec.pool {
            Some(pool) => {
                *pool_next = (*pool_next + 1) % pool.len();
                Para::Pooled(*pool_next)
            }
            None => {
                let k = rng.range(2, 5);
                Para::Own(lorem::paragraph(rng, k))
            }
        })
        .collect();
    let comments = (0..rng.range(0, 4))
        .map(|_| {
            (
                rng.pick(lorem::NAMES).to_string(),
                lorem::sentence(rng, 6, 20),
            )
        })
        .collect();
    Draft {
        path,
        title,
        section,
        paragraphs,
        byline: rng.pick(lorem::NAMES).to_string(),
        date: format!("{year}-{:02}-{:02}", rng.range(1, 12), rng.range(1, 28)),
        related: Vec::new(),
        prev_next: (None, None),
        comments,
    }
}

/// Related articles (same section, up to 4) and previous/next within the section.
fn link_articles(drafts: &mut [Draft], sections: usize, rng: &mut Rng) {
    for s in 0..sections {
        let members: Vec<usize> = (0..drafts.len()).filter(|i| i % sections == s).collect();
        for (k, &i) in members.iter().enumerate() {
            let mut related = Vec::new();
            for _ in 0..8 {
                let j = *rng.pick(&members);
                if j != i && !related.contains(&j) && related.len() < 4 {
                    related.push(j);
                }
            }
            drafts[i].related = related;
            drafts[i].prev_next = (
                k.checked_sub(1).map(|k| members[k]),
                members.get(k + 1).copied(),
            );
        }
    }
}

impl Draft {
    pub(super) fn paragraph_texts(&self, pool: Option<&ParagraphPool>) -> Vec<String> {
        self.paragraphs
            .iter()
            .map(|p| match (p, pool) {
                (Para::Pooled(i), Some(pool)) => pool.texts[*i].clone(),
                (Para::Own(t), _) => t.clone(),
                (Para::Pooled(_), None) => unreachable!("pooled paragraph without a pool"),
            })
            .collect()
    }

    pub(super) fn paragraph_html(&self, pool: Option<&ParagraphPool>, from: usize) -> Vec<Bytes> {
        let mut own = String::new();
        let mut out = Vec::new();
        for p in &self.paragraphs[from.min(self.paragraphs.len())..] {
            match (p, pool) {
                (Para::Pooled(i), Some(pool)) => out.push(pool.html[*i].clone()),
                (Para::Own(t), _) => {
                    own.push_str("<p>");
                    own.push_str(&lorem::escape(t));
                    own.push_str("</p>\n");
                }
                (Para::Pooled(_), None) => unreachable!("pooled paragraph without a pool"),
            }
        }
        if !own.is_empty() {
            out.push(Bytes::from(own));
        }
        out
    }
}

/// Many sites for the crawl benchmark: one per origin, sharing a paragraph pool.
pub struct Universe {
    pub sites: Vec<NewsSite>,
}

impl Universe {
    /// `origins` sites of `pages` pages each, padded to about `page_bytes` per page.
    pub fn generate(origins: usize, pages: usize, page_bytes: usize) -> Universe {
        let pool = Arc::new(ParagraphPool::new(0xBEEF, 4096));
        let sites = (0..origins)
            .map(|i| {
                NewsSite::generate(&SiteSpec {
                    seed: 1000 + i as u64,
                    pages,
                    sections: 4,
                    per_list_page: 20,
                    variants: 3,
                    paragraphs: (6, 12),
                    page_bytes,
                    orphans: 0,
                    external: vec![format!("https://partner-{i}.example.invalid/")],
                    pool: Some(pool.clone()),
                })
            })
            .collect();
        Universe { sites }
    }

    /// Bytes held by the pages' parts, counting each shared part once.
    pub fn resident_bytes(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        let mut total = 0;
        for site in &self.sites {
            for page in &site.pages {
                for part in &page.parts {
                    if seen.insert(part.as_ptr() as usize) {
                        total += part.len();
                    }
                }
            }
        }
        total
    }
}
