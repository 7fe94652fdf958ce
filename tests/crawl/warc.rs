//! `crawl --warc-out` (issue 13): the crawl's WARC/1.1 files hold every exchange as whole,
//! digest-checked records (a `response` and its `request`; a `revisit` for a duplicate body or
//! a 304), rotate by size, are finished after a kill -9 without a torn record, and read back
//! through `clean --warc` to the crawl's own cleaned text; warcio, an independent reader,
//! checks and indexes them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use tokio_util::sync::CancellationToken;

use super::{crawl, crawl_learning, texts, Dirs};
use crate::support::endpoint::HTML;
use crate::support::{thresher_bin, Body, Endpoint, NewsSite, Origin, Reply, SiteSpec, TestServer};
use thresher::crawl::archive::{IDENTICAL_PAYLOAD, NOT_MODIFIED};
use thresher::warc::write::sha1_digest;
use thresher::warc::Record;

/// `[crawl] warc_dir` (and `extra` keys of `[crawl]`) for a crawl in `dirs`.
fn warc_toml(dirs: &Dirs, extra: &str) -> String {
    let dir = toml::Value::String(warc_dir(dirs).to_string_lossy().into_owned());
    format!("[crawl]\nwarc_dir = {dir}\n{extra}")
}

fn warc_dir(dirs: &Dirs) -> PathBuf {
    dirs.tmp.path().join("warc")
}

/// The finished WARC files in `dir`, in name order (time order).
fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("WARC dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// Files in `dir` still being written or left torn.
fn open_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("WARC dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz.open"))
        .collect()
}

/// Every record of `files` (each file read by thresher's reader; every record must be whole),
/// with its file. Each file must start with a `warcinfo` naming it.
fn records(files: &[PathBuf]) -> Vec<(PathBuf, Record)> {
    let mut out = Vec::new();
    for f in files {
        let recs: Vec<Record> = thresher::warc::open(f)
            .expect("open WARC")
            .map(|r| r.unwrap_or_else(|e| panic!("{}: {e}", f.display())))
            .collect();
        assert_eq!(
            recs[0].warc_type().as_deref(),
            Some("warcinfo"),
            "{}",
            f.display()
        );
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(recs[0].header("WARC-Filename"), Some(name.as_str()));
        out.extend(recs.into_iter().map(|r| (f.clone(), r)));
    }
    out
}

/// An HTTP block's head (status or request line and headers) and payload.
fn split_http(block: &[u8]) -> (String, &[u8]) {
    let end = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("HTTP head ends with a blank line");
    (
        String::from_utf8_lossy(&block[..end]).into_owned(),
        &block[end + 4..],
    )
}

