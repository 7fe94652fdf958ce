//! Issue 10, the low items on files and streams: `--out` unusable, `export` into a directory
//! and into a closed pipe, seeds files with a Latin-1 byte or a BOM, `clean` over a FIFO, a
//! symlink to /dev/zero and a page the parser cuts, and `THRESHER_LOG` colour in a file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::files_common::*;
use crate::support::{thresher_bin, write_config, write_seeds, TestServer};

fn crawl_cmd(work: &Path, seeds: &Path, out: &Path) -> Command {
    let config = write_config(
        work,
        "[crawl]\ndelay = \"0ms\"\n[template]\nmin_pages = 2\n",
    );
    let mut c = Command::new(thresher_bin());
    c.arg("crawl")
        .args(["--seeds", arg(seeds), "--config", arg(&config)])
        .args(["--data", arg(&work.join("data")), "--out", arg(out)]);
    c
}

/// A finished crawl of 6 pages in `work/data`.
fn crawled(work: &Path, server: &TestServer) -> PathBuf {
    let o = server.origin(0);
    serve_pages(o, 6);
    let seeds = write_seeds(work, &[o.url("/")]);
    let out = crawl_cmd(work, &seeds, &work.join("out"))
        .arg("-q")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    work.join("data")
}

/// Regression: `--out` naming a file (or a read-only directory) exited 0 with no text written
/// and the cause hidden under `-q`.
#[test]
fn files_unusable_out_dir_fails_clearly() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    serve_pages(o, 6);
    let (_tmp, work) = nested();
    let seeds = write_seeds(&work, &[o.url("/")]);
    let file = work.join("out-file");
    std::fs::write(&file, "a file").unwrap();
    let out = crawl_cmd(&work, &seeds, &file).arg("-q").output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains("out-file"), "{err}");
}

/// Regression: `export --out DIR` with DIR a directory failed and left `DIR.jsonl.tmp`.
#[test]
fn files_export_into_a_directory_leaves_nothing_behind() {
    let server = TestServer::background(1, 1);
    let (_tmp, work) = nested();
    let data = crawled(&work, &server);
    let before = entries(&work);
    let o = thresher(&[
        "export",
        "--data",
        arg(&data),
        "--out",
        arg(&work.join("out")),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("directory"), "{}", stderr(&o));
    assert_eq!(entries(&work), before, "no stray temporary file");
    assert!(!entries(&work.join("out"))
        .iter()
        .any(|f| f.ends_with(".tmp")));
}

/// Regression: `export | head` exited 2 with "Broken pipe" printed twice.
#[test]
fn files_export_into_a_closed_pipe_exits_quietly() {
    let server = TestServer::background(1, 1);
    let (_tmp, work) = nested();
    let data = crawled(&work, &server);
    let mut child = Command::new(thresher_bin())
        .args(["export", "--data", arg(&data), "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader is gone before the first line
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "quiet");
}

/// Regression: one Latin-1 byte rejected the whole seeds file without a line number, and a
/// UTF-8 BOM rejected the first seed.
#[test]
fn files_seeds_with_a_bom_and_a_latin1_line() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    serve_pages(o, 6);
    let (_tmp, work) = nested();
    let seeds = work.join("seeds.txt");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(format!("{}\n", o.url("/p1")).as_bytes());
    bytes.extend(b"https://caf\xE9.example/\n");
    bytes.extend(format!("{}\n", o.url("/p2")).as_bytes());
    std::fs::write(&seeds, bytes).unwrap();
    let config = write_config(&work, "[crawl]\ndelay = \"0ms\"\nmax_depth = 0\n");
    let out = crawl_into(&work, &seeds, &config);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("seeds.txt:2:") && err.contains("UTF-8"),
        "{err}"
    );
    assert_eq!(o.hits("/p1"), 1, "the first seed, after the BOM: {err}");
    assert_eq!(o.hits("/p2"), 1, "the seed after the bad line");
}

/// Regression: `THRESHER_LOG` output written to a file (not a terminal) carried colour codes.
#[test]
fn files_log_to_a_file_has_no_colour_codes() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    serve_pages(o, 6);
    let (_tmp, work) = nested();
    let seeds = write_seeds(&work, &[o.url("/")]);
    let out = crawl_cmd(&work, &seeds, &work.join("out"))
        .env("THRESHER_LOG", "thresher=trace")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.lines().count() > 3, "some log lines: {err}");
    assert!(!err.contains('\u{1b}'), "no escape codes: {err:?}");
}

/// Run `thresher clean` with a deadline: a hang is a failure, not a stuck test.
fn clean_within(args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = Command::new(thresher_bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("thresher clean {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Regressions: in `clean`, a FIFO named `.html` hung the run, a symlink to /dev/zero was read
/// until memory ran out, and a page the parser cut was cleaned in part without a word.
#[test]
fn files_clean_skips_special_files_and_says_when_a_page_is_cut() {
    let (_tmp, work) = nested();
    let site = work.join("site.example");
    std::fs::create_dir(&site).unwrap();
    for i in 0..4 {
        std::fs::write(site.join(format!("p{i}.html")), page(i, 4)).unwrap();
    }
    let fifo = std::ffi::CString::new(arg(&site.join("fifo.html"))).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    std::os::unix::fs::symlink("/dev/zero", site.join("zero.html")).unwrap();
    let deep = format!(
        "<html><body><p>before the cut</p>{}<p>after</p></body></html>",
        "<div>".repeat(3000)
    );
    std::fs::write(site.join("deep.html"), deep).unwrap();
    let out = work.join("out");
    let o = clean_within(
        &["clean", arg(&site), "--out", arg(&out), "-q"],
        Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "skipped inputs → exit 1: {err}");
    assert!(err.contains("fifo.html is not a regular file"), "{err}");
    assert!(err.contains("zero.html is not a regular file"), "{err}");
    assert!(err.contains("deep.html") && err.contains("cut"), "{err}");
    let written = entries(&out.join("site.example"));
    assert_eq!(
        written,
        ["deep.txt", "p0.txt", "p1.txt", "p2.txt", "p3.txt"]
    );
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("1 page(s) cleaned only in part"),
        "{summary}"
    );
}
