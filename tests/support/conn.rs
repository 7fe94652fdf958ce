//! One origin's accept loop and per-connection HTTP/1.1 serving (hyper): resolve the endpoint,
//! log the hit, wait, then stream the reply through `ServedBody`, which keeps the request counted
//! as in flight until its last frame and can end a connection with a TCP reset.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{HeaderValue, CONTENT_LENGTH};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::endpoint::{Body, Endpoint, Reply};
use super::server::OriginInner;

/// How long a resetting body waits after its prefix so hyper flushes it before the reset.
const RESET_FLUSH: Duration = Duration::from_millis(30);

/// Who a listener serves: one origin, or (one port shared by many loopback addresses) the
/// origin of the address each connection was made to.
pub(super) enum Listening {
    One(Arc<OriginInner>),
    ByAddress(HashMap<IpAddr, Arc<OriginInner>>),
}

impl Listening {
    /// The origin a connection from `peer` to `local` reaches; `None`: close it (an address
    /// no origin is at, or a peer outside loopback reaching a wildcard listener).
    fn origin(&self, peer: SocketAddr, local: io::Result<SocketAddr>) -> Option<&Arc<OriginInner>> {
        match self {
            Listening::One(origin) => Some(origin),
            Listening::ByAddress(map) if peer.ip().is_loopback() => map.get(&local.ok()?.ip()),
            Listening::ByAddress(_) => None,
        }
    }
}

pub(super) async fn accept_loop(listener: TcpListener, token: CancellationToken, to: Listening) {
    loop {
        let (stream, peer) = tokio::select! {
            _ = token.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // EMFILE and friends: back off instead of spinning.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let Some(origin) = to.origin(peer, stream.local_addr()) else {
            continue;
        };
        let conn_id = origin.new_connection();
        let origin = origin.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let _ = stream.set_nodelay(true);
            let rst = Arc::new(AtomicBool::new(false));
            let io = TokioIo::new(ConnIo {
                stream,
                rst: rst.clone(),
            });
            let service = service_fn(move |req| handle(origin.clone(), conn_id, rst.clone(), req));
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .serve_connection(io, service);
            tokio::select! {
                _ = conn => {}
                _ = token.cancelled() => {}
            }
        });
    }
}

async fn handle(
    origin: Arc<OriginInner>,
    conn: u64,
    rst: Arc<AtomicBool>,
    req: Request<Incoming>,
) -> Result<Response<ServedBody>, Infallible> {
    let target = req
        .uri()
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_else(|| req.uri().to_string());
    let (endpoint, nth) = origin.lookup(&target);
    let (delay, reply) = resolve(endpoint, nth, &target);
    let reply = reply.map(|r| not_modified(r, req.headers()));
    let guard = origin.record(
        &req,
        target,
        conn,
        reply.as_ref().map(|r| r.status.as_u16()),
    );
    let wait = origin.latency() + delay;
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    let Some(reply) = reply else {
        // Tarpit: hold the request (and its in-flight count) until the connection goes away.
        let _guard = guard;
        return std::future::pending().await;
    };
    let declared = reply.body.declared_len();
    let mut builder = Response::builder().status(reply.status);
    let has_length = reply.headers.iter().any(|(n, _)| n == CONTENT_LENGTH);
    for (name, value) in reply.headers {
        builder = builder.header(name, value);
    }
    if let (Some(len), false) = (declared, has_length) {
        builder = builder.header(CONTENT_LENGTH, HeaderValue::from(len));
    }
    let body = ServedBody::new(reply.body, guard, rst);
    Ok(builder
        .body(body)
        .expect("invariant: fixture replies have valid headers"))
}

/// A conditional GET as a static file server answers it (RFC 9110 §13.1): a 200 whose ETag
/// matches If-None-Match, or (without If-None-Match) whose Last-Modified equals
/// If-Modified-Since, becomes a 304 with the same validators and no body.
fn not_modified(reply: Reply, request: &hyper::HeaderMap) -> Reply {
    if reply.status != hyper::StatusCode::OK {
        return reply;
    }
    let ours = |name: &str| {
        reply
            .headers
            .iter()
            .find(|(n, _)| n.as_str().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_bytes().to_vec())
    };
    let theirs = |name: &str| request.get(name).map(|v| v.as_bytes().to_vec());
    let fresh = match theirs("if-none-match") {
        Some(tags) => ours("etag").is_some_and(|etag| {
            tags.split(|&b| b == b',')
                .any(|t| t.trim_ascii() == etag.as_slice() || t.trim_ascii() == b"*")
        }),
        None => {
            theirs("if-modified-since").is_some_and(|since| ours("last-modified") == Some(since))
        }
    };
    if !fresh {
        return reply;
    }
    let mut r = Reply::new(304, "", Body::empty());
    for (name, value) in reply.headers {
        if matches!(
            name.as_str(),
            "etag" | "last-modified" | "date" | "cache-control"
        ) {
            r.headers.push((name, value));
        }
    }
    r
}

