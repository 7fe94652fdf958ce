//! Issue 10, the store's files: a truncated or overwritten store is detected and explained
//! (never a panic, never a silent success), and `status`/`export` do not create a store in a
//! directory that has none.

use std::path::Path;
use std::process::Output;

use super::files_common::*;
use crate::support::{write_config, write_seeds, TestServer};

/// Crawl 6 pages into `work/data`; returns the seeds file and config.
fn crawled(work: &Path, server: &TestServer) -> (std::path::PathBuf, std::path::PathBuf) {
    let o = server.origin(0);
    serve_pages(o, 6);
    let seeds = write_seeds(work, &[o.url("/")]);
    let config = write_config(
        work,
        "[crawl]\ndelay = \"0ms\"\n[template]\nmin_pages = 2\n",
    );
    let out = crawl(work, &seeds, &config);
    assert!(out.status.success(), "{}", stderr(&out));
    (seeds, config)
}

fn crawl(work: &Path, seeds: &Path, config: &Path) -> Output {
    crawl_into(work, seeds, config)
}

fn status(data: &Path) -> Output {
    thresher(&["status", "--data", arg(data)])
}

/// Both commands fail with exit code 2 and say the store is damaged and what to do.
fn assert_damaged(work: &Path, seeds: &Path, config: &Path, what: &str) {
    for (name, o) in [
        ("status", status(&work.join("data"))),
        ("crawl", crawl(work, seeds, config)),
    ] {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {name}: {err}");
        assert!(!err.contains("panicked"), "{what}: {name}: {err}");
        assert!(err.contains("damaged"), "{what}: {name}: {err}");
        assert!(err.contains("move it aside"), "{what}: {name}: {err}");
    }
}

/// Regression: `truncate -s 50% db` made `status` and `crawl` panic inside sled (rc 101).
#[test]
fn files_truncated_store_is_reported_not_a_panic() {
    let server = TestServer::background(1, 1);
    let (_tmp, work) = nested();
    let (seeds, config) = crawled(&work, &server);
    let db = work.join("data/db");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_damaged(&work, &seeds, &config, "truncated");
}

/// Regression: 200 random bytes written into the store made `crawl` exit 0 with "0 errors".
#[test]
fn files_overwritten_store_is_reported_not_a_silent_success() {
    let server = TestServer::background(1, 1);
    let (_tmp, work) = nested();
    let (seeds, config) = crawled(&work, &server);
    let db = work.join("data/db");
    let mut bytes = std::fs::read(&db).unwrap();
    let mut x: u32 = 0x1234_5678;
    for b in bytes.iter_mut().take(200) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    std::fs::write(&db, bytes).unwrap();
    assert_damaged(&work, &seeds, &config, "overwritten");
}

/// Regression: `status` created sled files in any empty or foreign directory.
#[test]
fn files_status_and_export_do_not_create_a_store() {
    let (_tmp, work) = nested();
    std::fs::write(work.join("notes.txt"), "mine").unwrap();
    let o = status(&work);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a thresher data directory"),
        "{}",
        stderr(&o)
    );
    let o = thresher(&["export", "--data", arg(&work), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(entries(&work), ["notes.txt"], "nothing created");
}
