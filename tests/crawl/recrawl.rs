//! `thresher crawl --recrawl` against a site that changes between two crawls (docs/recrawl.md):
//! the server's own request log shows the conditional GETs and its 304s, `thresher changes`
//! gives each page's kind, the text files follow the new content.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::support::{thresher_bin, write_config, Endpoint, Reply, TestServer};

/// Articles of the test site; `/` links to all of them.
const ARTICLES: usize = 10;

/// What each article does between the two crawls.
fn fate(n: usize) -> &'static str {
    match n {
        0..=3 => "same",   // byte-identical: the server answers the conditional GET with 304
        4..=6 => "footer", // only the footer's date changes
        7 | 8 => "content", // a new paragraph (and the new footer date)
        _ => "deleted",    // 404
    }
}

fn words(n: usize, salt: &str) -> String {
    const W: [&str; 16] = [
        "river", "stone", "lantern", "harvest", "copper", "meadow", "signal", "orchard", "valley",
        "timber", "market", "garden", "window", "bridge", "letter", "summer",
    ];
    (0..40)
        .map(|i| W[(n * 7 + i * 3 + salt.len()) % W.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Page `path` of the site in `version` (1 or 2); `None`: 404.
fn page(path: &str, version: u8) -> Option<String> {
    let date = if version == 1 {
        "2024-01-01"
    } else {
        "2024-02-02"
    };
    let nav = "<nav><a href=\"/\">Home</a> <a href=\"/about-us\">About us</a></nav>";
    let (title, body, fixed_footer) = if path == "/" {
        let links: String = (0..ARTICLES)
            .map(|n| format!("<li><a href=\"/p{n}\">Story number {n}</a></li>"))
            .collect();
        ("Home".to_string(), format!("<ul>{links}</ul>"), true)
    } else if path == "/new" {
        if version == 1 {
            return None;
        }
        (
            "A new story".to_string(),
            format!("<p>Fresh news: {}.</p>", words(99, "new")),
            false,
        )
    } else {
        let n: usize = path
            .strip_prefix("/p")?
            .parse()
            .ok()
            .filter(|&n| n < ARTICLES)?;
        let fate = fate(n);
        if version == 2 && fate == "deleted" {
            return None;
        }
        let mut body = format!(
            "<p>{}.</p><p>{}.</p>",
            words(n, "a"),
            words(n + 20, "second paragraph")
        );
        if version == 2 && fate == "content" {
            body.push_str(&format!(
                "<p>Update: {}. See <a href=\"/new\">the new story</a>.</p>",
                words(n + 40, "update paragraph here")
            ));
        }
        (format!("Story number {n}"), body, fate == "same")
    };
    // Pages that answer 304 keep the date they were served with (their bytes do not change).
    let date = if fixed_footer { "2024-01-01" } else { date };
    Some(format!(
        "<!doctype html><html><head><title>{title}</title>\
         <link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\"></head><body>{nav}\
         <main><article><h1>{title}</h1>{body}</article></main>\
         <footer><p>Example News. Site updated {date}.</p></footer></body></html>"
    ))
}

/// The site, served by version; each page with an ETag and a Last-Modified of its bytes.
fn mount(server: &TestServer, version: Arc<Mutex<u8>>) {
    let o = server.origin(0);
    let sitemap = format!("Sitemap: {}\n", o.url("/sitemap.xml"));
    o.mount(
        "/robots.txt",
        Endpoint::text(format!("User-agent: *\nAllow: /\n{sitemap}")),
    );
    let serve = move |target: &str| {
        let v = *version.lock().expect("version lock");
        if let Some(xml) = listing(target, v) {
            return Endpoint::typed("application/xml", xml);
        }
        match page(target, v) {
            None => Endpoint::not_found(),
            Some(html) => {
                let tag = format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(html.as_bytes()));
                let modified = if page(target, 1).as_deref() == Some(html.as_str()) {
                    "Mon, 01 Jan 2024 00:00:00 GMT"
                } else {
                    "Fri, 02 Feb 2024 00:00:00 GMT"
                };
                Reply::new(
                    200,
                    "text/html; charset=utf-8",
                    crate::support::Body::full(html),
                )
                .header("etag", &tag)
                .header("last-modified", modified)
                .into()
            }
        }
    };
    o.set_fallback(Endpoint::dynamic(serve));
}

/// The sitemap (p8's `<lastmod>` after the fetch in version 2, p0's long before) and the RSS
/// feed (p5), which decide what a recrawl revisits first.
fn listing(target: &str, version: u8) -> Option<String> {
    match target {
        "/sitemap.xml" => {
            let p8 = if version == 1 {
                "2000-01-01"
            } else {
                "2099-01-01"
            };
            Some(format!(
                "<urlset><url><loc>/p0</loc><lastmod>2000-01-01</lastmod></url>\
                 <url><loc>/p8</loc><lastmod>{p8}</lastmod></url></urlset>"
            ))
        }
        "/feed.xml" => Some(
            "<rss version=\"2.0\"><channel><title>News</title><link>/</link>\
             <item><title>Five</title><link>/p5</link></item></channel></rss>"
                .to_string(),
        ),
        _ => None,
    }
}

fn thresher(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(thresher_bin())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run thresher");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "thresher {args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn crawl(dir: &Path, seed: &str, extra: &[&str]) {
    let config = write_config(dir, "[crawl]\ndelay = \"0ms\"\n");
    let data = dir.join("data");
    let out = dir.join("out");
    let mut args = vec![
        "crawl",
        seed,
        "--quiet",
        "--config",
        config.to_str().expect("utf-8 path"),
        "--data",
        data.to_str().expect("utf-8 path"),
        "--out",
        out.to_str().expect("utf-8 path"),
    ];
    args.extend(extra);
    thresher(dir, &args);
}

/// `thresher changes --all --format jsonl`, as path → (kind, old hash, new hash).
fn changes(dir: &Path, origin: &str) -> BTreeMap<String, (String, Option<String>, Option<String>)> {
    let data = dir.join("data");
    let text = thresher(
        dir,
        &[
            "changes",
            "--all",
            "--format",
            "jsonl",
            "--data",
            data.to_str().expect("utf-8"),
        ],
    );
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let s = |k: &str| v[k].as_str().map(str::to_string);
            let url = s("url").expect("url");
            let path = url
                .strip_prefix(origin)
                .expect("the site's URL")
                .to_string();
            (
                path,
                (s("kind").expect("kind"), s("old_hash"), s("new_hash")),
            )
        })
        .collect()
}

fn text_file(dir: &Path, origin: &crate::support::Origin, path: &str) -> String {
    let id = thresher::crawl::url::page_id(&origin.url(path).parse().expect("URL"));
    let file = dir
        .join("out")
        .join(thresher::output::site_dir_name(&origin.host_port()))
        .join(format!("{id:016x}.txt"));
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The test site at version 1 (set the version to 2 to change it), and a directory to crawl it
/// into.
fn changing_site() -> (TestServer, Arc<Mutex<u8>>, tempfile::TempDir) {
    let server = TestServer::background(1, 1);
    let version = Arc::new(Mutex::new(1u8));
    mount(&server, version.clone());
    (server, version, tempfile::tempdir().expect("tmp"))
}

#[test]
fn a_recrawl_tells_unchanged_template_churn_new_content_and_gone_pages_apart() {
    let (server, version, dir) = changing_site();
    let o = server.origin(0);
    let seed = o.url("/");
    crawl(dir.path(), &seed, &[]);
    let pages = 1 + ARTICLES;
    assert_eq!(o.hits_prefix("/p") + o.hits("/"), pages, "first crawl");
    let before_p7 = text_file(dir.path(), o, "/p7");

    // Regression: a finished crawl run again makes no page request (and sends no validators).
    let hits = o.total_hits();
    crawl(dir.path(), &seed, &[]);
    assert_eq!(
        o.log()[hits..]
            .iter()
            .filter(|h| h.path() != "/robots.txt")
            .count(),
        0,
        "a plain re-run fetched pages: {:?}",
        o.log()[hits..]
            .iter()
            .map(|h| h.target.clone())
            .collect::<Vec<_>>()
    );

    *version.lock().expect("lock") = 2;
    let hits = o.total_hits();
    crawl(dir.path(), &seed, &["--recrawl"]);
    let recrawl: Vec<_> = o.log()[hits..].to_vec();
    let requests = |path: &str| {
        recrawl
            .iter()
            .filter(|h| h.path() == path)
            .collect::<Vec<_>>()
    };

    // The sitemap and the feed were read first; then the page whose <lastmod> is newer than
    // its fetch, then the page the feed links to, then the rest.
    let order: Vec<&str> = recrawl
        .iter()
        .map(|h| h.path())
        .filter(|p| *p != "/robots.txt")
        .collect();
    assert_eq!(
        order[..4],
        ["/sitemap.xml", "/feed.xml", "/p8", "/p5"],
        "{order:?}"
    );

    // Every stored page was asked for again, conditionally; unchanged ones got a 304.
    for n in 0..ARTICLES {
        let path = format!("/p{n}");
        let r = requests(&path);
        assert_eq!(r.len(), 1, "{path} requested once: {r:?}");
        let h = &r[0].headers;
        assert!(
            h.contains_key("if-none-match") && h.contains_key("if-modified-since"),
            "{path} was not a conditional GET: {h:?}"
        );
        let expect = match fate(n) {
            "same" => 304,
            "deleted" => 404,
            _ => 200,
        };
        assert_eq!(r[0].status, Some(expect), "{path}");
    }
    assert_eq!(
        requests("/")[0].status,
        Some(304),
        "the home page is unchanged"
    );
    // The new page, linked from a changed one, is fetched as any new link.
    assert_eq!(requests("/new").len(), 1, "the new page was fetched");

    let kinds = changes(dir.path(), &o.base());
    let kind = |p: &str| kinds.get(p).map(|k| k.0.as_str()).unwrap_or("(none)");
    assert_eq!(kind("/"), "unchanged");
    for n in 0..ARTICLES {
        let path = format!("/p{n}");
        let expect = match fate(n) {
            "same" => "unchanged",
            "footer" => "template-churn",
            "content" => "content-changed",
            _ => "gone",
        };
        assert_eq!(kind(&path), expect, "{path}: {kinds:#?}");
        let (_, old, new) = &kinds[&path];
        assert!(old.is_some(), "{path} had text before");
        match expect {
            "gone" => assert!(new.is_none()),
            "content-changed" => assert_ne!(old, new, "{path}"),
            _ => assert_eq!(old, new, "{path}"),
        }
    }
    assert!(
        !kinds.contains_key("/new"),
        "a new page is not a change of a stored one"
    );

    // The text file follows the new content.
    let after_p7 = text_file(dir.path(), o, "/p7");
    assert_ne!(before_p7, after_p7);
    assert!(after_p7.contains("Update:"), "{after_p7}");
    assert!(text_file(dir.path(), o, "/new").contains("Fresh news"));

    // By default `changes` lists what an index must update: new content and gone pages.
    let data = dir.path().join("data");
    let listed = thresher(
        dir.path(),
        &["changes", "--data", data.to_str().expect("utf-8")],
    );
    assert_eq!(listed.lines().count(), 1 + 2 + 1, "{listed}");
    assert!(
        listed.contains("content-changed") && listed.contains("gone"),
        "{listed}"
    );
    assert!(!listed.contains("template-churn"), "{listed}");

    // `status` shows the last recrawl by kind.
    let status = thresher(
        dir.path(),
        &["status", "--data", data.to_str().expect("utf-8")],
    );
    assert!(status.contains("Last recrawl"), "{status}");
    assert!(status.contains("template-churn"), "{status}");

    // A recrawl where nothing changed: every page answers 304, and no text file is rewritten.
    let stamp = |p: &str| {
        let id = thresher::crawl::url::page_id(&o.url(p).parse().expect("URL"));
        let f = dir
            .path()
            .join("out")
            .join(thresher::output::site_dir_name(&o.host_port()))
            .join(format!("{id:016x}.txt"));
        std::fs::metadata(f)
            .and_then(|m| m.modified())
            .expect("mtime")
    };
    let mtimes: Vec<_> = ["/p0", "/p5", "/p7", "/new"]
        .iter()
        .map(|p| stamp(p))
        .collect();
    let hits = o.total_hits();
    crawl(dir.path(), &seed, &["--recrawl"]);
    let again: Vec<_> = o.log()[hits..]
        .iter()
        .filter(|h| !matches!(h.path(), "/robots.txt" | "/sitemap.xml" | "/feed.xml"))
        .map(|h| (h.target.clone(), h.status))
        .collect();
    let not_304: Vec<_> = again
        .iter()
        .filter(|(t, s)| *s != Some(304) && t != "/p9")
        .collect();
    assert!(not_304.is_empty(), "{not_304:?}");
    assert_eq!(again.len(), pages + 1, "every stored page once: {again:?}");
    let after: Vec<_> = ["/p0", "/p5", "/p7", "/new"]
        .iter()
        .map(|p| stamp(p))
        .collect();
    assert_eq!(mtimes, after, "a recrawl of 304s rewrote text files");
}

/// The page files of the store in `dir`, by name.
fn page_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("data").join("pages"))
        .expect("page files")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_recrawl_gives_back_the_bytes_of_the_pages_it_replaced() {
    let (server, version, dir) = changing_site();
    let o = server.origin(0);
    let seed = o.url("/");
    // Page files of 1 byte: each page has a file of its own.
    let small = ["--set", "store.page_file_bytes=1"];
    crawl(dir.path(), &seed, &small);
    let first = page_files(dir.path());
    assert_eq!(first.len(), 1 + ARTICLES, "a file a page: {first:?}");

    *version.lock().expect("lock") = 2;
    let mut args = small.to_vec();
    args.push("--recrawl");
    crawl(dir.path(), &seed, &args);
    let after = page_files(dir.path());
    let replaced = (0..ARTICLES)
        .filter(|&n| matches!(fate(n), "footer" | "content"))
        .count();
    assert!(replaced >= 2, "the site replaces pages");
    // The replaced pages' old files held nothing live any more: compacted away at the end of
    // the crawl. The others (unchanged, gone) stay.
    let removed: Vec<&String> = first.iter().filter(|f| !after.contains(f)).collect();
    assert_eq!(
        removed.len(),
        replaced,
        "removed {removed:?} of {first:?}; now {after:?}"
    );
    // Each replaced page and the new page are in new files.
    assert_eq!(
        after.len(),
        first.len() - replaced + replaced + 1,
        "{after:?}"
    );
    // The pages still read back: the end-of-crawl pass cleaned them from these files.
    assert!(text_file(dir.path(), o, "/p7").contains("Update:"));
    assert!(text_file(dir.path(), o, "/new").contains("Fresh news"));
    let data = dir.path().join("data");
    let exported = thresher(
        dir.path(),
        &["export", "--data", data.to_str().expect("utf-8")],
    );
    for p in ["/p0", "/p4", "/p7", "/new"] {
        assert!(exported.contains(&o.url(p)), "{p} exported");
    }
}

/// Article `n` of a site in `layout` 1 (div layout) or 2 (a redesign: table layout, other
/// wrappers and navigation); `edit` adds a paragraph.
fn article(n: usize, layout: u8, edit: bool) -> String {
    let title = format!("Story number {n}");
    let mut paras: Vec<String> = (0..3)
        .map(|k| format!("{}.", words(n * 3 + k, "redesign")))
        .collect();
    if edit {
        paras.push(format!("Update: {}.", words(n + 50, "edited")));
    }
    let links: String = (0..8)
        .map(|k| format!("<a href=\"/a{k}\">Story number {k}</a> "))
        .collect();
    if layout == 1 {
        let body: String = paras.iter().map(|p| format!("<p>{p}</p>")).collect();
        format!(
            "<html><body><div id=\"top\"><nav>{links}</nav></div><div class=\"main\"><article>\
             <h1>{title}</h1>{body}</article></div><div class=\"foot\">Old footer</div></body></html>"
        )
    } else {
        let body: String = paras
            .iter()
            .map(|p| format!("<div class=\"txt\"><span>{p}</span></div>"))
            .collect();
        let menu: String = (0..8)
            .map(|k| format!("<li><a href=\"/a{k}\">Story number {k}</a></li>"))
            .collect();
        format!(
            "<html><body><table><tr><td class=\"menu\"><ul>{menu}</ul></td><td><section>\
             <h2>{title}</h2>{body}</section></td></tr></table><footer><p>New footer</p></footer>\
             </body></html>"
        )
    }
}

/// `thresher status --json`: each host's eras and the number of redesigns recorded for it.
fn eras(dir: &Path) -> (BTreeMap<String, u64>, BTreeMap<String, usize>) {
    let data = dir.join("data");
    let v: serde_json::Value = serde_json::from_str(&thresher(
        dir,
        &["status", "--json", "--data", data.to_str().expect("utf-8")],
    ))
    .expect("status JSON");
    let eras = v["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| {
            (
                h["host"].as_str().expect("host").to_string(),
                h["eras"].as_u64().expect("eras"),
            )
        })
        .collect();
    let mut redesigns = BTreeMap::new();
    for r in v["redesigns"].as_array().expect("redesigns") {
        *redesigns
            .entry(r[0].as_str().expect("host").to_string())
            .or_insert(0) += 1;
    }
    (eras, redesigns)
}

#[test]
fn a_redesign_is_detected_once_and_content_edits_are_not_one() {
    // Two sites of 8 articles: between the crawls `a` is redesigned (every page a new
    // layout, the same stories), `b` gets a new paragraph on half of its pages.
    let server = TestServer::background(2, 1);
    let version = Arc::new(Mutex::new(1u8));
    for (i, redesign) in [(0, true), (1, false)] {
        let o = server.origin(i);
        let v = version.clone();
        o.mount("/robots.txt", Endpoint::text("User-agent: *\nAllow: /\n"));
        o.set_fallback(Endpoint::dynamic(move |target: &str| {
            let version = *v.lock().expect("version lock");
            let n = match target {
                "/" => 0,
                t => match t.strip_prefix("/a").and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if n < 8 => n,
                    _ => return Endpoint::not_found(),
                },
            };
            let (layout, edit) = match (version, redesign) {
                (1, _) => (1, false),
                (_, true) => (2, false),
                (_, false) => (1, n % 2 == 0),
            };
            Endpoint::html(article(n, layout, edit))
        }));
    }
    let dir = tempfile::tempdir().expect("tmp");
    let (a, b) = (server.origin(0), server.origin(1));
    let seeds = [a.url("/"), b.url("/")];
    let config = write_config(dir.path(), "[crawl]\ndelay = \"0ms\"\n");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "crawl",
            seeds[0].as_str(),
            seeds[1].as_str(),
            "--quiet",
            "--config",
            config.to_str().expect("utf-8 path"),
            "--data",
            "data",
            "--out",
            "out",
        ];
        args.extend(extra);
        thresher(dir.path(), &args);
    };
    run(&[]);
    let (host_a, host_b) = (a.host_port(), b.host_port());
    let (e, r) = eras(dir.path());
    assert_eq!((e[&host_a], e[&host_b]), (1, 1), "after the first crawl");
    assert!(r.is_empty(), "{r:?}");

    *version.lock().expect("lock") = 2;
    run(&["--recrawl"]);
    let (e, r) = eras(dir.path());
    assert_eq!(r.get(&host_a), Some(&1), "the redesign of a: {r:?}");
    assert_eq!(
        r.get(&host_b),
        None,
        "content edits on b are no redesign: {r:?}"
    );
    assert_eq!((e[&host_a], e[&host_b]), (2, 1));
    let data = dir.path().join("data");
    let status = thresher(
        dir.path(),
        &["status", "--data", data.to_str().expect("utf-8")],
    );
    assert!(status.contains("Template eras"), "{status}");
    assert!(status.contains(&format!("{host_a}: era 2")), "{status}");
    let report = dir.path().join("a.html");
    let listing = thresher(
        dir.path(),
        &[
            "inspect",
            &host_a,
            "--data",
            data.to_str().expect("utf-8"),
            "--report",
            report.to_str().expect("utf-8"),
        ],
    );
    assert!(listing.contains("Template eras: 2"), "{listing}");
    let html = std::fs::read_to_string(&report).expect("the report");
    assert!(
        html.contains("Template eras: 2"),
        "inspect report without eras"
    );

    // Detected once: a recrawl of the unchanged (redesigned) sites records nothing new.
    run(&["--recrawl"]);
    let (_, r) = eras(dir.path());
    assert_eq!(r.get(&host_a), Some(&1), "{r:?}");
    assert_eq!(r.get(&host_b), None, "{r:?}");
}

