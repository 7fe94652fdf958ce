//! `thresher eval` end to end: the binary over a small dataset written to a temp dir.

use std::path::Path;
use std::process::{Command, Output};

use thresher::detect::Detector;

const NAV: &str = "<table><tr><td><a href=/>Home</a> <a href=/world>World news</a> \
                   <a href=/biz>Business and markets</a> <a href=/tech>Technology</a> <a href=/sport>Sport</a></td></tr>";
const FOOTER: &str = "<tr><td>Copyright 2024 Example Media Group, all rights reserved \
                      worldwide.</td></tr></table>";

/// Page `i` of `site`: a shared nav and footer around a body whose words are its own.
fn page(site: &str, i: usize) -> (String, String) {
    let site = site.replace('.', "");
    let head: Vec<String> = (0..4).map(|k| format!("{site}h{i}w{k}")).collect();
    let body: Vec<String> = (0..12).map(|k| format!("{site}b{i}w{k}")).collect();
    let (head, body) = (head.join(" "), body.join(" "));
    let html = format!(
        "<html><body>{NAV}<tr><td><h1>{head}</h1><p>{body}</p></td></tr>{FOOTER}</body></html>"
    );
    (html, format!("{head}\n{body}\n"))
}

/// Write `site` with `pages` pages; `gold_only` more pages have gold but no HTML.
fn write_site(root: &Path, site: &str, pages: usize, gold_only: usize) {
    let dir = root.join(site);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..pages + gold_only {
        let (html, gold) = page(site, i);
        if i < pages {
            std::fs::write(dir.join(format!("p{i}.html")), html).unwrap();
        }
        std::fs::write(dir.join(format!("p{i}.gold.txt")), gold).unwrap();
    }
}

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_thresher"))
        .arg("eval")
        .args(args)
        .output()
        .unwrap()
}

/// The row of `detector`: its columns after the name.
fn row<'a>(stdout: &'a str, detector: &str) -> Vec<&'a str> {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(detector))
        .unwrap_or_else(|| panic!("no row for {detector} in:\n{stdout}"));
    line.split_whitespace().skip(1).collect()
}

#[test]
fn eval_all_prints_a_row_per_detector_and_writes_outputs() {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_site(data.path(), "a.example", 6, 0);
    write_site(data.path(), "b.example", 4, 1);
    let o = eval(&[
        data.path().to_str().unwrap(),
        "--detector",
        "all",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for d in Detector::all() {
        let cols = row(&stdout, d.name());
        assert_eq!(cols[0], "11", "{d}: pages with gold");
        assert!(
            out.path().join(d.name()).join("a.example/p0.txt").is_file(),
            "{d}: output written"
        );
    }
    // node-hash cleans every page perfectly; b's gold-only page scores 0 (no prediction):
    // macro F1 = (1 + 4/5) / 2, page-mean F1 = 10/11.
    let cols = row(&stdout, "node-hash");
    assert_eq!(&cols[..6], &["11", "2", "0.900", "0.900", "0.900", "0.909"]);
    let (_, gold) = page("b.example", 2);
    let written = std::fs::read_to_string(out.path().join("node-hash/b.example/p2.txt")).unwrap();
    assert_eq!(written, gold);
}

#[test]
fn a_perfect_prediction_scores_one() {
    let data = tempfile::tempdir().unwrap();
    write_site(data.path(), "a.example", 5, 0);
    for d in Detector::BASELINES {
        let o = eval(&[data.path().to_str().unwrap(), "--detector", d.name(), "-q"]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{stdout}");
        let cols = row(&stdout, d.name());
        assert_eq!(
            &cols[..6],
            &["5", "1", "1.000", "1.000", "1.000", "1.000"],
            "{d}"
        );
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with(d.name())).count(),
            1
        );
    }
}

#[test]
fn an_unknown_detector_is_a_usage_error() {
    let data = tempfile::tempdir().unwrap();
    write_site(data.path(), "a.example", 2, 0);
    let o = eval(&[data.path().to_str().unwrap(), "--detector", "bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--detector") && stderr.contains("bogus") && stderr.contains("node-hash"),
        "{stderr}"
    );
}

#[test]
fn a_directory_without_gold_is_an_error() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("x.html"), "<p>x</p>").unwrap();
    let o = eval(&[data.path().to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no site with gold pages"));
}

#[test]
fn eval_takes_several_datasets_and_prints_an_overall_table() {
    let root = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (one, two) = (root.path().join("one"), root.path().join("two"));
    write_site(&one, "a.example", 5, 0);
    write_site(&two, "b.example", 4, 0);
    write_site(&two, "c.example", 3, 0);
    let o = eval(&[
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--detector",
        "node-hash",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A table per dataset, headed by the dataset, then the overall table.
    let heads: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("dataset "))
        .collect();
    assert_eq!(heads.len(), 2, "{stdout}");
    assert!(
        heads[0].contains("one") && heads[1].contains("two"),
        "{stdout}"
    );
    let overall = stdout.split("overall: 2 datasets (one, two)").nth(1);
    let overall = overall.unwrap_or_else(|| panic!("no overall table in:\n{stdout}"));
    let per_set: Vec<f64> = stdout
        .split("overall:")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.split_whitespace().next() == Some("node-hash"))
        .map(|l| l.split_whitespace().nth(5).unwrap().parse().unwrap())
        .collect();
    assert_eq!(per_set.len(), 2, "{stdout}");
    let cols = row(overall, "node-hash");
    assert_eq!(cols[0], "12", "pages summed: {overall}");
    let mean: f64 = cols[3].parse().unwrap();
    assert!(
        (mean - (per_set[0] + per_set[1]) / 2.0).abs() < 0.0015,
        "{overall}"
    );
    assert_eq!(cols[5].parse::<f64>().unwrap(), per_set[0], "{overall}");
    assert_eq!(cols[6].parse::<f64>().unwrap(), per_set[1], "{overall}");
    // Outputs per dataset.
    assert!(out.path().join("one/node-hash/a.example/p0.txt").is_file());
    assert!(out.path().join("two/node-hash/c.example/p2.txt").is_file());
}
