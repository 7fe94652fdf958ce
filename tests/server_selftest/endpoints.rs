//! Every endpoint kind: sequences with Retry-After, redirects, tarpit, slow first byte, trickle,
//! endless, sized, gzip bomb, reset mid-body, blobs.

use std::io::Read;
use std::time::Duration;

use tokio::time::Instant;

use super::{client, get, ms, no_redirects, raw_get};
use crate::support::*;

#[tokio::test]
async fn sequences_give_429_with_retry_after_then_200() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount(
        "/busy",
        Endpoint::fail_first(2, Endpoint::retry_after(429, 7), Endpoint::html("ok")),
    );
    o.mount(
        "/date",
        Endpoint::retry_after_date(503, Duration::from_secs(120)).with_header("x-fixture", "1"),
    );
    for _ in 0..2 {
        let r = get(&o.url("/busy")).await;
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "7");
    }
    assert_eq!(get(&o.url("/busy")).await.status(), 200);
    assert_eq!(get(&o.url("/busy")).await.status(), 200);
    let r = get(&o.url("/date")).await;
    assert_eq!(
        (
            r.status().as_u16(),
            r.headers()["x-fixture"].to_str().unwrap()
        ),
        (503, "1")
    );
    let when = httpdate::parse_http_date(r.headers()["retry-after"].to_str().unwrap()).unwrap();
    let ahead = when.duration_since(std::time::SystemTime::now()).unwrap();
    assert!(
        ahead > Duration::from_secs(100) && ahead <= Duration::from_secs(120),
        "{ahead:?}"
    );
    let statuses: Vec<_> = o.requests_to("/busy").iter().map(|h| h.status).collect();
    assert_eq!(statuses, [Some(429), Some(429), Some(200), Some(200)]);
}

#[tokio::test]
async fn redirects_chain_and_loop() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/r", Endpoint::redirect(308, "/t"));
    o.mount("/t", Endpoint::html("t"));
    o.mount("/loop/a", Endpoint::redirect(302, "/loop/b"));
    o.mount("/loop/b", Endpoint::redirect(302, "/loop/a"));
    let r = no_redirects().get(o.url("/r")).send().await.unwrap();
    assert_eq!(
        (
            r.status().as_u16(),
            r.headers()["location"].to_str().unwrap()
        ),
        (308, "/t")
    );
    assert_eq!(get(&o.url("/r")).await.text().await.unwrap(), "t");
    let looped = client().get(o.url("/loop/a")).send().await;
    assert!(looped.is_err(), "reqwest gives up on a loop");
    let n = o.hits("/loop/a") + o.hits("/loop/b");
    assert!((2..=12).contains(&n), "{n}");
}

#[tokio::test]
async fn tarpit_never_answers_and_is_released_when_the_client_leaves() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/tarpit", Endpoint::tarpit());
    let started = Instant::now();
    let err = client()
        .get(o.url("/tarpit"))
        .timeout(ms(300))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(o.requests_to("/tarpit")[0].status, None);
    // The client closed its socket; hyper notices and drops the pending request.
    let deadline = Instant::now() + Duration::from_secs(3);
    while o.in_flight() > 0 && Instant::now() < deadline {
        tokio::time::sleep(ms(20)).await;
    }
    assert_eq!(
        o.in_flight(),
        0,
        "tarpit request still counted after the client left"
    );
}

