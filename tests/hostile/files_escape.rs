//! Issue 10, "Writes outside `--out`" and "A host name too long for a directory": hosts named
//! `..` or `.` (a proxied link to `http://%2e%2e/`, a WARC target URI) and over-long host names,
//! through the crawl, `clean --warc` and `export --format text`.

use std::process::Command;

use super::files_common::*;
use crate::support::{thresher_bin, write_config, TestServer};

/// Regression: a crawl through a proxy reached the host `..` and wrote its text files and
/// index.tsv into the parent of `--out`; `export --format text` did the same.
#[test]
fn files_dot_hosts_through_a_proxy_stay_inside_out_and_export() {
    let server = TestServer::background(1, 1);
    let proxy = server.origin(0);
    serve_pages(proxy, 6);
    let (tmp, work) = nested();
    let seeds = work.join("seeds.txt");
    std::fs::write(&seeds, "http://%2e%2e/p0\nhttp://%2e/p0\n").unwrap();
    let config = write_config(
        &work,
        "[crawl]\ndelay = \"0ms\"\n[template]\nmin_pages = 2\n",
    );
    let out = work.join("out");
    let o = Command::new(thresher_bin())
        .arg("crawl")
        .args(["--seeds", arg(&seeds), "--config", arg(&config), "-q"])
        .args(["--data", arg(&work.join("data")), "--out", arg(&out)])
        .env("http_proxy", proxy.base())
        .env("HTTP_PROXY", proxy.base())
        .env_remove("no_proxy")
        .env_remove("NO_PROXY")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(proxy.hits("/p3") >= 1, "the crawl went through the proxy");
    assert_eq!(
        entries(tmp.path()),
        ["work"],
        "nothing written beside work/"
    );
    assert_eq!(
        entries(&work),
        ["data", "out", "seeds.txt", "thresher.toml"],
        "nothing written into the parent of --out"
    );
    let sites = entries(&out);
    assert_eq!(sites.len(), 2, "one directory per host: {sites:?}");
    for site in &sites {
        assert!(!site.starts_with('.'), "{site}");
        let files = entries(&out.join(site));
        assert!(
            files.contains(&"index.tsv".to_string()),
            "{site}: {files:?}"
        );
        // `/` and /p0…/p5, and the index.
        assert_eq!(files.len(), 8, "7 pages and the index in {site}: {files:?}");
    }

    let exp = work.join("exp");
    let o = thresher(&[
        "export",
        "--data",
        arg(&work.join("data")),
        "--format",
        "text",
        "--out",
        arg(&exp),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        entries(&exp),
        sites,
        "export names directories as the crawl does"
    );
    assert_eq!(
        entries(&work),
        ["data", "exp", "out", "seeds.txt", "thresher.toml"],
        "export wrote nothing outside --out"
    );
}

/// Regression: `clean --warc` wrote a record for `http://../p0` into the parent of `--out`,
/// and dropped the port, so it wrote `127.0.0.1/` where the crawl writes `127.0.0.1_8080/`.
#[test]
fn files_warc_dot_host_stays_inside_out_and_keeps_the_port() {
    let (tmp, work) = nested();
    let file = write_warc(&work, &["..", ".", "127.0.0.1:8080"]);
    let out = work.join("out");
    let o = thresher(&["clean", "--warc", arg(&file), "--out", arg(&out), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(tmp.path()), ["work"]);
    assert_eq!(entries(&work), ["out", "x.warc"]);
    let sites = entries(&out);
    assert_eq!(sites.len(), 3, "{sites:?}");
    assert!(sites.contains(&"127.0.0.1_8080".to_string()), "{sites:?}");
    for site in &sites {
        assert!(!site.starts_with('.'), "{site}");
        assert_eq!(entries(&out.join(site)).len(), 5, "{site}: 4 pages + index");
    }
}

/// Regression: a host name too long for a directory name wrote no output, and in `clean` its
/// error aborted every later site.
#[test]
fn files_overlong_host_name_is_written_and_later_sites_still_clean() {
    let (_tmp, work) = nested();
    let long = vec!["a".repeat(60); 5].join(".");
    let file = write_warc(&work, &[long.as_str(), "z.example"]);
    let out = work.join("out");
    let o = thresher(&["clean", "--warc", arg(&file), "--out", arg(&out), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sites = entries(&out);
    assert_eq!(sites.len(), 2, "{sites:?}");
    assert!(sites.contains(&"z.example".to_string()), "{sites:?}");
    for site in &sites {
        assert!(site.len() <= 255, "{site}");
        assert_eq!(entries(&out.join(site)).len(), 5, "{site}: 4 pages + index");
    }
}

/// Regression: in `clean`, one site whose output could not be written aborted every later site.
#[test]
fn files_clean_site_that_cannot_be_written_does_not_stop_the_others() {
    let (_tmp, work) = nested();
    let file = write_warc(&work, &["a.example", "b.example"]);
    let out = work.join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(
        out.join("a.example"),
        "a file where a.example's directory would go",
    )
    .unwrap();
    let o = thresher(&["clean", "--warc", arg(&file), "--out", arg(&out), "-q"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "a site skipped → exit 1: {err}");
    assert!(err.contains("site a.example"), "{err}");
    assert_eq!(
        entries(&out.join("b.example")).len(),
        5,
        "b.example still cleaned"
    );
}

/// `WORK/x.warc`: four `response` records per host (`http://HOST/p0`…`p3`).
fn write_warc(work: &std::path::Path, hosts: &[&str]) -> std::path::PathBuf {
    let mut warc = Vec::new();
    for host in hosts {
        for i in 0..4 {
            warc.extend(warc_response(&format!("http://{host}/p{i}"), &page(i, 4)));
        }
    }
    let file = work.join("x.warc");
    std::fs::write(&file, warc).unwrap();
    file
}
