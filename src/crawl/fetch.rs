//! One HTTP GET, bounded: connect / first-byte / whole-response timeouts, a body cap counted on
//! decompressed bytes (so a gzip bomb stops at the cap), redirects returned to the caller (each
//! hop is scope- and robots-checked by the scheduler), and non-HTML bodies never downloaded.
//! With capture on (`crawl.warc_dir`), each response also gives its `Exchange`: the request as
//! sent and the status line and headers as received, for the WARC archive.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{HeaderMap, CONTENT_ENCODING, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use url::Url;

use super::resolve::{ClientResolver, Resolver};
use crate::config::FetchConfig;
use crate::store::ErrorKind;

/// What to do when a body exceeds the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Keep the first `limit` bytes (robots.txt: RFC 9309 reads at least 500 KiB).
    Truncate,
    /// Fail with `TooLarge` (pages: a cut page would be stored as if whole).
    Fail,
}

/// Which bodies to download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// Only text/html and application/xhtml+xml (or no Content-Type and a body that looks like HTML).
    Html,
    /// Anything (robots.txt, sitemaps).
    Any,
}

#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: Option<String>,
    /// Headers worth storing with the page.
    pub kept_headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body hit the cap under `Overflow::Truncate`.
    pub truncated: bool,
    /// When the response headers arrived.
    pub headers_at: Instant,
    /// When the request was sent: the page's `fetched_at` and its captures' `WARC-Date`.
    pub fetched_at: SystemTime,
}

/// One HTTP exchange as the WARC archive records it (`Fetcher::capturing`). The request is
/// reconstructed (reqwest does not hand back what it wrote): method, target, and the headers
/// this client sends. The response's status line and headers are as received, except that hyper
/// lower-cases header names and reqwest drops `Content-Encoding` and `Content-Length` when it
/// decodes the body (docs/warc.md, "What a response record holds").
#[derive(Clone, Debug)]
pub struct Exchange {
    /// When the request was sent.
    pub started: SystemTime,
    /// The response's version: `HTTP/1.0`, `HTTP/1.1`, `HTTP/2.0`…
    pub version: &'static str,
    /// The request's: `HTTP/1.1` over HTTP/1 (hyper sends 1.1 whatever the server answers with),
    /// else the response's.
    pub request_version: &'static str,
    /// The request headers, in the order the client writes them (Host last, as hyper adds it).
    pub request_headers: Vec<(&'static str, String)>,
    pub status: u16,
    /// The reason phrase received (hyper keeps it when it is not the canonical one), else the
    /// canonical one.
    pub reason: String,
    /// Response headers in the order received (names lower-case), values as bytes.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The peer's address, when the connection tells.
    pub remote_ip: Option<IpAddr>,
}

/// What `Fetcher::get` gives: the outcome, and with capture on the exchange behind it (none
/// when no response arrived or the body failed).
pub type Fetched = (Result<Outcome, FetchError>, Option<Exchange>);

#[derive(Debug)]
pub enum Outcome {
    /// A 2xx response with its body (a 2xx of the wrong type is `NotHtml`).
    Ok(Response),
    /// 3xx with a Location header (raw, unresolved).
    Redirect { status: u16, location: String },
    /// 2xx whose Content-Type is not HTML: the body was not downloaded.
    NotHtml { content_type: String },
    /// 304 Not Modified to a conditional GET (`Validators` sent): the stored page stands.
    /// `kept_headers` are the response's (a new ETag may come with it).
    NotModified { kept_headers: Vec<(String, String)> },
    /// Any other status; the body is not kept.
    Status {
        status: u16,
        retry_after: Option<Duration>,
    },
}

#[derive(Debug, thiserror::Error)]
#[error("{url}: {kind}")]
pub struct FetchError {
    pub url: String,
    pub kind: FetchErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub enum FetchErrorKind {
    #[error("connect failed: {0}")]
    Connect(String),
    #[error("no response headers within {0:?}")]
    FirstByteTimeout(Duration),
    #[error("response not complete within {0:?}")]
    Timeout(Duration),
    #[error("body larger than {0} bytes")]
    TooLarge(u64),
    #[error("connection failed while reading: {0}")]
    Body(String),
    #[error("request failed: {0}")]
    Request(String),
    /// The body does not decode under its Content-Encoding (or the coding is unknown): the
    /// same request cannot succeed, so it is not retried.
    #[error("body does not decode: {0}")]
    Encoding(String),
}

impl FetchErrorKind {
    /// Worth retrying later (the same request may succeed).
    pub fn is_transient(&self) -> bool {
        !matches!(
            self,
            FetchErrorKind::TooLarge(_) | FetchErrorKind::Encoding(_)
        )
    }

