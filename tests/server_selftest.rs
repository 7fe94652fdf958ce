//! Tests of the test server itself (tests/support) with a plain reqwest client and raw sockets:
//! here the log, counters, routing and origins; every endpoint kind in `endpoints`; the fixture
//! sites, the news-site generator and the stand-in crawler in `fixtures`. Bounds are tolerant
//! and timeouts short: CI runs this on 2 cores.

mod endpoints;
mod fixtures;

use std::io::{Read, Write};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use crate::support::sites;
use crate::support::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn get(url: &str) -> reqwest::Response {
    client().get(url).send().await.expect("request")
}

fn no_redirects() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .build()
        .unwrap()
}

/// Send a raw HTTP/1.1 GET and read until the server closes or resets: (bytes, error kind).
async fn raw_get(o: &Origin, target: &str) -> (Vec<u8>, Option<std::io::ErrorKind>) {
    let mut s = tokio::net::TcpStream::connect(o.addr()).await.unwrap();
    let req = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        o.host_port()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await {
            Err(_) => panic!("raw read timed out"),
            Ok(Ok(0)) => return (got, None),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => return (got, Some(e.kind())),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The server: log, counters, routing, origins.

#[tokio::test]
async fn logs_each_request_with_method_target_host_agent_and_status() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/a", Endpoint::html("<p>a</p>"));
    let resp = client()
        .get(o.url("/a?x=1"))
        .header("user-agent", "probe/1")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(resp.text().await.unwrap(), "<p>a</p>");
    assert_eq!(get(&o.url("/missing")).await.status(), 404);

    let log = o.log();
    assert_eq!(log.len(), 2);
    let h = &log[0];
    assert_eq!(
        (h.method.as_str(), h.target.as_str(), h.path()),
        ("GET", "/a?x=1", "/a")
    );
    assert_eq!(h.host.as_deref(), Some(o.host_port().as_str()));
    assert_eq!(h.user_agent.as_deref(), Some("probe/1"));
    assert_eq!((h.status, log[1].status), (Some(200), Some(404)));
    assert!(log[0].seq < log[1].seq && log[0].at <= log[1].at);
    assert_eq!((o.hits("/a?x=1"), o.hits("/a"), o.total_hits()), (1, 0, 2));
    assert_eq!(server.hits_url(&o.url("/a?x=1")), 1);
}

#[tokio::test]
async fn routes_match_exact_target_then_path_then_longest_prefix() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.serve(
        Site::new()
            .page("/p", "path")
            .page("/p?q=1", "exact")
            .prefix("/pre/", Endpoint::html("short"))
            .prefix("/pre/long/", Endpoint::html("long")),
    );
    for (target, want) in [
        ("/p?q=1", "exact"),
        ("/p?q=2", "path"),
        ("/p", "path"),
        ("/pre/x", "short"),
        ("/pre/long/x?y", "long"),
    ] {
        assert_eq!(
            get(&o.url(target)).await.text().await.unwrap(),
            want,
            "{target}"
        );
    }
    assert_eq!(get(&o.url("/nope")).await.status(), 404);
    o.set_fallback(Endpoint::status(410));
    assert_eq!(get(&o.url("/nope")).await.status(), 410);
    assert_eq!(o.hits("/nope"), 2);
}

#[tokio::test]
async fn origins_are_separate_ports_and_another_loopback_address_is_another_host() {
    let server = TestServer::start_on(&["127.0.0.1", "127.0.0.1", "127.0.0.2"]);
    let ports: std::collections::HashSet<u16> = server.origins().iter().map(Origin::port).collect();
    assert_eq!(ports.len(), 3);
    assert_eq!(server.origin(2).addr().ip().to_string(), "127.0.0.2");
    for (i, o) in server.origins().iter().enumerate() {
        o.mount("/", Endpoint::html(format!("origin {i}")));
    }
    for (i, o) in server.origins().iter().enumerate() {
        assert_eq!(
            get(&o.url("/")).await.text().await.unwrap(),
            format!("origin {i}")
        );
        assert_eq!(o.total_hits(), 1);
    }
    // Same socket, other host name: counted apart by its Host header.
    let a = server.origin(0);
    assert_eq!(get(&a.url_as("localhost", "/")).await.status(), 200);
    assert_eq!(a.hits("/"), 2);
    assert_eq!(server.hits_url(&a.url("/")), 1);
    assert_eq!(server.hits_url(&a.url_as("localhost", "/")), 1);
    assert_eq!(server.total_hits(), 4);
}

