//! The procedural universe: any number of origins × pages, each page generated on request from
//! (origin, path) alone — no disk, a few hundred bytes of state per origin. Owns the page
//! addressing (page number ↔ path, page kind, section, template era, title) and the link graph
//! (~100 in-site links per page, every page reachable from `/`); `markup` writes the HTML and
//! `serve` puts it on `TestServer` origins with robots.txt and sitemaps. Shared by the long-crawl
//! benchmark (`benches/long_crawl.rs`) and its test (`tests/universe_server.rs`).
//!
//! ```ignore
//! let u = Universe::new(Spec { origins: 200, pages: 5000, page_bytes: 20_000, seed: 1 });
//! let html = u.page(3, "/").expect("home");           // same bytes every time
//! let n = u.page_number(3, "/science/p41/");          // Some(41) when that page exists
//! ```

// The benchmark and the test each use a different part of this module.
#![allow(dead_code)]

pub mod markup;
pub mod serve;

use crate::support::lorem::{self, Rng};

/// Section slugs an origin draws its 4–8 sections from.
const SECTIONS: &[&str] = &[
    "news",
    "world",
    "business",
    "tech",
    "science",
    "health",
    "culture",
    "sport",
    "travel",
    "food",
    "opinion",
    "climate",
    "education",
    "money",
    "style",
    "local",
];

const NAME_ENDS: &[&str] = &[
    "Courier",
    "Ledger",
    "Gazette",
    "Herald",
    "Tribune",
    "Post",
    "Review",
    "Journal",
    "Dispatch",
    "Chronicle",
    "Observer",
    "Monitor",
];

/// Pages per block of the page sequence: page `20k + 1` is a listing, `20k + 7` and `20k + 14`
/// are features, the rest articles (page 0 is the home page, a listing).
const BLOCK: usize = 20;

/// What the universe is: sizes and the seed everything is derived from.
#[derive(Clone, Debug)]
pub struct Spec {
    pub origins: usize,
    /// Pages per origin, all reachable from `/`.
    pub pages: usize,
    /// Average page size in bytes (pages vary from 0.7× to 1.3×; small values are a floor the
    /// markup does not go below).
    pub page_bytes: usize,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Home page and section pages: a river of teasers with pagination.
    Listing,
    Article,
    /// Long-form, full width (no sidebar), chapters and a grid of cards.
    Feature,
}

/// The fixed traits of one origin: its name, sections and the layouts of its template eras.
#[derive(Clone, Debug)]
pub struct OriginStyle {
    pub name: String,
    pub sections: Vec<&'static str>,
    /// The layout of each era, newest first; 2 or 3 eras, all different.
    pub eras: Vec<markup::Layout>,
    /// A short tag mixed into class names (every origin's markup differs a little).
    pub tag: String,
}

pub struct Universe {
    spec: Spec,
    styles: Vec<OriginStyle>,
}

