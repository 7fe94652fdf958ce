//! Tests of the long-crawl benchmark's procedural universe (`benches/universe/`): the same bytes
//! for the same (origin, path), every in-site link naming a page it serves and every page
//! reachable from `/`, robots.txt and sitemaps that thresher's own parsers read, template eras
//! that differ, page sizes near the target, and the same over HTTP. No timing here.

use std::collections::{BTreeSet, VecDeque};

use thresher::crawl::robots::RobotsRules;
use thresher::crawl::sitemap::parse_sitemap;
use thresher::dom::parse_bytes;

use crate::universe::{markup::Layout, serve, Kind, Spec, Universe};

const BASE: &str = "http://127.0.0.1:8080";

fn small(origins: usize, pages: usize) -> Universe {
    sized(origins, pages, 20_000)
}

fn sized(origins: usize, pages: usize, page_bytes: usize) -> Universe {
    Universe::new(Spec {
        origins,
        pages,
        page_bytes,
        seed: 7,
    })
}

/// The in-site paths a page links to (resolved against `BASE`), and whether any link left it.
fn links(u: &Universe, origin: usize, path: &str) -> (Vec<String>, Vec<String>) {
    let html = u.page(origin, path).expect("a served page");
    let base = url::Url::parse(BASE).unwrap().join(path).unwrap();
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for l in &parse_bytes(html.as_bytes(), Some("text/html")).links {
        let to = base.join(l.href).unwrap();
        if to.origin() == base.origin() && to.query().is_none() && to.fragment().is_none() {
            inside.push(to.path().to_string());
        } else {
            outside.push(to.to_string());
        }
    }
    (inside, outside)
}

fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let (a, b): (BTreeSet<_>, BTreeSet<_>) = (a.iter().collect(), b.iter().collect());
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

fn path_set(u: &Universe, origin: usize, page: usize) -> Vec<u64> {
    let html = u.page(origin, &u.path(origin, page)).unwrap();
    parse_bytes(html.as_bytes(), Some("text/html"))
        .dom
        .path_set()
}

#[test]
fn the_same_origin_and_path_give_the_same_bytes() {
    let (a, b) = (small(3, 500), small(3, 500));
    for origin in 0..3 {
        for page in [0, 1, 2, 7, 250, 499] {
            let path = a.path(origin, page);
            assert_eq!(path, b.path(origin, page));
            let first = a.page(origin, &path).unwrap();
            assert_eq!(first, a.page(origin, &path).unwrap(), "{origin} {path}");
            assert_eq!(first, b.page(origin, &path).unwrap(), "{origin} {path}");
            assert_eq!(a.page_number(origin, &path), Some(page));
        }
    }
    // Origins differ from each other.
    assert_ne!(a.page(0, "/"), a.page(1, "/"));
    // Not pages: unknown paths, a page number past the end, another origin's path.
    assert_eq!(a.page(0, "/nothing-here"), None);
    assert_eq!(a.page(0, "/news/p500/"), None);
    assert_eq!(
        a.page(0, &a.path(0, 3).replace("-3.html", "-03.html")),
        None
    );
    assert_eq!(a.page(3, "/"), None);
}

#[test]
fn every_link_stays_in_site_names_a_served_page_and_every_page_is_reachable() {
    // Small pages: the links do not depend on the size, the parsing time does.
    let pages = 300;
    let u = sized(2, pages, 3_000);
    let origin = 1;
    let mut seen = BTreeSet::from(["/".to_string()]);
    let mut queue = VecDeque::from(["/".to_string()]);
    let mut total_links = 0;
    let mut fewest = usize::MAX;
    while let Some(path) = queue.pop_front() {
        let (inside, outside) = links(&u, origin, &path);
        assert!(outside.is_empty(), "{path} links out: {outside:?}");
        total_links += inside.len();
        fewest = fewest.min(inside.len());
        for to in inside {
            // A path is checked when first seen: every page is reached, so every distinct
            // link target is checked once.
            if seen.insert(to.clone()) {
                assert!(
                    u.page_number(origin, &to).is_some(),
                    "{path} links to {to}, which is not served"
                );
                queue.push_back(to);
            }
        }
    }
    assert_eq!(seen.len(), pages, "origin {origin}: pages reachable from /");
    let mean = total_links as f64 / pages as f64;
    assert!(
        (80.0..=130.0).contains(&mean) && fewest >= 60,
        "origin {origin}: {mean:.1} links per page on average, {fewest} at least"
    );
}

