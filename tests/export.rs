//! `thresher export` (issue 14, corpus output) on stores made from fixture pages
//! (`support::corpus`): per-page metadata, deduplication, formats and `--fields`, read back by
//! independent readers.

mod dedup;
mod formats;
mod metadata;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::corpus::{build_store, Fixture};
use crate::support::thresher_bin;

/// A data directory built from fixture pages, in a temporary directory.
pub struct Corpus {
    pub tmp: tempfile::TempDir,
}

impl Corpus {
    pub fn build(pages: &[Fixture]) -> Corpus {
        let tmp = tempfile::tempdir().unwrap();
        build_store(&tmp.path().join("data"), &tmp.path().join("out"), pages);
        Corpus { tmp }
    }

    pub fn data(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `thresher export --data DATA ARGS…`.
    pub fn export(&self, args: &[&str]) -> Output {
        Command::new(thresher_bin())
            .arg("export")
            .arg("--data")
            .arg(self.data())
            .args(args)
            .output()
            .expect("run thresher export")
    }

    /// `export` that must succeed; returns its stderr.
    pub fn export_ok(&self, args: &[&str]) -> String {
        let o = self.export(args);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "export {args:?} failed: {stderr}");
        stderr
    }
}

/// The JSON objects of a JSON Lines file.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Map<String, serde_json::Value>> {
    parse_jsonl(&std::fs::read_to_string(path).unwrap())
}

pub fn parse_jsonl(text: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    text.lines()
        .map(|l| match serde_json::from_str(l).unwrap() {
            serde_json::Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

/// The keys of a JSON object, in the order written (`serde_json::Map` sorts them).
pub fn keys_in_order(line: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some((k, _)) = m.next_entry::<String, serde::de::IgnoredAny>()? {
                        keys.push(k);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Keys>(line).unwrap().0
}

pub fn arg(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}
