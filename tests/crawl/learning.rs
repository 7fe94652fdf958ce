//! Inline template learning while crawling (issue 4): cleaned text on disk as the crawl goes,
//! equal to `thresher clean` on the same pages at the end, resumable, and exportable.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{crawl_hearing_events, crawl_learning, texts, Dirs};
use crate::support::{thresher_bin, NewsSite, Origin, SiteSpec, TestServer};
use thresher::crawl::stats::CrawlStats;
use thresher::crawl::url::page_stem;
use thresher::crawl::{CrawlEvent, EventSink, RunOptions};
use thresher::store::Store;

/// Learning settings small enough for a 60-page site to take several incremental steps (no CPU
/// budget, so the steps happen however fast the local crawl runs).
const LEARN: &str =
    "[template]\nrecluster_pages = 10\nrecluster_interval = \"200ms\"\nmin_pages = 5\n\
                     learn_cpu_share = 1.0\n";

/// Write every stored page's raw HTML as `DIR/<site>/<page id>.html` (what `clean` reads).
fn dump_pages(store: &Store, dir: &Path) {
    for (site, _) in store.sites() {
        let site_dir = dir.join(thresher::output::site_dir_name(&site));
        std::fs::create_dir_all(&site_dir).unwrap();
        for id in store.site_pages(&site).unwrap() {
            let html = store.html(id).unwrap().unwrap();
            std::fs::write(site_dir.join(format!("{}.html", page_stem(id))), html).unwrap();
        }
    }
}

