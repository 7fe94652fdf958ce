//! Fetch-level fixtures: rate limits and transient errors, redirects (codes, chains, loops,
//! out-of-scope targets) and hostile endpoints (tarpit, slow, trickle, endless, huge, gzip bomb,
//! reset, garbage).

use std::time::Duration;

use super::{links_page, page, Count, Expect};
use crate::support::blobs;
use crate::support::endpoint::Endpoint;
use crate::support::server::Origin;

/// Rate limits and transient errors, all linked from `/`:
/// `/busy` 429 `Retry-After: 1` twice then 200 (3 requests, ≥ 1 s apart: check
/// `origin.requests_to("/busy")`); `/busy-date` 503 with an HTTP-date Retry-After 1 s ahead once
/// then 200; `/flaky` 500 once then 200; `/gone` 404 and `/removed` 410 (permanent: once).
pub fn mount_retries(o: &Origin) -> Expect {
    let ok = |t: &str| Endpoint::html(page(t, "<p>finally</p>"));
    o.mount(
        "/",
        Endpoint::html(links_page(
            "Retries",
            &["/busy", "/busy-date", "/flaky", "/gone", "/removed"],
        )),
    );
    o.mount(
        "/busy",
        Endpoint::fail_first(2, Endpoint::retry_after(429, 1), ok("Busy")),
    );
    o.mount(
        "/busy-date",
        Endpoint::fail_first(
            1,
            Endpoint::retry_after_date(503, Duration::from_secs(1)),
            ok("Busy date"),
        ),
    );
    o.mount(
        "/flaky",
        Endpoint::fail_first(1, Endpoint::status(500), ok("Flaky")),
    );
    o.mount("/gone", Endpoint::not_found());
    o.mount("/removed", Endpoint::status(410));
    let mut e = Expect::default();
    e.page(o.url("/"));
    e.count(o.url("/busy"), Count::Exactly(3));
    e.count(o.url("/busy-date"), Count::Exactly(2));
    e.count(o.url("/flaky"), Count::Exactly(2));
    e.stored
        .extend([o.url("/busy"), o.url("/busy-date"), o.url("/flaky")]);
    e.once(o.url("/gone"));
    e.once(o.url("/removed"));
    e.not_stored.extend([o.url("/gone"), o.url("/removed")]);
    e
}

/// Redirects on `o`, linked from `/`: 301/302/307/308 to a page each; a relative `Location`; a
/// 4-hop chain (followed); an 8-hop chain (over the default `max_redirects = 5`: its end is
/// never fetched); a two-page loop and a self loop (each URL at most 3 times); a redirect to
/// `other_host` (a different host, e.g. 127.0.0.2: out of scope) and to `localhost` (out of
/// scope): never followed.
pub fn mount_redirects(o: &Origin, other_host: &Origin) -> Expect {
    assert_eq!(
        o.addr().ip().to_string(),
        "127.0.0.1",
        "o must be on 127.0.0.1"
    );
    assert_ne!(
        o.addr().ip(),
        other_host.addr().ip(),
        "other_host must be another host"
    );
    let mut links = Vec::new();
    let mut e = Expect::default();
    for code in [301u16, 302, 307, 308] {
        let from = format!("/r{code}");
        let to = format!("/target-{code}.html");
        o.mount(&from, Endpoint::redirect(code, &to));
        o.mount(&to, Endpoint::html(page(&to, "<p>arrived</p>")));
        e.once(o.url(&from));
        e.page(o.url(&to));
        e.not_stored.insert(o.url(&from));
        links.push(from);
    }
    o.mount("/rel/start", Endpoint::redirect(302, "target-rel.html"));
    o.mount(
        "/rel/target-rel.html",
        Endpoint::html(page("Rel", "<p>relative</p>")),
    );
    e.once(o.url("/rel/start"));
    e.page(o.url("/rel/target-rel.html"));
    links.push("/rel/start".into());

    for (name, hops) in [("chain", 4usize), ("long", 8)] {
        for i in 1..=hops {
            let next = if i == hops {
                format!("/{name}/end.html")
            } else {
                format!("/{name}/{}", i + 1)
            };
            o.mount(&format!("/{name}/{i}"), Endpoint::redirect(302, &next));
        }
        o.mount(
            &format!("/{name}/end.html"),
            Endpoint::html(page(name, "<p>end</p>")),
        );
        links.push(format!("/{name}/1"));
    }
    for i in 1..=4 {
        e.once(o.url(&format!("/chain/{i}")));
    }
    e.page(o.url("/chain/end.html"));
    for i in 1..=8 {
        e.count(o.url(&format!("/long/{i}")), Count::Between(0, 1));
    }
    e.never(o.url("/long/end.html"));

    o.mount("/loop/a", Endpoint::redirect(302, "/loop/b"));
    o.mount("/loop/b", Endpoint::redirect(302, "/loop/a"));
    o.mount("/loop/self", Endpoint::redirect(302, "/loop/self"));
    e.count(o.url("/loop/a"), Count::Between(1, 3));
    e.count(o.url("/loop/b"), Count::Between(0, 3));
    e.count(o.url("/loop/self"), Count::Between(1, 6));
    links.extend(["/loop/a".into(), "/loop/self".into()]);

    o.mount(
        "/away",
        Endpoint::redirect(302, &other_host.url("/landing.html")),
    );
    other_host.mount(
        "/landing.html",
        Endpoint::html(page("Landing", "<p>elsewhere</p>")),
    );
    o.mount(
        "/alias",
        Endpoint::redirect(301, &o.url_as("localhost", "/alias-landing.html")),
    );
    o.mount(
        "/alias-landing.html",
        Endpoint::html(page("Alias", "<p>alias</p>")),
    );
    e.once(o.url("/away"));
    e.once(o.url("/alias"));
    e.never(other_host.url("/landing.html"));
    e.never(o.url_as("localhost", "/alias-landing.html"));
    links.extend(["/away".into(), "/alias".into()]);

    let refs: Vec<&str> = links.iter().map(String::as_str).collect();
    o.mount("/", Endpoint::html(links_page("Redirects", &refs)));
    e.page(o.url("/"));
    e
}

