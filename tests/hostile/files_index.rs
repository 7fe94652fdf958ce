//! Issue 10, "index.tsv must always match the text files": a kill -9 during the end-of-crawl
//! pass left index.tsv with fewer rows than text files, still wrong after the next run.

use std::collections::BTreeSet;
use std::path::Path;

use super::files_common::*;
use crate::support::{write_config, write_seeds, TestServer};

fn crawl(work: &Path, seeds: &Path, config: &Path) {
    let o = crawl_into(work, seeds, config);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Page ids of index.tsv's rows, and of the text files beside it.
fn rows_and_files(site: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let index = std::fs::read_to_string(site.join("index.tsv")).unwrap();
    let rows = index
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    let files = entries(site)
        .into_iter()
        .filter_map(|f| f.strip_suffix(".txt").map(str::to_string))
        .collect();
    (rows, files)
}

/// Regression: what a kill -9 between text files and index leaves (rows missing, a text file
/// the store never recorded, a text file missing) stayed wrong after the next run.
#[test]
fn files_index_tsv_matches_the_text_files_after_an_interrupted_pass() {
    let server = TestServer::background(1, 1);
    let o = server.origin(0);
    serve_pages(o, 8);
    let (_tmp, work) = nested();
    let seeds = write_seeds(&work, &[o.url("/")]);
    let config = write_config(
        &work,
        "[crawl]\ndelay = \"0ms\"\n[template]\nmin_pages = 2\n",
    );
    crawl(&work, &seeds, &config);
    let site = work.join("out").join(o.host_port().replace(':', "_"));
    let (rows, files) = rows_and_files(&site);
    assert_eq!(rows.len(), 9, "{rows:?}");
    assert_eq!(rows, files);

    // The state an interrupted pass can leave.
    let index = std::fs::read_to_string(site.join("index.tsv")).unwrap();
    let cut: Vec<&str> = index.lines().take(index.lines().count() - 2).collect();
    std::fs::write(site.join("index.tsv"), cut.join("\n") + "\n").unwrap();
    std::fs::write(site.join("00000000deadbeef.txt"), "never recorded").unwrap();
    std::fs::write(site.join(".index.tsv.tmp"), "half").unwrap();
    let gone = rows.iter().next().unwrap().clone();
    std::fs::remove_file(site.join(format!("{gone}.txt"))).unwrap();

    crawl(&work, &seeds, &config);
    let (rows_after, files_after) = rows_and_files(&site);
    assert_eq!(rows_after, rows, "index.tsv rebuilt from the store");
    assert_eq!(files_after, rows, "text files match the index");
    assert!(!site.join(".index.tsv.tmp").exists());
}
