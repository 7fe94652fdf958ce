//! What an origin serves at a path: `Endpoint` (a reply, a sequence of replies over successive
//! hits, a tarpit, a delay, or a reply computed from the request target) and `Reply` (status,
//! headers, `Body`). Constructors cover the hostile cases a crawler must survive; `Site` is a
//! declarative path → endpoint map.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_TYPE, LOCATION};
use hyper::StatusCode;

use super::blobs;

pub const HTML: &str = "text/html; charset=utf-8";

/// A reply computed from the request target (path and query) at request time.
pub type Dynamic = Arc<dyn Fn(&str) -> Endpoint + Send + Sync>;

#[derive(Clone)]
pub enum Endpoint {
    Reply(Reply),
    /// Hit number `n` (0-based, counted per route) is served by `steps[min(n, len - 1)]`: the
    /// last step repeats. `429, 429, 200` = rate limited twice, then fine.
    Sequence(Arc<[Endpoint]>),
    /// Read the request, never answer; the connection stays open until the client gives up (or
    /// the server is dropped).
    Tarpit,
    /// Wait this long before the status line (slow first byte), then serve the inner endpoint.
    Delayed(Duration, Box<Endpoint>),
    Dynamic(Dynamic),
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Reply(r) => write!(f, "Reply({})", r.status),
            Endpoint::Sequence(s) => f.debug_list().entries(s.iter()).finish(),
            Endpoint::Tarpit => write!(f, "Tarpit"),
            Endpoint::Delayed(d, e) => write!(f, "Delayed({d:?}, {e:?})"),
            Endpoint::Dynamic(_) => write!(f, "Dynamic"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Body,
}

#[derive(Clone, Debug)]
pub enum Body {
    /// Served as-is with a Content-Length; `Bytes` clones, so serving costs no copy.
    Parts(Arc<[Bytes]>),
    /// `chunk` again and again: `total` bytes in all (Content-Length set) or forever (chunked),
    /// waiting `every` before each chunk after the first.
    Repeat {
        chunk: Bytes,
        total: Option<u64>,
        every: Option<Duration>,
    },
    /// Send `prefix` under a Content-Length of `declared`, then reset the TCP connection (RST).
    Reset { prefix: Bytes, declared: u64 },
}

impl Body {
    pub fn empty() -> Body {
        Body::Parts(Arc::from(Vec::new()))
    }

    pub fn full(bytes: impl Into<Bytes>) -> Body {
        Body::Parts(Arc::from(vec![bytes.into()]))
    }

    /// The Content-Length to declare (`None` = chunked).
    pub fn declared_len(&self) -> Option<u64> {
        match self {
            Body::Parts(parts) => Some(parts.iter().map(|p| p.len() as u64).sum()),
            Body::Repeat { total, .. } => *total,
            Body::Reset { declared, .. } => Some(*declared),
        }
    }

    /// All bytes of a finite, non-resetting body (for tests that compare what was served).
    pub fn concat(&self) -> Option<Bytes> {
        match self {
            Body::Parts(parts) if parts.len() == 1 => Some(parts[0].clone()),
            Body::Parts(parts) => Some(parts.concat().into()),
            _ => None,
        }
    }
}

impl Reply {
    pub fn new(status: u16, content_type: &str, body: Body) -> Reply {
        let status = StatusCode::from_u16(status).expect("invariant: fixture status is valid");
        let mut r = Reply {
            status,
            headers: Vec::new(),
            body,
        };
        if !content_type.is_empty() {
            r = r.header(CONTENT_TYPE.as_str(), content_type);
        }
        r
    }

    /// Add a header (repeatable names are added, not replaced).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("fixture header name");
        let value = HeaderValue::from_str(value).expect("fixture header value");
        self.headers.push((name, value));
        self
    }