#[test]
fn robots_and_sitemaps_parse_and_list_served_pages() {
    let u = small(1, 2500);
    let robots = RobotsRules::parse(&u.robots(BASE), "thresher");
    assert_eq!(robots.sitemaps(), [format!("{BASE}/sitemap.xml")]);
    let url = |p: &str| url::Url::parse(&format!("{BASE}{p}")).unwrap();
    assert!(robots.allowed(&url(&u.path(0, 5))));
    assert!(!robots.allowed(&url("/search?q=x")));
    assert!(!robots.allowed(&url("/account/login")));

    let index = parse_sitemap(u.sitemap_index(BASE).as_bytes(), 1 << 20, 50_000).unwrap();
    assert!(index.urls.is_empty());
    assert_eq!(index.sitemaps.len(), 3, "2500 pages in chunks of 1000");
    let mut listed = 0;
    for (k, loc) in index.sitemaps.iter().enumerate() {
        assert_eq!(loc, &format!("{BASE}/sitemap-{k}.xml"));
        let body = u.sitemap_chunk(0, BASE, k).unwrap();
        let chunk = parse_sitemap(body.as_bytes(), 10 << 20, 50_000).unwrap();
        for page_url in &chunk.urls {
            let path = page_url.strip_prefix(BASE).unwrap();
            let page = u.page_number(0, path).expect("a sitemap URL is a page");
            assert_ne!(
                u.kind(page),
                Kind::Listing,
                "news sitemaps list no listings"
            );
        }
        listed += chunk.urls.len();
    }
    let expected = (0..2500).filter(|&p| u.kind(p) != Kind::Listing).count();
    assert_eq!(listed, expected);
    assert_eq!(u.sitemap_chunk(0, BASE, 3), None);
}

#[test]
fn each_origin_has_two_or_three_eras_whose_templates_differ() {
    let pages = 600;
    let u = small(12, pages);
    let mut layouts_used = BTreeSet::new();
    for origin in 0..12 {
        let eras = &u.style(origin).eras;
        assert!((2..=3).contains(&eras.len()), "origin {origin}: {eras:?}");
        let distinct: BTreeSet<String> = eras.iter().map(|l| format!("{l:?}")).collect();
        assert_eq!(
            distinct.len(),
            eras.len(),
            "origin {origin}: eras repeat a layout"
        );
        layouts_used.extend(distinct);
        // Eras are runs of the page sequence, the newest first.
        assert_eq!(u.era(origin, 0), 0);
        assert_eq!(u.era(origin, pages - 1), eras.len() - 1);
    }
    assert_eq!(
        layouts_used.len(),
        Layout::ALL.len(),
        "every layout is used"
    );

    // Two articles of one era share most of their DOM paths; an article of another era of the
    // same origin shares far fewer.
    let origin = 0;
    let articles_of = |era: usize| -> Vec<usize> {
        (0..pages)
            .filter(|&p| u.kind(p) == Kind::Article && u.era(origin, p) == era)
            .take(2)
            .collect()
    };
    let (e0, e1) = (articles_of(0), articles_of(1));
    let (a, b, c) = (
        path_set(&u, origin, e0[0]),
        path_set(&u, origin, e0[1]),
        path_set(&u, origin, e1[0]),
    );
    let same = jaccard(&a, &b);
    let across = jaccard(&a, &c);
    assert!(
        same > 0.5 && across < same / 2.0,
        "same era {same:.2}, across eras {across:.2}"
    );
}

