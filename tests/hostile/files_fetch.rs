//! Issue 10, the low items on what a crawl keeps: layered `Content-Encoding`, an encoding that
//! cannot decode (retried though it cannot succeed), and credentials picked up from a redirect.

use std::io::Write;

use super::files_common::*;
use crate::crawl::{crawl, crawl_learning, stored_text, stored_urls, Dirs};
use crate::support::endpoint::HTML;
use crate::support::{Body, Endpoint, Reply, Site, TestServer};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Regression: `Content-Encoding: gzip, gzip` stored the compressed bytes as the page's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_layered_content_encoding_is_decoded() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let html =
        "<html><head><title>Double</title></head><body><p>twice wrapped words</p></body></html>";
    o.serve(
        Site::new().route(
            "/",
            Reply::new(200, HTML, Body::full(gzip(&gzip(html.as_bytes()))))
                .header("content-encoding", "gzip, gzip"),
        ),
    );
    let dirs = Dirs::new();
    let summary = crawl(&dirs, &[o.url("/")], "").await;
    assert_eq!(summary.stored, 1, "{summary:?}");
    let text = stored_text(&dirs.store(), &o.url("/"));
    assert!(text.contains("twice wrapped words"), "{text:?}");
}

/// Regression: a body that does not decode under its `Content-Encoding` was fetched again and
/// again (three retries) though it cannot succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_undecodable_encoding_is_not_retried() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.serve(
        Site::new()
            .route(
                "/",
                Reply::new(200, HTML, Body::full("<p>not gzip at all, plain words</p>"))
                    .header("content-encoding", "gzip"),
            )
            .route(
                "/z",
                Reply::new(200, HTML, Body::full("<p>x</p>")).header("content-encoding", "snappy9"),
            ),
    );
    let dirs = Dirs::new();
    crawl(&dirs, &[o.url("/"), o.url("/z")], "").await;
    assert_eq!(o.hits("/"), 1, "fetched once");
    assert_eq!(o.hits("/z"), 1, "fetched once");
    let kinds: Vec<String> = dirs
        .store()
        .errors()
        .map(|e| e.unwrap().1.kind.name().into_owned())
        .collect();
    assert_eq!(kinds, ["bad-encoding", "bad-encoding"], "{kinds:?}");
}

/// Regression: a redirect to `http://user:pass@host/` carried the credentials into later URLs,
/// index.tsv and the export.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_credentials_from_a_redirect_are_stripped() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    serve_pages(o, 6);
    let target = o.url("/p0").replace("http://", "http://user:secret@");
    o.mount("/start", Endpoint::redirect(302, &target));
    let dirs = Dirs::new();
    let toml = "[template]\nmin_pages = 2\n";
    crawl_learning(&dirs, &[o.url("/start")], toml, Default::default()).await;
    let store = dirs.store();
    let urls = stored_urls(&store);
    assert!(urls.len() >= 6, "{urls:?}");
    for u in &urls {
        assert!(!u.contains("secret") && !u.contains('@'), "{u}");
    }
    for e in std::fs::read_dir(dirs.out()).unwrap() {
        let index = std::fs::read_to_string(e.unwrap().path().join("index.tsv")).unwrap();
        assert!(!index.contains("secret"), "{index}");
    }
    drop(store);
    let o = thresher(&["export", "--data", arg(&dirs.data()), "-q"]);
    let jsonl = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && jsonl.lines().count() >= 6, "{jsonl}");
    assert!(!jsonl.contains("secret"), "{jsonl}");
}
