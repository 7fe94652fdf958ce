//! JSON Lines: one object per page with the chosen fields, in the chosen order, to standard
//! output or a file. The file's name picks its compression: `.gz` gzip (level 6), `.zst`
//! Zstandard (level 3), anything else none.

use std::io::{BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;

use super::{io_error, stdout_name, Sink};
use crate::corpus::record::{Field, Record, Value};
use crate::corpus::CorpusError;
use crate::output::AtomicFile;

/// Compression by file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub fn of(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()) {
            Some("gz") => Compression::Gzip,
            Some("zst") => Compression::Zstd,
            _ => Compression::None,
        }
    }
}

enum Out {
    Stdout(BufWriter<StdoutLock<'static>>),
    Plain(AtomicFile),
    Gzip(GzEncoder<AtomicFile>),
    Zstd(zstd::Encoder<'static, AtomicFile>),
}

impl Out {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Out::Stdout(w) => w,
            Out::Plain(w) => w,
            Out::Gzip(w) => w,
            Out::Zstd(w) => w,
        }
    }
}

pub struct JsonlSink {
    fields: Vec<Field>,
    out: Out,
    path: PathBuf,
    line: Vec<u8>,
}

impl JsonlSink {
    /// Write to `path`, or standard output when `None`.
    pub fn create(path: Option<&Path>, fields: &[Field]) -> Result<JsonlSink, CorpusError> {
        let out = match path {
            None => Out::Stdout(BufWriter::new(std::io::stdout().lock())),
            Some(p) => {
                let file = AtomicFile::create(p).map_err(io_error(p))?;
                match Compression::of(p) {
                    Compression::None => Out::Plain(file),
                    Compression::Gzip => {
                        Out::Gzip(GzEncoder::new(file, flate2::Compression::default()))
                    }
                    Compression::Zstd => {
                        Out::Zstd(zstd::Encoder::new(file, 3).map_err(io_error(p))?)
                    }
                }
            }
        };
        Ok(JsonlSink {
            fields: fields.to_vec(),
            out,
            path: path.map_or_else(stdout_name, Path::to_path_buf),
            line: Vec::with_capacity(16 * 1024),
        })
    }
}

/// `record`'s chosen fields as one JSON object (no newline).
pub fn encode(record: &Record, fields: &[Field], line: &mut Vec<u8>) {
    line.push(b'{');
    for (k, &f) in fields.iter().enumerate() {
        if k > 0 {
            line.push(b',');
        }
        line.push(b'"');
        line.extend_from_slice(f.name().as_bytes());
        line.extend_from_slice(b"\":");
        match record.value(f) {
            Value::Str(s) => {
                serde_json::to_writer(&mut *line, s).expect("invariant: a Vec takes any write")
            }
            Value::Null => line.extend_from_slice(b"null"),
            Value::U32(n) => line.extend_from_slice(n.to_string().as_bytes()),
            // Finite by construction (ratios and confidences in [0, 1]); serde_json writes
            // the shortest form that reads back to the same f64.
            Value::F64(x) => {
                serde_json::to_writer(&mut *line, &x).expect("invariant: a Vec takes any write")
            }
        }
    }
    line.push(b'}');
}

impl Sink for JsonlSink {
    fn write(&mut self, record: &Record) -> Result<(), CorpusError> {
        self.line.clear();
        encode(record, &self.fields, &mut self.line);
        self.line.push(b'\n');
        let path = &self.path;
        self.out
            .writer()
            .write_all(&self.line)
            .map_err(io_error(path))
    }

    fn finish(self: Box<Self>) -> Result<(), CorpusError> {
        let err = io_error(&self.path);
        match self.out {
            Out::Stdout(mut w) => w.flush(),
            Out::Plain(f) => f.commit(),
            Out::Gzip(g) => g.finish().and_then(AtomicFile::commit),
            Out::Zstd(z) => z.finish().and_then(AtomicFile::commit),
        }
        .map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_holds_the_chosen_fields_in_order_with_nulls() {
        let r = Record {
            id: "00000000000000ff".into(),
            url: "https://e.example/\"q\"".into(),
            lang_confidence: Some(0.25),
            cluster: 3,
            text: "line one\nline two".into(),
            ..Record::default()
        };
        let mut line = Vec::new();
        encode(
            &r,
            &[
                Field::Text,
                Field::Id,
                Field::Url,
                Field::Author,
                Field::Cluster,
                Field::LangConfidence,
            ],
            &mut line,
        );
        assert_eq!(
            String::from_utf8(line).unwrap(),
            r#"{"text":"line one\nline two","id":"00000000000000ff","url":"https://e.example/\"q\"","author":null,"cluster":3,"lang_confidence":0.25}"#
        );
    }

    #[test]
    fn compression_follows_the_file_name() {
        assert_eq!(Compression::of(Path::new("a.jsonl.gz")), Compression::Gzip);
        assert_eq!(Compression::of(Path::new("a.jsonl.zst")), Compression::Zstd);
        assert_eq!(Compression::of(Path::new("a.jsonl")), Compression::None);
        assert_eq!(Compression::of(Path::new("gz")), Compression::None);
    }
}
