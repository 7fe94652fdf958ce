//! Reading WARC files (ISO 28500: WARC/1.0, 1.1 and the older 0.x headers), plain or gzip'd
//! (one gzip member per record, as crawlers write them, or one for the whole file), record by
//! record, and the HTTP responses that `response` records hold. Writing is below: `write` makes
//! one record a gzip member, `files` keeps the set of files a crawl writes (rotation, crash
//! safety).
//!
//! Robustness is the point: a malformed record is reported and skipped (the reader looks for the
//! next `WARC/` version line), a truncated final record or a corrupt gzip stream ends the file
//! with an error, and no length in the input makes the reader allocate beyond `MAX_BLOCK`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

pub mod files;
pub mod sha1x2;
pub mod write;

/// The largest record block read into memory; larger blocks are skipped and reported.
pub const MAX_BLOCK: u64 = 64 << 20;
/// The largest header section (WARC or HTTP) accepted.
const MAX_HEADER: usize = 64 << 10;

#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    #[error("read error: {0}")]
    Io(#[from] io::Error),
    /// The record at `offset` (in the decompressed stream) could not be read; the reader
    /// skipped to the next record.
    #[error("malformed record at byte {offset}: {reason}")]
    Malformed { offset: u64, reason: String },
    /// The file ends inside the record at `offset`.
    #[error("truncated record at byte {offset}: {reason}")]
    Truncated { offset: u64, reason: String },
}