fn two_sites(server: &TestServer) -> Vec<NewsSite> {
    (0..2)
        .map(|i| {
            let site = NewsSite::generate(&SiteSpec::small(40 + i as u64, 60));
            server.origin(i).serve(site.site());
            site
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_output_equals_thresher_clean_on_the_same_pages() {
    let server = TestServer::start(2);
    let sites = two_sites(&server);
    // 25 ms per request (≥ 1.5 s per site): incremental steps get their turns during the crawl
    // even on a loaded machine (at full speed the crawl could end first: 3 runs in 11 saw one
    // step, since pending steps are dropped when the crawl finishes; at 15 ms, one run at load
    // 8 saw one).
    for i in 0..2 {
        server
            .origin(i)
            .set_latency(std::time::Duration::from_millis(25));
    }
    let dirs = Dirs::new();
    let seeds: Vec<String> = (0..2).map(|i| server.origin(i).url("/")).collect();
    let (summary, learned) = crawl_learning(&dirs, &seeds, LEARN, CancellationToken::new()).await;
    assert!(!summary.interrupted);
    assert!(
        learned.steps >= 2,
        "incremental steps ran during the crawl: {learned:?}"
    );
    assert_eq!(learned.final_passes(), 2, "{learned:?}");
    assert!(learned.failed_sites.is_empty(), "{learned:?}");

    let store = dirs.store();
    let pages: u64 = store.sites().iter().map(|(_, c)| c.pages).sum();
    let reachable: usize = sites.iter().map(|s| s.reachable().len()).sum();
    assert_eq!(pages as usize, reachable);
    let saved = dirs.tmp.path().join("saved");
    dump_pages(&store, &saved);
    drop(store);

    let clean_out = dirs.tmp.path().join("clean-out");
    let mut cmd = Command::new(thresher_bin());
    cmd.arg("clean").arg("--out").arg(&clean_out).arg("--quiet");
    for site in std::fs::read_dir(&saved).unwrap() {
        cmd.arg(site.unwrap().path());
    }
    let status = cmd.status().unwrap();
    assert!(status.success());

    let crawled = texts(&dirs.out());
    let cleaned = texts(&clean_out);
    assert_eq!(crawled.len(), reachable, "every page has cleaned text");
    assert_eq!(
        crawled.keys().collect::<Vec<_>>(),
        cleaned.keys().collect::<Vec<_>>()
    );
    for (k, text) in &crawled {
        assert_eq!(
            text, &cleaned[k],
            "page {k:?} differs from `thresher clean`"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleaned_text_is_the_article_not_the_template() {
    let server = TestServer::start(1);
    let site = NewsSite::generate(&SiteSpec::small(77, 60));
    let o = server.origin(0);
    o.serve(site.site());
    let dirs = Dirs::new();
    crawl_learning(&dirs, &[o.url("/")], LEARN, CancellationToken::new()).await;
    let store = dirs.store();
    let report = thresher::status::StatusReport::from_store(&store).unwrap();
    let row = &report.hosts[0];
    assert!(row.pages > 20, "{report:?}");
    assert_eq!(row.cleaned, row.pages, "status counts every cleaned page");
    assert!(
        row.clusters >= 2,
        "status shows the host's templates: {report:?}"
    );
    assert!(report.render().contains("clusters"), "{}", report.render());
    let mut f1s = Vec::new();
    for page in site.articles() {
        let url: url::Url = o.url(&page.path).parse().unwrap();
        let Ok(Some(clean)) = store.cleaned(thresher::crawl::url::page_id(&url)) else {
            continue;
        };
        use thresher::eval::metric::{prf, tokens};
        f1s.push(prf(&tokens(&clean.text), &tokens(&page.true_text())).f1);
    }
    assert!(f1s.len() >= 20, "{} articles cleaned", f1s.len());
    let mean = f1s.iter().sum::<f64>() / f1s.len() as f64;
    assert!(
        mean > 0.9,
        "mean token F1 against the true article text: {mean:.3}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_crawl_keeps_interim_text_and_resumes_its_clustering() {
    let server = TestServer::start(1);
    let site = NewsSite::generate(&SiteSpec::small(9, 60));
    let o = server.origin(0);
    o.serve(site.site());
    o.set_latency(Duration::from_millis(15));
    let dirs = Dirs::new();
    let seeds = vec![o.url("/")];

    let token = CancellationToken::new();
    let stopper = async {
        server
            .wait_until(Duration::from_secs(20), |s| s.total_hits() >= 35)
            .await;
        // Give the learner a recluster interval to catch up before stopping.
        tokio::time::sleep(Duration::from_millis(400)).await;
        token.cancel();
    };
    let ((summary, learned), ()) =
        tokio::join!(crawl_learning(&dirs, &seeds, LEARN, token.clone()), stopper);
    assert!(summary.interrupted);
    assert_eq!(
        learned.final_passes(),
        0,
        "no final pass on an interrupted crawl"
    );
    let (stored, cleaned) = {
        let store = dirs.store();
        let site_key = store.sites()[0].0.clone();
        let interim = store
            .site_clusters(&site_key)
            .unwrap()
            .expect("interim clustering stored");
        assert_eq!(interim.final_pages, 0);
        assert!(
            store.clusters_raw(&site_key).unwrap().is_some(),
            "incremental state persisted"
        );
        let cleaned = store
            .site_pages(&site_key)
            .unwrap()
            .into_iter()
            .filter(|&id| store.cleaned(id).unwrap().is_some())
            .count();
        assert!(
            cleaned >= 10,
            "interim text written while crawling: {cleaned}"
        );
        (store.site_pages(&site_key).unwrap().len(), cleaned)
    };

    // An interrupted crawl exports what is cleaned, and says what is not yet.
    let corpus = dirs.tmp.path().join("interrupted.jsonl");
    let run = Command::new(thresher_bin())
        .args(["export", "--format", "jsonl", "--data"])
        .arg(dirs.data())
        .arg("--out")
        .arg(&corpus)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let exported = std::fs::read_to_string(&corpus).unwrap().lines().count();
    assert_eq!(exported, cleaned, "{stderr}");
    assert!(
        stderr.contains(&format!("Exported {cleaned} pages")),
        "{stderr}"
    );
    if stored > cleaned {
        assert!(
            stderr.contains(&format!(
                "{} stored pages have no cleaned text yet",
                stored - cleaned
            )),
            "{stderr}"
        );
    }

    let (summary, learned) = crawl_learning(&dirs, &seeds, LEARN, CancellationToken::new()).await;
    assert!(!summary.interrupted);
    assert_eq!(learned.final_passes(), 1);
    site.check_fetched_once(o, &["/robots.txt"]).unwrap();
    let store = dirs.store();
    let site_key = store.sites()[0].0.clone();
    let ids = store.site_pages(&site_key).unwrap();
    assert_eq!(ids.len(), site.reachable().len());
    for id in ids {
        assert!(store.cleaned(id).unwrap().is_some(), "page {id:x} cleaned");
    }
    let final_clusters = store.site_clusters(&site_key).unwrap().unwrap();
    assert_eq!(final_clusters.final_pages as usize, site.reachable().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_streams_jsonl_and_text_with_host_filter() {
    let server = TestServer::start(2);
    two_sites(&server);
    let dirs = Dirs::new();
    let seeds: Vec<String> = (0..2).map(|i| server.origin(i).url("/")).collect();
    crawl_learning(&dirs, &seeds, LEARN, CancellationToken::new()).await;

    let host = server.origin(1).host_port();
    let out = dirs.tmp.path().join("corpus.jsonl");
    let run = Command::new(thresher_bin())
        .args([
            "export", "--format", "jsonl", "--quiet", "--host", &host, "--data",
        ])
        .arg(dirs.data())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 60);
    for l in &lines {
        assert_eq!(l["host"], host.as_str());
        for field in ["url", "title", "cluster", "fetched_at", "text"] {
            assert!(!l[field].is_null(), "{field} in {l}");
        }
    }
    assert!(lines
        .iter()
        .any(|l| l["text"].as_str().unwrap().len() > 200));

    let text_dir = dirs.tmp.path().join("corpus");
    let run = Command::new(thresher_bin())
        .args(["export", "--format", "text", "--quiet", "--data"])
        .arg(dirs.data())
        .arg("--out")
        .arg(&text_dir)
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(
        texts(&text_dir),
        texts(&dirs.out()),
        "text export = the crawl's files"
    );

    let bad = Command::new(thresher_bin())
        .args(["export", "--host", "nowhere.example", "--data"])
        .arg(dirs.data())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no such host"));
}

/// A three-page site on `o`: below LEARN's `min_pages`, so no incremental step takes it and
/// only its final pass writes its text.
fn mount_three_pages(o: &Origin) {
    let page = |body: &str| {
        crate::support::Endpoint::html(format!(
            "<html><body><nav><a href=\"/\">Home</a> <a href=\"/a\">A</a> <a href=\"/b\">B</a></nav>\
             <article><p>{body}</p></article><footer>Small site footer</footer></body></html>"
        ))
    };
    o.mount(
        "/",
        page("The front page of a very small site, with a short welcome text."),
    );
    o.mount(
        "/a",
        page("Article A tells of the harbour, the storm and the council meeting."),
    );
    o.mount(
        "/b",
        page("Article B tells of the museum, the library and the railway plan."),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_below_min_pages_waits_and_is_cleaned_when_its_crawl_is_done() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    mount_three_pages(o);
    // Slow enough that recluster_interval (200 ms) passes with pages pending: only min_pages
    // holds the step back.
    o.set_latency(Duration::from_millis(150));
    let dirs = Dirs::new();
    // LEARN asks for 5 pages before a host's first clustering; this host has 3.
    let (summary, learned) =
        crawl_learning(&dirs, &[o.url("/")], LEARN, CancellationToken::new()).await;
    assert!(!summary.interrupted);
    assert_eq!(
        learned.steps, 0,
        "no incremental step below min_pages: {learned:?}"
    );
    assert_eq!(
        learned.final_passes(),
        1,
        "its final pass cleans it: {learned:?}"
    );
    let store = dirs.store();
    let site_key = store.sites()[0].0.clone();
    let ids = store.site_pages(&site_key).unwrap();
    assert_eq!(ids.len(), 3);
    for id in ids {
        let text = store
            .cleaned(id)
            .unwrap()
            .expect("cleaned by the final pass")
            .text;
        assert!(
            text.contains("tells of") || text.contains("welcome"),
            "{text}"
        );
    }
}

/// The text files in a site's output directory.
fn text_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "txt"))
            .count()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_gets_its_final_pass_as_soon_as_its_crawl_is_done() {
    let server = TestServer::start(2);
    let (small, big) = (server.origin(0), server.origin(1));
    mount_three_pages(small);
    let site = NewsSite::generate(&SiteSpec::small(12, 40));
    big.serve(site.site());
    // One request at a time, 100 ms each: the big site's crawl lasts seconds after the small
    // one's three pages are stored.
    big.set_latency(Duration::from_millis(100));
    let pages = site.reachable().len();
    let dirs = Dirs::new();
    let seeds = vec![small.url("/"), big.url("/")];
    let small_out = dirs
        .out()
        .join(thresher::output::site_dir_name(&small.host_port()));
    // Requests the big site had answered when the small site's texts were all on disk.
    let watch = async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while text_files(&small_out) < 3 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the small site's text never appeared"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        big.total_hits()
    };
    let ((summary, learned), big_hits) = tokio::join!(
        crawl_learning(&dirs, &seeds, LEARN, CancellationToken::new()),
        watch
    );
    assert!(!summary.interrupted);
    assert!(
        big_hits < pages,
        "the small site's text was on disk while the big site was still crawled \
         ({big_hits} of its {pages} pages and robots.txt requested then)"
    );
    assert!(learned.done_sites >= 1, "{learned:?}");
    assert_eq!(learned.final_passes(), 2, "{learned:?}");
    assert!(learned.failed_sites.is_empty(), "{learned:?}");
    let store = dirs.store();
    for (site, c) in store.sites() {
        let clusters = store.site_clusters(&site).unwrap().expect("final pass ran");
        assert_eq!(
            clusters.final_pages, c.pages,
            "{site}: every page in its final pass"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_tells_when_it_is_done_with_a_site_after_its_pages_and_once() {
    let server = TestServer::start(2);
    let sites: Vec<NewsSite> = (0..2)
        .map(|i| {
            let site = NewsSite::generate(&SiteSpec::small(30 + i as u64, 25));
            server.origin(i).serve(site.site());
            site
        })
        .collect();
    let dirs = Dirs::new();
    // Both sites stop at their budget with URLs left: done all the same.
    let seeds: Vec<String> = (0..2).map(|i| server.origin(i).url("/")).collect();
    let (summary, events) =
        crawl_hearing_events(&dirs, &seeds, "[crawl]\nmax_pages_per_host = 6\n").await;
    assert!(!summary.interrupted);
    assert!(sites.iter().all(|s| s.reachable().len() > 6));
    for i in 0..2 {
        let key = server.origin(i).host_port();
        let stored: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, CrawlEvent::Stored(p) if p.site == key))
            .map(|(n, _)| n)
            .collect();
        let done: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| **e == CrawlEvent::SiteDone(key.clone()))
            .map(|(n, _)| n)
            .collect();
        assert_eq!(stored.len(), 6, "{key}: its budget of pages");
        assert_eq!(done.len(), 1, "{key}: told of once: {events:?}");
        assert!(
            done[0] > *stored.last().unwrap(),
            "{key}: told of after its last page: {events:?}"
        );
    }
}

/// While more done sites wait for their final pass than the pass thread keeps in hand, the crawl
/// starts no new site (those started go on): text keeps up with fetching. Here nothing passes
/// until the test says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_new_site_starts_while_done_sites_wait_for_their_pass() {
    const SITES: usize = 20;
    let server = TestServer::start(SITES);
    for o in server.origins() {
        o.mount(
            "/",
            crate::support::Endpoint::html("<html><body><p>one page</p></body></html>"),
        );
    }
    let dirs = Dirs::new();
    let config = Arc::new(
        dirs.config("[crawl]\ndelay = \"0ms\"\nconcurrency = 2\nper_origin_concurrency = 1\n"),
    );
    std::fs::create_dir_all(dirs.data()).unwrap();
    let store = Arc::new(dirs.store());
    let stats = Arc::new(CrawlStats::default());
    // The learner's part: every done site waits for a pass that does not run, until `passing`.
    let done = Arc::new(Mutex::new(0usize));
    let passing = Arc::new(AtomicBool::new(false));
    let sink: EventSink = {
        let (done, stats, passing) = (done.clone(), stats.clone(), passing.clone());
        Arc::new(move |e: CrawlEvent| {
            if let CrawlEvent::SiteDone(_) = e {
                *done.lock().unwrap() += 1;
                if !passing.load(Relaxed) {
                    stats.passes_waiting.fetch_add(1, Relaxed);
                }
            }
        })
    };
    let seeds: Vec<url::Url> = server
        .origins()
        .iter()
        .map(|o| o.url("/").parse().unwrap())
        .collect();
    let crawl = {
        let stats = stats.clone();
        tokio::spawn(async move {
            thresher::crawl::run(
                config,
                store,
                &seeds,
                CancellationToken::new(),
                stats,
                Some(sink),
                RunOptions::default(),
            )
            .await
        })
    };
    let started = || {
        server
            .origins()
            .iter()
            .filter(|o| o.total_hits() > 0)
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while *done.lock().unwrap() < 5 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        *done.lock().unwrap() >= 5,
        "sites done: {}",
        done.lock().unwrap()
    );
    // Held: the sites in hand (each has its robots.txt, its page in flight or being stored)
    // finish, no other starts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let held = started();
    assert!(
        held < SITES,
        "{held} of {SITES} sites started with 5 passes waiting"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(started(), held, "a site started while held");
    assert!(!crawl.is_finished());
    // The passes ran: the crawl goes on to its end.
    passing.store(true, Relaxed);
    stats.passes_waiting.store(0, Relaxed);
    let summary = tokio::time::timeout(Duration::from_secs(60), crawl)
        .await
        .expect("the crawl ends once passes are done")
        .unwrap()
        .unwrap();
    assert!(!summary.interrupted);
    assert_eq!(started(), SITES);
}

#[test]
fn a_polite_crawl_writes_text_while_it_fetches() {
    // A background server: the crawler is a child process, so the learner's CPU gauge sees
    // only the crawl, not this test binary's other tests.
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    let site = NewsSite::generate(&SiteSpec::small(21, 40));
    o.serve(site.site());
    // 100 ms a request, one at a time: a crawl of seconds that leaves the CPU idle.
    o.set_latency(Duration::from_millis(100));
    let pages = site.reachable().len();
    let dir = tempfile::tempdir().unwrap();
    let seeds = crate::support::write_seeds(dir.path(), &[o.url("/")]);
    // The default template settings: a step every 50 new pages or 30 s, which this site never
    // reaches while it is crawled; only the idle CPU lets steps run sooner.
    let config = crate::support::write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let mut child = super::cli::crawl_cmd(dir.path(), &seeds, &config)
        .spawn()
        .unwrap();
    let out = dir
        .path()
        .join("out")
        .join(thresher::output::site_dir_name(&o.host_port()));
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    // robots.txt and every page requested: the last page's answer is still 100 ms away.
    while o.total_hits() < pages + 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the crawl never got to its last page"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let written = text_files(&out);
    assert!(child.wait().unwrap().success());
    assert_eq!(text_files(&out), pages, "every page has text at the end");
    assert!(
        written >= pages / 4,
        "text reaches disk while the crawl fetches: {written} of {pages} pages had text when \
         the last page was requested"
    );
}
