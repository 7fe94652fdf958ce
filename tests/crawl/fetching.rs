//! Fetch behaviour: retries and Retry-After, redirects, hostile servers, content types, charsets.

use std::time::Duration;

use super::{check_stored, crawl, stored_text, Dirs};
use crate::support::sites::{
    mount_charsets, mount_content_types, mount_hostile, mount_redirects, mount_retries,
    HOSTILE_CONFIG,
};
use crate::support::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_and_transient_errors_are_retried() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_retries(o);
    let dirs = Dirs::new();
    let summary = crawl(&dirs, &[o.url("/")], "[fetch]\nbackoff_base = \"50ms\"\n").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
    // 429 with Retry-After: 1 — the retries wait at least a second each.
    let busy = o.requests_to("/busy");
    for pair in busy.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(
            gap >= Duration::from_millis(950),
            "Retry-After honoured: {gap:?}"
        );
    }
    assert!(summary.errors_by_kind.iter().any(|(k, _)| *k == "http-404"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_chains_loops_and_out_of_scope_targets() {
    let server = TestServer::start_on(&["127.0.0.1", "127.0.0.2"]);
    let (a, b) = (server.origin(0), server.origin(1));
    let expect = mount_redirects(a, b);
    let dirs = Dirs::new();
    let summary = crawl(&dirs, &[a.url("/")], "").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
    assert_eq!(
        b.total_hits(),
        0,
        "the out-of-scope host is never contacted"
    );
    let kinds: Vec<String> = summary
        .errors_by_kind
        .iter()
        .map(|(k, _)| k.name().into_owned())
        .collect();
    for k in ["redirect-loop", "redirect-limit", "redirect-out-of-scope"] {
        assert!(kinds.iter().any(|n| n == k), "{k} recorded: {kinds:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_endpoints_cost_one_url_each_never_the_crawl() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_hostile(o);
    let dirs = Dirs::new();
    let started = std::time::Instant::now();
    let summary = crawl(&dirs, &[o.url("/")], HOSTILE_CONFIG).await;
    let took = started.elapsed();
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
    assert!(
        took < Duration::from_secs(60),
        "hostile crawl took {took:?}"
    );
    let kinds: Vec<String> = summary
        .errors_by_kind
        .iter()
        .map(|(k, _)| k.name().into_owned())
        .collect();
    for k in ["timeout-first-byte", "timeout", "too-large"] {
        assert!(kinds.iter().any(|n| n == k), "{k} recorded: {kinds:?}");
    }
    // The gzip bomb stops at the cap: far less than its gigabyte was inflated.
    let store = dirs.store();
    let bomb = store
        .errors()
        .map(|e| e.unwrap())
        .find(|(u, _)| u.ends_with("/bomb"))
        .expect("bomb recorded");
    assert_eq!(bomb.1.kind, "too-large", "{bomb:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_html_is_downloaded_and_parsed() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let expect = mount_content_types(o);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    expect.check(&server).unwrap();
    check_stored(&expect, &dirs.store());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mislabelled_and_legacy_charsets_decode_right() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let (expect, cases) = mount_charsets(o);
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/")], "").await;
    expect.check(&server).unwrap();
    let store = dirs.store();
    check_stored(&expect, &store);
    for case in cases.iter().filter(|c| c.recoverable) {
        let text = stored_text(&store, &o.url(case.path));
        for line in case.truth {
            assert!(
                text.contains(line),
                "{}: {line:?} not in {text:?}",
                case.path
            );
        }
    }
}