#[test]
fn pages_come_near_the_size_target_and_kinds_all_occur() {
    let u = small(4, 300);
    let mut sizes = Vec::new();
    let mut kinds = BTreeSet::new();
    for origin in 0..4 {
        for page in (0..300).step_by(7) {
            sizes.push(u.page(origin, &u.path(origin, page)).unwrap().len());
            kinds.insert(format!("{:?}", u.kind(page)));
        }
    }
    let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
    assert!(
        (17_000.0..=24_000.0).contains(&mean),
        "mean page size {mean:.0} for a 20,000-byte target"
    );
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}

#[tokio::test]
async fn the_server_serves_pages_robots_sitemaps_and_404s_and_counts_them() {
    let u = std::sync::Arc::new(small(2, 300));
    let (server, counters) = serve::serve(u.clone(), 1);
    let client = crate::support::client();
    let get = |url: String| {
        let client = client.clone();
        async move {
            let r = client.get(&url).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let base = server.origin(1).base();
    let path = u.path(1, 42);
    let (status, body) = get(format!("{base}{path}")).await;
    assert_eq!(
        (status, body.as_str()),
        (200, u.page(1, &path).unwrap().as_str())
    );
    assert_eq!(get(format!("{base}{path}")).await.1, body);
    let (status, robots) = get(format!("{base}/robots.txt")).await;
    assert_eq!((status, robots), (200, u.robots(&base)));
    let (status, sitemap) = get(format!("{base}/sitemap-0.xml")).await;
    assert_eq!(
        (status, sitemap),
        (200, u.sitemap_chunk(1, &base, 0).unwrap())
    );
    assert_eq!(get(format!("{base}/sitemap-9.xml")).await.0, 404);
    assert_eq!(get(format!("{base}/no/such/page")).await.0, 404);

    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(counters.pages(), 2);
    assert_eq!(counters.unique.load(Relaxed), 1);
    assert_eq!(counters.meta.load(Relaxed), 3);
    assert_eq!(counters.missing.load(Relaxed), 1);
    // The per-request log is off; the server still counts every request.
    assert!(server.origin(1).log().is_empty());
    assert_eq!(server.origin(1).total_hits(), 6);
}

#[test]
fn loopback_addresses_skip_the_network_and_broadcast_bytes() {
    let ip = |i| serve::loopback_ip(i).to_string();
    assert_eq!(ip(0), "127.1.0.1");
    assert_eq!(ip(253), "127.1.0.254");
    assert_eq!(ip(254), "127.1.1.1");
    assert_eq!(ip(254 * 256), "127.2.0.1");
    let distinct: BTreeSet<_> = (0..100_000).map(serve::loopback_ip).collect();
    assert_eq!(distinct.len(), 100_000);
}

#[tokio::test]
async fn origins_on_loopback_addresses_share_one_port_and_each_serves_its_own_site() {
    let u = std::sync::Arc::new(small(3, 50));
    let (server, counters) = serve::serve_at(u.clone(), 1, serve::Addressing::Loopback);
    let port = server.origin(0).port();
    assert!(server.origins().iter().all(|o| o.port() == port));
    let client = crate::support::client();
    for (i, origin) in server.origins().iter().enumerate() {
        let base = origin.base();
        assert_eq!(base, format!("http://{}:{port}", serve::loopback_ip(i)));
        let path = u.path(i, 7);
        let r = client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(r.text().await.unwrap(), u.page(i, &path).unwrap());
        let robots = client
            .get(format!("{base}/robots.txt"))
            .send()
            .await
            .unwrap();
        assert_eq!(robots.text().await.unwrap(), u.robots(&base));
    }
    // Site 1's page is not site 0's: each address is its own site.
    assert_ne!(u.page(0, &u.path(0, 7)), u.page(1, &u.path(1, 7)));
    // An address on the port where no origin is: the connection is closed unanswered.
    let stray = format!("http://{}:{port}/", serve::loopback_ip(3));
    assert!(client.get(stray).send().await.is_err());
    assert_eq!(counters.pages(), 3);
    assert_eq!(
        counters.unique.load(std::sync::atomic::Ordering::Relaxed),
        3
    );
    for i in 0..3 {
        assert_eq!(counters.origin_unique(i), 1);
        assert_eq!(server.origin(i).total_hits(), 2);
    }
}
