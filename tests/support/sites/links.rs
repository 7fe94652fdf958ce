//! Link fixtures: nofollow, meta robots (noindex / nofollow / none), `<base href>`, fragments,
//! un-normalised spellings, `<area>`, non-HTTP schemes and out-of-scope hosts; and a spider trap
//! (an endless chain of generated pages) for max-depth tests.

use super::{page, Count, Expect};
use crate::support::endpoint::Endpoint;
use crate::support::server::Origin;

fn leaf(o: &Origin, path: &str) {
    o.mount(path, Endpoint::html(page(path, "<p>leaf</p>")));
}

/// Link semantics on `o`, all reached from `/`. `other_host` is an origin on another host
/// (e.g. 127.0.0.2): out of scope. Expectations (default config):
/// - `/plain.html` once; `/nofollow.html` (only ever linked with `rel="NoFollow noopener"` or
///   `rel=nofollow`) never;
/// - `/dup.html`, linked as `/dup.html#top`, `/dup.html#bottom` and `/dup.html`: once;
/// - `/x/../dotdot.html`, `/./dot.html`, `  /spaces.html  `,
///   `HTTP://127.0.0.1:PORT/Upper-Scheme.html`: once each under the normalised target;
/// - `/~user/` linked as `/~user/`, `/%7Euser/` and `http://…/%7euser/`: once in all
///   (percent-encoding of unreserved characters normalised; `groups`);
/// - `?page=2` (relative query) → `/?page=2` once; `<area href="/area.html">` once;
/// - `/noindex.html` (meta noindex) fetched, not stored, its link `/from-noindex.html` followed;
///   `/meta-nofollow.html` stored, its link `/from-meta-nofollow.html` never;
///   `/none.html` (meta `none`) not stored, `/from-none.html` never;
/// - `/base/index.html` with `<base href="/elsewhere/">`: `child.html` → `/elsewhere/child.html`
///   once, `/base/child.html` never; `/base-abs.html` with an absolute base → `/abs/page.html`;
/// - `http://localhost:PORT/alias.html`, `other_host`'s `/elsewhere.html` and a
///   protocol-relative `//OTHER_HOST:PORT/pr.html`: never; mailto/javascript/tel/data: ignored.
///
/// `o` must be on 127.0.0.1 (for the `localhost` alias) and `other_host` on another address.
pub fn mount_links(o: &Origin, other_host: &Origin) -> Expect {
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
    let port = o.port();
    let index = format!(
        r##"<!doctype html><html><head><meta charset="utf-8"><title>Links</title></head><body>
<h1>Links</h1>
<p><a href="/plain.html">plain</a></p>
<p><a href="/nofollow.html" rel="nofollow">nofollow</a> <a href="/nofollow.html" rel="NoFollow noopener">again</a></p>
<p><a href="/dup.html#top">top</a> <a href="/dup.html#bottom">bottom</a> <a href="/dup.html">dup</a></p>
<p><a href="/x/../dotdot.html">dotdot</a> <a href="/./dot.html">dot</a> <a href="  /spaces.html  ">spaces</a></p>
<p><a href="HTTP://127.0.0.1:{port}/Upper-Scheme.html">upper scheme</a></p>
<p><a href="/~user/">tilde</a> <a href="/%7Euser/">%7E</a> <a href="http://127.0.0.1:{port}/%7euser/">%7e</a></p>
<p><a href="?page=2">page 2</a></p>
<map name="m"><area shape="rect" coords="0,0,1,1" href="/area.html" alt="area"></map>
<p><a href="/noindex.html">noindex</a> <a href="/meta-nofollow.html">meta nofollow</a> <a href="/none.html">none</a></p>
<p><a href="/base/index.html">base</a> <a href="/base-abs.html">absolute base</a></p>
<p><a href="{alias}">alias host</a> <a href="{elsewhere}">other host</a> <a href="//{other}/pr.html">protocol-relative</a></p>
<p><a href="mailto:desk@example.invalid">mail</a> <a href="javascript:void(0)">js</a> <a href="tel:+15550100">tel</a> <a href="data:text/html,hi">data</a></p>
</body></html>
"##,
        alias = o.url_as("localhost", "/alias.html"),
        elsewhere = other_host.url("/elsewhere.html"),
        other = other_host.host_port(),
    );
    o.mount("/", Endpoint::html(index));
    o.mount("/?page=2", Endpoint::html(page("Page 2", "<p>second</p>")));
    for p in [
        "/plain.html",
        "/nofollow.html",
        "/dup.html",
        "/dotdot.html",
        "/dot.html",
        "/spaces.html",
        "/Upper-Scheme.html",
        "/area.html",
        "/from-noindex.html",
        "/from-meta-nofollow.html",
        "/from-none.html",
        "/elsewhere/child.html",
        "/base/child.html",
        "/abs/page.html",
        "/alias.html",
    ] {
        leaf(o, p);
    }
    for p in ["/~user/", "/%7Euser/", "/%7euser/"] {
        leaf(o, p);
    }
    leaf(other_host, "/elsewhere.html");
    leaf(other_host, "/pr.html");
    let robots = |content: &str, child: &str| {
        Endpoint::html(format!(
            "<!doctype html><html><head><meta name=\"robots\" content=\"{content}\"><title>{content}</title>\
             </head><body><p>{content}</p><a href=\"{child}\">child</a></body></html>"
        ))
    };
    o.mount("/noindex.html", robots("noindex", "/from-noindex.html"));
    o.mount(
        "/meta-nofollow.html",
        robots("nofollow", "/from-meta-nofollow.html"),
    );
    o.mount("/none.html", robots("none", "/from-none.html"));
    o.mount(
        "/base/index.html",
        Endpoint::html(
            "<!doctype html><html><head><base href=\"/elsewhere/\"><title>Base</title></head>\
             <body><a href=\"child.html\">child</a></body></html>",
        ),
    );
    o.mount(
        "/base-abs.html",
        Endpoint::html(format!(
            "<!doctype html><html><head><base href=\"{}\"><title>Abs</title></head>\
             <body><a href=\"page.html\">page</a></body></html>",
            o.url("/abs/")
        )),
    );

    let mut e = Expect::default();
    for p in [
        "/",
        "/plain.html",
        "/dup.html",
        "/dotdot.html",
        "/dot.html",
        "/spaces.html",
        "/Upper-Scheme.html",
        "/?page=2",
        "/area.html",
        "/from-noindex.html",
        "/meta-nofollow.html",
        "/base/index.html",
        "/elsewhere/child.html",
        "/base-abs.html",
        "/abs/page.html",
    ] {
        e.page(o.url(p));
    }
    for p in ["/noindex.html", "/none.html"] {
        e.once(o.url(p));
        e.not_stored.insert(o.url(p));
    }
    for p in [
        "/nofollow.html",
        "/from-meta-nofollow.html",
        "/from-none.html",
        "/base/child.html",
    ] {
        e.never(o.url(p));
    }
    e.never(o.url_as("localhost", "/alias.html"));
    e.never(other_host.url("/elsewhere.html"));
    e.never(other_host.url("/pr.html"));
    e.groups.push((
        ["/~user/", "/%7Euser/", "/%7euser/"]
            .iter()
            .map(|p| o.url(p))
            .collect(),
        Count::Exactly(1),
    ));
    e
}

/// An endless chain under `/calendar/`: `/calendar/N/` (depth N + 1) links `/calendar/N+1/`.
/// `/` links `/calendar/0/`, so with `--max-depth D` a correct crawl requests exactly `D`
/// calendar pages (`origin.hits_prefix("/calendar/")`), and then stops.
pub fn mount_spider_trap(o: &Origin) {
    o.mount(
        "/",
        Endpoint::html(page("Trap", "<a href=\"/calendar/0/\">calendar</a>")),
    );
    o.extend(crate::support::endpoint::Site::new().prefix(
        "/calendar/",
        Endpoint::dynamic(|target| {
            let n: u64 = target
                .trim_start_matches("/calendar/")
                .split('/')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            Endpoint::html(page(
                &format!("Day {n}"),
                &format!("<a href=\"/calendar/{}/\">next day</a>", n + 1),
            ))
        }),
    ));
}
