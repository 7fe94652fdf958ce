//! The crawl's WARC archive (`crawl.warc_dir`, docs/warc.md): each HTTP response the crawler
//! gets becomes a `response` record, or a `revisit` (a page whose body is byte-for-byte one its
//! site already stored, or a 304), followed by its `request` record; each record is a gzip
//! member in the files of a `warc::files::FileSet`. Records are built (digests, compression)
//! outside the archive's lock; the worker writes a fetch's records and then commits it to the
//! store under that lock (`Archive::lock`), so the store's duplicate verdict and the revisit
//! agree, and after a kill -9 every page the store kept has its records in a file.

use std::sync::{Mutex, MutexGuard, PoisonError};

use flate2::Compression;
use url::Url;

use super::fetch::Exchange;
use crate::config::Config;
use crate::warc::files::{FileSet, FileSetOptions, Recovered, WarcWriteError};
use crate::warc::sha1x2::sha1_two;
use crate::warc::write::{
    date_ms, gzip_record, gzip_record_spliced, record_id, sha1_digest, sha1_label, unix_ms,
    Deflated,
};

/// The profile of a revisit whose payload is a stored page's.
pub const IDENTICAL_PAYLOAD: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
/// The profile of a revisit for a 304 Not Modified.
pub const NOT_MODIFIED: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/// gzip level of the records: the fastest. With the zlib-rs backend a page's records take about
/// 0.41 of its HTML at it, for 0.31 ms of CPU per page against 0.40–0.45 ms at level 2 (0.32
/// of the HTML): CPU is the crawl's bottleneck, disk the cheaper side (docs/warc.md, "Figures").
const LEVEL: u32 = 1;

/// What of a response's body thresher has.
#[derive(Clone, Copy, Debug)]
pub enum Body<'a> {
    /// The whole body (decoded, as the crawl parses it).
    Whole(&'a [u8]),
    /// The whole body, and its raw deflate ([`Archive::deflate`]) that the store keeps too:
    /// the response record splices it in rather than compressing the body again.
    Deflated(&'a [u8], &'a Deflated),
    /// The body up to the fetch's cap (robots.txt).
    Cut(&'a [u8]),
    /// Not downloaded: redirects, other statuses, non-HTML pages.
    NotRead,
}

/// The records of one exchange, built and compressed, waiting to be written.
pub struct Capture {
    /// The response's record id (the revisit written in its place takes it, so the request's
    /// `WARC-Concurrent-To` holds either way).
    id: String,
    date: String,
    target: String,
    ip: Option<String>,
    /// The response's status line and headers as stored (a revisit's block).
    http_head: Vec<u8>,
    payload_digest: String,
    /// The `response` record (a `revisit` for a 304), as a gzip member.
    response: Vec<u8>,
    /// The `request` record, as a gzip member.
    request: Vec<u8>,
}

impl Capture {
    /// Bytes its records take in a file (the revisit written in a response's place aside).
    pub fn bytes(&self) -> usize {
        self.response.len() + self.request.len()
    }
}

/// The stored page a duplicate body repeats (a revisit refers to it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Original {
    pub url: String,
    /// Its capture's `WARC-Date`, in Unix ms (the page's `fetched_at_ms`).
    pub date_ms: u64,
}

/// The WARC files of a crawl.
pub struct Archive {
    files: Mutex<FileSet>,
    level: Compression,
}

/// The archive held: a fetch's records and its store commit go through one of these.
pub struct ArchiveLock<'a> {
    files: MutexGuard<'a, FileSet>,
    level: Compression,
}