/// Recommended config for `mount_hostile` so a crawl of it ends in seconds: first-byte timeout
/// 500 ms, total 2 s, max body 1 MiB, 1 retry, backoff 50 ms, delay 0.
pub const HOSTILE_CONFIG: &str = "[crawl]\ndelay = \"0ms\"\n\
    [fetch]\nfirst_byte_timeout = \"500ms\"\ntotal_timeout = \"2s\"\nmax_body_bytes = 1048576\n\
    max_retries = 1\nbackoff_base = \"50ms\"\nbackoff_max = \"200ms\"\n";

/// Hostile endpoints linked from `/` next to a normal page (`/ok.html` → `/after.html`): a
/// tarpit, a slow first byte (3 s), a trickle (1 byte/s), an endless body, a 20 MB body, a gzip
/// bomb (1 GiB inflated), a reset mid-body, garbage bytes as text/html. A crawl with
/// `HOSTILE_CONFIG` must finish, store `/ok.html` and `/after.html`, and request each hostile
/// URL a bounded number of times (≤ 1 + max_retries + 1 slack).
pub fn mount_hostile(o: &Origin) -> Expect {
    let hostile: [(&str, Endpoint); 8] = [
        ("/tarpit", Endpoint::tarpit()),
        (
            "/slow",
            Endpoint::slow_first_byte(Duration::from_secs(3), Endpoint::html(page("Slow", ""))),
        ),
        ("/trickle", Endpoint::trickle(Duration::from_secs(1))),
        ("/endless", Endpoint::endless()),
        ("/huge", Endpoint::sized(20 << 20)),
        ("/bomb", Endpoint::gzip_bomb()),
        ("/reset", Endpoint::reset_mid_body(4096, 100_000)),
        (
            "/garbage",
            Endpoint::typed("text/html", blobs::garbage(9, 32 * 1024)),
        ),
    ];
    let mut links: Vec<&str> = hostile.iter().map(|(p, _)| *p).collect();
    links.push("/ok.html");
    let mut e = Expect::default();
    for (p, ep) in hostile {
        o.mount(p, ep);
        if p == "/garbage" {
            e.once(o.url(p));
        } else {
            e.count(o.url(p), Count::Between(1, 3));
        }
    }
    o.mount("/", Endpoint::html(links_page("Hostile", &links)));
    o.mount(
        "/ok.html",
        Endpoint::html(links_page("Ok", &["/after.html"])),
    );
    o.mount(
        "/after.html",
        Endpoint::html(page("After", "<p>still crawling</p>")),
    );
    for p in ["/", "/ok.html", "/after.html"] {
        e.page(o.url(p));
    }
    e
}
