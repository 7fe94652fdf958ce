//! Page budgets (`crawl.max_pages_per_host`) in a crawl of many hosts: the URLs beyond a host's
//! budget are over budget, counted per host, apart from the queue; the summary names a few
//! hosts and counts the rest; a run with the same budget fetches nothing more, and one with a
//! larger budget takes them up.

use std::process::Command;

use crate::support::{thresher_bin, write_config, write_seeds, Endpoint, Origin, TestServer};

/// Hosts in the crawl: more than the summary names (5).
const HOSTS: usize = 8;
/// Pages each home page links to.
const LINKED: usize = 4;

/// `/` links to `/p0`…`/p3`.
fn mount_site(o: &Origin) {
    let links: String = (0..LINKED)
        .map(|i| format!("<li><a href=\"/p{i}\">p{i}</a></li>"))
        .collect();
    o.mount(
        "/",
        Endpoint::html(format!("<html><body><ul>{links}</ul></body></html>")),
    );
    for i in 0..LINKED {
        o.mount(
            &format!("/p{i}"),
            Endpoint::html(format!(
                "<html><body><p>page {i} of its own</p></body></html>"
            )),
        );
    }
}

/// `thresher crawl` of every origin's `/` in `dir` with `crawl.max_pages_per_host = budget`;
/// its stderr (the summary), after checking it succeeded.
fn crawl(dir: &std::path::Path, server: &TestServer, budget: u64) -> String {
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let seeds = write_seeds(dir, &seeds);
    let config = write_config(dir, "[crawl]\ndelay = \"0ms\"\n");
    let out = super::cli::crawl_cmd(dir, &seeds, &config)
        .args(["--set", &format!("crawl.max_pages_per_host={budget}")])
        .output()
        .expect("run thresher crawl");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// `thresher status` of `dir`'s data: its text, and its JSON.
fn status(dir: &std::path::Path) -> (String, serde_json::Value) {
    let run = |json: bool| {
        let mut c = Command::new(thresher_bin());
        c.current_dir(dir)
            .arg("status")
            .arg("--data")
            .arg(dir.join("data"));
        if json {
            c.arg("--json");
        }
        let out = c.output().expect("run thresher status");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let json = serde_json::from_str(&run(true)).expect("status JSON");
    (run(false), json)
}

fn server() -> TestServer {
    let server = TestServer::background(HOSTS, 2);
    for o in server.origins() {
        mount_site(o);
    }
    server
}

/// Regression: a broad crawl with a per-host budget printed one "Left queued:
/// max_pages_per_host (10) reached for …" line per host (10,000 lines), and left its URLs
/// "still queued" for a resume that never fetched them.
#[test]
fn hosts_over_budget_are_counted_apart_from_the_queue_and_summed_up_in_a_few_lines() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl(dir.path(), &server, 1);
    let over = (HOSTS * LINKED) as u64;
    assert!(
        summary.contains(&format!(
            "Over budget: {over} URLs of {HOSTS} hosts that reached crawl.max_pages_per_host (1)"
        )),
        "{summary}"
    );
    // Five hosts named, the rest counted; nothing per host beyond that.
    let named = summary.lines().filter(|l| l.ends_with(" URLs")).count();
    assert_eq!(named, 5, "{summary}");
    assert!(
        summary.contains(&format!("… and {} more (thresher status", HOSTS - 5)),
        "{summary}"
    );
    assert!(!summary.contains("Left queued"), "{summary}");
    assert!(!summary.contains("still queued"), "{summary}");
    assert!(summary.lines().count() <= 12, "{summary}");
    for o in server.origins() {
        assert_eq!(o.hits("/"), 1);
        assert_eq!(
            (0..LINKED)
                .map(|i| o.hits(&format!("/p{i}")))
                .sum::<usize>(),
            0
        );
    }

    // `status` shows them apart from the queue, per host too.
    let (text, json) = status(dir.path());
    assert_eq!(json["queued"], 0, "{text}");
    assert_eq!(json["over_budget"], over, "{text}");
    assert_eq!(json["over_budget_hosts"], HOSTS as u64, "{text}");
    assert_eq!(json["budget"], 1, "{text}");
    for h in json["hosts"].as_array().expect("hosts") {
        assert_eq!(h["over_budget"], LINKED as u64, "{h}");
        assert_eq!(h["queued"], 0, "{h}");
    }
    assert!(
        text.contains(&format!("Over budget: {over} URLs of {HOSTS} hosts")),
        "{text}"
    );
    assert!(text.contains("queued: 0"), "{text}");

    // The same budget again: nothing to fetch, not even robots.txt, and the same account.
    let before: usize = server.origins().iter().map(Origin::total_hits).sum();
    let again = crawl(dir.path(), &server, 1);
    let after: usize = server.origins().iter().map(Origin::total_hits).sum();
    assert_eq!(after, before, "{again}");
    assert!(
        again.contains(&format!("Over budget: {over} URLs of {HOSTS} hosts")),
        "{again}"
    );
    assert_eq!(status(dir.path()).1["over_budget"], over);
}

#[test]
fn a_run_with_a_larger_budget_fetches_the_urls_left_over_budget() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    crawl(dir.path(), &server, 1);
    assert_eq!(status(dir.path()).1["over_budget"], (HOSTS * LINKED) as u64);

    let summary = crawl(dir.path(), &server, 10);
    assert!(!summary.contains("Over budget"), "{summary}");
    for o in server.origins() {
        for i in 0..LINKED {
            assert_eq!(o.hits(&format!("/p{i}")), 1, "{summary}");
        }
    }
    let (text, json) = status(dir.path());
    assert_eq!(json["over_budget"], 0, "{text}");
    assert_eq!(json["queued"], 0, "{text}");
    assert_eq!(json["pages"], (HOSTS * (LINKED + 1)) as u64, "{text}");
    assert!(!text.contains("Over budget"), "{text}");
}
