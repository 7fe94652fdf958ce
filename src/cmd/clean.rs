//! `thresher clean SITE_DIR... --out OUT`: the template engine over saved pages (DESIGN.md §4).
//! SKELETON: plain directories only, no progress bar yet.

use std::path::{Path, PathBuf};

use crate::cli::CleanArgs;
use crate::dom::parse_bytes;
use crate::template::{clean_site, Algorithm};

#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Usage(String),
}

pub fn run(args: &CleanArgs) -> Result<(), CleanError> {
    let algorithm: Algorithm = args.algorithm.parse().map_err(CleanError::Usage)?;
    for dir in &args.site_dirs {
        clean_dir(dir, &args.out, algorithm)?;
    }
    Ok(())
}

fn clean_dir(dir: &Path, out: &Path, algorithm: Algorithm) -> Result<(), CleanError> {
    let read = |path: &Path| CleanError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::other("unreadable"),
    };
    let name = dir.file_name().ok_or_else(|| read(dir))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| CleanError::Read {
            path: dir.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    let mut doms = Vec::with_capacity(files.len());
    for f in &files {
        let bytes = std::fs::read(f).map_err(|source| CleanError::Read {
            path: f.clone(),
            source,
        })?;
        doms.push(parse_bytes(&bytes, None).dom);
    }
    let result = clean_site(&doms, algorithm);
    let site_out = out.join(name);
    std::fs::create_dir_all(&site_out).map_err(|source| CleanError::Write {
        path: site_out.clone(),
        source,
    })?;
    for (f, text) in files.iter().zip(&result.texts) {
        let stem = f.file_stem().ok_or_else(|| read(f))?;
        let path = site_out.join(stem).with_extension("txt");
        std::fs::write(&path, text).map_err(|source| CleanError::Write { path, source })?;
    }
    Ok(())
}
