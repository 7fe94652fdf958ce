//! A dataset on disk, as `../shared/eval/score.py` reads it: `DIR/<site>/<page>.html` (the
//! pages a detector sees, one site = one host) and `DIR/<site>/<page>.gold.txt` (the text a
//! perfect cleaner writes). A site is a subdirectory with at least one gold file.
//!
//! Orders: a site's HTML files are sorted by file name (what `thresher clean` feeds the
//! engine); its gold ids are sorted by id (score.py's page order).

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no site with gold pages (<site>/<page>.gold.txt) under {0}")]
    Empty(PathBuf),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    pub root: PathBuf,
    /// Sorted by name.
    pub sites: Vec<Site>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub name: String,
    pub dir: PathBuf,
    /// `(page id, path)` of every `*.html`, sorted by file name.
    pub html: Vec<(String, PathBuf)>,
    /// `(page id, path)` of every `*.gold.txt`, sorted by id.
    pub gold: Vec<(String, PathBuf)>,
}

const GOLD: &str = ".gold.txt";

fn read_dir(dir: &Path) -> Result<Vec<(String, PathBuf)>, DatasetError> {
    let err = |source| DatasetError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.path(),
        ));
    }
    out.sort();
    Ok(out)
}

impl Dataset {
    /// List the sites and pages under `root` (nothing is read but directories).
    pub fn open(root: &Path) -> Result<Dataset, DatasetError> {
        let mut sites = Vec::new();
        for (name, dir) in read_dir(root)? {
            if !dir.is_dir() {
                continue;
            }
            let files = read_dir(&dir)?;
            let html: Vec<(String, PathBuf)> = files
                .iter()
                .filter_map(|(f, p)| Some((f.strip_suffix(".html")?.to_string(), p.clone())))
                .collect();
            let mut gold: Vec<(String, PathBuf)> = files
                .iter()
                .filter_map(|(f, p)| Some((f.strip_suffix(GOLD)?.to_string(), p.clone())))
                .collect();
            gold.sort();
            if !gold.is_empty() {
                sites.push(Site {
                    name,
                    dir,
                    html,
                    gold,
                });
            }
        }
        if sites.is_empty() {
            return Err(DatasetError::Empty(root.to_path_buf()));
        }
        Ok(Dataset {
            root: root.to_path_buf(),
            sites,
        })
    }

    pub fn gold_pages(&self) -> usize {
        self.sites.iter().map(|s| s.gold.len()).sum()
    }
}

/// A text file as score.py reads it (UTF-8, invalid bytes replaced).
pub fn read_text(path: &Path) -> Result<String, DatasetError> {
    let bytes = std::fs::read(path).map_err(|source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_need_gold_and_orders_follow_clean_and_score_py() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.example");
        let b = dir.path().join("b.example");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        for f in [
            "x.html",
            "x-y.html",
            "x.gold.txt",
            "x-y.gold.txt",
            "notes.txt",
        ] {
            std::fs::write(a.join(f), "").unwrap();
        }
        std::fs::write(b.join("only.html"), "").unwrap(); // no gold: not a site
        std::fs::write(dir.path().join("README"), "").unwrap();
        let ds = Dataset::open(dir.path()).unwrap();
        assert_eq!(ds.sites.len(), 1);
        let s = &ds.sites[0];
        assert_eq!(s.name, "a.example");
        // File names: "x-y.html" < "x.html"; ids: "x" < "x-y".
        let html: Vec<&str> = s.html.iter().map(|(id, _)| id.as_str()).collect();
        let gold: Vec<&str> = s.gold.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(html, ["x-y", "x"]);
        assert_eq!(gold, ["x", "x-y"]);
        assert_eq!(ds.gold_pages(), 2);
    }

    #[test]
    fn a_dataset_without_gold_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Dataset::open(dir.path()),
            Err(DatasetError::Empty(_))
        ));
    }
}