#[tokio::test]
async fn in_flight_peak_gaps_and_connections_are_measured_server_side() {
    let server = TestServer::start(2);
    let (a, b) = (server.origin(0), server.origin(1));
    a.set_latency(ms(150));
    a.mount("/slow", Endpoint::html("s"));
    let c = client();
    let (r1, r2) = tokio::join!(c.get(a.url("/slow")).send(), c.get(a.url("/slow")).send());
    assert!(r1.is_ok() && r2.is_ok());
    assert_eq!(
        a.max_in_flight(),
        2,
        "two concurrent requests overlap on the server"
    );
    assert_eq!(a.in_flight(), 0);
    assert_eq!(a.connections(), 2);

    b.mount("/x", Endpoint::html("x"));
    for _ in 0..3 {
        c.get(b.url("/x"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        tokio::time::sleep(ms(60)).await;
    }
    assert_eq!(b.max_in_flight(), 1, "sequential requests never overlap");
    assert_eq!(b.connections(), 1, "keep-alive reuses the connection");
    let gaps = b.gaps();
    assert_eq!(gaps.len(), 2);
    assert!(b.min_gap().unwrap() >= ms(55), "{gaps:?}");
    assert_eq!(b.pairs_closer_than(ms(55)), 0);
    assert_eq!(b.pairs_closer_than(ms(10_000)), 2);
    assert_eq!(b.bytes_served(), 3);
}

#[tokio::test(start_paused = true)]
async fn paused_time_drives_server_delays_and_timestamps() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount(
        "/late",
        Endpoint::slow_first_byte(Duration::from_secs(30), Endpoint::html("late")),
    );
    o.mount("/now", Endpoint::html("now"));
    let real = std::time::Instant::now();
    let virt = Instant::now();
    assert_eq!(get(&o.url("/late")).await.text().await.unwrap(), "late");
    assert!(Instant::now() - virt >= Duration::from_secs(30));
    tokio::time::sleep(Duration::from_secs(5)).await;
    get(&o.url("/now")).await;
    assert!(
        o.min_gap().unwrap() >= Duration::from_secs(35),
        "{:?}",
        o.gaps()
    );
    assert!(
        real.elapsed() < Duration::from_secs(10),
        "virtual, not real, seconds"
    );
}

#[tokio::test]
async fn completed_flags_tell_finished_responses_from_abandoned_ones() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/ok", Endpoint::html("ok"));
    o.mount("/tarpit", Endpoint::tarpit());
    o.mount("/reset", Endpoint::reset_mid_body(100, 1000));
    o.mount("/endless", Endpoint::endless());
    get(&o.url("/ok")).await.bytes().await.unwrap();
    let _ = client().get(o.url("/tarpit")).timeout(ms(100)).send().await;
    let _ = get(&o.url("/reset")).await.bytes().await;
    let mut r = get(&o.url("/endless")).await;
    r.chunk().await.unwrap();
    drop(r);
    let log = o.log();
    assert!(log[0].completed);
    assert_eq!(o.incomplete(), ["/tarpit", "/reset", "/endless"]);
}

#[test]
fn fixture_and_bench_configs_are_valid_thresher_configs() {
    use thresher::config::Config;
    let path = std::path::Path::new("fixture.toml");
    let c = Config::from_toml_str(sites::HOSTILE_CONFIG, path).unwrap();
    assert_eq!(c.fetch.first_byte_timeout, ms(500));
    assert_eq!(c.fetch.max_retries, 1);
    let c = Config::from_toml_str(&bench_config(200, Some(false)), path).unwrap();
    assert!(!c.template.inline);
    assert_eq!(c.crawl.max_pages_per_host, 410);
    let c = Config::from_toml_str(&bench_config(200, None), path).unwrap();
    assert!(c.template.inline, "default kept");
}

#[tokio::test]
async fn wait_until_wakes_on_hits_and_times_out() {
    let server = TestServer::start(1);
    let o = server.origin(0).clone();
    o.mount("/", Endpoint::html("x"));
    let url = o.url("/");
    tokio::spawn(async move {
        tokio::time::sleep(ms(50)).await;
        for _ in 0..3 {
            get(&url).await;
        }
    });
    assert!(
        server
            .wait_until(Duration::from_secs(5), |s| s.total_hits() >= 3)
            .await
    );
    assert!(!o.wait_until(ms(50), |o| o.hits("/") >= 4).await);
}

#[test]
fn a_background_server_serves_sync_code() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    o.mount("/sync", Endpoint::text("hello"));
    let mut s = std::net::TcpStream::connect(o.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /sync HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 200") && out.ends_with("hello"),
        "{out}"
    );
    assert_eq!(o.hits("/sync"), 1);
}