impl Archive {
    /// The archive in `config.crawl.warc_dir` (`None` when that is unset), after finishing the
    /// files a killed run left there.
    pub fn open(config: &Config) -> Result<Option<(Archive, Vec<Recovered>)>, WarcWriteError> {
        let Some(dir) = &config.crawl.warc_dir else {
            return Ok(None);
        };
        let level = Compression::new(LEVEL);
        let options = FileSetOptions {
            prefix: "thresher".into(),
            max_bytes: config.crawl.warc_file_bytes,
            level,
            info: warcinfo(config),
        };
        let (files, recovered) = FileSet::open(dir, options)?;
        Ok(Some((
            Archive {
                files: Mutex::new(files),
                level,
            },
            recovered,
        )))
    }

    /// Build the records of the exchange `x`, a GET of `url` (no lock taken: the digests and
    /// compression run here, on the caller's thread).
    pub fn capture(&self, url: &Url, x: &Exchange, body: Body<'_>) -> Capture {
        let (payload, truncated, deflated) = match body {
            Body::Whole(b) => (b, None, None),
            Body::Deflated(b, d) => (b, None, Some(d)),
            Body::Cut(b) => (b, Some("length"), None),
            Body::NotRead => (&[][..], Some("unspecified"), None),
        };
        let id = record_id();
        let date = date_ms(unix_ms(x.started));
        let target = url.as_str().to_string();
        let ip = x.remote_ip.map(|ip| ip.to_string());
        let http_head = response_head(x, payload.len());
        // A response's two digests hash the body twice: side by side, for little more than once.
        let (payload_sha1, block_sha1) = sha1_two(&[payload], &[&http_head, payload]);
        let payload_digest = sha1_label(&payload_sha1);
        // The response's (or 304 revisit's) leading fields.
        let answer = |kind| lead(kind, &id, &date, &target, ip.as_deref());
        let response = if x.status == 304 {
            // Nothing was sent again: the block is the status line and headers.
            let block_digest = sha1_digest(&[&http_head]);
            let mut fields = answer("revisit");
            fields.extend([
                ("WARC-Profile", NOT_MODIFIED),
                ("WARC-Refers-To-Target-URI", target.as_str()),
                ("Content-Type", "application/http; msgtype=response"),
                ("WARC-Block-Digest", block_digest.as_str()),
            ]);
            gzip_record(&fields, &[&http_head], self.level)
        } else {
            let block_digest = sha1_label(&block_sha1);
            let mut fields = answer("response");
            fields.extend([
                ("Content-Type", "application/http; msgtype=response"),
                ("WARC-Payload-Digest", payload_digest.as_str()),
                ("WARC-Block-Digest", block_digest.as_str()),
            ]);
            fields.extend(truncated.map(|t| ("WARC-Truncated", t)));
            match deflated {
                Some(d) => gzip_record_spliced(&fields, &http_head, d, self.level),
                None => gzip_record(&fields, &[&http_head, payload], self.level),
            }
        };
        let request_head = request_head(url, x);
        let request_id = record_id();
        let request_digest = sha1_digest(&[&request_head]);
        let mut fields = lead("request", &request_id, &date, &target, ip.as_deref());
        fields.extend([
            ("WARC-Concurrent-To", id.as_str()),
            ("Content-Type", "application/http; msgtype=request"),
            ("WARC-Block-Digest", request_digest.as_str()),
        ]);
        let request = gzip_record(&fields, &[&request_head], self.level);
        Capture {
            id,
            date,
            target,
            ip,
            http_head,
            payload_digest,
            response,
            request,
        }
    }

    /// `body` compressed as its response record will hold it ([`Body::Deflated`]), for the
    /// caller to keep as well (the store's copy of a page's HTML).
    pub fn deflate(&self, body: &[u8]) -> Deflated {
        Deflated::of(body, self.level)
    }

    /// Hold the archive: write a fetch's records, then commit the fetch, before releasing it.
    pub fn lock(&self) -> ArchiveLock<'_> {
        ArchiveLock {
            files: self.files.lock().unwrap_or_else(PoisonError::into_inner),
            level: self.level,
        }
    }

    /// Finish the file being written (fsync, rename); its path.
    pub fn finish(&self) -> Result<Option<std::path::PathBuf>, WarcWriteError> {
        self.lock().files.finish()
    }
}