/// Follow sequences, dynamic endpoints and delays down to a reply (`None` = tarpit), summing
/// the delays on the way.
fn resolve(mut endpoint: Endpoint, nth: usize, target: &str) -> (Duration, Option<Reply>) {
    let mut delay = Duration::ZERO;
    loop {
        endpoint = match endpoint {
            Endpoint::Reply(r) => return (delay, Some(r)),
            Endpoint::Tarpit => return (delay, None),
            Endpoint::Sequence(steps) => steps[nth.min(steps.len() - 1)].clone(),
            Endpoint::Dynamic(f) => f(target),
            Endpoint::Delayed(d, inner) => {
                delay += d;
                *inner
            }
        }
    }
}

/// Counts a request as in flight from its arrival until its body's last frame (or until hyper
/// drops it: client gone, server stopped). Holds the request's index in the origin's log.
pub(super) struct InFlight(pub(super) Arc<OriginInner>, pub(super) usize);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(super) struct ServedBody {
    state: State,
    guard: Option<InFlight>,
    origin: Arc<OriginInner>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

enum State {
    Parts {
        parts: Arc<[Bytes]>,
        next: usize,
    },
    Repeat {
        chunk: Bytes,
        left: Option<u64>,
        every: Option<Duration>,
    },
    Reset {
        prefix: Option<Bytes>,
        rst: Arc<AtomicBool>,
    },
    Done,
}

impl ServedBody {
    fn new(body: Body, guard: InFlight, rst: Arc<AtomicBool>) -> ServedBody {
        let state = match body {
            Body::Parts(parts) => State::Parts { parts, next: 0 },
            Body::Repeat {
                chunk,
                total,
                every,
            } => State::Repeat {
                chunk,
                left: total,
                every,
            },
            Body::Reset { prefix, .. } => State::Reset {
                prefix: Some(prefix),
                rst,
            },
        };
        ServedBody {
            state,
            origin: guard.0.clone(),
            guard: Some(guard),
            sleep: None,
        }
    }

    /// The response is over (`completed`: its last frame is handed over; else reset). Stop
    /// counting it as in flight *before* that last frame leaves, so a client's next request can
    /// never look concurrent with this one.
    fn finish(&mut self, completed: bool) {
        self.state = State::Done;
        if let Some(guard) = self.guard.take() {
            if completed {
                guard.0.completed(guard.1);
            }
        }
    }
}

impl hyper::body::Body for ServedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if let Some(sleep) = this.sleep.as_mut() {
            ready!(sleep.as_mut().poll(cx));
            this.sleep = None;
        }
        let mut wait = None;
        let (out, done) = match &mut this.state {
            State::Done => (None, true),
            State::Parts { parts, next } => match parts.get(*next).cloned() {
                None => (None, true),
                Some(b) => {
                    *next += 1;
                    (Some(Ok(b)), *next == parts.len())
                }
            },
            State::Repeat { chunk, left, every } => {
                if *left == Some(0) {
                    (None, true)
                } else {
                    let n = left.map_or(chunk.len(), |l| l.min(chunk.len() as u64) as usize);
                    if let Some(l) = left {
                        *l -= n as u64;
                    }
                    wait = *every;
                    (Some(Ok(chunk.slice(..n))), *left == Some(0))
                }
            }
            State::Reset { prefix, rst } => match prefix.take() {
                Some(b) => {
                    wait = Some(RESET_FLUSH);
                    (Some(Ok(b)), false)
                }
                None => {
                    rst.store(true, Ordering::SeqCst);
                    let e = io::Error::new(io::ErrorKind::ConnectionReset, "fixture: reset");
                    (Some(Err(e)), true)
                }
            },
        };
        if let Some(d) = wait {
            this.sleep = Some(Box::pin(tokio::time::sleep(d)));
        }
        if done {
            this.finish(!matches!(out, Some(Err(_))));
        }
        match out {
            None => Poll::Ready(None),
            Some(Ok(b)) => {
                this.origin.served(b.len());
                Poll::Ready(Some(Ok(Frame::data(b))))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(e))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn size_hint(&self) -> SizeHint {
        match &self.state {
            State::Done => SizeHint::with_exact(0),
            State::Parts { parts, next } => {
                SizeHint::with_exact(parts[*next..].iter().map(|p| p.len() as u64).sum())
            }
            State::Repeat {
                left: Some(left), ..
            } => SizeHint::with_exact(*left),
            _ => SizeHint::default(),
        }
    }
}

/// The connection's socket; once a body asked for a reset, closing it sends RST (zero linger)
/// instead of FIN, and hyper's graceful shutdown is skipped.
struct ConnIo {
    stream: TcpStream,
    rst: Arc<AtomicBool>,
}

impl ConnIo {
    fn resetting(&self) -> bool {
        self.rst.load(Ordering::SeqCst)
    }
}

impl Drop for ConnIo {
    fn drop(&mut self) {
        if self.resetting() {
            let _ = self.stream.set_zero_linger();
        }
    }
}

impl AsyncRead for ConnIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ConnIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.resetting() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
