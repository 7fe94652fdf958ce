//! Link extraction and scope: nofollow, meta robots, base href, normalisation, other hosts, and
//! a spider trap bounded by max depth.

use super::{check_stored, crawl, stored_urls, Dirs};
use crate::support::sites::{mount_links, mount_spider_trap};
use crate::support::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_nofollow_base_normalisation_and_scope() {
    let server = TestServer::start_on(&["127.0.0.1", "127.0.0.2"]);
    let (a, b) = (server.origin(0), server.origin(1));
    let expect = mount_links(a, b);
    let dirs = Dirs::new();
    crawl(&dirs, &[a.url("/")], "").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
    assert_eq!(b.total_hits(), 0, "out-of-scope host never contacted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spider_trap_ends_at_max_depth() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    mount_spider_trap(o);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "[crawl]\nmax_depth = 4\n").await;
    // The seed (depth 0) and one calendar page per hop down to depth 4.
    assert_eq!(o.hits_prefix("/calendar/"), 4);
    assert_eq!(stored_urls(&dirs.store()).len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_and_per_host_limits_stop_the_crawl() {
    let server = TestServer::start(2);
    let (a, b) = (server.origin(0), server.origin(1));
    mount_spider_trap(a);
    mount_spider_trap(b);
    let dirs = Dirs::new();
    let toml = "[crawl]\nmax_pages_per_host = 7\nmax_depth = 50\n";
    let summary = crawl(&dirs, &[a.url("/"), b.url("/")], toml).await;
    let store = dirs.store();
    for (site, c) in store.sites() {
        assert_eq!(c.pages, 7, "{site}");
    }
    // The URLs beyond the budget are over budget, per host, not queued.
    assert_eq!(summary.over_budget.budget, 7, "{summary:?}");
    assert_eq!(summary.over_budget.hosts.len(), 2, "{summary:?}");
    assert!(summary.over_budget.urls() > 0, "{summary:?}");
    assert_eq!(summary.queued_left, 0, "{summary:?}");

    let dirs = Dirs::new();
    crawl(
        &dirs,
        &[a.url("/"), b.url("/")],
        "[crawl]\nmax_pages = 5\nmax_depth = 50\n",
    )
    .await;
    assert_eq!(stored_urls(&dirs.store()).len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_with_identical_bodies_are_stored_once() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let article = crate::support::sites::page("Story", "<p>the same story, twice</p>");
    o.mount(
        "/",
        crate::support::Endpoint::html(crate::support::sites::links_page(
            "Home",
            &["/story.html", "/story.html?print=true", "/other.html"],
        )),
    );
    o.mount(
        "/story.html",
        crate::support::Endpoint::html(article.clone()),
    );
    o.mount(
        "/story.html?print=true",
        crate::support::Endpoint::html(article),
    );
    o.mount(
        "/other.html",
        crate::support::Endpoint::html(crate::support::sites::page("Other", "<p>other</p>")),
    );
    let dirs = Dirs::new();
    let summary = crawl(&dirs, &[o.url("/")], "").await;
    let stored = stored_urls(&dirs.store());
    let copies = [o.url("/story.html"), o.url("/story.html?print=true")];
    assert_eq!(
        copies.iter().filter(|u| stored.contains(*u)).count(),
        1,
        "{stored:?}"
    );
    assert!(stored.contains(&o.url("/other.html")));
    assert_eq!(summary.skipped, 1, "{summary:?}");
    assert_eq!(
        summary.errors, 0,
        "a duplicate is not an error: {summary:?}"
    );
}