/// Page `path` of the era test's site in `version`: 1 is the first design (div layout, a
/// related-stories box); 2 redesigns the home page and stories 0–6 (table layout) and adds
/// `/fresh`, leaves stories 7 and 8 as they were (an archive the redesign did not touch: the
/// same bytes, so a 304) and deletes story 9; 3 also redesigns story 7. `None`: 404.
fn era_page(path: &str, version: u8) -> Option<String> {
    const STORIES: usize = 10;
    let n = match path {
        "/" => STORIES,
        "/fresh" if version >= 2 => STORIES + 1,
        p => p
            .strip_prefix("/a")?
            .parse::<usize>()
            .ok()
            .filter(|&n| n < STORIES)?,
    };
    if version >= 2 && n == 9 {
        return None;
    }
    let redesigned = version >= 2 && (n <= 6 || n > 9) || version >= 3 && n == 7;
    let title = match n {
        STORIES => "Front page".to_string(),
        _ if n > STORIES => "A fresh story".to_string(),
        _ => format!("Story number {n}"),
    };
    let paras: Vec<String> = (0..3)
        .map(|k| format!("{}.", words(n * 3 + k, "era")))
        .collect();
    if !redesigned {
        let nav: String = (0..STORIES)
            .map(|k| format!("<a href=\"/a{k}\">Story number {k}</a> "))
            .collect();
        let related: String = [1, 2]
            .iter()
            .map(|d| {
                let k = (n + d) % STORIES;
                format!("<li><a href=\"/a{k}\">Read story number {k}</a></li>")
            })
            .collect();
        let body: String = paras.iter().map(|p| format!("<p>{p}</p>")).collect();
        // A tag line shared by two consecutive stories: repeated (and dropped) among the ten
        // pages of the first crawl, on one page only among the old era's three after the
        // redesign, so re-cleaning the old era with other evidence would change its text.
        Some(format!(
            "<html><body><div id=\"top\"><nav>{nav}</nav></div><div class=\"main\"><article>\
             <h1>{title}</h1>{body}<ul>{related}</ul><p>Filed under tag {tag}</p></article></div>\
             <div class=\"foot\">Old footer</div></body></html>",
            tag = n / 2
        ))
    } else {
        let menu: String = (0..STORIES)
            .map(|k| format!("<li><a href=\"/a{k}\">Story number {k}</a></li>"))
            .collect();
        let body: String = paras
            .iter()
            .map(|p| format!("<div class=\"txt\"><span>{p}</span></div>"))
            .collect();
        Some(format!(
            "<html><body><table><tr><td class=\"menu\"><ul>{menu}<li><a href=\"/fresh\">Fresh\
             </a></li></ul></td><td><section><h2>{title}</h2>{body}</section></td></tr></table>\
             <footer><p>New footer</p></footer></body></html>"
        ))
    }
}

