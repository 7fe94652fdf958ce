//! `thresher inspect` (issue 4) on data directories made by real crawls with inline learning:
//! the listing agrees with the stored clustering, the report marks a page's blocks so that the
//! kept ones are the page's cleaned text, crawled text cannot inject markup, and each failure
//! gets a clear error.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::crawl::{crawl, crawl_learning, Dirs};
use crate::support::lorem::escape;
use crate::support::{thresher_bin, NewsSite, Origin, SiteSpec, TestServer};
use thresher::crawl::url::page_id;
use thresher::dom::{parse_html, text, Dom};

/// Learning settings small enough for a 60-page site to take several incremental steps.
const LEARN: &str =
    "[template]\nrecluster_pages = 10\nrecluster_interval = \"200ms\"\nmin_pages = 5\n";

/// Text planted in an article: markup-looking text that must reach the report as text.
const EVIL: &str = "Planted paragraph: </textarea></div><script>document.title='pwned'</script>\
    <img src=x onerror=\"document.body.dataset.pwned=1\"> & \"quotes\" 'too'. The council said \
    the harbour road will reopen next week, and the engineers agreed the bridge is safe again.";

/// A 60-page news site with `EVIL` in place of one article paragraph; returns the site and the
/// path of that article.
fn serve_site_with_planted_text(o: &Origin, seed: u64) -> (NewsSite, String) {
    let site = NewsSite::generate(&SiteSpec::small(seed, 60));
    o.serve(site.site());
    let article = site
        .articles()
        .find(|p| p.content.len() >= 3)
        .expect("an article with paragraphs");
    let html = String::from_utf8(article.html().to_vec()).unwrap();
    let paragraph = escape(&article.content[2]);
    assert!(html.contains(&paragraph), "the paragraph is in the HTML");
    o.mount(
        &article.path,
        crate::support::Endpoint::html(html.replace(&paragraph, &escape(EVIL))),
    );
    let path = article.path.clone();
    (site, path)
}

