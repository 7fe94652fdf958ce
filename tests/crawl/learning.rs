//! Inline template learning while crawling (issue 4): cleaned text on disk as the crawl goes,
//! equal to `thresher clean` on the same pages at the end, resumable, and exportable.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{crawl_learning, texts, Dirs};
use crate::support::{thresher_bin, NewsSite, SiteSpec, TestServer};
use thresher::crawl::url::page_stem;
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
    // 15 ms per request (≥ 0.9 s per site): incremental steps get their turns during the crawl
    // even on a loaded machine (at full speed the crawl could end first: 3 runs in 11 saw one
    // step, since pending steps are dropped when the crawl finishes).
    for i in 0..2 {
        server
            .origin(i)
            .set_latency(std::time::Duration::from_millis(15));
    }
    let dirs = Dirs::new();
    let seeds: Vec<String> = (0..2).map(|i| server.origin(i).url("/")).collect();
    let (summary, learned) = crawl_learning(&dirs, &seeds, LEARN, CancellationToken::new()).await;
    assert!(!summary.interrupted);
    assert!(
        learned.steps >= 2,
        "incremental steps ran during the crawl: {learned:?}"
    );
    assert_eq!(learned.final_sites, 2, "{learned:?}");
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
        learned.final_sites, 0,
        "no end-of-crawl pass on an interrupted crawl"
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
    assert_eq!(learned.final_sites, 1);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_below_min_pages_waits_and_is_cleaned_at_the_end() {
    let server = TestServer::start(1);
    let o = server.origin(0);
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
        learned.final_sites, 1,
        "the end-of-crawl pass cleans it: {learned:?}"
    );
    let store = dirs.store();
    let site_key = store.sites()[0].0.clone();
    let ids = store.site_pages(&site_key).unwrap();
    assert_eq!(ids.len(), 3);
    for id in ids {
        let text = store.cleaned(id).unwrap().expect("cleaned at the end").text;
        assert!(
            text.contains("tells of") || text.contains("welcome"),
            "{text}"
        );
    }
}