/// The header lines of an HTTP head, as (lower-case name, value).
fn head_fields(head: &str) -> BTreeSet<(String, String)> {
    head.lines()
        .skip(1)
        .map(|l| {
            let (k, v) = l.split_once(':').expect("header line");
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect()
}

/// Block and payload digests are those of the bytes; Content-Length was exact (the reader read
/// the block by it and found the record's end where it said).
fn check_digests(r: &Record) {
    let id = r.header("WARC-Record-ID").unwrap_or("?");
    assert_eq!(
        r.header("WARC-Block-Digest"),
        Some(sha1_digest(&[&r.block]).as_str()),
        "block digest of {id}"
    );
    if r.warc_type().as_deref() == Some("response") {
        let (_, payload) = split_http(&r.block);
        assert_eq!(
            r.header("WARC-Payload-Digest"),
            Some(sha1_digest(&[payload]).as_str()),
            "payload digest of {id}"
        );
    }
}

/// `thresher clean --warc FILE… --out OUT`.
fn clean_warc(files: &[PathBuf], out: &Path) {
    let mut cmd = Command::new(thresher_bin());
    cmd.arg("clean").arg("--out").arg(out).arg("--quiet");
    for f in files {
        cmd.arg("--warc").arg(f);
    }
    let run = cmd.output().expect("run thresher clean");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

fn page(title: &str, text: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>\
         <p>{text}</p></body></html>"
    )
}

/// The cases of an archive, all linked from `/` on `o`: two URLs with byte-identical bodies, a
/// noindex page, a redirect, a 404, a 304, a gzip'd page (reqwest decodes it), a doubly gzip'd
/// one (`gzip, gzip`: thresher decodes it), a text/plain page and a plain page.
fn mount_cases(o: &Origin) {
    let links: String = [
        "/a.html",
        "/copy-of-a.html",
        "/b.html",
        "/noindex.html",
        "/old",
        "/missing",
        "/not-modified",
        "/gz.html",
        "/gzgz.html",
        "/notes",
    ]
    .iter()
    .map(|p| format!("<p><a href=\"{p}\">{p}</a></p>"))
    .collect();
    o.mount("/", Endpoint::html(page("Cases", &links)));
    let a = page("A", "The same bytes at two addresses.");
    o.mount("/a.html", Endpoint::html(a.clone()));
    o.mount("/copy-of-a.html", Endpoint::html(a));
    o.mount("/b.html", Endpoint::html(page("B", "A page of its own.")));
    o.mount(
        "/noindex.html",
        Endpoint::html(
            "<!doctype html><html><head><meta name=\"robots\" content=\"noindex\"><title>N\
             </title></head><body><p>Not for an index.</p></body></html>",
        ),
    );
    o.mount("/old", Endpoint::redirect(301, "/moved.html"));
    o.mount("/moved.html", Endpoint::html(page("Moved", "Here now.")));
    o.mount("/missing", Endpoint::not_found());
    o.mount(
        "/not-modified",
        Reply::new(304, "", Body::empty()).header("etag", "\"v1\""),
    );
    o.mount(
        "/gz.html",
        Reply::new(
            200,
            HTML,
            Body::full(gzip(page("Gz", "Sent gzip'd once.").as_bytes())),
        )
        .header("content-encoding", "gzip"),
    );
    o.mount(
        "/gzgz.html",
        Reply::new(
            200,
            HTML,
            Body::full(gzip(&gzip(page("GzGz", "Sent gzip'd twice.").as_bytes()))),
        )
        .header("content-encoding", "gzip, gzip"),
    );
    o.mount(
        "/notes",
        Endpoint::typed("text/plain", "Plain text, not downloaded."),
    );
}

/// Records by type, then target path.
fn by_target(recs: &[(PathBuf, Record)]) -> BTreeMap<(String, String), Vec<&Record>> {
    let mut m: BTreeMap<(String, String), Vec<&Record>> = BTreeMap::new();
    for (_, r) in recs {
        let Some(uri) = r.target_uri() else { continue };
        let url = url::Url::parse(uri).expect("target URI");
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path = format!("{path}?{q}");
        }
        m.entry((
            r.warc_type().unwrap_or_default(),
            format!("{}{path}", port_tag(&url)),
        ))
        .or_default()
        .push(r);
    }
    m
}

/// `:PORT` of a URL, to tell the two origins' paths apart.
fn port_tag(url: &url::Url) -> String {
    format!(":{}", url.port().unwrap_or(80))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_warc_files_hold_every_exchange_and_read_back_to_the_crawls_text() {
    let server = TestServer::start(2);
    let site = NewsSite::generate(&SiteSpec::small(13, 40));
    server.origin(0).serve(site.site());
    let cases = server.origin(1);
    mount_cases(cases);
    let dirs = Dirs::new();
    let seeds = [server.origin(0).url("/"), cases.url("/")];
    let toml = warc_toml(&dirs, "") + "[template]\nmin_pages = 3\n";
    let (summary, learned) = crawl_learning(&dirs, &seeds, &toml, CancellationToken::new()).await;
    assert!(!summary.interrupted && learned.failed_sites.is_empty());

    let files = warc_files(&warc_dir(&dirs));
    assert_eq!(files.len(), 1, "one file below the size: {files:?}");
    assert!(open_files(&warc_dir(&dirs)).is_empty(), "finished");
    let recs = records(&files);
    for (_, r) in &recs {
        check_digests(r);
        assert_eq!(r.header("WARC-Record-ID").map(|v| v.len()), Some(47));
        assert!(r.header("WARC-Date").is_some_and(|d| d.ends_with('Z')));
    }

    // Every response or revisit has exactly one request, concurrent to it, of the same URL and
    // date, from the address the server listens on.
    let mut requests: BTreeMap<&str, &Record> = BTreeMap::new();
    for (_, r) in recs
        .iter()
        .filter(|(_, r)| r.warc_type().as_deref() == Some("request"))
    {
        let to = r
            .header("WARC-Concurrent-To")
            .expect("request names its response");
        assert!(requests.insert(to, r).is_none(), "one request per response");
    }
    let answers: Vec<&Record> = recs
        .iter()
        .map(|(_, r)| r)
        .filter(|r| matches!(r.warc_type().as_deref(), Some("response" | "revisit")))
        .collect();
    assert_eq!(answers.len(), requests.len());
    for r in &answers {
        let q = requests[r.header("WARC-Record-ID").unwrap()];
        assert_eq!(q.target_uri(), r.target_uri());
        assert_eq!(q.header("WARC-Date"), r.header("WARC-Date"));
        assert_eq!(r.header("WARC-IP-Address"), Some("127.0.0.1"));
    }

    let m = by_target(&recs);
    let c = port_tag(&url::Url::parse(&cases.url("/")).unwrap());
    let one = |kind: &str, path: &str| -> &Record {
        let v = m
            .get(&(kind.to_string(), format!("{c}{path}")))
            .unwrap_or_else(|| panic!("no {kind} record for {path}"));
        assert_eq!(v.len(), 1, "{kind} {path}");
        v[0]
    };

    // The request as the server received it.
    let (head, _) = split_http(&one("request", "/b.html").block);
    assert!(head.starts_with("GET /b.html HTTP/1.1\r\n"), "{head}");
    let hit = cases
        .log()
        .into_iter()
        .find(|h| h.target == "/b.html")
        .expect("served");
    let received: BTreeSet<(String, String)> = hit
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        head_fields(&head),
        received,
        "the request record is what was sent"
    );

    // Byte-identical bodies: one response, and a revisit of it at the other URL.
    let (orig, dup) = match m.get(&("revisit".to_string(), format!("{c}/a.html"))) {
        Some(_) => ("/copy-of-a.html", "/a.html"),
        None => ("/a.html", "/copy-of-a.html"),
    };
    let (response, revisit) = (one("response", orig), one("revisit", dup));
    assert_eq!(revisit.header("WARC-Profile"), Some(IDENTICAL_PAYLOAD));
    assert_eq!(
        revisit.header("WARC-Refers-To-Target-URI"),
        response.target_uri()
    );
    assert_eq!(
        revisit.header("WARC-Refers-To-Date"),
        response.header("WARC-Date")
    );
    assert_eq!(
        revisit.header("WARC-Payload-Digest"),
        response.header("WARC-Payload-Digest")
    );
    let (revisit_head, rest) = split_http(&revisit.block);
    assert!(rest.is_empty() && revisit_head.starts_with("HTTP/1.1 200 OK"));
    let store = dirs.store();
    let errors: BTreeMap<String, String> = store
        .errors()
        .map(|e| e.unwrap())
        .map(|(url, rec)| (url, rec.kind.to_string()))
        .collect();
    assert_eq!(
        errors.get(&cases.url(dup)).map(String::as_str),
        Some("duplicate"),
        "the store's duplicate is the archive's revisit"
    );

    // A 304 is a revisit too; a redirect, a 404 and a body not downloaded are responses whose
    // payload is empty and says so.
    let nm = one("revisit", "/not-modified");
    assert_eq!(nm.header("WARC-Profile"), Some(NOT_MODIFIED));
    assert!(split_http(&nm.block)
        .0
        .starts_with("HTTP/1.1 304 Not Modified\r\n"));
    for (path, status) in [("/old", "301"), ("/missing", "404"), ("/notes", "200")] {
        let r = one("response", path);
        let (head, payload) = split_http(&r.block);
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{head}");
        assert!(payload.is_empty(), "{path}");
        assert_eq!(r.header("WARC-Truncated"), Some("unspecified"), "{path}");
        assert!(head_fields(&head).contains(&("content-length".into(), "0".into())));
    }
    let (head, _) = split_http(&one("response", "/old").block);
    assert!(head_fields(&head).contains(&("location".into(), "/moved.html".into())));
    one("response", "/robots.txt");

    // Bodies are stored decoded, with headers that say so.
    for (path, text) in [
        ("/gz.html", "Sent gzip'd once."),
        ("/gzgz.html", "Sent gzip'd twice."),
    ] {
        let r = one("response", path);
        let (head, payload) = split_http(&r.block);
        let fields = head_fields(&head);
        assert!(String::from_utf8_lossy(payload).contains(text), "{path}");
        assert!(
            !fields.iter().any(|(k, _)| k == "content-encoding"),
            "{path}: {head}"
        );
        assert!(
            fields.contains(&("content-length".into(), payload.len().to_string())),
            "{path}: {head}"
        );
        let parsed = thresher::warc::parse_http_response(&r.block, 1 << 20).unwrap();
        assert_eq!(parsed.body, payload, "{path}");
    }
    let (head, _) = split_http(&one("response", "/gzgz.html").block);
    assert!(
        head_fields(&head).contains(&("x-crawler-content-encoding".into(), "gzip, gzip".into()))
    );

    // The store keeps each page's HTML as the bytes its response record holds, compressed
    // once for both: the store's deflate part reads back as the record's payload.
    let mut stored_pages = 0;
    for r in recs
        .iter()
        .map(|(_, r)| r)
        .filter(|r| r.warc_type().as_deref() == Some("response"))
    {
        let url = url::Url::parse(r.target_uri().unwrap()).unwrap();
        if let Some(html) = store.html(thresher::crawl::url::page_id(&url)).unwrap() {
            assert_eq!(html, split_http(&r.block).1, "{url}");
            stored_pages += 1;
        }
    }
    assert!(stored_pages >= 40, "{stored_pages} stored pages read back");

    // The noindex page is archived, and `clean --warc` leaves it out as the crawl does.
    one("response", "/noindex.html");

    let clean_out = dirs.tmp.path().join("clean-out");
    clean_warc(&files, &clean_out);
    let crawled = texts(&dirs.out());
    let stored: u64 = store.sites().iter().map(|(_, c)| c.pages).sum();
    assert_eq!(crawled.len() as u64, stored, "every stored page has text");
    assert_eq!(
        crawled,
        texts(&clean_out),
        "clean --warc reads back the crawl's text"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_rotate_by_size_without_splitting_a_record() {
    let server = TestServer::start(1);
    let site = NewsSite::generate(&SiteSpec::small(14, 30));
    server.origin(0).serve(site.site());
    let dirs = Dirs::new();
    let toml = warc_toml(&dirs, "warc_file_bytes = 20000\n") + "[template]\ninline = false\n";
    let summary = crawl(&dirs, &[server.origin(0).url("/")], &toml).await;
    assert!(!summary.interrupted);
    let files = warc_files(&warc_dir(&dirs));
    assert!(files.len() >= 3, "{files:?}");
    let pid = format!("-{}-", std::process::id());
    for (i, f) in files.iter().enumerate() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("thresher-") && name.contains(&pid),
            "{name}"
        );
        assert!(
            name.contains(&format!("-{i:05}-")),
            "serial in order: {name}"
        );
        let len = std::fs::metadata(f).unwrap().len();
        if i + 1 < files.len() {
            assert!(len >= 20000, "finished only past its size: {name} {len}");
        }
    }
    let recs = records(&files);
    let responses: BTreeSet<String> = recs
        .iter()
        .filter(|(_, r)| r.warc_type().as_deref() == Some("response"))
        .map(|(_, r)| r.target_uri().unwrap().to_string())
        .collect();
    let reachable: BTreeSet<String> = site
        .reachable()
        .iter()
        .map(|p| server.origin(0).url(p))
        .collect();
    assert!(reachable.is_subset(&responses), "every page once, whole");
    assert_eq!(
        recs.iter()
            .filter(|(_, r)| r.warc_type().as_deref() == Some("response"))
            .count(),
        responses.len(),
        "no page twice"
    );
}

/// warcio's `check` (digests) and `index` (every record parsed, HTTP heads included) on a
/// crawl's files. Without warcio the test says SKIPPED; with THRESHER_CI_WARCIO=1 (CI installs
/// warcio and sets it) a missing warcio fails it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warcio_checks_and_indexes_the_crawls_warc_files() {
    if !crate::support::external_tool(
        "warcio_checks_and_indexes_the_crawls_warc_files",
        &["warcio", "--version"],
        "THRESHER_CI_WARCIO",
        "pip install warcio",
    ) {
        return;
    }
    let server = TestServer::start(1);
    mount_cases(server.origin(0));
    let dirs = Dirs::new();
    let toml = warc_toml(&dirs, "") + "[template]\ninline = false\n";
    crawl(&dirs, &[server.origin(0).url("/")], &toml).await;
    let files = warc_files(&warc_dir(&dirs));
    let recs = records(&files);
    for f in &files {
        let check = Command::new("warcio")
            .args(["check", "-v"])
            .arg(f)
            .output()
            .expect("run warcio check");
        let said = String::from_utf8_lossy(&check.stdout);
        assert!(
            check.status.success(),
            "warcio check {}: {said}",
            f.display()
        );
        assert!(
            !said.contains("fail") && said.contains("digest pass"),
            "{said}"
        );
        let index = Command::new("warcio")
            .args(["index", "-f", "warc-type,warc-target-uri,http:status"])
            .arg(f)
            .output()
            .expect("run warcio index");
        assert!(index.status.success(), "warcio index {}", f.display());
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&index.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        let ours: Vec<&Record> = recs
            .iter()
            .filter(|(p, _)| p == f)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(lines.len(), ours.len(), "warcio sees every record");
        for (line, r) in lines.iter().zip(ours) {
            assert_eq!(line["warc-type"], r.warc_type().unwrap().as_str());
            if r.warc_type().as_deref() == Some("response") {
                let status = thresher::warc::parse_http_response(&r.block, 1 << 20)
                    .unwrap()
                    .status;
                assert_eq!(line["http:status"], status.to_string(), "{line}");
            }
        }
    }
}
