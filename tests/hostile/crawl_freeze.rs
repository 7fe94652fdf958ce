//! Issue 10, critical: one unreachable origin froze the whole crawl at 100 % CPU. The scheduler
//! held a disallowed origin until its robots.txt retry time, then `dispatch_ready` put it back at
//! its (past) politeness time and dispatched it again, for ever, without yielding. Triggered by
//! a port where nothing listens, robots.txt answering 5xx/429, resets, no answer, a slow drip,
//! and an in-scope https:// link to an http-only host. Each test crawls such an origin beside
//! healthy sites: the healthy ones are crawled fully, the run ends, and the summary names the
//! origin set aside with the URLs it keeps queued.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::crawl_support::{assert_fully_crawled, crawl_bounded, dead_origin, healthy, Ran};
use crate::crawl::Dirs;
use crate::support::{thresher_bin, write_config, write_seeds, Endpoint, TestServer};

/// Generous: these crawls take about a second when nothing freezes (robots retries 200 ms
/// apart, three retries).
const LIMIT: Duration = Duration::from_secs(60);

/// The one origin set aside in `ran`, checked for its key, its queued URLs and `why`.
fn assert_set_aside(ran: &Ran, origin: &str, queued: u64, why: &str) {
    let s = &ran.summary;
    let origin = origin.trim_end_matches('/');
    let w = s
        .set_aside
        .iter()
        .find(|w| w.origin == origin)
        .unwrap_or_else(|| panic!("{origin} not named in the summary: {s:#?}"));
    assert_eq!(w.queued, queued, "{w:?}");
    assert!(w.reason.contains(why), "{why:?} in {:?}", w.reason);
    assert!(w.until_ms.is_none(), "set aside, not waiting: {w:?}");
    assert!(s.queued_left >= queued, "{s:#?}");
    // The wait was published where progress and status read it.
    assert!(
        ran.stats.waits().iter().any(|w| w.origin == origin),
        "{:?}",
        ran.stats.waits()
    );
    // The scheduler slept while it waited: a few turns per request and per retry, not millions.
    let turns = ran.stats.loop_turns.load(Relaxed);
    let dispatches = ran.stats.dispatches.load(Relaxed);
    assert!(
        turns < 5_000 && dispatches < 5_000,
        "{turns} scheduler loop turns, {dispatches} dispatches: it spins"
    );
}

#[test]
fn unreachable_origin_does_not_freeze_crawl() {
    let server = TestServer::background(2, 1);
    let (a, b) = (server.origin(0), server.origin(1));
    let (site_a, site_b) = (healthy(a, 1, 40), healthy(b, 2, 40));
    let dead = dead_origin();
    let dirs = Dirs::new();
    let ran = crawl_bounded(&dirs, &[dead.clone(), a.url("/"), b.url("/")], "", LIMIT);
    assert_fully_crawled(&site_a, a);
    assert_fully_crawled(&site_b, b);
    assert_set_aside(&ran, &dead, 1, "robots.txt unreachable: connect failed");
    assert_eq!(ran.summary.errors, 0, "{:#?}", ran.summary);
}

#[test]
fn unreachable_origin_never_delays_the_others() {
    // The waiting origin's retry is 3 s away; the healthy sites need a fraction of that. Before
    // the fix the scheduler spun until the retry time and handled no other origin meanwhile.
    let server = TestServer::background(3, 1);
    let (bad, a, b) = (server.origin(0), server.origin(1), server.origin(2));
    healthy(bad, 8, 10);
    bad.mount("/robots.txt", Endpoint::status(503));
    let (site_a, site_b) = (healthy(a, 9, 30), healthy(b, 10, 30));
    let dirs = Dirs::new();
    let toml = "[robots]\nerror_retry = \"3s\"\nunreachable_retries = 1\n";
    let ran = crawl_bounded(&dirs, &[bad.url("/"), a.url("/"), b.url("/")], toml, LIMIT);
    assert_fully_crawled(&site_a, a);
    assert_fully_crawled(&site_b, b);
    assert_set_aside(&ran, &bad.base(), 1, "HTTP 503");
    let retry = bad.log()[1].wall;
    let last_healthy = a.log().into_iter().chain(b.log()).map(|h| h.wall).max();
    assert!(
        last_healthy.is_some_and(|t| t < retry),
        "the healthy sites were still being crawled when the waiting origin was retried"
    );
}