#[tokio::test]
async fn slow_first_byte_and_trickle() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount(
        "/slow",
        Endpoint::slow_first_byte(ms(200), Endpoint::html("late")),
    );
    o.mount("/trickle", Endpoint::trickle(ms(40)));
    let t = Instant::now();
    assert_eq!(get(&o.url("/slow")).await.text().await.unwrap(), "late");
    assert!(t.elapsed() >= ms(190));

    let t = Instant::now();
    let mut r = get(&o.url("/trickle")).await;
    assert!(t.elapsed() < ms(1000), "headers come at once");
    assert!(r.headers().get("content-length").is_none());
    let mut got = 0;
    while got < 5 {
        got += r.chunk().await.unwrap().unwrap().len();
    }
    assert!(
        t.elapsed() >= ms(150),
        "one byte per interval: {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn endless_body_streams_until_the_client_stops() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/endless", Endpoint::endless());
    let mut r = get(&o.url("/endless")).await;
    assert!(r.headers().get("content-length").is_none());
    let mut got = 0usize;
    while got < 4 << 20 {
        got += r.chunk().await.unwrap().expect("never ends").len();
    }
    drop(r);
    assert!(o.bytes_served() >= 4 << 20);
    let deadline = Instant::now() + Duration::from_secs(3);
    while o.in_flight() > 0 && Instant::now() < deadline {
        tokio::time::sleep(ms(20)).await;
    }
    assert_eq!(o.in_flight(), 0);
}

#[tokio::test]
async fn sized_body_declares_and_sends_exactly_its_length() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/huge", Endpoint::sized(20 << 20));
    let r = get(&o.url("/huge")).await;
    assert_eq!(r.content_length(), Some(20 << 20));
    let body = r.bytes().await.unwrap();
    assert_eq!(body.len(), 20 << 20);
    assert!(body.starts_with(b"<p>"));
}

#[tokio::test]
async fn gzip_bomb_is_small_and_inflates_to_a_gibibyte_of_html() {
    let started = std::time::Instant::now();
    let bomb = blobs::gzip_bomb();
    eprintln!(
        "gzip bomb: {} bytes, built in {:?}",
        bomb.len(),
        started.elapsed()
    );
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    // The gzip trailer's ISIZE is the inflated length mod 2^32.
    let isize = u32::from_le_bytes(bomb[bomb.len() - 4..].try_into().unwrap());
    assert_eq!(u64::from(isize), blobs::BOMB_INFLATED % (1 << 32));

    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/bomb", Endpoint::gzip_bomb());
    let r = no_redirects().get(o.url("/bomb")).send().await.unwrap();
    assert_eq!(r.headers()["content-encoding"], "gzip");
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let raw = r.bytes().await.unwrap();
    assert_eq!(raw, bomb);
    // Inflate the first 8 MiB only.
    let mut head = Vec::new();
    flate2::read::GzDecoder::new(&raw[..])
        .take(8 << 20)
        .read_to_end(&mut head)
        .unwrap();
    assert_eq!(head.len(), 8 << 20);
    assert!(head.starts_with(blobs::BOMB_HEAD));
    assert!(head[blobs::BOMB_HEAD.len()..].iter().all(|&b| b == b' '));
}

#[tokio::test]
async fn reset_mid_body_sends_a_tcp_reset() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.mount("/reset", Endpoint::reset_mid_body(4096, 100_000));
    let (got, err) = raw_get(o, "/reset").await;
    assert_eq!(
        err,
        Some(std::io::ErrorKind::ConnectionReset),
        "got {} bytes",
        got.len()
    );
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200") && text.contains("content-length: 100000"));
    assert!(got.len() < 100_000);
    let err = get(&o.url("/reset")).await.bytes().await.unwrap_err();
    assert!(
        err.is_body() || err.is_decode() || err.is_request(),
        "{err}"
    );
}

#[tokio::test]
async fn non_html_and_charset_blobs() {
    let png = blobs::png("<a href=\"/x\">");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(blobs::pdf("").starts_with(b"%PDF-1.4"));
    let g = blobs::garbage(1, 1000);
    assert_eq!(g.len(), 1000);
    assert!(std::str::from_utf8(&g).is_err() && !g.contains(&b'<'));
    let gbk = blobs::encode("新闻", encoding_rs::GBK);
    assert_eq!(&gbk[..], b"\xD0\xC2\xCE\xC5");
}
