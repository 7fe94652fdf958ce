//! robots.txt: group selection, Allow/Disallow/`$`, Sitemap lines, and the RFC 9309 statuses.

use std::time::Duration;

use super::{check_stored, crawl, crawl_hearing_events, stored_urls, Dirs};
use crate::support::sites::{links_page, mount_robots_rules, mount_robots_status, RobotsCase};
use crate::support::{Endpoint, TestServer};
use thresher::crawl::CrawlEvent;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_rules_and_sitemaps_are_obeyed() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_robots_rules(o, None);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
    // robots.txt is read before anything else on the origin.
    assert_eq!(o.log()[0].path(), "/robots.txt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_404_allows_everything() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_robots_status(o, RobotsCase::NotFound);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_500_disallows_and_retries_later_without_losing_urls() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_robots_status(o, RobotsCase::ServerError);
    let dirs = Dirs::new();
    let summary = crawl(&dirs, &[o.url("/")], "").await;
    expect.check(&server).unwrap();
    // Retried (error_retry = 200ms in tests), then set aside; the seed stays queued.
    assert!(
        o.hits("/robots.txt") >= 2,
        "robots.txt retried: {}",
        o.hits("/robots.txt")
    );
    assert_eq!(summary.queued_left, 1, "{summary:?}");
    assert!(summary
        .set_aside
        .iter()
        .any(|w| w.reason.contains("robots.txt unreachable: HTTP 500")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_redirect_is_followed() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_robots_status(o, RobotsCase::Redirect);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_tarpit_counts_as_unreachable() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_robots_status(o, RobotsCase::Tarpit);
    let dirs = Dirs::new();
    let started = std::time::Instant::now();
    crawl(
        &dirs,
        &[o.url("/")],
        "[fetch]\nfirst_byte_timeout = \"300ms\"\n",
    )
    .await;
    expect.check(&server).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_robots_is_reused_on_resume() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    mount_robots_status(o, RobotsCase::NotFound);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    crawl(&dirs, &[o.url("/")], "").await;
    assert_eq!(
        o.hits("/robots.txt"),
        1,
        "robots.txt cached in the store with its expiry"
    );
}

/// `robots.respect = false`: robots.txt is never requested, so neither its Disallow lines nor its
/// Crawl-delay nor its Sitemap lines apply; `crawl.delay` still spaces the requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_are_neither_fetched_nor_obeyed_when_respect_is_off() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    mount_robots_rules(o, Some(Duration::from_secs(2)));
    let dirs = Dirs::new();
    let toml = "[crawl]\ndelay = \"200ms\"\n[robots]\nrespect = false\n";
    crawl(&dirs, &[o.url("/")], toml).await;
    assert_eq!(o.hits("/robots.txt"), 0, "{:?}", o.hit_counts());
    for p in ["/private/secret.html", "/script.cgi", "/a.html", "/c.html"] {
        assert_eq!(o.hits(p), 1, "{p}: {:?}", o.hit_counts());
    }
    for p in ["/sitemap.xml", "/sitemap_index.xml", "/from-sitemap.html"] {
        assert_eq!(o.hits(p), 0, "{p}: robots.txt's sitemaps are not read");
    }
    assert!(stored_urls(&dirs.store()).contains(&o.url("/private/secret.html")));
    // The configured delay (not robots.txt's 2 s Crawl-delay) spaces the requests.
    assert_eq!(
        o.pairs_closer_than(Duration::from_millis(150)),
        0,
        "gaps: {:?}",
        o.gaps()
    );
}

/// A site the crawl is done with keeps its robots rules only in the store. When a link from
/// another site brings it new URLs, its rules are read back: robots.txt is not fetched again,
/// and its Disallow still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_done_sites_robots_rules_are_read_back_when_it_gets_new_urls() {
    let server = TestServer::start(2);
    let (a, b) = (server.origin(0), server.origin(1));
    a.mount(
        "/robots.txt",
        Endpoint::text("User-agent: *\nDisallow: /private/\n"),
    );
    a.mount("/", Endpoint::html(links_page("A", &[])));
    a.mount("/late.html", Endpoint::html(links_page("A late", &[])));
    a.mount(
        "/private/x.html",
        Endpoint::html(links_page("A private", &[])),
    );
    b.mount("/robots.txt", Endpoint::text("User-agent: *\nAllow: /\n"));
    b.mount("/", Endpoint::html(links_page("B", &["/slow.html"])));
    // By the time this page is answered, A is done: its one page stored long before.
    let (late_url, private_url) = (a.url("/late.html"), a.url("/private/x.html"));
    let late = links_page("B slow", &[&late_url, &private_url]);
    b.mount(
        "/slow.html",
        Endpoint::slow_first_byte(Duration::from_millis(800), Endpoint::html(late)),
    );
    let dirs = Dirs::new();
    let (summary, events) = crawl_hearing_events(&dirs, &[a.url("/"), b.url("/")], "").await;
    assert!(!summary.interrupted);
    let done_a = events
        .iter()
        .filter(|e| **e == CrawlEvent::SiteDone(a.host_port()))
        .count();
    assert_eq!(
        done_a, 2,
        "A done before the late link and after it: {events:?}"
    );
    assert_eq!(a.hits("/late.html"), 1, "the late URL fetched");
    assert_eq!(a.hits("/private/x.html"), 0, "its Disallow still holds");
    assert_eq!(
        a.hits("/robots.txt"),
        1,
        "robots.txt read back, not fetched again"
    );
}
