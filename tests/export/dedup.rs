//! `--dedup` on a universe with planted duplicates (`support::corpus::DupUniverse`): articles
//! republished on another site under its template with a credit line, and articles stored twice
//! on their own site with navigation churn. On cleaned text the copies are found across hosts;
//! on whole-page text (template included) the same code does worse — the figure in
//! docs/export.md, at a larger scale, comes from `cargo bench --bench export -- --figure dedup`.

use std::collections::{BTreeSet, HashMap};

use super::{arg, read_jsonl, Corpus};
use crate::support::corpus::{raw_text_flags, DupSpec, DupUniverse, Score};
use thresher::store::Store;

fn spec() -> DupSpec {
    DupSpec {
        seed: 14,
        sites: 4,
        articles: 25,
        syndicated: 10,
        churned: 8,
        nav: 30,
    }
}

/// `(exact, near)` from a summary line's "(E exact, F near)".
fn by_kind(stderr: &str) -> (u64, u64) {
    let at = stderr.find(" exact, ").expect("counts by kind");
    let exact = stderr[..at].rsplit('(').next().unwrap().parse().unwrap();
    let near = stderr[at + 8..].split(' ').next().unwrap().parse().unwrap();
    (exact, near)
}

#[test]
fn dedup_finds_planted_copies_across_hosts_and_each_mode_does_what_it_says() {
    let u = DupUniverse::generate(&spec());
    let total = u.pages.len();
    let corpus = Corpus::build(&u.pages);

    // mark: every page, the copies with dup_of.
    let marked = corpus.path("marked.jsonl");
    let stderr = corpus.export_ok(&[
        "--dedup",
        "mark",
        "--fields",
        "id,url,host,dup_of",
        "--out",
        arg(&marked),
    ]);
    let rows = read_jsonl(&marked);
    assert_eq!(rows.len(), total);
    let url_of: HashMap<&str, &str> = rows
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["url"].as_str().unwrap()))
        .collect();
    let flags: Vec<(&str, &str)> = rows
        .iter()
        .filter_map(|r| {
            let of = r["dup_of"].as_str()?;
            Some((r["url"].as_str().unwrap(), url_of[of]))
        })
        .collect();
    let cleaned = Score::of(&u, flags.iter().copied());
    let (exact, near) = by_kind(&stderr);
    assert!(
        stderr.contains(&format!("marked {} duplicates with dup_of", flags.len())),
        "{stderr}"
    );
    assert_eq!(exact + near, flags.len() as u64);
    assert!(exact > 0 && near > 0, "both kinds planted: {stderr}");
    let cross_host = rows
        .iter()
        .filter(|r| {
            r["dup_of"].as_str().is_some_and(|of| {
                let original = rows.iter().find(|o| o["id"] == of).unwrap();
                original["host"] != r["host"]
            })
        })
        .count();
    assert!(cross_host > 0, "copies on other hosts are found");

    // The same code on whole-page text, template included.
    let raw = {
        let store = Store::open_existing(&corpus.data(), 8 << 20).unwrap();
        let flags = raw_text_flags(&store);
        Score::of(&u, flags.iter().map(|(a, b)| (a.as_str(), b.as_str())))
    };
    eprintln!(
        "planted {}: cleaned text P {:.3} R {:.3}; raw page text P {:.3} R {:.3}",
        u.planted,
        cleaned.precision(),
        cleaned.recall(),
        raw.precision(),
        raw.recall()
    );
    assert_eq!(cleaned.wrong, 0, "no false duplicates on cleaned text");
    assert!(cleaned.recall() >= 0.9, "{cleaned:?}");
    assert!(
        raw.recall() + raw.precision() < cleaned.recall() + cleaned.precision(),
        "raw {raw:?} vs cleaned {cleaned:?}"
    );

    // near: the marked pages are left out, and the summary says how many of each kind.
    let dropped = corpus.path("near.jsonl");
    let stderr = corpus.export_ok(&["--dedup", "near", "--out", arg(&dropped)]);
    let kept: BTreeSet<String> = read_jsonl(&dropped)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let unmarked: BTreeSet<String> = rows
        .iter()
        .filter(|r| r["dup_of"].is_null())
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kept, unmarked);
    assert!(
        stderr.contains(&format!(
            "dropped {} duplicates ({exact} exact, {near} near)",
            exact + near
        )),
        "{stderr}"
    );

    // none (the default): every page.
    let all = corpus.path("all.jsonl");
    corpus.export_ok(&["--out", arg(&all)]);
    let all = read_jsonl(&all);
    assert_eq!(all.len(), total);

    // exact: exactly the pages whose text an earlier page has go (more than `mark` counts as
    // exact when two copies of one original are identical to each other: `mark` calls both near
    // duplicates of the original).
    let mut seen = BTreeSet::new();
    let expected: Vec<&str> = all
        .iter()
        .filter(|r| seen.insert(r["text"].as_str().unwrap()))
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let exact_out = corpus.path("exact.jsonl");
    let stderr = corpus.export_ok(&["--dedup", "exact", "--out", arg(&exact_out)]);
    let exact_rows = read_jsonl(&exact_out);
    let ids: Vec<&str> = exact_rows
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, expected);
    assert!(exact_rows.len() < total);
    assert!(
        stderr.contains(&format!(
            "dropped {} exact duplicates",
            total - exact_rows.len()
        )),
        "{stderr}"
    );

    // The text format drops the same pages.
    let dir = corpus.path("text");
    corpus.export_ok(&[
        "--format",
        "text",
        "--dedup",
        "near",
        "-q",
        "--out",
        arg(&dir),
    ]);
    let files = walk_txt(&dir);
    assert_eq!(files, kept.len());
}

fn walk_txt(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|site| {
            std::fs::read_dir(site.unwrap().path())
                .unwrap()
                .filter(|f| {
                    f.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "txt")
                })
                .count()
        })
        .sum()
}