/// One WARC record: its named fields, in order, and its block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Byte offset of the record in the (decompressed) stream.
    pub offset: u64,
    pub headers: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl Record {
    /// The first field named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// `WARC-Type`, lower-cased.
    pub fn warc_type(&self) -> Option<String> {
        self.header("WARC-Type").map(str::to_ascii_lowercase)
    }

    /// `WARC-Target-URI` (angle brackets, as WARC/1.1's grammar shows, removed).
    pub fn target_uri(&self) -> Option<&str> {
        self.header("WARC-Target-URI")
            .map(|u| u.trim_start_matches('<').trim_end_matches('>'))
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Records of a WARC stream, in order.
pub struct WarcReader<R> {
    inner: R,
    /// Bytes consumed from the (decompressed) stream.
    offset: u64,
    done: bool,
}

/// Open a WARC file; gzip is recognised by its magic bytes, not by the file name.
pub fn open(path: &Path) -> io::Result<WarcReader<Box<dyn BufRead + Send>>> {
    let mut file = BufReader::new(File::open(path)?);
    let gz = file.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let inner: Box<dyn BufRead + Send> = if gz {
        Box::new(BufReader::new(MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    };
    Ok(WarcReader::new(inner))
}

impl<R: BufRead> WarcReader<R> {
    pub fn new(inner: R) -> WarcReader<R> {
        WarcReader {
            inner,
            offset: 0,
            done: false,
        }
    }

    /// One line including its `\n`, at most `MAX_HEADER` bytes; empty at end of input.
    fn line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        let n = (&mut self.inner)
            .take(MAX_HEADER as u64)
            .read_until(b'\n', &mut line)?;
        self.offset += n as u64;
        Ok(line)
    }

    fn next_record(&mut self) -> Result<Option<Record>, WarcError> {
        // Skip the blank lines that end the previous record (and any stray ones).
        let start = loop {
            let at = self.offset;
            let line = self.line()?;
            if line.is_empty() {
                return Ok(None);
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if line.starts_with(b"WARC/") {
                break at;
            }
            // Not a record start: resynchronise on the next version line.
            self.resync()?;
            return Err(WarcError::Malformed {
                offset: at,
                reason: format!("expected a WARC/ version line, found {:?}", preview(&line)),
            });
        };
        let mut headers = Vec::new();
        let mut size = 0usize;
        loop {
            let line = self.line()?;
            if line.is_empty() {
                return Err(self.truncated(start, "end of file inside the record header"));
            }
            size += line.len();
            if size > MAX_HEADER {
                self.resync()?;
                return Err(malformed(start, "record header too long"));
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                break;
            }
            match text.split_once(':') {
                Some((k, v)) => headers.push((k.trim().to_string(), v.trim().to_string())),
                None if text.starts_with([' ', '\t']) => {
                    // A folded continuation line.
                    if let Some((_, v)) = headers.last_mut() {
                        v.push(' ');
                        v.push_str(text.trim());
                    }
                }
                None => {
                    self.resync()?;
                    return Err(malformed(start, &format!("bad header line {text:?}")));
                }
            }
        }
        let Some(len) = header(&headers, "Content-Length").and_then(|v| v.parse::<u64>().ok())
        else {
            self.resync()?;
            return Err(malformed(start, "missing or invalid Content-Length"));
        };
        if len > MAX_BLOCK {
            let skipped = io::copy(&mut (&mut self.inner).take(len), &mut io::sink())?;
            self.offset += skipped;
            if skipped < len {
                return Err(self.truncated(start, "end of file inside the record block"));
            }
            return Err(malformed(
                start,
                &format!("block of {len} bytes is over the {MAX_BLOCK}-byte limit"),
            ));
        }
        let mut block = Vec::with_capacity(len as usize);
        let got = (&mut self.inner).take(len).read_to_end(&mut block)?;
        self.offset += got as u64;
        if (got as u64) < len {
            return Err(self.truncated(start, &format!("block has {got} of its {len} bytes")));
        }
        Ok(Some(Record {
            offset: start,
            headers,
            block,
        }))
    }

    /// Skip lines until the next one that starts a record, leaving it unread.
    fn resync(&mut self) -> io::Result<()> {
        loop {
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() || buf.starts_with(b"WARC/") {
                return Ok(());
            }
            if self.line()?.is_empty() {
                return Ok(());
            }
        }
    }

    fn truncated(&mut self, offset: u64, reason: &str) -> WarcError {
        self.done = true;
        WarcError::Truncated {
            offset,
            reason: reason.to_string(),
        }
    }
}

fn malformed(offset: u64, reason: &str) -> WarcError {
    WarcError::Malformed {
        offset,
        reason: reason.to_string(),
    }
}

fn preview(line: &[u8]) -> String {
    String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned()
}

impl<R: BufRead> Iterator for WarcReader<R> {
    type Item = Result<Record, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(WarcError::Io(e)) => {
                // A corrupt gzip stream or a failing disk: nothing after it can be trusted.
                self.done = true;
                Some(Err(WarcError::Io(e)))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HttpError {
    #[error("not an HTTP response: {0}")]
    Malformed(String),
    #[error("body over the {0}-byte limit")]
    TooLarge(usize),
    #[error("unsupported content-encoding {0:?}")]
    Encoding(String),
}

/// An HTTP response as a `response` record holds it: the body de-chunked and decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The media type of `Content-Type`, lower-cased, without parameters.
    pub fn media_type(&self) -> Option<String> {
        self.header("Content-Type").map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    }
}

/// The status code of a `response` record's block, from its status line alone (nothing else is
/// parsed or decoded).
pub fn http_status(block: &[u8]) -> Result<u16, HttpError> {
    let end = memchr::memchr(b'\n', block).unwrap_or(block.len());
    status_code(&String::from_utf8_lossy(&block[..end]))
}

/// The code of an HTTP status line (`HTTP/1.1 200 OK`).
fn status_code(status_line: &str) -> Result<u16, HttpError> {
    let mut parts = status_line.split_ascii_whitespace();
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/") {
        return Err(HttpError::Malformed(format!(
            "status line {:?}",
            preview(status_line.as_bytes())
        )));
    }
    parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| HttpError::Malformed(format!("status line {status_line:?}")))
}

/// Parse a `response` record's block. `max_body` caps the decoded body (decompression bombs).
pub fn parse_http_response(block: &[u8], max_body: usize) -> Result<HttpResponse, HttpError> {
    let head_end = find(block, b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| find(block, b"\n\n").map(|i| (i, i + 2)))
        .ok_or_else(|| HttpError::Malformed("no end of headers".into()))?;
    let head = String::from_utf8_lossy(&block[..head_end.0]);
    let mut lines = head.lines();
    let status = status_code(lines.next().unwrap_or(""))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = block[head_end.1..].to_vec();
    if header(&headers, "Transfer-Encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        body = dechunk(&body)?;
    }
    if let Some(enc) = header(&headers, "Content-Encoding") {
        body = decode_content(body, enc, max_body)?;
    }
    if body.len() > max_body {
        return Err(HttpError::TooLarge(max_body));
    }
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

/// Undo a `Content-Encoding` (a list such as `gzip, gzip`: the last coding applied is undone
/// first), the decoded body at most `max_body` bytes. Also used by the crawl's fetch for the
/// codings its HTTP client leaves undone (lists of them).
pub fn decode_content(
    mut body: Vec<u8>,
    content_encoding: &str,
    max_body: usize,
) -> Result<Vec<u8>, HttpError> {
    for coding in content_encoding
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .rev()
    {
        body = decode(&body, &coding, max_body)?;
    }
    Ok(body)
}

/// Undo `Transfer-Encoding: chunked`. A body cut short keeps the chunks that arrived.
fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let Some(eol) = find(data, b"\n") else {
            return Ok(out);
        };
        let size_text = String::from_utf8_lossy(&data[..eol]);
        let size_text = size_text
            .trim()
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let size = usize::from_str_radix(&size_text, 16)
            .map_err(|_| HttpError::Malformed(format!("chunk size {size_text:?}")))?;
        data = &data[eol + 1..];
        if size == 0 {
            return Ok(out);
        }
        let take = size.min(data.len());
        out.extend_from_slice(&data[..take]);
        data = &data[take..];
        // The CRLF after the chunk.
        if data.starts_with(b"\r\n") {
            data = &data[2..];
        } else if data.starts_with(b"\n") {
            data = &data[1..];
        }
    }
}

fn decode(body: &[u8], coding: &str, max_body: usize) -> Result<Vec<u8>, HttpError> {
    let limit = max_body as u64 + 1;
    let mut out = Vec::new();
    let read = match coding {
        "" | "identity" => return Ok(body.to_vec()),
        "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(body)
            .take(limit)
            .read_to_end(&mut out),
        // "deflate" is zlib-wrapped by the RFC, raw deflate in practice often enough.
        "deflate" => {
            let r = flate2::read::ZlibDecoder::new(body)
                .take(limit)
                .read_to_end(&mut out);
            if r.is_err() {
                out.clear();
                flate2::read::DeflateDecoder::new(body)
                    .take(limit)
                    .read_to_end(&mut out)
            } else {
                r
            }
        }
        other => return Err(HttpError::Encoding(other.to_string())),
    };
    // A stream cut short still yields what it decoded; an undecodable one yields nothing.
    if read.is_err() && out.is_empty() {
        return Err(HttpError::Malformed(format!(
            "{coding} body does not decode"
        )));
    }
    if out.len() > max_body {
        return Err(HttpError::TooLarge(max_body));
    }
    Ok(out)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(data: &[u8]) -> Vec<Result<Record, String>> {
        WarcReader::new(data)
            .map(|r| r.map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn records_come_out_in_order_with_their_blocks() {
        let mut data = record("warcinfo", "", b"software: test");
        data.extend(record(
            "response",
            "<http://a.example/x>",
            b"HTTP/1.1 200 OK\r\n\r\nhi",
        ));
        let recs = read_all(&data);
        assert_eq!(recs.len(), 2);
        let r = recs[1].as_ref().unwrap();
        assert_eq!(r.warc_type().as_deref(), Some("response"));
        assert_eq!(r.target_uri(), Some("http://a.example/x"));
        assert_eq!(r.block, b"HTTP/1.1 200 OK\r\n\r\nhi");
    }

    #[test]
    fn garbage_between_records_is_reported_and_skipped() {
        let mut data = record("response", "http://a/1", b"one");
        data.extend_from_slice(b"garbage line\nmore garbage\n");
        data.extend(record("response", "http://a/2", b"two"));
        let recs = read_all(&data);
        assert_eq!(recs.len(), 3);
        assert!(recs[1].as_ref().unwrap_err().contains("malformed"));
        assert_eq!(recs[2].as_ref().unwrap().block, b"two");
    }

    #[test]
    fn a_truncated_final_record_ends_the_file_with_an_error() {
        let mut data = record("response", "http://a/1", b"one");
        data.extend_from_slice(
            b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 500\r\n\r\nshort",
        );
        let recs = read_all(&data);
        assert_eq!(recs.len(), 2);
        assert!(recs[1].as_ref().unwrap_err().contains("truncated"));
    }

    #[test]
    fn a_missing_content_length_is_malformed() {
        let mut data = b"WARC/1.0\r\nWARC-Type: response\r\n\r\nbody\r\n\r\n".to_vec();
        data.extend(record("response", "http://a/2", b"two"));
        let recs = read_all(&data);
        assert!(recs[0].as_ref().unwrap_err().contains("Content-Length"));
        assert_eq!(recs.last().unwrap().as_ref().unwrap().block, b"two");
    }

    #[test]
    fn multi_member_gzip_files_read_like_plain_ones() {
        let a = record("response", "http://a/1", b"one");
        let b = record("response", "http://a/2", b"two");
        let mut gz = gzip(&a);
        gz.extend(gzip(&b));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.warc.gz");
        std::fs::write(&path, gz).unwrap();
        let recs: Vec<Record> = open(&path).unwrap().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].block, b"two");
    }

    #[test]
    fn http_bodies_are_dechunked_and_decoded() {
        let gz = gzip(b"<p>hello</p>");
        let mut chunked = format!("{:x}\r\n", 5).into_bytes();
        chunked.extend_from_slice(&gz[..5]);
        chunked.extend_from_slice(format!("\r\n{:x}\r\n", gz.len() - 5).as_bytes());
        chunked.extend_from_slice(&gz[5..]);
        chunked.extend_from_slice(b"\r\n0\r\n\r\n");
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
            Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
            .to_vec();
        block.extend(chunked);
        let r = parse_http_response(&block, 1 << 20).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.media_type().as_deref(), Some("text/html"));
        assert_eq!(r.body, b"<p>hello</p>");
    }

    #[test]
    fn decompression_is_capped() {
        let gz = gzip(&vec![b'a'; 100_000]);
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend(gz);
        assert_eq!(
            parse_http_response(&block, 1000),
            Err(HttpError::TooLarge(1000))
        );
    }

    #[test]
    fn non_http_blocks_are_rejected() {
        assert!(parse_http_response(b"garbage", 10).is_err());
        assert!(parse_http_response(b"HTTP/1.1 abc\r\n\r\n", 10).is_err());
    }
}
