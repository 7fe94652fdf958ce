//! Where exported records go: a `Sink` per format — JSON Lines (`jsonl`, plain or compressed by
//! the output file's name), Parquet (`parquet`) and one text file per page (`text`). Files are
//! written through `output::AtomicFile`, so a failed export leaves no half-written file.

pub mod jsonl;
pub mod parquet;
pub mod text;

use std::path::{Path, PathBuf};

use super::record::Record;
use super::CorpusError;

/// An export's destination.
pub trait Sink {
    /// The pages of `host` come next (the text format makes its directory; hosts come in order,
    /// each once, even when none of its pages is written).
    fn begin_host(&mut self, _host: &str) -> Result<(), CorpusError> {
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), CorpusError>;

    /// Flush and commit: until this returns, the output file is not in place.
    fn finish(self: Box<Self>) -> Result<(), CorpusError>;
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Parquet,
    Text,
    Markdown,
}

impl Format {
    /// `--format`'s choices, as `choose` reads them.
    pub const NAMES: [&'static str; 4] = ["jsonl", "parquet", "text", "markdown"];

    /// The format named, or when none is, the one `out`'s name implies (`.parquet` → Parquet;
    /// anything else, and standard output, → JSON Lines).
    pub fn choose(name: Option<&str>, out: Option<&Path>) -> Result<Format, CorpusError> {
        match name {
            Some("jsonl") => Ok(Format::Jsonl),
            Some("parquet") => Ok(Format::Parquet),
            Some("text") => Ok(Format::Text),
            Some("markdown") => Ok(Format::Markdown),
            Some(other) => Err(CorpusError::Format(other.to_string())),
            None => Ok(
                if out.is_some_and(|p| p.extension().is_some_and(|e| e == "parquet")) {
                    Format::Parquet
                } else {
                    Format::Jsonl
                },
            ),
        }
    }
}

/// The error of writing `path`.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError {
    let path = path.to_path_buf();
    move |source| CorpusError::Write { path, source }
}

/// What error messages call standard output.
pub fn stdout_name() -> PathBuf {
    PathBuf::from("<stdout>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_by_name_or_by_file_name() {
        let p = |s: &str| Some(Path::new(s).to_path_buf());
        assert_eq!(Format::choose(None, None).unwrap(), Format::Jsonl);
        assert_eq!(
            Format::choose(None, p("c.parquet").as_deref()).unwrap(),
            Format::Parquet
        );
        assert_eq!(
            Format::choose(None, p("c.jsonl.zst").as_deref()).unwrap(),
            Format::Jsonl
        );
        assert_eq!(
            Format::choose(Some("text"), p("dir").as_deref()).unwrap(),
            Format::Text
        );
        assert!(Format::choose(Some("csv"), None).is_err());
    }
}
