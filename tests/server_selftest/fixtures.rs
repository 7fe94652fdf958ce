//! Fixture sites (every page an `Expect` wants stored is served, `check` can fail, charset pages
//! decode as claimed), the news-site generator, and the stand-in crawler over served sites.

use std::time::Duration;

use super::{get, ms};
use crate::support::sites::{self, RobotsCase};
use crate::support::universe::Kind;
use crate::support::*;

// ---------------------------------------------------------------------------------------------
// Fixture sites: every page an `Expect` wants stored is served (a typo would 404), `check`
// can fail, and the charset pages decode as they claim with thresher's own decoder.

async fn assert_stored_pages_serve(server: &TestServer, e: &Expect) {
    for url in &e.stored {
        let r = client()
            .get(url)
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{url}");
        assert!(!r.bytes().await.unwrap().is_empty(), "{url}");
    }
    assert!(server.total_hits() >= e.stored.len());
}

#[tokio::test]
async fn fixture_sites_serve_every_page_they_expect_stored() {
    let server = TestServer::start_on(&["127.0.0.1", "127.0.0.2"]);
    let (a, b) = (server.origin(0), server.origin(1));
    // One fixture per fresh origin set, so routes never clash.
    type Mount = Box<dyn Fn(&Origin, &Origin) -> Expect>;
    let cases: Vec<Mount> = vec![
        Box::new(|o, _| sites::mount_robots_rules(o, Some(ms(500)))),
        Box::new(|o, _| sites::mount_robots_status(o, RobotsCase::Redirect)),
        Box::new(|o, _| sites::mount_retries(o)),
        Box::new(sites::mount_redirects),
        Box::new(|o, _| sites::mount_content_types(o)),
        Box::new(|o, _| sites::mount_charsets(o).0),
        Box::new(sites::mount_links),
        Box::new(|o, _| sites::mount_hostile(o)),
    ];
    for case in &cases {
        a.serve(Site::new());
        b.serve(Site::new());
        let e = case(a, b);
        assert!(!e.stored.is_empty());
        // Fixtures with retry sequences answer 200 only after their failures: skip those.
        let mut e = e;
        e.stored
            .retain(|u| !u.contains("/busy") && !u.contains("/flaky"));
        assert_stored_pages_serve(&server, &e).await;
    }
}

#[tokio::test]
async fn expect_check_reports_violations() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let e = sites::mount_robots_rules(o, None);
    let err = e.check(&server).unwrap_err();
    assert!(err.contains("/robots.txt: requested 0 times"), "{err}");
    get(&o.url("/private/secret.html")).await;
    let err = e.check(&server).unwrap_err();
    assert!(
        err.contains("/private/secret.html: requested 1 times, expected Exactly(0)"),
        "{err}"
    );
    let robots = get(&o.url("/robots.txt")).await.text().await.unwrap();
    assert!(robots.contains("User-agent: thresher") && robots.contains("Sitemap: http://"));
}

#[tokio::test]
async fn charset_pages_decode_as_claimed_with_thresher_decoder() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let (_, cases) = sites::mount_charsets(o);
    for case in cases {
        let r = get(&o.url(case.path)).await;
        let ctype = r.headers()["content-type"].to_str().unwrap().to_string();
        let body = r.bytes().await.unwrap();
        let parsed = thresher::dom::parse_bytes(&body, Some(&ctype));
        let text = thresher::dom::text::visible_text(&parsed.dom);
        let all = case.truth.iter().all(|t| text.contains(t));
        assert_eq!(
            all && !case.truth.is_empty(),
            case.recoverable,
            "{}: {text:?}",
            case.path
        );
        for link in &parsed.links {
            let url = url::Url::parse(&o.url(case.path))
                .unwrap()
                .join(link.href)
                .unwrap();
            assert_eq!(
                get(url.as_str()).await.status(),
                200,
                "{} → {url}",
                case.path
            );
        }
    }
}

#[tokio::test]
async fn spider_trap_is_endless() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    sites::mount_spider_trap(o);
    let body = get(&o.url("/calendar/41/")).await.text().await.unwrap();
    assert!(body.contains("href=\"/calendar/42/\""), "{body}");
}

// ---------------------------------------------------------------------------------------------
// The news-site generator.

#[test]
fn news_site_has_exactly_its_page_budget_reachable_and_orphans_unreachable() {
    for pages in [8, 29, 30, 57, 200] {
        let site = NewsSite::generate(&SiteSpec::small(pages as u64, pages));
        let reachable = site.reachable();
        assert_eq!(reachable.len(), pages, "pages={pages}");
        let orphans: Vec<_> = site
            .pages
            .iter()
            .filter(|p| p.kind == Kind::Orphan)
            .collect();
        assert_eq!(orphans.len(), 2);
        assert!(orphans.iter().all(|p| !reachable.contains(&p.path)));
        assert_eq!(site.pages.len(), pages + 2);
        let paths: std::collections::HashSet<_> = site.pages.iter().map(|p| &p.path).collect();
        assert_eq!(paths.len(), site.pages.len(), "paths are unique");
        assert!(
            site.depths().values().all(|&d| d <= 8),
            "default max depth reaches all"
        );
    }
}

