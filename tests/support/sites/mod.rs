//! Hand-written fixture sites, one per crawler behaviour: robots.txt rules and statuses
//! (`robots`), retries, redirects and hostile endpoints (`fetch`), content types and charsets
//! (`content`), link semantics and a spider trap (`links`). Each `mount_*` serves its pages on
//! the given origin(s) and returns an `Expect`: how many times a correct crawl (seeded with
//! `origin.url("/")`, default config unless the doc says otherwise) requests each URL, and which
//! pages it stores. `Expect::check` compares that with the server's log.

mod content;
mod fetch;
mod links;
mod robots;

pub use content::{mount_charsets, mount_content_types, CharsetCase};
pub use fetch::{mount_hostile, mount_redirects, mount_retries, HOSTILE_CONFIG};
pub use links::{mount_links, mount_spider_trap};
pub use robots::{mount_robots_rules, mount_robots_status, RobotsCase};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::endpoint::Endpoint;
use super::server::TestServer;

/// How many requests a URL may get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    Exactly(usize),
    AtLeast(usize),
    /// Inclusive.
    Between(usize, usize),
}

impl Count {
    pub fn allows(self, n: usize) -> bool {
        match self {
            Count::Exactly(k) => n == k,
            Count::AtLeast(k) => n >= k,
            Count::Between(lo, hi) => (lo..=hi).contains(&n),
        }
    }
}

/// What a correct crawl of a fixture does, server-side (requests) and store-side (pages kept).
#[derive(Clone, Debug, Default)]
pub struct Expect {
    /// Full URL → allowed request count (`Exactly(0)` = never requested). URLs are matched by
    /// address, target and Host header (`TestServer::hits_url`).
    pub requests: BTreeMap<String, Count>,
    /// Spellings of one resource whose requests are counted together (e.g. `/~u` and `/%7Eu`).
    pub groups: Vec<(Vec<String>, Count)>,
    /// Pages a correct crawl stores and writes cleaned text for (URL after redirects).
    pub stored: BTreeSet<String>,
    /// Pages fetched but not to be stored (noindex, non-HTML, errors, redirects themselves).
    pub not_stored: BTreeSet<String>,
}

impl Expect {
    pub fn count(&mut self, url: String, c: Count) -> &mut Self {
        self.requests.insert(url, c);
        self
    }

    pub fn once(&mut self, url: String) -> &mut Self {
        self.count(url, Count::Exactly(1))
    }

    pub fn never(&mut self, url: String) -> &mut Self {
        self.count(url, Count::Exactly(0))
    }

    /// Requested once and stored.
    pub fn page(&mut self, url: String) -> &mut Self {
        self.stored.insert(url.clone());
        self.once(url)
    }

    pub fn merge(&mut self, other: Expect) -> &mut Self {
        self.requests.extend(other.requests);
        self.groups.extend(other.groups);
        self.stored.extend(other.stored);
        self.not_stored.extend(other.not_stored);
        self
    }

    /// Every violation of the request counts, one per line (`Ok` when there is none).
    pub fn check(&self, server: &TestServer) -> Result<(), String> {
        let mut errors = String::new();
        for (url, c) in &self.requests {
            let n = server.hits_url(url);
            if !c.allows(n) {
                let _ = writeln!(errors, "{url}: requested {n} times, expected {c:?}");
            }
        }
        for (urls, c) in &self.groups {
            let n: usize = urls.iter().map(|u| server.hits_url(u)).sum();
            if !c.allows(n) {
                let _ = writeln!(
                    errors,
                    "{urls:?}: requested {n} times in all, expected {c:?}"
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// A minimal HTML document.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )
}

/// A page whose body is one `<a href>` per entry.
pub fn links_page(title: &str, hrefs: &[&str]) -> String {
    let body: String = hrefs
        .iter()
        .map(|h| format!("<p><a href=\"{h}\">{h}</a></p>\n"))
        .collect();
    page(title, &body)
}

pub fn sitemap_urlset(urls: &[String]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for u in urls {
        let _ = writeln!(
            s,
            "  <url><loc>{u}</loc><lastmod>2024-05-01</lastmod></url>"
        );
    }
    s.push_str("</urlset>\n");
    s
}

pub fn sitemap_index(sitemaps: &[String]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for u in sitemaps {
        let _ = writeln!(s, "  <sitemap><loc>{u}</loc></sitemap>");
    }
    s.push_str("</sitemapindex>\n");
    s
}