#[test]
fn after_a_redesign_only_the_new_eras_pages_are_re_cleaned_and_the_old_eras_text_is_kept() {
    let server = TestServer::background(1, 1);
    let version = Arc::new(Mutex::new(1u8));
    let o = server.origin(0);
    o.mount("/robots.txt", Endpoint::text("User-agent: *\nAllow: /\n"));
    let v = version.clone();
    o.set_fallback(Endpoint::dynamic(move |target: &str| {
        match era_page(target, *v.lock().expect("version lock")) {
            None => Endpoint::not_found(),
            Some(html) => {
                let tag = format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(html.as_bytes()));
                Reply::new(200, "text/html", crate::support::Body::full(html))
                    .header("etag", &tag)
                    .into()
            }
        }
    }));
    let dir = tempfile::tempdir().expect("tmp");
    // Small steps, so incremental learning runs during the recrawl too (and must leave the old
    // era's files alone as the end-of-crawl pass does).
    let config = write_config(
        dir.path(),
        "[crawl]\ndelay = \"0ms\"\n[template]\nrecluster_pages = 2\nrecluster_interval = \"10ms\"\n",
    );
    let seed = o.url("/");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "crawl",
            seed.as_str(),
            "--quiet",
            "--config",
            config.to_str().expect("utf-8 path"),
            "--data",
            "data",
            "--out",
            "out",
        ];
        args.extend(extra);
        thresher(dir.path(), &args);
    };
    let host = o.host_port();
    let site_dir = dir
        .path()
        .join("out")
        .join(thresher::output::site_dir_name(&host));
    let stem = |p: &str| {
        let id = thresher::crawl::url::page_id(&o.url(p).parse().expect("URL"));
        format!("{id:016x}")
    };
    let file = |p: &str| site_dir.join(format!("{}.txt", stem(p)));
    let snapshot = |p: &str| {
        let f = file(p);
        let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mtime = std::fs::metadata(&f)
            .and_then(|m| m.modified())
            .expect("mtime");
        (bytes, mtime)
    };
    let index_row = |p: &str| {
        let index = std::fs::read_to_string(site_dir.join("index.tsv")).expect("index.tsv");
        index
            .lines()
            .find(|l| l.starts_with(&stem(p)))
            .map(str::to_string)
    };
    // `thresher clean` on these pages of the site as served in `version`: the text each gets.
    let clean = |name: &str, pages: &[(&str, u8)]| -> BTreeMap<String, String> {
        let site = dir.path().join(name);
        std::fs::create_dir_all(&site).expect("mkdir");
        for (p, v) in pages {
            let html = era_page(p, *v).expect("a page");
            std::fs::write(site.join(format!("{}.html", stem(p))), html).expect("write");
        }
        let out = dir.path().join(format!("{name}-out"));
        thresher(
            dir.path(),
            &[
                "clean",
                site.to_str().expect("utf-8"),
                "--out",
                out.to_str().expect("utf-8"),
            ],
        );
        pages
            .iter()
            .map(|(p, _)| {
                let f = out.join(name).join(format!("{}.txt", stem(p)));
                (
                    p.to_string(),
                    std::fs::read_to_string(f).expect("clean's text"),
                )
            })
            .collect()
    };
    let stories = |r: std::ops::Range<usize>| r.map(|n| format!("/a{n}")).collect::<Vec<_>>();

    run(&[]);
    let old_era = ["/a7", "/a8", "/a9"];
    let kept: Vec<_> = old_era.iter().map(|p| snapshot(p)).collect();
    let rows: Vec<_> = old_era.iter().map(|p| index_row(p)).collect();
    assert!(rows.iter().all(Option::is_some), "{rows:?}");

    *version.lock().expect("lock") = 2;
    run(&["--recrawl"]);
    let (_, r) = eras(dir.path());
    assert_eq!(r.get(&host), Some(&1), "the redesign: {r:?}");

    // The old era's pages (two answered 304, one is gone) keep their text files as they were,
    // byte for byte and untouched, and their index rows.
    let after: Vec<_> = old_era.iter().map(|p| snapshot(p)).collect();
    for ((p, a), b) in old_era.iter().zip(&kept).zip(&after) {
        assert!(a == b, "{p}: the old era's text file was rewritten");
    }
    let rows_now: Vec<_> = old_era.iter().map(|p| index_row(p)).collect();
    assert_eq!(rows_now, rows);
    // What re-cleaning the whole site (the behaviour before eras) would have given them: other
    // text, so the test tells the two apart.
    let mut all: Vec<(String, u8)> = vec![("/".into(), 2), ("/fresh".into(), 2)];
    all.extend(stories(0..7).into_iter().map(|p| (p, 2)));
    all.extend(stories(7..10).into_iter().map(|p| (p, 1)));
    let all: Vec<(&str, u8)> = all.iter().map(|(p, v)| (p.as_str(), *v)).collect();
    let whole = clean("whole", &all);
    assert!(
        old_era
            .iter()
            .zip(&kept)
            .any(|(p, (bytes, _))| whole[*p].as_bytes() != bytes.as_slice()),
        "re-cleaning the whole site would not have changed the old era's text"
    );

    // The new era (redesigned pages and the page added since) is cleaned from the new
    // template alone: exactly `thresher clean` on the new era's pages.
    let mut new_era: Vec<String> = vec!["/".into(), "/fresh".into()];
    new_era.extend(stories(0..7));
    let pages: Vec<(&str, u8)> = new_era.iter().map(|p| (p.as_str(), 2)).collect();
    let expect = clean("era2", &pages);
    for p in &new_era {
        let got = std::fs::read_to_string(file(p)).expect("text");
        assert_eq!(got, expect[p.as_str()], "{p}");
        assert!(!got.contains("New footer"), "{p}: {got}");
    }
    assert!(std::fs::read_to_string(file("/a1"))
        .expect("text")
        .contains(&words(3, "era")));

    // A later recrawl replaces an old-era page (story 7, redesigned at last): it rejoins the
    // current era and is cleaned with it; that is no new redesign, and the rest of the old era
    // stays as it was.
    *version.lock().expect("lock") = 3;
    run(&["--recrawl"]);
    let (_, r) = eras(dir.path());
    assert_eq!(r.get(&host), Some(&1), "no second redesign: {r:?}");
    let mut pages = pages.clone();
    pages.push(("/a7", 3));
    let expect = clean("era2-and-a7", &pages);
    for (p, _) in &pages {
        let got = std::fs::read_to_string(file(p)).expect("text");
        assert_eq!(got, expect[*p], "{p}");
    }
    for (p, before) in ["/a8", "/a9"].iter().zip(&kept[1..]) {
        assert!(
            snapshot(p) == *before,
            "{p}: the old era's text file was rewritten"
        );
    }
}