impl Universe {
    pub fn new(spec: Spec) -> Universe {
        assert!(
            spec.pages >= 1,
            "a universe needs at least one page per origin"
        );
        let styles = (0..spec.origins)
            .map(|o| {
                let mut rng = Rng::new(spec.seed).fork(o as u64);
                let name = format!(
                    "The {} {}",
                    lorem::title(&mut rng, 1, 1),
                    rng.pick(NAME_ENDS)
                );
                let mut pool: Vec<&'static str> = SECTIONS.to_vec();
                let count = rng.range(4, 8);
                let sections = (0..count)
                    .map(|_| pool.remove(rng.below(pool.len())))
                    .collect();
                let mut layouts = markup::Layout::ALL.to_vec();
                let eras = (0..rng.range(2, 3))
                    .map(|_| layouts.remove(rng.below(layouts.len())))
                    .collect();
                let tag = format!("{:05x}", rng.next_u64() & 0xF_FFFF);
                OriginStyle {
                    name,
                    sections,
                    eras,
                    tag,
                }
            })
            .collect();
        Universe { spec, styles }
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    pub fn style(&self, origin: usize) -> &OriginStyle {
        &self.styles[origin]
    }

    /// A generator for page-level randomness: the same (origin, page, purpose) gives the same
    /// sequence.
    pub(crate) fn rng(&self, origin: usize, page: usize, salt: u64) -> Rng {
        Rng::new(self.spec.seed)
            .fork(origin as u64 + 1)
            .fork(page as u64)
            .fork(salt)
    }

    pub fn kind(&self, page: usize) -> Kind {
        match page % BLOCK {
            _ if page == 0 => Kind::Listing,
            1 => Kind::Listing,
            7 | 14 => Kind::Feature,
            _ => Kind::Article,
        }
    }

    /// The section a page belongs to (listings cycle through the sections block by block).
    pub fn section(&self, origin: usize, page: usize) -> usize {
        let n = self.styles[origin].sections.len();
        match self.kind(page) {
            Kind::Listing => (page / BLOCK) % n,
            _ => self.rng(origin, page, 1).below(n),
        }
    }

    /// The template era of a page: the page sequence is cut into as many runs as the origin has
    /// eras, the newest layout first (a site's archive keeps its older templates).
    pub fn era(&self, origin: usize, page: usize) -> usize {
        let eras = self.styles[origin].eras.len();
        (page * eras / self.spec.pages).min(eras - 1)
    }

    /// The first listing page of section `s` (the home page when the site is too small).
    pub fn section_front(&self, s: usize) -> usize {
        let page = s * BLOCK + 1;
        if page < self.spec.pages {
            page
        } else {
            0
        }
    }

    /// The year and month a page is dated (older further down the sequence).
    pub fn date(&self, origin: usize, page: usize) -> (usize, usize, usize) {
        let year = 2025 - page * 8 / self.spec.pages.max(1);
        let mut rng = self.rng(origin, page, 2);
        (year, rng.range(1, 12), rng.range(1, 28))
    }

    pub fn title(&self, origin: usize, page: usize) -> String {
        let style = &self.styles[origin];
        let mut rng = self.rng(origin, page, 3);
        match self.kind(page) {
            Kind::Listing if page == 0 => format!("{} — front page", style.name),
            Kind::Listing => {
                let s = style.sections[self.section(origin, page)];
                format!("{}: {}", capitalise(s), lorem::title(&mut rng, 2, 3))
            }
            Kind::Article => lorem::title(&mut rng, 5, 10),
            Kind::Feature => format!("Feature: {}", lorem::title(&mut rng, 4, 8)),
        }
    }

    /// The root-relative path of a page (the last run of digits in it is the page number).
    pub fn path(&self, origin: usize, page: usize) -> String {
        if page == 0 {
            return "/".into();
        }
        let section = self.styles[origin].sections[self.section(origin, page)];
        match self.kind(page) {
            Kind::Listing => format!("/{section}/p{page}/"),
            Kind::Article => {
                let (year, month, _) = self.date(origin, page);
                let slug = slug(&self.title(origin, page));
                format!("/{section}/{year}/{month:02}/{slug}-{page}.html")
            }
            Kind::Feature => format!("/features/{}-{page}/", slug(&self.title(origin, page))),
        }
    }

    /// The page a path names, if the origin serves one there.
    pub fn page_number(&self, origin: usize, path: &str) -> Option<usize> {
        if path == "/" {
            return Some(0);
        }
        let bytes = path.as_bytes();
        let end = bytes.iter().rposition(u8::is_ascii_digit)? + 1;
        let start = bytes[..end]
            .iter()
            .rposition(|b| !b.is_ascii_digit())
            .map_or(0, |i| i + 1);
        let digits = &path[start..end];
        if digits.len() > 9 || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        let page: usize = digits.parse().ok()?;
        (page > 0 && page < self.spec.pages && self.path(origin, page) == path).then_some(page)
    }

    /// The HTML of the page at `path` on `origin`, or `None` (a 404).
    pub fn page(&self, origin: usize, path: &str) -> Option<String> {
        if origin >= self.spec.origins {
            return None;
        }
        let page = self.page_number(origin, path)?;
        Some(markup::render(self, origin, page))
    }

    /// The `k`-th link target of `page` for one purpose (`salt`): half near the page in the
    /// sequence (recent neighbours), half anywhere in the site; never the page itself.
    pub(crate) fn pick(&self, origin: usize, page: usize, salt: u64, k: usize) -> usize {
        let pages = self.spec.pages;
        if pages == 1 {
            return 0;
        }
        let mut rng = self.rng(origin, page, salt).fork(k as u64);
        let m = if rng.chance(50) {
            (page + 1 + rng.below(60.min(pages - 1))) % pages
        } else {
            rng.below(pages)
        };
        if m == page {
            (page + 1) % pages
        } else {
            m
        }
    }

    /// robots.txt: a few disallowed paths the pages never link to, and the sitemap index.
    pub fn robots(&self, base: &str) -> String {
        format!(
            "User-agent: *\nDisallow: /search\nDisallow: /account/\nDisallow: /preview/\n\
             Allow: /\n\nSitemap: {base}/sitemap.xml\n"
        )
    }

    /// Articles and features per sitemap file.
    pub const SITEMAP_CHUNK: usize = 1000;

    /// `/sitemap.xml`: an index of `/sitemap-K.xml`, each listing up to `SITEMAP_CHUNK` of the
    /// origin's articles and features (news sitemaps leave the listings out).
    pub fn sitemap_index(&self, base: &str) -> String {
        let chunks = self.spec.pages.div_ceil(Self::SITEMAP_CHUNK).max(1);
        let urls: Vec<String> = (0..chunks)
            .map(|k| format!("{base}/sitemap-{k}.xml"))
            .collect();
        crate::support::sites::sitemap_index(&urls)
    }

    /// `/sitemap-K.xml`, or `None` past the last chunk.
    pub fn sitemap_chunk(&self, origin: usize, base: &str, chunk: usize) -> Option<String> {
        let from = chunk.checked_mul(Self::SITEMAP_CHUNK)?;
        if from >= self.spec.pages.max(1) {
            return None;
        }
        let to = (from + Self::SITEMAP_CHUNK).min(self.spec.pages);
        let urls: Vec<String> = (from..to)
            .filter(|&p| self.kind(p) != Kind::Listing)
            .map(|p| format!("{base}{}", self.path(origin, p)))
            .collect();
        Some(crate::support::sites::sitemap_urlset(&urls))
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Lowercase ASCII words of a title joined by `-` (at most six).
fn slug(title: &str) -> String {
    let words: Vec<String> = title
        .split(' ')
        .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric()))
        .take(6)
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "story".into()
    } else {
        words.join("-")
    }
}