    /// The kind counted and stored for a URL that ends with this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FetchErrorKind::Connect(_) => ErrorKind::Connect,
            FetchErrorKind::FirstByteTimeout(_) => ErrorKind::TimeoutFirstByte,
            FetchErrorKind::Timeout(_) => ErrorKind::Timeout,
            FetchErrorKind::TooLarge(_) => ErrorKind::TooLarge,
            FetchErrorKind::Body(_) => ErrorKind::Body,
            FetchErrorKind::Request(_) => ErrorKind::Request,
            FetchErrorKind::Encoding(_) => ErrorKind::BadEncoding,
        }
    }
}

/// What a conditional GET sends (RFC 9110 §13.1): the stored page's ETag as If-None-Match and
/// its Last-Modified as If-Modified-Since. Empty: an ordinary GET.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Validators {
    /// The validators among a stored page's kept headers.
    pub fn from_headers(headers: &[(String, String)]) -> Validators {
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        Validators {
            etag: get("etag"),
            last_modified: get("last-modified"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    /// The request headers, in the order they are sent.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = Vec::new();
        if let Some(e) = &self.etag {
            h.push(("if-none-match", e.clone()));
        }
        if let Some(m) = &self.last_modified {
            h.push(("if-modified-since", m.clone()));
        }
        h
    }
}

/// What one GET sends beyond the client's own headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ask {
    /// A conditional GET's validators (empty: an ordinary GET).
    pub validators: Validators,
    /// The origin's last request as far as the crawl knows: it asks the server to close the
    /// connection (`Connection: close`; HTTP/2 has no such header and keeps its connection), so
    /// none is kept idle, holding a descriptor, for a request that will not come.
    pub close: bool,
}

impl Ask {
    /// The request headers, in the order they are sent.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = self.validators.headers();
        if self.close {
            h.push(("connection", "close".to_string()));
        }
        h
    }
}

/// The response headers a stored page keeps.
pub(crate) const KEPT_HEADERS: &[&str] = &[
    "etag",
    "last-modified",
    "content-language",
    "x-robots-tag",
    "date",
];

/// The `Accept-Encoding` reqwest sends with the gzip, deflate and brotli features on (tower-http
/// writes it; `tests/crawl/warc.rs` checks it against what the test server receives).
const ACCEPT_ENCODING: &str = "gzip,deflate,br";

/// How long an idle connection waits for its origin's next request: past the default delay and
/// short Crawl-delays (many servers close sooner: Apache after 5 s), and short, since each one
/// holds a descriptor and a crawl moves on from sites quickly (at 30 s a broad crawl once held
/// 20,000).
const POOL_IDLE: Duration = Duration::from_secs(10);

/// Install the rustls crypto provider once per process (reqwest is built without one).
pub fn ensure_crypto_provider() {
    // An error means another part of the process installed one first: that is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    cfg: FetchConfig,
    /// Give each response's `Exchange` (the WARC archive is on).
    capture: bool,
}

