//! Files under an output directory, for every command that writes them (the crawl's learner,
//! `clean`, `clean --warc`, `export`, `inspect`): the one mapping from a site key to a directory
//! name, the one atomic write, and a cleaned page's file format (`TextFormat`, and what a
//! Markdown file keeps: `parts`). Below `cmd` and `learn`, which both use it.
//!
//! Invariants: [`site_dir_name`] never yields a name that leaves the output directory (`.`,
//! `..`, a `/`, an empty name) or is too long for a file system, and distinct site keys never
//! share a directory; [`AtomicFile`] leaves the old file or the new one, never half of one,
//! and no temporary file behind when it fails.

pub mod parts;

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use parts::MarkdownParts;

/// The format of a cleaned page's file: plain text (`.txt`) or Markdown (`.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextFormat {
    #[default]
    Text,
    Markdown,
}

impl TextFormat {
    /// The names `--format` and `crawl.format` take.
    pub const NAMES: [&'static str; 2] = ["text", "markdown"];

    /// The format named `name`.
    pub fn named(name: &str) -> Option<TextFormat> {
        match name {
            "text" => Some(TextFormat::Text),
            "markdown" => Some(TextFormat::Markdown),
            _ => None,
        }
    }

    /// The file name extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            TextFormat::Text => "txt",
            TextFormat::Markdown => "md",
        }
    }
}

/// How a cleaned page's file is written: its format, and what Markdown keeps beyond the text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileFormat {
    pub format: TextFormat,
    pub markdown: MarkdownParts,
}

impl FileFormat {
    /// The file name extension (without the dot).
    pub fn extension(self) -> &'static str {
        self.format.extension()
    }

    /// A page's file: its `text`, or its `markdown` with what `markdown` parts leave.
    pub fn body<'a>(self, text: &'a str, markdown: &'a str) -> Cow<'a, str> {
        match self.format {
            TextFormat::Text => Cow::Borrowed(text),
            TextFormat::Markdown => self.markdown.apply(markdown),
        }
    }
}

/// The longest directory name [`site_dir_name`] returns, in bytes (file systems allow 255).
pub const MAX_DIR_NAME: usize = 120;

/// A site key (`host` or `host:port`, as `crawl::url::site_key` makes it) as the name of its
/// directory under the output directory.
///
/// A key made of lower-case ASCII letters, digits, `-` and `.` (not at the start), with an
/// optional `:port`, keeps its readable form with `:` → `_` (`example.com`,
/// `127.0.0.1_8080`). Any other key — a host such as `..` or `.` (reachable through
/// `http://%2e%2e/` behind a proxy, or named in a WARC), other characters, an IPv6 literal, a
/// name over `MAX_DIR_NAME` bytes — becomes a safe prefix (odd characters → `_`, a leading `.`
/// → `_`, at most 100 bytes) plus `~` and the 16 hex digits of the key's xxh3, so the name
/// stays inside the output directory, fits any file system, and never collides with another
/// key's (plain names contain no `~`).
pub fn site_dir_name(site: &str) -> String {
    let (host, port) = match site.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => (h, Some(p)),
        _ => (site, None),
    };
    let plain = !host.is_empty()
        && !host.starts_with('.')
        && host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
    let readable = match port {
        Some(p) => format!("{host}_{p}"),
        None => host.to_string(),
    };
    if plain && readable.len() <= MAX_DIR_NAME {
        return readable;
    }
    let mut prefix: String = site
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if prefix.starts_with('.') {
        prefix.replace_range(..1, "_");
    }
    format!("{prefix}~{:016x}", xxh3_64(site.as_bytes()))
}

/// Write `bytes` to `path` atomically (see [`AtomicFile`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // One write of the whole: no buffer to fill (and allocate) first.
    let mut f = AtomicFile::with_buffer(path, 0)?;
    f.write_all(bytes)?;
    f.commit()
}

/// A file written under a temporary name beside its target (`.NAME.tmp`) and renamed over it
/// by [`AtomicFile::commit`], so readers (and a kill -9) see the old file or the new one. Dropped
/// without a commit (an error on the way), it removes the temporary file.
pub struct AtomicFile {
    file: Option<io::BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl AtomicFile {
    /// Start writing `path`. Fails when `path` is a directory (nothing is created then).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        AtomicFile::with_buffer(path, 8 * 1024)
    }

    /// `create` with a write buffer of `capacity` bytes (0: every write goes to the file).
    fn with_buffer(path: &Path, capacity: usize) -> io::Result<AtomicFile> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
        if path.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory (a file name is needed)",
            ));
        }
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(".tmp");
        let tmp = path.with_file_name(tmp_name);
        let file = File::create(&tmp)?;
        Ok(AtomicFile {
            file: Some(io::BufWriter::with_capacity(capacity, file)),
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// Finish: flush and rename over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("invariant: committed once");
        let done = file
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
            .and_then(|_| std::fs::rename(&self.tmp, &self.path));
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file
            .as_mut()
            .expect("invariant: not committed")
            .write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file
            .as_mut()
            .expect("invariant: not committed")
            .flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed: the temporary file is all that was written.
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_site_keys_keep_their_readable_form() {
        assert_eq!(site_dir_name("example.com"), "example.com");
        assert_eq!(site_dir_name("127.0.0.1:8080"), "127.0.0.1_8080");
        assert_eq!(site_dir_name("xn--bcher-kva.de"), "xn--bcher-kva.de");
    }

    #[test]
    fn dot_hosts_and_odd_keys_stay_inside_the_output_directory() {
        for key in [
            "..",
            ".",
            "",
            "..:8080",
            ".:80",
            "../x",
            "a/b",
            "[::1]:8080",
            "x\0y",
            ".hidden",
        ] {
            let name = site_dir_name(key);
            assert!(
                !name.is_empty() && !name.starts_with('.'),
                "{key:?} → {name}"
            );
            assert!(!name.contains(['/', '\\', '\0', ':']), "{key:?} → {name}");
            assert!(name.contains('~'), "{key:?} → {name}");
            assert_eq!(Path::new(&name).components().count(), 1, "{key:?}");
        }
        assert_ne!(site_dir_name(".."), site_dir_name("."));
        assert_ne!(site_dir_name("a_b"), site_dir_name("a:b"));
    }

    #[test]
    fn long_host_names_are_cut_and_hashed() {
        let long = format!("{}.example", "a".repeat(300));
        let name = site_dir_name(&long);
        assert!(name.len() <= MAX_DIR_NAME, "{}", name.len());
        assert_ne!(name, site_dir_name(&format!("{}.example", "a".repeat(301))));
        let ok = "b".repeat(MAX_DIR_NAME);
        assert_eq!(site_dir_name(&ok), ok);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        // Uncommitted: the target is untouched, the temporary file gone.
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"three").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A directory is refused before anything is created.
        assert!(write_atomic(dir.path(), b"x").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
