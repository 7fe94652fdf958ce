//! Stores for the export tests and benchmark, made without a crawl: fixture pages committed as
//! the crawler commits them (parsed by `thresher::dom`, page, HTML, DOM and path set in one
//! commit) and cleaned by the end-of-crawl pass (`learn::SiteLearner::finish`, the engine
//! `thresher clean` runs), so `thresher export` reads what a finished crawl leaves. And a
//! universe of news sites with planted duplicates for the dedup figure: the same article on two
//! sites (different templates, a credit line added) and the same article twice on one site
//! (a second URL with navigation churn).

use std::collections::BTreeMap;
use std::path::Path;

use thresher::crawl::url::{page_id, site_key};
use thresher::detect::Detector;
use thresher::dom::parse_bytes;
use thresher::learn::{Output, SiteLearner, SiteState};
use thresher::store::{Commit, NewPage, PageMeta, Store};

use super::lorem::{self, escape, Rng};

/// A page to store.
#[derive(Clone, Debug)]
pub struct Fixture {
    pub url: String,
    pub html: String,
    /// Response headers kept with the page (lower-case names, as the crawler keeps them).
    pub headers: Vec<(String, String)>,
    pub fetched_at_ms: u64,
}

impl Fixture {
    pub fn new(url: &str, html: String) -> Fixture {
        Fixture {
            url: url.to_string(),
            html,
            headers: Vec::new(),
            fetched_at_ms: 1_700_000_000_000,
        }
    }
}

/// Store `pages` (in order) in `store`; returns their page ids.
pub fn store_pages(store: &Store, pages: &[Fixture]) -> Vec<u64> {
    pages
        .iter()
        .map(|p| {
            let url = url::Url::parse(&p.url).expect("fixture URL");
            let content_type = "text/html; charset=utf-8";
            let parsed = parse_bytes(p.html.as_bytes(), Some(content_type));
            let paths = parsed.dom.path_set();
            let meta = PageMeta {
                url: url.to_string(),
                requested: None,
                site: site_key(&url),
                status: 200,
                content_type: Some(content_type.into()),
                headers: p.headers.clone(),
                fetched_at_ms: p.fetched_at_ms,
                depth: 1,
                body_bytes: p.html.len() as u64,
                encoding: "UTF-8".into(),
                title: parsed.dom.title(),
                truncated: parsed.truncated,
            };
            let id = page_id(&url);
            let mut commit = Commit::new();
            commit.page(NewPage::new(
                id,
                meta,
                p.html.as_bytes(),
                &parsed.dom,
                &paths,
            ));
            let outcome = store.commit(commit).expect("commit a fixture page");
            assert!(outcome.page_stored, "fixture {} stored", p.url);
            id
        })
        .collect()
}

/// A data directory at `data` holding `pages`, every site cleaned by the end-of-crawl pass
/// (cleaned files go to `out`).
pub fn build_store(data: &Path, out: &Path, pages: &[Fixture]) {
    let store = Store::open(data, 64 << 20).expect("open a fixture store");
    store_pages(&store, pages);
    clean_all(&store, out);
    store.flush().expect("flush the fixture store");
}

/// Run the end-of-crawl pass over every site of `store`.
pub fn clean_all(store: &Store, out: &Path) {
    let output = Output::new(out);
    let learner = SiteLearner {
        store,
        out: &output,
        detector: Detector::default(),
    };
    for (site, _) in store.sites() {
        learner
            .finish(&site, &mut SiteState::default())
            .expect("clean a fixture site");
    }
}

/// A universe with planted duplicates.
pub struct DupUniverse {
    pub pages: Vec<Fixture>,
    /// Per page URL, its planted group: pages of one group carry the same article.
    pub group: BTreeMap<String, usize>,
    /// Planted copies: pages that are duplicates of an earlier page of their group.
    pub planted: usize,
}

/// The shape of a `DupUniverse`.
#[derive(Clone, Debug)]
pub struct DupSpec {
    pub seed: u64,
    pub sites: usize,
    pub articles: usize,
    /// Articles republished on another site (different template, a credit line added).
    pub syndicated: usize,
    /// Articles stored a second time on their own site (another URL, navigation churn).
    pub churned: usize,
    /// Navigation links per site header (the chrome's weight).
    pub nav: usize,
}

