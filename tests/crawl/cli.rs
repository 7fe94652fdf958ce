//! The `thresher crawl` / `status` binaries: bad seeds, status output, Ctrl-C and kill -9.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{thresher_bin, write_config, write_seeds, NewsSite, SiteSpec, TestServer};

/// `thresher crawl` run in `dir`, its data and output under it, quiet, with `config`.
fn crawl_in(dir: &std::path::Path, config: &std::path::Path) -> Command {
    let mut c = crawl_loud(dir, config);
    c.arg("--quiet");
    c
}

/// `crawl_in` without `--quiet`: its log lines (warnings) are on stderr.
fn crawl_loud(dir: &std::path::Path, config: &std::path::Path) -> Command {
    let mut c = Command::new(thresher_bin());
    c.current_dir(dir)
        .arg("crawl")
        .arg("--data")
        .arg(dir.join("data"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--config")
        .arg(config);
    c
}

/// `crawl_in` with `--seeds seeds`.
pub(super) fn crawl_cmd(
    dir: &std::path::Path,
    seeds: &std::path::Path,
    config: &std::path::Path,
) -> Command {
    let mut c = crawl_in(dir, config);
    c.arg("--seeds").arg(seeds);
    c
}

/// One origin serving a one-line home page.
fn home_page_server() -> TestServer {
    let server = TestServer::background(1, 1);
    server.origin(0).mount(
        "/",
        crate::support::Endpoint::html("<p>home</p>".to_string()),
    );
    server
}

#[test]
fn bad_seed_lines_are_reported_with_line_numbers_and_skipped() {
    let server = home_page_server();
    let o = server.origin(0);
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        format!("# c\nftp://files.example\n{}\nnot a url\n", o.url("/")),
    )
    .unwrap();
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let out = crawl_cmd(dir.path(), &seeds, &config).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("seeds.txt:2:") && stderr.contains("ftp"),
        "{stderr}"
    );
    assert!(stderr.contains("seeds.txt:4:"), "{stderr}");
    assert_eq!(o.hits("/"), 1, "the good seed is crawled");

    let status = Command::new(thresher_bin())
        .args(["status", "--data"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(
        text.contains(&o.host_port()) && text.contains("Pages stored: 1"),
        "{text}"
    );
    assert!(text.contains("state finished"), "{text}");

    // The same report as JSON, for scripts (docs/status.md).
    let json = Command::new(thresher_bin())
        .args(["status", "--json", "--data"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(json.status.success());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("status --json is JSON");
    assert_eq!(v["pages"], 1, "{v}");
    assert_eq!(v["live"], false);
    assert_eq!(v["hosts"][0]["host"], o.host_port().as_str());
    assert_eq!(v["hosts"][0]["pages"], 1);
    assert_eq!(v["last_run"]["state"], "finished");
}

/// `out` is a command that exited 0 (its stderr shown when not).
fn assert_succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 11: `status` on a 1M-page store took 4.9 s cold, most of it sled opening its log. A
/// finished crawl's report is kept with the store's stamp and shown again without opening the
/// store, until anything opens the store (then it is read afresh).
#[test]
fn status_shows_the_closed_report_until_the_store_is_opened_again() {
    let server = home_page_server();
    let o = server.origin(0);
    let dir = tempfile::tempdir().unwrap();
    let seeds = write_seeds(dir.path(), &[o.url("/")]);
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let out = crawl_cmd(dir.path(), &seeds, &config).output().unwrap();
    assert_succeeded(&out);
    let data = dir.path().join("data");
    let pages = |data: &std::path::Path| {
        let out = Command::new(thresher_bin())
            .args(["status", "--json", "--data"])
            .arg(data)
            .output()
            .unwrap();
        assert_succeeded(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["pages"].as_u64().unwrap()
    };
    assert_eq!(pages(&data), 1);

    // The kept report is what `status` shows: a changed copy of it, same stamp, shows through.
    let snapshot = data.join("status.json");
    let mut kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
    assert!(kept["closed"]["stamp"].is_u64(), "{kept}");
    kept["pages"] = 77.into();
    std::fs::write(&snapshot, serde_json::to_vec(&kept).unwrap()).unwrap();
    assert_eq!(
        pages(&data),
        77,
        "the closed report, without opening the store"
    );

    // Any open of the store starts a new stamp: the kept report is stale and the store is read.
    drop(thresher::store::Store::open_existing(&data, 1 << 20).unwrap());
    assert_eq!(pages(&data), 1, "read again from the store");
}

#[test]
fn a_run_with_only_bad_seeds_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "mailto:x@y\n").unwrap();
    let config = write_config(dir.path(), "");
    let out = crawl_cmd(dir.path(), &seeds, &config).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no valid seed URLs"));
}

#[test]
fn set_overrides_any_config_key_and_rejects_unknown_ones() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    let links: String = (0..5).map(|i| format!("<a href=/p{i}>p{i}</a>")).collect();
    o.mount("/", crate::support::Endpoint::html(links));
    for i in 0..5 {
        o.mount(
            &format!("/p{i}"),
            crate::support::Endpoint::html(format!("<p>page {i}</p>")),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let seeds = write_seeds(dir.path(), &[o.url("/")]);
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    // A key no flag has: the per-host limit stops the crawl after 3 pages.
    let out = crawl_cmd(dir.path(), &seeds, &config)
        .args(["--set", "crawl.max_pages_per_host=3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let pages: usize = (0..5).map(|i| o.hits(&format!("/p{i}"))).sum::<usize>() + o.hits("/");
    assert_eq!(pages, 3, "{stderr}");
    // An unknown key fails before anything is fetched, naming the flag.
    let before = o.total_hits();
    let out = crawl_cmd(dir.path(), &seeds, &config)
        .args(["--set", "crawl.max_pages_per_hots=3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--set crawl.max_pages_per_hots") && stderr.contains("unknown"),
        "{stderr}"
    );
    assert_eq!(o.total_hits(), before);
}

/// `thresher crawl` in `dir` with delay 0 and `args` (no `--seeds`).
fn crawl_with(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let config = write_config(dir, "[crawl]\ndelay = \"0ms\"\n");
    crawl_in(dir, &config).args(args).output().unwrap()
}

#[test]
fn urls_on_the_command_line_are_seeds_and_a_sitemap_url_is_read_as_one() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    o.mount(
        "/",
        crate::support::Endpoint::html("<p>home</p>".to_string()),
    );
    // Pages linked from nowhere, listed only in the sitemap.
    let mut urls = String::new();
    for i in 0..3 {
        o.mount(
            &format!("/hidden{i}"),
            crate::support::Endpoint::html(format!("<p>hidden {i}</p>")),
        );
        urls.push_str(&format!(
            "<url><loc>{}</loc></url>",
            o.url(&format!("/hidden{i}"))
        ));
    }
    o.mount(
        "/sitemap.xml",
        crate::support::Endpoint::typed("application/xml", format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
        )),
    );
    let dir = tempfile::tempdir().unwrap();
    // No seeds.txt in the working directory: the URLs are the seeds.
    let out = crawl_with(dir.path(), &[&o.url("/"), &o.url("/sitemap.xml")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(o.hits("/"), 1);
    assert_eq!(o.hits("/sitemap.xml"), 1);
    for i in 0..3 {
        assert_eq!(o.hits(&format!("/hidden{i}")), 1, "{stderr}");
    }
    // A bad URL argument is an error before anything is fetched.
    let before = o.total_hits();
    let dir = tempfile::tempdir().unwrap();
    let out = crawl_with(dir.path(), &["ftp://files.example/"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ftp://files.example/"), "{stderr}");
    assert_eq!(o.total_hits(), before);
}

#[test]
fn exclude_adds_to_the_defaults_and_headers_and_cookies_are_sent() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    o.mount(
        "/",
        crate::support::Endpoint::html(
            "<a href=/keep>k</a><a href=/private/x>p</a><a href=/img.png>i</a>".to_string(),
        ),
    );
    for p in ["/keep", "/private/x", "/img.png"] {
        o.mount(p, crate::support::Endpoint::html(format!("<p>{p}</p>")));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = crawl_with(
        dir.path(),
        &[
            &o.url("/"),
            "--exclude",
            "/private/",
            "--header",
            "X-Corpus: test-run",
            "--cookie",
            "session=abc",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(o.hits("/keep"), 1);
    assert_eq!(o.hits("/private/x"), 0, "--exclude");
    assert_eq!(o.hits("/img.png"), 0, "the default exclusions still apply");
    let hit = &o.requests_to("/keep")[0];
    assert_eq!(hit.headers.get("x-corpus").unwrap(), "test-run");
    assert_eq!(hit.headers.get("cookie").unwrap(), "session=abc");
}

#[test]
fn completions_and_man_page_come_from_the_flags() {
    let run = |args: &[&str]| Command::new(thresher_bin()).args(args).output().unwrap();
    let bash = run(&["completions", "bash"]);
    assert!(bash.status.success());
    let text = String::from_utf8_lossy(&bash.stdout);
    assert!(
        text.contains("--allow-host") && text.contains("export"),
        "{text}"
    );
    let man = run(&["man"]);
    assert!(man.status.success());
    let text = String::from_utf8_lossy(&man.stdout);
    assert!(
        text.starts_with(".ie") && text.contains(".SH NAME"),
        "{text}"
    );
}

/// Start a crawl of a 60-page site with 20 ms latency per page; returns the child.
fn start(dir: &std::path::Path, server: &TestServer, site: &NewsSite) -> std::process::Child {
    start_with(dir, server, site, "", &[])
}

/// `start`, with `toml` added to the config and `args` to the command line.
fn start_with(
    dir: &std::path::Path,
    server: &TestServer,
    site: &NewsSite,
    toml: &str,
    args: &[&std::ffi::OsStr],
) -> std::process::Child {
    let o = server.origin(0);
    o.serve(site.site());
    o.set_latency(Duration::from_millis(20));
    let seeds = write_seeds(dir, &[o.url("/")]);
    let config = write_config(dir, &format!("[crawl]\ndelay = \"0ms\"\n{toml}"));
    crawl_cmd(dir, &seeds, &config)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_hits(server: &TestServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.origin(0).total_hits() < n {
        assert!(Instant::now() < deadline, "crawl did not progress");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &std::process::Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig}");
}

fn finish(dir: &std::path::Path, server: &TestServer) {
    finish_with(dir, server, &[]);
}

/// `finish`, with `args` added to the command line.
fn finish_with(dir: &std::path::Path, server: &TestServer, args: &[&std::ffi::OsStr]) {
    let seeds = dir.join("seeds.txt");
    let config = dir.join("thresher.toml");
    let out = crawl_cmd(dir, &seeds, &config).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = server;
}

#[test]
fn ctrl_c_stops_gracefully_and_the_same_command_resumes() {
    let server = TestServer::background(1, 1);
    let site = NewsSite::generate(&SiteSpec::small(3, 60));
    let dir = tempfile::tempdir().unwrap();
    let child = start(dir.path(), &server, &site);
    wait_hits(&server, 15);
    signal(&child, "-INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("To resume: thresher crawl"), "{stderr}");
    assert!(server.origin(0).total_hits() < site.reachable().len() + 1);

    finish(dir.path(), &server);
    site.check_fetched_once(server.origin(0), &["/robots.txt"])
        .unwrap();
}

/// Issue 10: SIGTERM and SIGHUP exited at once (143 / 129) without the graceful path SIGINT
/// has. Each now stops like Ctrl-C: exit 0, the resume hint with the run's own flags, and the
/// same command then finishes with every page fetched once.
#[test]
fn sigterm_and_sighup_stop_gracefully_like_ctrl_c() {
    for sig in ["-TERM", "-HUP"] {
        let server = TestServer::background(1, 1);
        let site = NewsSite::generate(&SiteSpec::small(3, 60));
        let dir = tempfile::tempdir().unwrap();
        let child = start(dir.path(), &server, &site);
        wait_hits(&server, 15);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{sig}: {stderr}");
        assert!(stderr.contains("Interrupted after"), "{sig}: {stderr}");
        let out_dir = dir.path().join("out");
        assert!(
            stderr.contains("To resume: thresher crawl")
                && stderr.contains(&format!("--out {}", out_dir.display())),
            "{sig}: {stderr}"
        );
        assert!(server.origin(0).total_hits() < site.reachable().len() + 1);
        finish(dir.path(), &server);
        site.check_fetched_once(server.origin(0), &["/robots.txt"])
            .unwrap();
    }
}

/// Issue 10: error messages printed their cause twice ("X: X").
#[test]
fn an_error_says_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let missing = dir.path().join("no-such-seeds.txt");
    let out = crawl_cmd(dir.path(), &missing, &config).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read seeds file"), "{stderr}");
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn kill_9_loses_at_most_the_last_moments() {
    let server = TestServer::background(1, 1);
    let site = NewsSite::generate(&SiteSpec::small(5, 60));
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &server, &site);
    wait_hits(&server, 25);
    signal(&child, "-KILL");
    let _ = child.wait();
    let killed_at = tokio::time::Instant::now();
    let before = server.origin(0).log();

    finish(dir.path(), &server);
    let o = server.origin(0);
    // Everything reachable is fetched; a page is fetched again only if its first fetch was in
    // flight or not yet flushed to disk (the store flushes every FLUSH_EVERY_MS) at the kill.
    let window =
        Duration::from_millis(thresher::store::FLUSH_EVERY_MS) + Duration::from_millis(500);
    for (target, n) in o.duplicates() {
        let first = before
            .iter()
            .find(|h| h.target == target)
            .expect("fetched before");
        let age = killed_at.duration_since(first.at);
        assert!(
            target == "/robots.txt" || (n == 2 && age <= window),
            "{target}: {n} fetches, first {age:?} before the kill"
        );
    }
    let counts = o.hit_counts();
    for p in site.reachable() {
        assert!(counts.contains_key(&p), "{p} never fetched");
    }
}

/// `--warc-out` through a kill -9: the killed run's `.open` file (a torn record at its end, if
/// the kill fell inside a write) is cut to its last whole record and finished by the next run;
/// then every file reads back whole, and `clean --warc` of the set gives the crawl's text (so
/// no page the store kept is missing from the archive).
#[test]
fn kill_9_leaves_no_torn_warc_record_and_the_archive_stays_complete() {
    let server = TestServer::background(1, 1);
    let site = NewsSite::generate(&SiteSpec::small(6, 60));
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("warc");
    let flag = [std::ffi::OsStr::new("--warc-out"), warc.as_os_str()];
    // Small files: the kill comes after some rotations.
    let mut child = start_with(
        dir.path(),
        &server,
        &site,
        "warc_file_bytes = 40000\n",
        &flag,
    );
    wait_hits(&server, 30);
    signal(&child, "-KILL");
    let _ = child.wait();
    let killed = format!("-{}-", child.id());
    let names = |suffix: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(&warc)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect();
        v.sort();
        v
    };
    assert!(
        names(".warc.gz").len() + names(".warc.gz.open").len() > 0,
        "the killed run wrote WARC data"
    );
    for f in names(".warc.gz") {
        for r in thresher::warc::open(&f).unwrap() {
            r.unwrap_or_else(|e| panic!("a finished file is whole: {}: {e}", f.display()));
        }
    }

    // The killed run's open file, with a record whose write was cut short added to its end
    // (the kill itself rarely lands inside a write): the next run cuts exactly that off.
    let torn = names(".warc.gz.open").pop().map(|f| {
        let whole = std::fs::metadata(&f).unwrap().len();
        let member = thresher::warc::write::gzip_record(
            &[("WARC-Type", "resource")],
            &[b"a record the kill cut short"],
            flate2::Compression::fast(),
        );
        let mut file = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
        std::io::Write::write_all(&mut file, &member[..member.len() / 2]).unwrap();
        (f, whole)
    });
    finish_with(dir.path(), &server, &flag);
    assert!(
        names(".warc.gz.open").is_empty(),
        "the leftover was finished"
    );
    match &torn {
        Some((open, whole)) => {
            let done = std::path::PathBuf::from(open.to_string_lossy().replace(".open", ""));
            assert_eq!(
                std::fs::metadata(&done).unwrap().len(),
                *whole,
                "the torn record, and only it, was cut off {}",
                done.display()
            );
        }
        None => eprintln!("the kill fell between two files: no open file to finish"),
    }
    let files = names(".warc.gz");
    assert!(
        files.iter().any(|f| f.to_string_lossy().contains(&killed)),
        "the killed run's files are kept: {files:?}"
    );
    let mut responses = 0;
    for f in &files {
        for r in thresher::warc::open(f).unwrap() {
            let r = r.unwrap_or_else(|e| panic!("no torn record: {}: {e}", f.display()));
            responses += usize::from(r.warc_type().as_deref() == Some("response"));
        }
    }
    assert!(responses > site.reachable().len(), "pages and robots.txt");
    let clean_out = dir.path().join("clean-out");
    let mut clean = Command::new(thresher_bin());
    clean
        .arg("clean")
        .arg("--out")
        .arg(&clean_out)
        .arg("--quiet");
    for f in &files {
        clean.arg("--warc").arg(f);
    }
    let cleaned = clean.output().unwrap();
    assert!(
        cleaned.status.success(),
        "{}",
        String::from_utf8_lossy(&cleaned.stderr)
    );
    let crawled = super::texts(&dir.path().join("out"));
    assert_eq!(crawled.len(), site.reachable().len());
    assert_eq!(crawled, super::texts(&clean_out));
}

/// A `--warc-out` that cannot be a directory stops the crawl before its first request, saying
/// why (a crawl that could not archive its pages would lose them from the archive for good).
#[test]
fn an_unusable_warc_dir_is_a_clear_error_before_any_request() {
    let server = home_page_server();
    let o = server.origin(0);
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("a-file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let seeds = write_seeds(dir.path(), &[o.url("/")]);
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let out = crawl_cmd(dir.path(), &seeds, &config)
        .arg("--warc-out")
        .arg(&not_a_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("WARC output") && stderr.contains(&not_a_dir.display().to_string()),
        "{stderr}"
    );
    assert_eq!(o.total_hits(), 0, "nothing fetched");
}

#[test]
fn detector_flag_selects_the_baseline_the_crawl_cleans_with() {
    let server = TestServer::background(1, 1);
    let site = NewsSite::generate(&SiteSpec::small(9, 30));
    let o = server.origin(0);
    o.serve(site.site());
    let dir = tempfile::tempdir().unwrap();
    let seeds = write_seeds(dir.path(), &[o.url("/")]);
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let out = crawl_cmd(dir.path(), &seeds, &config)
        .args(["--detector", "node-hash"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = thresher::store::Store::open(&dir.path().join("data"), 8 << 20).unwrap();
    let clusters = store.site_clusters(&o.host_port()).unwrap().unwrap();
    assert_eq!(clusters.detector, "node-hash");
    let pages = store.site_pages(&o.host_port()).unwrap();
    assert_eq!(pages.len(), site.reachable().len());
    for id in pages {
        assert!(store.has_cleaned(id).unwrap(), "page {id:016x} has text");
    }

    let bad = crawl_cmd(dir.path(), &seeds, &config)
        .args(["--detector", "magic"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--detector"));
}

/// Issue: `--respect-robots` (on by default) and `[robots] respect`. Off, robots.txt is neither
/// requested nor obeyed (its Disallow and Sitemap lines included) and the run says so once; the
/// flag overrides the file.
#[test]
fn robots_are_respected_by_default_and_ignored_only_when_asked() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    crate::support::sites::mount_robots_rules(o, None);
    let tmp = tempfile::tempdir().unwrap();
    // One crawl in a fresh data directory: the hits it made on robots.txt, on the disallowed
    // page and on robots.txt's sitemap, and its stderr.
    let run = |name: &str, config: &str, args: &[&str]| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let config = write_config(&dir, &format!("[crawl]\ndelay = \"0ms\"\n{config}"));
        let hits = || {
            let paths = ["/robots.txt", "/private/secret.html", "/sitemap.xml"];
            paths.map(|p| o.hits(p))
        };
        let before = hits();
        let out = crawl_loud(&dir, &config)
            .args(args)
            .arg(o.url("/"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{name}: {stderr}");
        let after = hits();
        let delta: Vec<usize> = (0..3).map(|i| after[i] - before[i]).collect();
        (delta, stderr)
    };
    let ignored = "robots.txt is ignored";

    let (hits, stderr) = run("default", "", &[]);
    assert_eq!(hits, [1, 0, 1], "robots.txt read and obeyed: {stderr}");
    assert!(!stderr.contains(ignored), "{stderr}");

    let (hits, stderr) = run("flag-off", "", &["--respect-robots=false"]);
    assert_eq!(hits, [0, 1, 0], "robots.txt not requested: {stderr}");
    assert_eq!(stderr.matches(ignored).count(), 1, "{stderr}");

    let (hits, stderr) = run("file-off", "[robots]\nrespect = false\n", &[]);
    assert_eq!(hits, [0, 1, 0], "{stderr}");
    assert_eq!(stderr.matches(ignored).count(), 1, "{stderr}");

    let (hits, stderr) = run(
        "flag-over-file",
        "[robots]\nrespect = false\n",
        &["--respect-robots"],
    );
    assert_eq!(hits, [1, 0, 1], "the flag overrides the file: {stderr}");
    assert!(!stderr.contains(ignored), "{stderr}");
}

/// The binary runs on jemalloc with the options `memory::jemalloc::CONF` gives (background
/// purging, 1 s dirty decay, thread caches up to 4 KiB): a broken `_rjem_malloc_conf` export
/// would silently bring back jemalloc's defaults, and the crawl's peak RSS with them (issue 11).
#[test]
fn the_binary_allocates_with_jemalloc_and_its_purging_options() {
    let out = Command::new(thresher_bin())
        .arg("--help")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("run thresher");
    assert!(out.status.success());
    let stats = String::from_utf8_lossy(&out.stderr);
    for opt in [
        "opt.background_thread: true",
        "opt.dirty_decay_ms: 1000",
        "opt.muzzy_decay_ms: 0",
        "opt.narenas: 2",
        "opt.tcache_max: 4096",
    ] {
        assert!(
            stats.contains(opt),
            "{opt} missing from jemalloc's stats:\n{stats}"
        );
    }
}