    /// Add a header whose value is raw bytes (e.g. a non-UTF-8 Content-Type).
    pub fn header_bytes(mut self, name: &str, value: &[u8]) -> Reply {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("fixture header name");
        let value = HeaderValue::from_bytes(value).expect("fixture header value");
        self.headers.push((name, value));
        self
    }
}

impl From<Reply> for Endpoint {
    fn from(r: Reply) -> Endpoint {
        Endpoint::Reply(r)
    }
}

impl Endpoint {
    /// 200 text/html; charset=utf-8.
    pub fn html(body: impl Into<Bytes>) -> Endpoint {
        Endpoint::typed(HTML, body)
    }

    /// 200 text/html assembled from shared parts (no copy per request).
    pub fn html_parts(parts: Vec<Bytes>) -> Endpoint {
        Reply::new(200, HTML, Body::Parts(Arc::from(parts))).into()
    }

    /// 200 with this Content-Type (`""` = no Content-Type header at all).
    pub fn typed(content_type: &str, body: impl Into<Bytes>) -> Endpoint {
        Reply::new(200, content_type, Body::full(body)).into()
    }

    /// 200 text/plain.
    pub fn text(body: impl Into<Bytes>) -> Endpoint {
        Endpoint::typed("text/plain; charset=utf-8", body)
    }

    /// A status with a short text/plain body.
    pub fn status(code: u16) -> Endpoint {
        Reply::new(
            code,
            "text/plain; charset=utf-8",
            Body::full(format!("{code}\n")),
        )
        .into()
    }

    pub fn not_found() -> Endpoint {
        Reply::new(
            404,
            HTML,
            Body::full("<!doctype html><title>Not found</title>"),
        )
        .into()
    }

    /// A redirect (301, 302, 303, 307 or 308) to `location` (relative or absolute).
    pub fn redirect(code: u16, location: &str) -> Endpoint {
        Reply::new(
            code,
            HTML,
            Body::full("<!doctype html><title>Moved</title>"),
        )
        .header(LOCATION.as_str(), location)
        .into()
    }

    /// `code` (429 or 503) with `Retry-After: secs`.
    pub fn retry_after(code: u16, secs: u64) -> Endpoint {
        Reply::new(code, "text/plain", Body::full("slow down\n"))
            .header("retry-after", &secs.to_string())
            .into()
    }

    /// `code` with `Retry-After` as an HTTP-date `after` from the moment of the response.
    pub fn retry_after_date(code: u16, after: Duration) -> Endpoint {
        Endpoint::Dynamic(Arc::new(move |_| {
            let when = httpdate::fmt_http_date(SystemTime::now() + after);
            Reply::new(code, "text/plain", Body::full("slow down\n"))
                .header("retry-after", &when)
                .into()
        }))
    }

    /// The first `n` hits get `failure`, then `then` for ever.
    pub fn fail_first(n: usize, failure: Endpoint, then: Endpoint) -> Endpoint {
        let mut steps = vec![failure; n];
        steps.push(then);
        Endpoint::Sequence(Arc::from(steps))
    }

    /// Successive hits get successive endpoints; the last repeats.
    pub fn sequence(steps: Vec<Endpoint>) -> Endpoint {
        assert!(!steps.is_empty(), "a sequence needs a step");
        Endpoint::Sequence(Arc::from(steps))
    }

    pub fn tarpit() -> Endpoint {
        Endpoint::Tarpit
    }

    /// Wait `delay` before the status line, then serve `inner`.
    pub fn slow_first_byte(delay: Duration, inner: Endpoint) -> Endpoint {
        Endpoint::Delayed(delay, Box::new(inner))
    }

    /// 200 text/html: headers and a first byte at once, then one more byte every `every`,
    /// forever (chunked, no Content-Length).
    pub fn trickle(every: Duration) -> Endpoint {
        Reply::new(
            200,
            HTML,
            Body::Repeat {
                chunk: Bytes::from_static(b" "),
                total: None,
                every: Some(every),
            },
        )
        .into()
    }