struct Article {
    slug: String,
    title: String,
    paragraphs: Vec<String>,
    byline: String,
}

struct Chrome {
    host: String,
    name: String,
    nav: Vec<String>,
    footer: Vec<String>,
    wrapper: &'static str,
}

impl DupUniverse {
    pub fn generate(spec: &DupSpec) -> DupUniverse {
        let root = Rng::new(spec.seed);
        let chromes: Vec<Chrome> = (0..spec.sites)
            .map(|s| chrome(&mut root.fork(1000 + s as u64), s, spec.nav))
            .collect();
        let articles: Vec<Vec<Article>> = (0..spec.sites)
            .map(|s| {
                let mut rng = root.fork(2000 + s as u64);
                (0..spec.articles).map(|a| article(&mut rng, a)).collect()
            })
            .collect();
        let mut pages = Vec::new();
        let mut group = BTreeMap::new();
        for (s, c) in chromes.iter().enumerate() {
            let mut rng = root.fork(3000 + s as u64);
            for (a, art) in articles[s].iter().enumerate() {
                let url = format!("https://{}/{}/{}", c.host, s, art.slug);
                pages.push(Fixture::new(
                    &url,
                    render(c, art, &articles[s], &mut rng, None, false),
                ));
                group.insert(url, s * spec.articles + a);
            }
        }
        let mut rng = root.fork(4000);
        let mut planted = 0;
        for k in 0..spec.syndicated.min(spec.sites * spec.articles) {
            let from = k % spec.sites;
            let to = (from + 1 + rng.below(spec.sites.max(2) - 1)) % spec.sites;
            let a = rng.below(spec.articles);
            let art = &articles[from][a];
            let url = format!("https://{}/syndicated/{k}-{}", chromes[to].host, art.slug);
            let credit = format!("This article first appeared in {}.", chromes[from].name);
            pages.push(Fixture::new(
                &url,
                render(
                    &chromes[to],
                    art,
                    &articles[to],
                    &mut rng,
                    Some(&credit),
                    false,
                ),
            ));
            group.insert(url, from * spec.articles + a);
            planted += 1;
        }
        for k in 0..spec.churned {
            let s = k % spec.sites;
            let a = rng.below(spec.articles);
            let art = &articles[s][a];
            let url = format!("https://{}/print/{k}-{}", chromes[s].host, art.slug);
            pages.push(Fixture::new(
                &url,
                render(&chromes[s], art, &articles[s], &mut rng, None, true),
            ));
            group.insert(url, s * spec.articles + a);
            planted += 1;
        }
        DupUniverse {
            pages,
            group,
            planted,
        }
    }
}

fn chrome(rng: &mut Rng, s: usize, nav: usize) -> Chrome {
    let name = format!(
        "The {} {}",
        lorem::title(rng, 1, 2),
        ["Courier", "Ledger", "Herald", "Post"][s % 4]
    );
    Chrome {
        host: format!("site{s}.example"),
        nav: (0..nav).map(|_| lorem::title(rng, 1, 2)).collect(),
        footer: (0..3).map(|_| lorem::paragraph(rng, 3)).collect(),
        name,
        wrapper: ["main", "div", "section"][s % 3],
    }
}

fn article(rng: &mut Rng, a: usize) -> Article {
    // Briefs (one short paragraph) to features (eight): real sections mix both.
    let paragraphs = match rng.below(4) {
        0 => vec![lorem::paragraph(rng, 2)],
        1 => (0..2).map(|_| lorem::paragraph(rng, 3)).collect(),
        _ => (0..rng.range(4, 8))
            .map(|_| lorem::paragraph(rng, 4))
            .collect(),
    };
    Article {
        slug: format!("a{a}"),
        title: lorem::title(rng, 4, 8),
        paragraphs,
        byline: rng.pick(lorem::NAMES).to_string(),
    }
}