impl ArchiveLock<'_> {
    /// Write `capture`'s records: the response, or a revisit of `original` in its place when
    /// the body repeats that stored page; then the request.
    pub fn write(
        &mut self,
        capture: &Capture,
        original: Option<&Original>,
    ) -> Result<(), WarcWriteError> {
        let (first, request) = self.members(capture, original);
        self.append(&first, request)
    }

    /// The records [`Self::write`] writes for `capture`: the response (or the revisit of
    /// `original` in its place), then the request.
    pub fn members<'c>(
        &self,
        capture: &'c Capture,
        original: Option<&Original>,
    ) -> (std::borrow::Cow<'c, [u8]>, &'c [u8]) {
        let first = match original {
            None => std::borrow::Cow::Borrowed(&capture.response[..]),
            Some(o) => std::borrow::Cow::Owned(revisit(capture, o, self.level)),
        };
        (first, &capture.request)
    }

    /// Write a capture's records ([`Self::members`]).
    pub fn append(&mut self, first: &[u8], request: &[u8]) -> Result<(), WarcWriteError> {
        self.files.append(&[first, request])
    }
}

/// A revisit of `original` in place of `capture`'s response: the same id, date and target, the
/// response's status line and headers as its block, and the payload digest both share.
fn revisit(capture: &Capture, original: &Original, level: Compression) -> Vec<u8> {
    let block_digest = sha1_digest(&[&capture.http_head]);
    let refers_date = date_ms(original.date_ms);
    let mut fields = lead(
        "revisit",
        &capture.id,
        &capture.date,
        &capture.target,
        capture.ip.as_deref(),
    );
    fields.extend([
        ("WARC-Profile", IDENTICAL_PAYLOAD),
        ("WARC-Refers-To-Target-URI", original.url.as_str()),
        ("WARC-Refers-To-Date", refers_date.as_str()),
        ("Content-Type", "application/http; msgtype=response"),
        ("WARC-Payload-Digest", capture.payload_digest.as_str()),
        ("WARC-Block-Digest", block_digest.as_str()),
    ]);
    gzip_record(&fields, &[&capture.http_head], level)
}

/// The fields every record of a capture starts with: its type, id, date and target, and the
/// peer's address when known.
fn lead<'a>(
    kind: &'a str,
    id: &'a str,
    date: &'a str,
    target: &'a str,
    ip: Option<&'a str>,
) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![
        ("WARC-Type", kind),
        ("WARC-Record-ID", id),
        ("WARC-Date", date),
        ("WARC-Target-URI", target),
    ];
    fields.extend(ip.map(|ip| ("WARC-IP-Address", ip)));
    fields
}

