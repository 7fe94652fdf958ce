//! One file per page, as the crawl writes them: `DIR/<site>/<page id>.txt` (`.md` in Markdown)
//! and, per site, `index.tsv` (page id TAB URL) — the site directory named by
//! `output::site_dir_name`.

use std::path::{Path, PathBuf};

use super::{io_error, Sink};
use crate::corpus::record::{Field, Record};
use crate::corpus::CorpusError;
use crate::output::{site_dir_name, write_atomic};

/// The fields the text format needs (it writes no other).
pub const FIELDS: [Field; 3] = [Field::Id, Field::Url, Field::Text];

/// The fields the Markdown format needs.
pub const MARKDOWN_FIELDS: [Field; 3] = [Field::Id, Field::Url, Field::Markdown];

pub struct TextSink {
    dir: PathBuf,
    /// Markdown files (`.md`, the records' `markdown`), else text files.
    markdown: bool,
    /// The current site's directory and its index rows.
    site: Option<(PathBuf, String)>,
}

impl TextSink {
    /// Text files, or Markdown files when `markdown`.
    pub fn new(dir: &Path, markdown: bool) -> TextSink {
        TextSink {
            dir: dir.to_path_buf(),
            markdown,
            site: None,
        }
    }

    fn close_site(&mut self) -> Result<(), CorpusError> {
        if let Some((dir, index)) = self.site.take() {
            let path = dir.join("index.tsv");
            write_atomic(&path, index.as_bytes()).map_err(io_error(&path))?;
        }
        Ok(())
    }
}

impl Sink for TextSink {
    fn begin_host(&mut self, host: &str) -> Result<(), CorpusError> {
        self.close_site()?;
        let dir = self.dir.join(site_dir_name(host));
        std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        self.site = Some((dir, String::new()));
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), CorpusError> {
        let (dir, index) = self
            .site
            .as_mut()
            .expect("invariant: begin_host comes before a host's pages");
        let (extension, body) = if self.markdown {
            ("md", &record.markdown)
        } else {
            ("txt", &record.text)
        };
        let path = dir.join(format!("{}.{extension}", record.id));
        write_atomic(&path, body.as_bytes()).map_err(io_error(&path))?;
        index.push_str(&record.id);
        index.push('\t');
        index.push_str(&record.url);
        index.push('\n');
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), CorpusError> {
        self.close_site()
    }
}