    /// 200 text/html streamed as fast as the client reads, forever (chunked).
    pub fn endless() -> Endpoint {
        Reply::new(
            200,
            HTML,
            Body::Repeat {
                chunk: blobs::html_filler(),
                total: None,
                every: None,
            },
        )
        .into()
    }

    /// 200 text/html of exactly `total` bytes with a Content-Length (e.g. 20 MB: over the cap).
    pub fn sized(total: u64) -> Endpoint {
        Reply::new(
            200,
            HTML,
            Body::Repeat {
                chunk: blobs::html_filler(),
                total: Some(total),
                every: None,
            },
        )
        .into()
    }

    /// A ~1 MB gzip body that inflates to 1 GiB of HTML, `Content-Encoding: gzip`,
    /// `Content-Type: text/html` (built once per process, see `blobs::gzip_bomb`).
    pub fn gzip_bomb() -> Endpoint {
        Reply::new(200, HTML, Body::full(blobs::gzip_bomb()))
            .header(CONTENT_ENCODING.as_str(), "gzip")
            .into()
    }

    /// 200 text/html declaring `declared` bytes, sending the first `sent`, then a TCP reset.
    pub fn reset_mid_body(sent: usize, declared: u64) -> Endpoint {
        assert!((sent as u64) < declared, "a reset must come before the end");
        let filler = blobs::html_filler();
        let prefix: Vec<u8> = filler.iter().copied().cycle().take(sent).collect();
        Reply::new(
            200,
            HTML,
            Body::Reset {
                prefix: prefix.into(),
                declared,
            },
        )
        .into()
    }

    /// Computed per request from the target (path and query).
    pub fn dynamic(f: impl Fn(&str) -> Endpoint + Send + Sync + 'static) -> Endpoint {
        Endpoint::Dynamic(Arc::new(f))
    }

    /// Add a header to every reply this endpoint can produce (through sequences, delays and
    /// dynamic endpoints).
    pub fn with_header(self, name: &str, value: &str) -> Endpoint {
        match self {
            Endpoint::Reply(r) => Endpoint::Reply(r.header(name, value)),
            Endpoint::Sequence(s) => Endpoint::Sequence(
                s.iter()
                    .map(|e| e.clone().with_header(name, value))
                    .collect(),
            ),
            Endpoint::Tarpit => Endpoint::Tarpit,
            Endpoint::Delayed(d, e) => Endpoint::Delayed(d, Box::new(e.with_header(name, value))),
            Endpoint::Dynamic(g) => {
                let (name, value) = (name.to_string(), value.to_string());
                Endpoint::Dynamic(Arc::new(move |t| g(t).with_header(&name, &value)))
            }
        }
    }
}

/// What an origin serves: exact targets (path, or path and query) and path prefixes.
/// A request is matched on its exact target, then its path without the query, then the longest
/// matching prefix; anything else is a 404.
#[derive(Clone, Debug, Default)]
pub struct Site {
    pub routes: BTreeMap<String, Endpoint>,
    pub prefixes: Vec<(String, Endpoint)>,
}

impl Site {
    pub fn new() -> Site {
        Site::default()
    }

    pub fn route(mut self, target: &str, endpoint: impl Into<Endpoint>) -> Site {
        self.routes.insert(target.to_string(), endpoint.into());
        self
    }

    /// A 200 text/html page.
    pub fn page(self, target: &str, html: impl Into<Bytes>) -> Site {
        self.route(target, Endpoint::html(html))
    }

    /// Serve every target starting with `prefix` (longest prefix wins).
    pub fn prefix(mut self, prefix: &str, endpoint: impl Into<Endpoint>) -> Site {
        self.prefixes.push((prefix.to_string(), endpoint.into()));
        self
    }

    /// Add `other`'s routes (theirs win on a clash).
    pub fn merge(mut self, other: Site) -> Site {
        self.routes.extend(other.routes);
        self.prefixes.extend(other.prefixes);
        self
    }
}
