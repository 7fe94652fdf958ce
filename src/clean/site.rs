//! What `clean` works on: a site (one output directory) and its pages, each with where its bytes
//! are (a saved file, a body in memory, or a WARC body set aside in the spool). Plain data: the
//! readers (`clean::dir`, `clean::warc`) build it, the cleaning reads it.

use std::path::PathBuf;

/// One host's saved pages.
#[derive(Clone, Debug)]
pub struct Site {
    /// Output directory name: the SITE_DIR's name, or the directory the crawl would write the
    /// host to (`output::site_dir_name` of its site key).
    pub name: String,
    /// Where the site came from (for messages).
    pub origin: String,
    pub pages: Vec<Page>,
    /// Write `index.tsv` (page id → URL): WARC sites, whose page ids are hashes.
    pub index: bool,
}

#[derive(Clone, Debug)]
pub struct Page {
    /// Output file stem.
    pub stem: String,
    pub url: Option<String>,
    pub source: Source,
}

#[derive(Clone, Debug)]
pub enum Source {
    /// A saved page on disk (charset from the bytes and `<meta>`).
    File(PathBuf),
    /// A response body with its `Content-Type`.
    Body {
        bytes: Vec<u8>,
        content_type: Option<String>,
    },
    /// A WARC response body set aside on disk (lz4, see `Spool`) with its `Content-Type`. A
    /// crawled page: skipped when it says noindex (`<meta name="robots">` or `x_robots_tag`),
    /// as the crawl skips it.
    Spooled {
        path: PathBuf,
        /// Decoded length.
        len: u64,
        content_type: Option<String>,
        x_robots_tag: Option<String>,
    },
}

impl Source {
    pub(super) fn len(&self) -> u64 {
        match self {
            Source::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Source::Body { bytes, .. } => bytes.len() as u64,
            Source::Spooled { len, .. } => *len,
        }
    }
}
