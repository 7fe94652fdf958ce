//! `crawl --import-warc`: a crawl's own WARC files rebuild it in a fresh data directory without
//! a request — the same pages, the same cleaned text — and a partial archive leaves exactly the
//! pages it lacks to fetch. This is the path a cluster partition's next owner takes (issue 12).

use std::collections::BTreeSet;
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use super::{crawl_learning, crawl_learning_with, stored_urls, texts, Dirs};
use crate::support::{thresher_bin, NewsSite, SiteSpec, TestServer};
use thresher::crawl::RunOptions;

fn warc_config(warc: &std::path::Path, extra: &str) -> String {
    let dir = toml::Value::String(warc.to_string_lossy().into_owned());
    format!("[crawl]\nwarc_dir = {dir}\n{extra}\n[template]\nmin_pages = 3\n")
}

fn importing(warc: PathBuf) -> RunOptions {
    RunOptions {
        import: vec![warc],
        ..RunOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawls_warc_files_rebuild_it_elsewhere_without_a_request() {
    let server = TestServer::start(1);
    let site = NewsSite::generate(&SiteSpec::small(21, 40));
    server.origin(0).serve(site.site());
    let seeds = [server.origin(0).url("/")];

    let first = Dirs::new();
    let warc = first.tmp.path().join("warc");
    let (summary, learned) = crawl_learning(
        &first,
        &seeds,
        &warc_config(&warc, ""),
        CancellationToken::new(),
    )
    .await;
    assert!(!summary.interrupted && learned.failed_sites.is_empty());
    assert!(summary.stored >= 30, "the site was crawled: {summary:?}");
    let served = server.origin(0).log().len();

    let second = Dirs::new();
    let (summary2, learned2) = crawl_learning_with(
        &second,
        &seeds,
        "[template]\nmin_pages = 3\n",
        importing(warc),
    )
    .await;
    assert!(!summary2.interrupted && learned2.failed_sites.is_empty());
    assert_eq!(
        server.origin(0).log().len(),
        served,
        "the rebuild asked the server for nothing: {:?}",
        server.origin(0).log()[served..]
            .iter()
            .map(|h| h.target.clone())
            .collect::<Vec<_>>()
    );
    let imported = summary2.imported.expect("an import ran");
    assert_eq!(imported.pages, summary.stored, "{imported:?}");
    assert_eq!((imported.problems, imported.already), (0, 0));
    assert_eq!(summary2.fetched, 0);
    assert_eq!(
        stored_urls(&second.store()),
        stored_urls(&first.store()),
        "the same pages"
    );
    let (a, b) = (texts(&first.out()), texts(&second.out()));
    assert_eq!(a.len() as u64, summary.stored);
    assert_eq!(b, a, "the same cleaned text, file for file");

    // Run again: nothing is imported twice, nothing fetched.
    let (summary3, _) = crawl_learning_with(
        &second,
        &seeds,
        "[template]\nmin_pages = 3\n",
        importing(first.tmp.path().join("warc")),
    )
    .await;
    let again = summary3.imported.expect("an import ran");
    assert_eq!(
        (again.pages, again.already),
        (0, summary.stored),
        "{again:?}"
    );
    assert_eq!(server.origin(0).log().len(), served);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_archive_leaves_only_the_pages_it_lacks_to_fetch() {
    let server = TestServer::start(1);
    let site = NewsSite::generate(&SiteSpec::small(22, 40));
    server.origin(0).serve(site.site());
    let seeds = [server.origin(0).url("/")];

    // A crawl stopped at 12 pages: its archive holds those.
    let first = Dirs::new();
    let warc = first.tmp.path().join("warc");
    let (summary, _) = crawl_learning(
        &first,
        &seeds,
        &warc_config(&warc, "max_pages = 12"),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(summary.stored, 12);
    let archived = stored_urls(&first.store());
    let served = server.origin(0).log().len();

    // The whole site, for comparison.
    let whole = Dirs::new();
    crawl_learning(
        &whole,
        &seeds,
        "[template]\nmin_pages = 3\n",
        CancellationToken::new(),
    )
    .await;
    let all = stored_urls(&whole.store());
    let served_whole = server.origin(0).log().len();

    let second = Dirs::new();
    let (summary2, _) = crawl_learning_with(
        &second,
        &seeds,
        "[template]\nmin_pages = 3\n",
        importing(warc),
    )
    .await;
    assert_eq!(summary2.imported.as_ref().map(|i| i.pages), Some(12));
    assert_eq!(
        stored_urls(&second.store()),
        all,
        "the whole site in the end"
    );
    let asked: BTreeSet<String> = server.origin(0).log()[served_whole..]
        .iter()
        .map(|h| server.origin(0).url(&h.target))
        .collect();
    let refetched: Vec<&String> = asked.intersection(&archived).collect();
    assert!(
        refetched.is_empty(),
        "pages the archive held were fetched again: {refetched:?}"
    );
    assert_eq!(
        summary2.stored as usize,
        all.len() - archived.len(),
        "the rest was fetched and stored"
    );
    assert!(served > 0);
}

#[test]
fn a_crawl_after_an_interrupted_import_is_refused_without_the_files() {
    // The store's note of an import under way is what refuses it; the binary says so and
    // names the flag.
    let dirs = Dirs::new();
    let data = dirs.data();
    std::fs::create_dir_all(&data).unwrap();
    {
        let store = dirs.store();
        store
            .put_meta(
                "import_in_progress",
                &Some(vec!["/archive/x.warc.gz".to_string()]),
            )
            .unwrap();
        store.flush().unwrap();
    }
    let out = std::process::Command::new(thresher_bin())
        .args(["crawl", "http://127.0.0.1:9/", "--quiet", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(dirs.out())
        .output()
        .expect("run thresher");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("--import-warc") && err.contains("x.warc.gz"),
        "{err}"
    );
}