impl Fetcher {
    /// A client that resolves host names through `resolver` (the crawl's, which per-server
    /// politeness reads too) and keeps at most `idle_per_origin` idle connections to an origin
    /// (more than the requests it may have in flight are never used again).
    pub fn new(
        cfg: &FetchConfig,
        resolver: Arc<Resolver>,
        idle_per_origin: usize,
    ) -> Result<Fetcher, FetchError> {
        ensure_crypto_provider();
        let setup = |message: String| FetchError {
            url: String::new(),
            kind: FetchErrorKind::Request(message),
        };
        let mut headers = reqwest::header::HeaderMap::new();
        for h in &cfg.headers {
            let (name, value) = h.split_once(':').unwrap_or((h, ""));
            let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|e| setup(format!("header {h:?}: {e}")))?;
            let value = reqwest::header::HeaderValue::from_str(value.trim())
                .map_err(|e| setup(format!("header {h:?}: {e}")))?;
            headers.append(name, value);
        }
        let mut builder = reqwest::Client::builder()
            .user_agent(cfg.user_agent.clone())
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(cfg.connect_timeout)
            .timeout(cfg.total_timeout)
            .pool_max_idle_per_host(idle_per_origin.max(1))
            .pool_idle_timeout(POOL_IDLE)
            .dns_resolver(ClientResolver(resolver));
        if !cfg.proxy.is_empty() {
            let proxy = reqwest::Proxy::all(&cfg.proxy)
                .map_err(|e| setup(format!("proxy {:?}: {e}", cfg.proxy)))?;
            builder = builder.proxy(proxy);
        }
        let client = builder.build().map_err(|e| setup(e.to_string()))?;
        Ok(Fetcher {
            client,
            cfg: cfg.clone(),
            capture: false,
        })
    }

    /// Requests go through a proxy (`fetch.proxy`, or the environment's proxy variables): the
    /// proxy resolves the host names, so a name this machine cannot resolve may still be
    /// fetched.
    pub fn proxied(&self) -> bool {
        !self.cfg.proxy.is_empty()
            || ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"].iter().any(|v| {
                [v.to_string(), v.to_ascii_lowercase()]
                    .iter()
                    .any(|name| std::env::var_os(name).is_some_and(|x| !x.is_empty()))
            })
    }

    /// With `on`, `get` also gives each response's `Exchange`.
    pub fn capturing(mut self, on: bool) -> Fetcher {
        self.capture = on;
        self
    }

    /// GET `url`, reading at most `limit` body bytes; with capture on, the exchange too.
    pub async fn get(&self, url: &Url, accept: Accept, limit: u64, overflow: Overflow) -> Fetched {
        self.get_asking(url, accept, limit, overflow, &Ask::default())
            .await
    }

    /// `get` sending what `ask` says: its validators as If-None-Match / If-Modified-Since (a
    /// 304 is then `Outcome::NotModified`, no body read), `Connection: close` on a last request.
    pub async fn get_asking(
        &self,
        url: &Url,
        accept: Accept,
        limit: u64,
        overflow: Overflow,
        ask: &Ask,
    ) -> Fetched {
        let sent = SystemTime::now();
        let mut exchange = None;
        let outcome = self
            .get_inner(url, accept, limit, overflow, ask, sent, &mut exchange)
            .await;
        // A response whose body failed is not a capture.
        let exchange = exchange.filter(|_| outcome.is_ok());
        (outcome, exchange)
    }

    #[allow(clippy::too_many_arguments)]
    async fn get_inner(
        &self,
        url: &Url,
        accept: Accept,
        limit: u64,
        overflow: Overflow,
        ask: &Ask,
        sent: SystemTime,
        exchange: &mut Option<Exchange>,
    ) -> Result<Outcome, FetchError> {
        let err = |kind| FetchError {
            url: url.to_string(),
            kind,
        };
        let started = Instant::now();
        let deadline = tokio::time::Instant::now() + self.cfg.total_timeout;
        let mut request = self.client.get(url.as_str());
        for (name, value) in ask.headers() {
            request = request.header(name, value);
        }
        let send = request.send();
        let mut resp = match tokio::time::timeout(self.cfg.first_byte_timeout, send).await {
            Err(_) => {
                return Err(err(FetchErrorKind::FirstByteTimeout(
                    self.cfg.first_byte_timeout,
                )))
            }
            Ok(Err(e)) => return Err(err(classify(&e, self.cfg.total_timeout))),
            Ok(Ok(r)) => r,
        };
        let headers_at = Instant::now();
        if self.capture {
            *exchange = Some(self.exchange(url, &resp, sent, ask));
        }
        let status = resp.status().as_u16();
        let headers = resp.headers();
        let kept = |headers: &HeaderMap| -> Vec<(String, String)> {
            KEPT_HEADERS
                .iter()
                .filter_map(|&h| header_str(headers, h).map(|v| (h.to_string(), v)))
                .collect()
        };
        if status == 304 && !ask.validators.is_empty() {
            return Ok(Outcome::NotModified {
                kept_headers: kept(headers),
            });
        }
        if (300..400).contains(&status) {
            if let Some(location) = header_str(headers, LOCATION.as_str()) {
                return Ok(Outcome::Redirect { status, location });
            }
        }
        if !(200..300).contains(&status) {
            return Ok(Outcome::Status {
                status,
                retry_after: header_str(headers, RETRY_AFTER.as_str())
                    .and_then(|v| parse_retry_after(&v, std::time::SystemTime::now())),
            });
        }
        let content_type = header_str(headers, CONTENT_TYPE.as_str());
        if accept == Accept::Html {
            if let Some(ct) = &content_type {
                if !is_html_type(ct) {
                    return Ok(Outcome::NotHtml {
                        content_type: ct.clone(),
                    });
                }
            }
        }
        // What the HTTP client left undone: it decodes one coding, not a list (`gzip, gzip`).
        let coding = header_str(headers, CONTENT_ENCODING.as_str())
            .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"));
        let kept_headers = kept(headers);

        let mut body = Vec::new();
        let mut truncated = false;
        loop {
            let chunk = match tokio::time::timeout_at(deadline, resp.chunk()).await {
                Err(_) => return Err(err(FetchErrorKind::Timeout(self.cfg.total_timeout))),
                Ok(Err(e)) => return Err(err(classify(&e, self.cfg.total_timeout))),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(c))) => c,
            };
            let room = limit.saturating_sub(body.len() as u64) as usize;
            if chunk.len() > room {
                match overflow {
                    Overflow::Fail => return Err(err(FetchErrorKind::TooLarge(limit))),
                    Overflow::Truncate => {
                        body.extend_from_slice(&chunk[..room]);
                        truncated = true;
                        break;
                    }
                }
            }
            body.extend_from_slice(&chunk);
        }
        if let Some(coding) = coding {
            let max = usize::try_from(limit).unwrap_or(usize::MAX);
            body = match crate::warc::decode_content(body, &coding, max) {
                Ok(b) => b,
                Err(crate::warc::HttpError::TooLarge(_)) if overflow == Overflow::Fail => {
                    return Err(err(FetchErrorKind::TooLarge(limit)))
                }
                Err(crate::warc::HttpError::TooLarge(_)) => {
                    truncated = true;
                    Vec::new()
                }
                Err(e) => return Err(err(FetchErrorKind::Encoding(format!("{coding}: {e}")))),
            };
        }
        if accept == Accept::Html && content_type.is_none() && !looks_like_html(&body) {
            return Ok(Outcome::NotHtml {
                content_type: "(none; body is not HTML)".into(),
            });
        }
        tracing::trace!(%url, status, bytes = body.len(), ms = started.elapsed().as_millis() as u64, "fetched");
        Ok(Outcome::Ok(Response {
            status,
            content_type,
            kept_headers,
            body,
            truncated,
            headers_at,
            fetched_at: sent,
        }))
    }

    /// The exchange behind `resp`, a response to GET `url` sent at `sent`.
    fn exchange(
        &self,
        url: &Url,
        resp: &reqwest::Response,
        sent: SystemTime,
        ask: &Ask,
    ) -> Exchange {
        let version = match resp.version() {
            reqwest::Version::HTTP_09 => "HTTP/0.9",
            reqwest::Version::HTTP_10 => "HTTP/1.0",
            reqwest::Version::HTTP_2 => "HTTP/2.0",
            reqwest::Version::HTTP_3 => "HTTP/3.0",
            _ => "HTTP/1.1",
        };
        let host = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
            None => url.host_str().unwrap_or("").to_string(),
        };
        let reason = resp
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned())
            .or_else(|| resp.status().canonical_reason().map(str::to_string))
            .unwrap_or_default();
        Exchange {
            started: sent,
            version,
            request_version: if version.starts_with("HTTP/0") || version.starts_with("HTTP/1") {
                "HTTP/1.1"
            } else {
                version
            },
            // reqwest's defaults (Accept, then the User-Agent set on the builder), the request's
            // own headers (a conditional GET's validators, Connection), the decompression layer's
            // Accept-Encoding, then hyper's Host.
            request_headers: {
                let mut h = vec![
                    ("accept", "*/*".to_string()),
                    ("user-agent", self.cfg.user_agent.clone()),
                ];
                h.extend(ask.headers());
                h.extend([
                    ("accept-encoding", ACCEPT_ENCODING.to_string()),
                    ("host", host),
                ]);
                h
            },
            status: resp.status().as_u16(),
            reason,
            headers: resp
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), v.as_bytes().to_vec()))
                .collect(),
            remote_ip: resp.remote_addr().map(|a| a.ip()),
        }
    }
}