/// One article page under `c`'s template: header navigation, the article, a "most read" list of
/// six other headlines of the site (a fresh pick per page: navigation churn) and the footer.
/// `credit` appends a line to the article; `print` adds a navigation item (a second URL's chrome).
fn render(
    c: &Chrome,
    art: &Article,
    site: &[Article],
    rng: &mut Rng,
    credit: Option<&str>,
    print: bool,
) -> String {
    let mut h = format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{} | {}</title></head>\
         <body><header><p class=brand>{}</p><nav><ul>",
        escape(&art.title),
        escape(&c.name),
        escape(&c.name)
    );
    for (i, item) in c.nav.iter().enumerate() {
        h.push_str(&format!("<li><a href=\"/s/{i}\">{}</a></li>", escape(item)));
    }
    if print {
        h.push_str("<li><a href=\"/print\">Print edition</a></li>");
    }
    h.push_str(&format!(
        "</ul></nav></header><{w} class=content><article><h1>{}</h1><p class=byline>By {}</p>",
        escape(&art.title),
        escape(&art.byline),
        w = c.wrapper
    ));
    for p in &art.paragraphs {
        h.push_str(&format!("<p>{}</p>", escape(p)));
    }
    if let Some(line) = credit {
        h.push_str(&format!("<p><em>{}</em></p>", escape(line)));
    }
    h.push_str("</article><aside><h2>Most read</h2><ol>");
    for _ in 0..6 {
        let other = &site[rng.below(site.len())];
        h.push_str(&format!(
            "<li><a href=\"/{}\">{}</a></li>",
            other.slug,
            escape(&other.title)
        ));
    }
    h.push_str(&format!("</ol></aside></{}><footer>", c.wrapper));
    for p in &c.footer {
        h.push_str(&format!("<p>{}</p>", escape(p)));
    }
    h.push_str("<p>&copy; 2024 ");
    h.push_str(&escape(&c.name));
    h.push_str("</p></footer></body></html>");
    h
}

/// How well duplicates were found against the planted groups.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    /// Pages flagged as a duplicate of a page of their own group.
    pub right: usize,
    /// Pages flagged as a duplicate of a page of another group.
    pub wrong: usize,
    pub planted: usize,
}

impl Score {
    /// Flags `(url, url of the page it duplicates)` scored against `u`'s groups.
    pub fn of<'a>(u: &DupUniverse, flags: impl IntoIterator<Item = (&'a str, &'a str)>) -> Score {
        let mut s = Score {
            planted: u.planted,
            ..Score::default()
        };
        for (page, of) in flags {
            if u.group.get(page) == u.group.get(of) && u.group.contains_key(page) {
                s.right += 1;
            } else {
                s.wrong += 1;
            }
        }
        s
    }

    pub fn precision(&self) -> f64 {
        let flagged = self.right + self.wrong;
        if flagged == 0 {
            return 1.0;
        }
        self.right as f64 / flagged as f64
    }

    pub fn recall(&self) -> f64 {
        if self.planted == 0 {
            return 1.0;
        }
        self.right as f64 / self.planted as f64
    }
}

/// Near-duplicate flags on each page's whole visible text (template included) — what dedup
/// would find without the cleaner — in export order (sites by name, pages by id), with the
/// export's own dedup code: `(url, url of the original)`.
pub fn raw_text_flags(store: &Store) -> Vec<(String, String)> {
    use thresher::corpus::dedup::{fingerprint, Index, Mode};
    let mut index = Index::new(Mode::Mark);
    let mut urls = std::collections::HashMap::new();
    let mut flags = Vec::new();
    for (site, _) in store.sites() {
        for id in store.site_pages(&site).expect("site pages") {
            let (Some(meta), Some(dom)) = (store.page(id).unwrap(), store.dom(&site, id).unwrap())
            else {
                continue;
            };
            let text = thresher::dom::text::visible_text(&dom);
            urls.insert(id, meta.url.clone());
            if let Some(fp) = fingerprint(&text, true) {
                if let Some((of, _)) = index.check(id, &fp) {
                    flags.push((meta.url, urls[&of].clone()));
                }
            }
        }
    }
    flags
}
