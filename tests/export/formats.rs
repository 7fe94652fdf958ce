//! Formats and columns: JSON Lines plain / `.gz` / `.zst`, Parquet read back by pyarrow (an
//! independent reader, installed by `.ci/run`), `--fields`, and the flag errors.

use std::io::Read;
use std::process::Command;

use super::metadata::{fixtures, url, PAGES};
use super::{arg, keys_in_order, parse_jsonl, read_jsonl, Corpus};
use crate::support::corpus::Fixture;
use thresher::store::Store;

/// The metadata fixtures plus an exact copy of the first page at a second URL (bytes differ by a
/// comment), so `dup_of` has a value somewhere.
fn corpus() -> Corpus {
    let mut pages = fixtures();
    let first = &pages[0];
    let mut copy = Fixture::new(
        &format!("{}?utm_source=feed", url(&PAGES[0])),
        first.html.replace("<body>", "<body><!-- feed copy -->"),
    );
    copy.fetched_at_ms += 1000;
    pages.push(copy);
    Corpus::build(&pages)
}

#[test]
fn export_compresses_json_lines_by_file_name() {
    let corpus = corpus();
    let plain = corpus.path("c.jsonl");
    let gz = corpus.path("c.jsonl.gz");
    let zst = corpus.path("c.jsonl.zst");
    for p in [&plain, &gz, &zst] {
        corpus.export_ok(&["-q", "--out", arg(p)]);
    }
    let plain = std::fs::read_to_string(&plain).unwrap();
    assert_eq!(parse_jsonl(&plain).len(), PAGES.len() + 1);
    let mut from_gz = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_string(&mut from_gz)
        .unwrap();
    assert_eq!(from_gz, plain);
    let from_zst = zstd::decode_all(std::fs::File::open(&zst).unwrap()).unwrap();
    assert_eq!(String::from_utf8(from_zst).unwrap(), plain);
    assert!(std::fs::metadata(&zst).unwrap().len() < plain.len() as u64);
}

#[test]
fn export_fields_choose_the_columns_and_their_order() {
    let corpus = corpus();
    let out = corpus.path("f.jsonl");
    corpus.export_ok(&["-q", "--fields", "text,id,lang", "--out", arg(&out)]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), PAGES.len() + 1);
    for line in text.lines() {
        assert_eq!(keys_in_order(line), ["text", "id", "lang"]);
    }
    // A .parquet file name picks the format; the schema has the same columns in the same order.
    let pq = corpus.path("f.parquet");
    corpus.export_ok(&["-q", "--fields", "text,id,cluster", "--out", arg(&pq)]);
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr();
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["text", "id", "cluster"]);
    assert_eq!(
        reader.metadata().file_metadata().num_rows(),
        PAGES.len() as i64 + 1
    );
}

#[test]
fn export_flag_errors_say_what_is_wrong() {
    let corpus = corpus();
    let dir = corpus.path("t");
    let cases: [(&[&str], &str); 6] = [
        (&["--fields", "id,body"], "unknown field \"body\""),
        (&["--fields", "id,id"], "named twice"),
        (&["--dedup", "fuzzy"], "invalid value 'fuzzy' for '--dedup"),
        (
            &["--format", "parquet"],
            "--format parquet needs --out FILE",
        ),
        (
            &["--format", "text", "--fields", "id", "--out", arg(&dir)],
            "--fields needs jsonl or parquet",
        ),
        (
            &["--format", "text", "--dedup", "mark", "--out", arg(&dir)],
            "it needs --format jsonl or parquet",
        ),
    ];
    for (args, message) in cases {
        let o = corpus.export(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert!(!dir.exists(), "a refused export writes nothing");
}

/// `--config` and `--set` as in `crawl`: an unknown key is an error naming the file or flag
/// (exit 2, nothing written), and the file's `crawl.data_dir` is the data directory.
#[test]
fn export_reads_the_config_file_and_rejects_unknown_keys() {
    let corpus = corpus();
    let config = corpus.path("f.toml");
    let out = corpus.path("o.jsonl");
    std::fs::write(&config, "[store]\ncache_bytez = \"8 MiB\"\n").unwrap();
    let o = corpus.export(&["--config", arg(&config), "--out", arg(&out)]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("f.toml") && stderr.contains("cache_bytez"),
        "{stderr}"
    );
    let o = corpus.export(&["--set", "store.cache_bytez=1", "--out", arg(&out)]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--set store.cache_bytez"), "{stderr}");
    assert!(!out.exists(), "a refused export writes nothing");

    let data = corpus.data();
    let text = format!(
        "[crawl]\ndata_dir = {:?}\n[store]\ncache_bytes = \"8 MiB\"\n",
        arg(&data)
    );
    std::fs::write(&config, text).unwrap();
    let o = Command::new(crate::support::thresher_bin())
        .args(["export", "-q", "--config", arg(&config), "--out", arg(&out)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!read_jsonl(&out).is_empty());
}

/// Parquet and JSON Lines (plain and gzip) read back by pyarrow and Python's json: the same
/// rows, fields and text as the store. Skipped (loudly) where pyarrow is missing, unless
/// `THRESHER_CI_PYARROW=1` (set by `.ci/run`, which installs it): then it fails.
#[test]
fn export_parquet_and_jsonl_read_back_by_pyarrow_equal_the_store() {
    if !crate::support::external_tool(
        "export_parquet_and_jsonl_read_back_by_pyarrow_equal_the_store",
        &["python3", "-c", "import pyarrow"],
        "THRESHER_CI_PYARROW",
        "pip install pyarrow",
    ) {
        return;
    }
    let corpus = corpus();
    let fields = "text,id,url,host,canonical,lang,lang_confidence,title,published,author,\
                  fetched_at,last_modified,cluster,template_ratio,dup_of";
    let pq = corpus.path("c.parquet");
    let jl = corpus.path("c.jsonl");
    let gz = corpus.path("c.jsonl.gz");
    for p in [&pq, &jl, &gz] {
        corpus.export_ok(&["-q", "--dedup", "mark", "--fields", fields, "--out", arg(p)]);
    }
    let rows = read_jsonl(&jl);
    assert_eq!(
        rows.iter().filter(|r| !r["dup_of"].is_null()).count(),
        1,
        "the copy is marked"
    );

    // The store's pages in export order (sites by name, pages by id).
    let store = Store::open_existing(&corpus.data(), 8 << 20).unwrap();
    let mut pages = Vec::new();
    for (site, _) in store.sites() {
        for id in store.site_pages(&site).unwrap() {
            let (Some(meta), Some(clean)) = (store.page(id).unwrap(), store.cleaned(id).unwrap())
            else {
                continue;
            };
            pages.push(serde_json::json!({
                "id": thresher::crawl::url::page_stem(id),
                "url": meta.url,
                "host": site,
                "text": clean.text,
            }));
        }
    }
    drop(store);
    let store_json = corpus.path("store.json");
    std::fs::write(&store_json, serde_json::to_string(&pages).unwrap()).unwrap();

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/export/read_back.py");
    let o = Command::new("python3")
        .arg(script)
        .args([arg(&pq), arg(&jl), arg(&gz), arg(&store_json), fields])
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains(&format!("{} rows, 15 fields", pages.len())),
        "{out}"
    );
    eprintln!("{out}");
}