fn header_str(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
}

fn classify(e: &reqwest::Error, total: Duration) -> FetchErrorKind {
    // The innermost source usually names the real cause (reset, refused, dns).
    let mut msg = e.to_string();
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(s) = src {
        msg = s.to_string();
        src = s.source();
    }
    if e.is_timeout() {
        FetchErrorKind::Timeout(total)
    } else if e.is_decode() {
        FetchErrorKind::Encoding(msg)
    } else if e.is_connect() {
        FetchErrorKind::Connect(msg)
    } else if e.is_body() || e.is_decode() {
        FetchErrorKind::Body(msg)
    } else {
        FetchErrorKind::Request(msg)
    }
}

/// `text/html`, `application/xhtml+xml` (parameters ignored).
pub fn is_html_type(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "text/html" || mime == "application/xhtml+xml"
}

/// A body without Content-Type is HTML when its first non-blank byte opens a tag (`clean --warc`
/// takes an untyped record's body by the same test).
pub fn looks_like_html(body: &[u8]) -> bool {
    let start = body.iter().position(|b| !b.is_ascii_whitespace());
    let head = &body[start.unwrap_or(body.len())..];
    let head = head.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(head);
    head.first() == Some(&b'<')
}

/// Retry-After: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate(v)?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

fn httpdate(v: &str) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339_weak(&imf_to_rfc3339(v)?).ok()
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` → `1994-11-06 08:49:37`.
fn imf_to_rfc3339(v: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.len() != 6 {
        return None;
    }
    let day: u32 = parts[1].parse().ok()?;
    let month = MONTHS
        .iter()
        .position(|m| parts[2].eq_ignore_ascii_case(m))?
        + 1;
    let year: u32 = parts[3].parse().ok()?;
    Some(format!("{year:04}-{month:02}-{day:02} {}", parts[4]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = humantime::parse_rfc3339_weak("2024-01-01 00:00:00").unwrap();
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Mon, 01 Jan 2024 00:00:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Sun, 31 Dec 2023 00:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn html_types() {
        assert!(is_html_type("text/html; charset=utf-8"));
        assert!(is_html_type("Application/XHTML+XML"));
        assert!(!is_html_type("application/pdf"));
        assert!(looks_like_html(b"\n  <!doctype html>"));
        assert!(!looks_like_html(b"%PDF-1.4"));
    }
}