fn inspect(data: &Path, args: &[&str]) -> Output {
    Command::new(thresher_bin())
        .arg("inspect")
        .args(args)
        .arg("--data")
        .arg(data)
        .output()
        .expect("run thresher inspect")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "inspect failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The listing's cluster rows: (cluster id, pages, template paths).
fn rows(listing: &str) -> Vec<(u32, usize, usize)> {
    listing
        .lines()
        .filter_map(|l| {
            let mut t = l.split_whitespace();
            Some((
                t.next()?.parse().ok()?,
                t.next()?.parse().ok()?,
                t.next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// Elements of the parsed report whose class list has `class`.
fn has_class(dom: &Dom, i: usize, class: &str) -> bool {
    dom.element(i)
        .and_then(|e| e.class.as_deref())
        .is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

fn inside(dom: &Dom, i: usize, class: &str) -> bool {
    dom.ancestors(i).any(|a| has_class(dom, a, class))
}

/// The text of the report's blocks in `state`, one block per line, without the template
/// segments inside them, as a browser would read it (`dom::text::render` of the report).
fn block_text(report: &Dom, state: &str) -> String {
    text::render(report, |i| {
        inside(report, i, state) && !inside(report, i, "tpl")
    })
}

fn count(report: &str, state: &str) -> usize {
    report.matches(&format!("data-state=\"{state}\"")).count()
}

/// Lines with their whitespace removed: the report joins a block's text nodes with the spaces
/// of the whole line, which can differ from the cleaned line around removed template text.
fn squeeze(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<String>())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_lists_the_clusters_and_marks_a_page_as_cleaning_did() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    let (_site, planted) = serve_site_with_planted_text(o, 41);
    let dirs = Dirs::new();
    let (summary, learned) =
        crawl_learning(&dirs, &[o.url("/")], LEARN, CancellationToken::new()).await;
    assert!(
        !summary.interrupted && learned.final_passes() == 1,
        "{learned:?}"
    );
    let host = o.host_port();
    let planted_url = o.url(&planted);

    let (clusters, site_pages, cleaned) = {
        let store = dirs.store();
        let sc = store.site_clusters(&host).unwrap().expect("clustering");
        let id = page_id(&planted_url.parse().unwrap());
        let cleaned = store.cleaned(id).unwrap().expect("cleaned text").text;
        (sc.clusters, store.site_counters(&host).pages, cleaned)
    };

    let report_path = dirs.tmp.path().join("report.html");
    let out = stdout(&inspect(
        &dirs.data(),
        &[
            &host,
            "--page",
            &planted_url,
            "--report",
            report_path.to_str().unwrap(),
        ],
    ));

    // The listing: every stored cluster once, largest first, sizes summing to the host's pages.
    let listed = rows(&out);
    assert_eq!(listed.len(), clusters.len(), "{out}");
    assert_eq!(
        listed.iter().map(|r| r.1 as u64).sum::<u64>(),
        site_pages,
        "{out}"
    );
    for (id, pages, template) in &listed {
        let c = clusters.iter().find(|c| c.id == *id).expect("listed id");
        assert_eq!((*pages, *template), (c.members.len(), c.template.len()));
    }
    assert!(listed.windows(2).all(|w| w[0].1 >= w[1].1), "{out}");
    assert_eq!(
        listed.iter().map(|r| r.0).collect::<BTreeSet<_>>().len(),
        listed.len()
    );
    assert!(out.contains(&format!("Page shown: {planted_url} (cluster")));
    assert!(
        out.contains("the kept blocks are the stored cleaned text"),
        "{out}"
    );

    // The report: one row per cluster, all three marks, counts as the listing says them.
    let html = std::fs::read_to_string(&report_path).expect("report written");
    assert_eq!(html.matches("<tr data-cluster=").count(), clusters.len());
    let (t, d, k) = (
        count(&html, "template"),
        count(&html, "dropped"),
        count(&html, "kept"),
    );
    assert!(
        t > 0 && d > 0 && k > 0,
        "template {t}, dropped {d}, kept {k}"
    );
    assert!(out.contains(&format!("{t} template, {d} dropped, {k} kept blocks")));
    assert!(html.contains("id=\"check\""));
    assert!(html.contains("class=\"ok\" id=\"check\""), "marks match");

    // Kept blocks are the page's cleaned text.
    let report = parse_html(&html).dom;
    assert_eq!(squeeze(&block_text(&report, "kept")), squeeze(&cleaned));
    assert_eq!(block_text(&report, "template").lines().count(), t);

    // The planted markup is text in the report: no element came out of it.
    assert!(!html.contains("<script") && !html.contains("<img"));
    assert!(html.contains("&lt;/textarea&gt;&lt;/div&gt;&lt;script&gt;"));
    assert!(!(0..report.len()).any(|i| matches!(report.tag(i), Some("script" | "img"))));
    let all_text = text::visible_text(&report);
    assert!(
        all_text.contains(EVIL),
        "the planted paragraph reads as text"
    );
    assert!(cleaned.contains(EVIL), "and it is content the crawl kept");

    // Every cluster's template is shown, from a member page.
    assert_eq!(
        html.matches("<section class=\"cluster\"").count(),
        clusters.len()
    );
    assert!(html.contains("template text paths, as found on"));

    // Default page: the first page of the largest cluster with cleaned text; the host may be
    // given as a URL.
    let default_report = dirs.tmp.path().join("default.html");
    let out = stdout(&inspect(
        &dirs.data(),
        &[&o.url("/"), "--report", default_report.to_str().unwrap()],
    ));
    let largest = clusters.iter().find(|c| c.id == listed[0].0).unwrap();
    assert!(clusters
        .iter()
        .all(|c| c.members.len() <= largest.members.len()));
    let store = dirs.store();
    let first = largest
        .members
        .iter()
        .find(|&&id| {
            store
                .cleaned(id)
                .unwrap()
                .is_some_and(|r| !r.text.is_empty())
        })
        .map(|&id| store.page(id).unwrap().unwrap().url)
        .expect("a page with content in the largest cluster");
    drop(store);
    assert!(
        out.contains(&format!("Page shown: {first} (cluster")),
        "{out}"
    );
    assert!(default_report.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_explains_what_it_cannot_show() {
    let server = TestServer::start(2);
    let (a, b) = (server.origin(0), server.origin(1));
    serve_site_with_planted_text(a, 5);
    b.serve(NewsSite::generate(&SiteSpec::small(6, 8)).site());
    let dirs = Dirs::new();
    let seeds = [a.url("/"), b.url("/")];
    crawl_learning(&dirs, &seeds, LEARN, CancellationToken::new()).await;
    let host = a.host_port();
    let report = dirs.tmp.path().join("r.html");
    let report = report.to_str().unwrap();
    let fails = |o: Output, needle: &str| {
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{needle}: {err}");
        assert!(err.contains(needle), "expected {needle:?} in: {err}");
        err
    };

    let err = fails(
        inspect(&dirs.data(), &["nowhere.example", "--report", report]),
        "no host \"nowhere.example\"",
    );
    assert!(err.contains(&host), "known hosts listed: {err}");
    let err = fails(
        inspect(
            &dirs.data(),
            &[&host, "--page", &a.url("/no/such/page"), "--report", report],
        ),
        "no stored page",
    );
    assert!(err.contains(&a.url("/")), "examples listed: {err}");
    fails(
        inspect(
            &dirs.data(),
            &[&b.host_port(), "--page", &a.url("/"), "--report", report],
        ),
        &format!("belongs to host {host}, not {}", b.host_port()),
    );
    fails(
        inspect(
            &dirs.data(),
            &[&host, "--page", "not a url", "--report", report],
        ),
        "is not an http(s) URL",
    );
    fails(
        inspect(
            &dirs.tmp.path().join("nothing-here"),
            &[&host, "--report", report],
        ),
        "does not exist",
    );
    fails(
        inspect(
            &dirs.data(),
            &[&host, "--report", "/nonexistent-dir/x/report.html"],
        ),
        "cannot write the report",
    );
    {
        let _crawl_holds_it = dirs.store();
        fails(
            inspect(&dirs.data(), &[&host, "--report", report]),
            "in use by a running crawl",
        );
    }
    assert!(!Path::new(report).exists(), "no report from a failed run");

    // A host crawled without template learning has pages but no clustering.
    let plain = Dirs::new();
    crawl(&plain, &[b.url("/")], "").await;
    assert!(plain.store().site_counters(&b.host_port()).pages > 0);
    fails(
        inspect(&plain.data(), &[&b.host_port(), "--report", report]),
        "no clustering yet",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_shows_an_interim_clustering_of_an_interrupted_crawl() {
    let server = TestServer::start(1);
    let o = server.origin(0);
    o.serve(NewsSite::generate(&SiteSpec::small(9, 60)).site());
    o.set_latency(Duration::from_millis(15));
    let dirs = Dirs::new();
    let token = CancellationToken::new();
    let seeds = [o.url("/")];
    let stopper = async {
        server
            .wait_until(Duration::from_secs(20), |s| s.total_hits() >= 35)
            .await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        token.cancel();
    };
    let ((summary, _), ()) =
        tokio::join!(crawl_learning(&dirs, &seeds, LEARN, token.clone()), stopper);
    assert!(summary.interrupted);
    let report = dirs.tmp.path().join("interim.html");
    let out = stdout(&inspect(
        &dirs.data(),
        &[&o.host_port(), "--report", report.to_str().unwrap()],
    ));
    assert!(out.contains("interim clustering"), "{out}");
    let store = dirs.store();
    let sc = store.site_clusters(&o.host_port()).unwrap().unwrap();
    assert_eq!(sc.final_pages, 0);
    assert_eq!(rows(&out).len(), sc.clusters.len());
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("interim clustering"));
    assert!(count(&html, "kept") > 0, "{out}");
}