#[test]
fn news_site_links_are_exactly_the_in_scope_links_in_its_html() {
    let spec = SiteSpec {
        external: vec!["http://partner.example.invalid/x".into()],
        page_bytes: 30_000,
        ..SiteSpec::small(5, 60)
    };
    let site = NewsSite::generate(&spec);
    let base = url::Url::parse("http://127.0.0.1:9/").unwrap();
    for page in &site.pages {
        let parsed = thresher::dom::parse_bytes(&page.html(), Some("text/html; charset=utf-8"));
        assert!(!parsed.truncated);
        let here = base.join(&page.path).unwrap();
        let mut found: Vec<String> = Vec::new();
        for l in &parsed.links {
            let u = here.join(l.href).unwrap();
            if u.origin() == base.origin() && !found.contains(&u.path().to_string()) {
                found.push(u.path().to_string());
            }
        }
        let mut want = page.links.clone();
        want.sort();
        found.sort();
        assert_eq!(found, want, "{}", page.path);
        for link in &page.links {
            assert!(
                site.page(link).is_some(),
                "{} links to a missing {link}",
                page.path
            );
        }
    }
}

#[test]
fn article_truth_is_in_the_visible_text_and_chrome_is_not_in_the_truth() {
    let site = NewsSite::generate(&SiteSpec::small(11, 40));
    let mut variants = std::collections::BTreeSet::new();
    for page in site.articles() {
        if let Kind::Article { variant, .. } = page.kind {
            variants.insert(variant);
        }
        let parsed = thresher::dom::parse_bytes(&page.html(), None);
        let text = thresher::dom::text::visible_text(&parsed.dom);
        let lines: Vec<&str> = text.lines().collect();
        // Every truth block is one visible line, in order.
        let mut at = 0;
        for block in &page.content {
            let pos = lines[at..].iter().position(|l| l == block);
            assert!(
                pos.is_some(),
                "{}: {block:?} not a line of\n{text}",
                page.path
            );
            at += pos.unwrap() + 1;
        }
        // Chrome lines are visible but not in the truth (the comment form's button label is
        // not visible text: form controls render no line).
        assert!(
            lines.iter().any(|l| l.starts_with("Home › ")),
            "{}: no breadcrumb",
            page.path
        );
        for chrome in [
            "Most read",
            "Related",
            "Newsletter",
            "Post comment",
            "Home › ",
        ] {
            assert!(
                !page.content.iter().any(|l| l.starts_with(chrome)),
                "{}: {chrome}",
                page.path
            );
        }
        assert!(page.content.len() >= 4, "title + ≥ 3 paragraphs");
    }
    assert_eq!(variants.len(), 3);
}

#[test]
fn generation_is_deterministic_and_seeds_differ() {
    let a = NewsSite::generate(&SiteSpec::small(3, 30));
    let b = NewsSite::generate(&SiteSpec::small(3, 30));
    let c = NewsSite::generate(&SiteSpec::small(4, 30));
    let html = |s: &NewsSite| s.pages.iter().map(|p| p.html()).collect::<Vec<_>>();
    assert_eq!(html(&a), html(&b));
    assert_ne!(html(&a), html(&c));
}

#[test]
fn universe_pages_are_about_the_target_size_from_shared_parts() {
    let u = Universe::generate(3, 200, 50_000);
    let sizes: Vec<usize> = u
        .sites
        .iter()
        .flat_map(|s| s.pages.iter().map(|p| p.len()))
        .collect();
    let avg = sizes.iter().sum::<usize>() / sizes.len();
    assert!((45_000..=55_000).contains(&avg), "average page {avg} bytes");
    let total: usize = sizes.iter().sum();
    let resident = u.resident_bytes();
    assert!(
        resident * 5 < total,
        "resident {resident} of {total} served bytes"
    );
    assert!(u.sites.iter().all(|s| s.reachable().len() == 200));
}

#[test]
fn write_dataset_writes_html_and_gold_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let site = NewsSite::generate(&SiteSpec::small(2, 20));
    let stems = site.write_dataset(dir.path()).unwrap();
    assert_eq!(stems.len(), site.articles().count());
    let gold = std::fs::read_to_string(dir.path().join(format!("{}.gold.txt", stems[0]))).unwrap();
    assert_eq!(gold, site.articles().next().unwrap().true_text());
}

// ---------------------------------------------------------------------------------------------
