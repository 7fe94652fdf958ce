//! Helpers of the file-side hostile tests: the `thresher` binary, a small site of distinct
//! pages, WARC records, and listings of what a run left in a directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{thresher_bin, Endpoint, Origin, Site};

/// `thresher crawl` quietly, with its data in WORK/data and its output in WORK/out.
pub fn crawl_into(work: &Path, seeds: &Path, config: &Path) -> Output {
    let (data, out) = (work.join("data"), work.join("out"));
    thresher(&[
        "crawl",
        "--seeds",
        arg(seeds),
        "--config",
        arg(config),
        "-q",
        "--data",
        arg(&data),
        "--out",
        arg(&out),
    ])
}

/// Run `thresher ARGS` to the end.
pub fn thresher(args: &[&str]) -> Output {
    Command::new(thresher_bin())
        .args(args)
        .output()
        .expect("run thresher")
}

pub fn arg(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Page `i` of a small news site: shared chaff around a paragraph of its own, links to the
/// other pages `/p0`…`/p{n-1}`.
pub fn page(i: usize, n: usize) -> String {
    let links: String = (0..n)
        .map(|k| format!("<li><a href=/p{k}>Story {k}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>Story {i}</title></head><body>\
         <nav><a href=/>Home</a> <a href=/world>World</a></nav><ul>{links}</ul>\
         <div class=text><h1>Headline number {i}</h1><p>On day {i} the council and the \
         engineers of harbour {i} agreed on point {i}, and the farmers warned that the bridge \
         {i} would need more time than anyone in town {i} expected.</p></div>\
         <footer>Copyright Example News. All rights reserved.</footer></body></html>"
    )
}

/// Serve `n` pages at `/p0`… on `origin` (and `/` linking to them).
pub fn serve_pages(origin: &Origin, n: usize) {
    let mut site = Site::new().page("/", page(n, n));
    for i in 0..n {
        site = site.route(&format!("/p{i}"), Endpoint::html(page(i, n)));
    }
    origin.serve(site);
}

/// A WARC `response` record for `uri` holding an HTTP 200 with `html`.
pub fn warc_response(uri: &str, html: &str) -> Vec<u8> {
    let block = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{html}",
        html.len()
    );
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block.as_bytes());
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// The entries directly in `dir`, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A fresh temp dir with a `work/` inside, so that writes into the parent of `work/…` show.
pub fn nested() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).expect("mkdir work");
    (tmp, work)
}