/// The request as sent: `GET target version`, then the client's headers.
fn request_head(url: &Url, x: &Exchange) -> Vec<u8> {
    let mut target = url.path().to_string();
    if let Some(q) = url.query() {
        target.push('?');
        target.push_str(q);
    }
    let mut head = format!("GET {target} {}\r\n", x.request_version);
    for (name, value) in &x.request_headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// The response's status line and headers as stored in front of a payload of `stored` bytes.
/// The payload is stored decoded (de-chunked, and decompressed as reqwest or thresher decoded
/// it), so the headers that describe the bytes on the wire are kept under an `x-crawler-` name
/// (Common Crawl's convention): `transfer-encoding`, `content-encoding`, and a `content-length`
/// that is not the stored length; a `content-length` of the stored length is then written, so
/// any reader can take the payload as it is.
fn response_head(x: &Exchange, stored: usize) -> Vec<u8> {
    let mut head = format!("{} {} {}\r\n", x.version, x.status, x.reason).into_bytes();
    let mut length_kept = false;
    for (name, value) in &x.headers {
        let wire_only = match name.as_str() {
            "transfer-encoding" | "content-encoding" => true,
            "content-length" if !length_kept && value == stored.to_string().as_bytes() => {
                length_kept = true;
                false
            }
            "content-length" => true,
            _ => false,
        };
        if wire_only {
            head.extend_from_slice(b"x-crawler-");
        }
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    if !length_kept {
        head.extend_from_slice(format!("content-length: {stored}\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// The block of each file's `warcinfo` record.
fn warcinfo(config: &Config) -> String {
    let mut info = format!(
        "software: thresher/{} (https://github.com/thresher-crawler/thresher)\r\n\
         format: WARC File Format 1.1\r\n\
         conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
        env!("CARGO_PKG_VERSION")
    );
    if let Some(host) = hostname() {
        info.push_str(&format!("hostname: {host}\r\n"));
    }
    info.push_str(&format!(
        "http-header-user-agent: {}\r\nrobots: obey (robots.txt token {:?})\r\n",
        one_line(&config.fetch.user_agent),
        config.fetch.robots_token
    ));
    info
}

/// `s` without line breaks (a field value is one line).
fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// This machine's host name, when the system tells.
#[cfg(unix)]
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for writes of its length; gethostname NUL-terminates within
    // it on success (POSIX leaves truncation unspecified, so the NUL is searched for).
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0)?;
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    (!name.is_empty()).then(|| one_line(&name))
}

#[cfg(not(unix))]
pub fn hostname() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    fn exchange(status: u16, headers: &[(&str, &str)]) -> Exchange {
        Exchange {
            started: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_500),
            version: "HTTP/1.0",
            request_version: "HTTP/1.1",
            request_headers: vec![("user-agent", "bot".into()), ("host", "a.example".into())],
            status,
            reason: "OK".into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
                .collect(),
            remote_ip: Some("127.0.0.1".parse().unwrap()),
        }
    }

    #[test]
    fn wire_headers_are_renamed_and_the_stored_length_written() {
        let x = exchange(
            200,
            &[
                ("content-type", "text/html"),
                ("transfer-encoding", "chunked"),
                ("content-encoding", "gzip, gzip"),
                ("content-length", "99"),
            ],
        );
        let head = String::from_utf8(response_head(&x, 12)).unwrap();
        assert_eq!(
            head,
            "HTTP/1.0 200 OK\r\ncontent-type: text/html\r\nx-crawler-transfer-encoding: chunked\r\n\
             x-crawler-content-encoding: gzip, gzip\r\nx-crawler-content-length: 99\r\n\
             content-length: 12\r\n\r\n"
        );
        // A length that is the stored one stays as it is, and is not written twice.
        let x = exchange(200, &[("content-length", "12")]);
        let head = String::from_utf8(response_head(&x, 12)).unwrap();
        assert_eq!(head, "HTTP/1.0 200 OK\r\ncontent-length: 12\r\n\r\n");
    }

    #[test]
    fn the_request_is_the_target_with_the_client_headers() {
        let url: Url = "http://a.example/p/q?x=1#frag".parse().unwrap();
        let head = String::from_utf8(request_head(&url, &exchange(200, &[]))).unwrap();
        assert_eq!(
            head,
            "GET /p/q?x=1 HTTP/1.1\r\nuser-agent: bot\r\nhost: a.example\r\n\r\n"
        );
    }

    #[test]
    fn warcinfo_names_the_software_format_and_user_agent() {
        let info = warcinfo(&Config::default());
        assert!(info.starts_with("software: thresher/"), "{info}");
        assert!(info.contains("format: WARC File Format 1.1\r\n"), "{info}");
        assert!(
            info.contains(&format!(
                "http-header-user-agent: {}\r\n",
                Config::default().fetch.user_agent
            )),
            "{info}"
        );
        assert!(info.ends_with("\r\n") && !info.contains("\n\n"), "{info}");
    }
}
