//! Saved pages on disk: a SITE_DIR's `*.html` files as one site (regular files only, each at
//! most `MAX_FILE_BYTES`), read without hanging on a FIFO put in place after the listing.

use std::path::Path;

use super::report::Reporter;
use super::site::{Page, Site, Source};

/// The largest saved page read from a SITE_DIR; larger files are skipped (reported).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// A SITE_DIR's `*.html` pages, sorted by file name; `None` (reported) when it is unusable.
pub fn site_from_dir(dir: &Path, reporter: &Reporter<'_>) -> Option<Site> {
    let shown = dir.display();
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) => {
            reporter.problem(format!("cannot read {shown}: {e}; skipped"));
            return None;
        }
    };
    if !meta.is_dir() {
        reporter.problem(format!(
            "{shown} is not a directory (SITE_DIR arguments are directories of *.html pages; \
             use --warc for WARC files); skipped"
        ));
        return None;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::canonicalize(dir)
                .ok()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        });
    let Some(name) = name else {
        reporter.problem(format!(
            "{shown} has no directory name to write under; skipped"
        ));
        return None;
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            reporter.problem(format!("cannot read {shown}: {e}; skipped"));
            return None;
        }
    };
    let mut pages: Vec<Page> = Vec::new();
    for entry in entries {
        let path = match entry {
            Ok(e) => e.path(),
            Err(e) => {
                reporter.problem(format!("cannot list {shown}: {e}"));
                continue;
            }
        };
        let is_html = path
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("html"));
        if !is_html {
            continue;
        }
        // Regular files only (a symlink counts by its target): a FIFO would block the read
        // forever, a device such as /dev/zero never ends.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => continue,
            Ok(m) if !m.is_file() => {
                reporter.problem(format!(
                    "{} is not a regular file (a FIFO, socket or device); skipped",
                    path.display()
                ));
                continue;
            }
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                reporter.problem(format!(
                    "{} is {} bytes, over the {MAX_FILE_BYTES}-byte limit for one page; skipped",
                    path.display(),
                    m.len()
                ));
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                reporter.problem(format!("cannot read {}: {e}; skipped", path.display()));
                continue;
            }
        }
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        pages.push(Page {
            stem,
            url: None,
            source: Source::File(path),
        });
    }
    if pages.is_empty() {
        reporter.problem(format!("{shown} holds no *.html pages; skipped"));
        return None;
    }
    pages.sort_by(|a, b| a.stem.cmp(&b.stem));
    Some(Site {
        name,
        origin: shown.to_string(),
        pages,
        index: false,
    })
}

/// A saved page's bytes: a regular file, at most `MAX_FILE_BYTES` (checked again on the open
/// file: it may have changed since it was listed).
pub(super) fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    #[cfg(unix)]
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking, so a FIFO put in place after the listing does not hang the open.
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?
    };
    #[cfg(not(unix))]
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "over the {MAX_FILE_BYTES}-byte limit for one page"
        )));
    }
    Ok(bytes)
}