/// robots.txt answers `endpoint` on one origin (whose pages are fine); two healthy sites beside.
fn robots_failure_beside_healthy_sites(endpoint: Endpoint, toml: &str, why: &str) {
    let server = TestServer::background(3, 1);
    let (bad, a, b) = (server.origin(0), server.origin(1), server.origin(2));
    healthy(bad, 3, 10);
    bad.mount("/robots.txt", endpoint);
    let (site_a, site_b) = (healthy(a, 4, 30), healthy(b, 5, 30));
    let dirs = Dirs::new();
    let ran = crawl_bounded(&dirs, &[bad.url("/"), a.url("/"), b.url("/")], toml, LIMIT);
    assert_fully_crawled(&site_a, a);
    assert_fully_crawled(&site_b, b);
    assert_set_aside(&ran, &bad.base(), 1, why);
    // Nothing but robots.txt was asked of it: 1 try + 3 retries (robots.unreachable_retries).
    assert_eq!(bad.hits_prefix("/robots.txt"), 4, "{:?}", bad.hit_counts());
    assert_eq!(bad.total_hits(), 4, "{:?}", bad.hit_counts());
}

#[test]
fn robots_503_does_not_freeze_crawl() {
    robots_failure_beside_healthy_sites(Endpoint::status(503), "", "HTTP 503");
}

#[test]
fn robots_500_does_not_freeze_crawl() {
    robots_failure_beside_healthy_sites(Endpoint::status(500), "", "HTTP 500");
}

#[test]
fn robots_429_does_not_freeze_crawl() {
    robots_failure_beside_healthy_sites(Endpoint::status(429), "", "HTTP 429");
}

#[test]
fn robots_connection_reset_does_not_freeze_crawl() {
    // The reset reaches the client while it reads the headers or the body, depending on
    // timing ("connection failed while reading" or "body does not decode: Connection reset"):
    // both are the origin's robots.txt being unreachable.
    robots_failure_beside_healthy_sites(
        Endpoint::reset_mid_body(10, 1000),
        "",
        "robots.txt unreachable: ",
    );
}

#[test]
fn robots_no_answer_does_not_freeze_crawl() {
    robots_failure_beside_healthy_sites(
        Endpoint::tarpit(),
        "[fetch]\nfirst_byte_timeout = \"300ms\"\n",
        "robots.txt unreachable: no response headers within",
    );
}

#[test]
fn robots_slow_drip_does_not_freeze_crawl() {
    robots_failure_beside_healthy_sites(
        Endpoint::trickle(Duration::from_millis(50)),
        "[fetch]\ntotal_timeout = \"400ms\"\n",
        "robots.txt unreachable: response not complete within",
    );
}

#[test]
fn https_link_to_http_only_host_does_not_freeze_crawl() {
    let server = TestServer::background(2, 1);
    let (a, b) = (server.origin(0), server.origin(1));
    let (site_a, site_b) = (healthy(a, 6, 30), healthy(b, 7, 30));
    // In scope (http and https of a seed host are one site), but `a` speaks only plain HTTP.
    let https = format!("https://{}", a.host_port());
    a.mount(
        "/hostile",
        Endpoint::html(format!(
            "<!doctype html><title>x</title><a href=\"{https}/secure\">secure</a>"
        )),
    );
    let dirs = Dirs::new();
    let ran = crawl_bounded(
        &dirs,
        &[a.url("/"), a.url("/hostile"), b.url("/")],
        "",
        LIMIT,
    );
    if let Err(e) = site_a.check_fetched_once(a, &["/robots.txt", "/hostile"]) {
        panic!("{} not fully crawled:\n{e}", a.base());
    }
    assert_fully_crawled(&site_b, b);
    assert_set_aside(&ran, &https, 1, "robots.txt unreachable: connect failed");
}

#[test]
fn unreachable_seed_run_ends_with_a_summary_naming_it() {
    // The README's first command on a machine that cannot reach a seed ran for 15 minutes on
    // one busy core, saying "errors 0" and nothing about why. Now: the run ends, the summary
    // names the origin and what it keeps queued, and `status` shows it too.
    let server = TestServer::background(1, 1);
    let a = server.origin(0);
    let site = healthy(a, 11, 20);
    let dead = dead_origin();
    let dir = tempfile::tempdir().expect("temp dir");
    let seeds = write_seeds(dir.path(), &[dead.clone(), a.url("/")]);
    let config = write_config(
        dir.path(),
        "[crawl]\ndelay = \"0ms\"\n[robots]\nerror_retry = \"200ms\"\n",
    );
    let mut child = std::process::Command::new(thresher_bin())
        .arg("crawl")
        .arg("--seeds")
        .arg(&seeds)
        .arg("--data")
        .arg(dir.path().join("data"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--config")
        .arg(&config)
        .arg("--quiet")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start thresher");
    let deadline = std::time::Instant::now() + LIMIT;
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("thresher crawl did not end within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_fully_crawled(&site, a);
    let dead = dead.trim_end_matches('/');
    assert!(
        stderr
            .contains("1 origin unreachable or set aside; it keeps 1 URL queued for the next run"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{dead} — robots.txt unreachable: connect failed")),
        "{stderr}"
    );
    let status = std::process::Command::new(thresher_bin())
        .args(["status", "--data"])
        .arg(dir.path().join("data"))
        .output()
        .expect("status");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("Origins waiting or set aside"), "{text}");
    assert!(text.contains(dead), "{text}");
}
