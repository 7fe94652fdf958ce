//! robots.txt fixtures: group selection, Allow/Disallow/`$` rules, Crawl-delay, Sitemap lines
//! (urlset and index), and robots.txt answering 404, 500, a redirect or never.

use std::time::Duration;

use super::{links_page, page, sitemap_index, sitemap_urlset, Count, Expect};
use crate::support::endpoint::Endpoint;
use crate::support::server::Origin;

fn xml(body: String) -> Endpoint {
    Endpoint::typed("application/xml", body)
}

/// robots.txt with a group for `thresher` (the default robots token) and a stricter `*` group
/// (a crawler that ignores its own group fetches nothing), `Disallow`, `Allow`, a `$` pattern,
/// `Crawl-delay` (when given) and two `Sitemap` lines (a urlset and an index). Sitemap URLs are
/// depth 1, so the default max depth reaches them.
pub fn mount_robots_rules(o: &Origin, crawl_delay: Option<Duration>) -> Expect {
    let delay = crawl_delay
        .map(|d| format!("Crawl-delay: {}\n", d.as_secs_f64()))
        .unwrap_or_default();
    let robots = format!(
        "# fixture\nUser-agent: *\nDisallow: /\n\n\
         User-agent: thresher\nDisallow: /private/\nAllow: /private/open.html\nDisallow: /*.cgi$\n\
         {delay}\nSitemap: {}\nSitemap: {}\n",
        o.url("/sitemap.xml"),
        o.url("/sitemap_index.xml")
    );
    o.mount("/robots.txt", Endpoint::text(robots));
    o.mount(
        "/",
        Endpoint::html(links_page(
            "Robots home",
            &[
                "/a.html",
                "/b.html",
                "/private/secret.html",
                "/private/open.html",
                "/script.cgi",
                "/script.cgi?x=1",
            ],
        )),
    );
    o.mount("/a.html", Endpoint::html(links_page("A", &["/c.html"])));
    for p in [
        "/b.html",
        "/c.html",
        "/private/secret.html",
        "/private/open.html",
        "/private/in-sitemap.html",
        "/from-sitemap.html",
        "/from-index.html",
    ] {
        o.mount(p, Endpoint::html(page(p, "<p>leaf</p>")));
    }
    for p in ["/script.cgi", "/script.cgi?x=1"] {
        o.mount(p, Endpoint::html(page("cgi", "<p>cgi</p>")));
    }
    o.mount(
        "/sitemap.xml",
        xml(sitemap_urlset(&[
            o.url("/from-sitemap.html"),
            o.url("/private/in-sitemap.html"),
        ])),
    );
    o.mount(
        "/sitemap_index.xml",
        xml(sitemap_index(&[o.url("/sitemap-news.xml")])),
    );
    o.mount(
        "/sitemap-news.xml",
        xml(sitemap_urlset(&[o.url("/from-index.html")])),
    );

    let mut e = Expect::default();
    for p in [
        "/robots.txt",
        "/sitemap.xml",
        "/sitemap_index.xml",
        "/sitemap-news.xml",
    ] {
        e.once(o.url(p));
    }
    for p in [
        "/",
        "/a.html",
        "/b.html",
        "/c.html",
        "/private/open.html",
        "/script.cgi?x=1",
        "/from-sitemap.html",
        "/from-index.html",
    ] {
        e.page(o.url(p));
    }
    for p in [
        "/private/secret.html",
        "/private/in-sitemap.html",
        "/script.cgi",
    ] {
        e.never(o.url(p));
    }
    e
}

/// How robots.txt answers in `mount_robots_status`.
#[derive(Clone, Copy, Debug)]
pub enum RobotsCase {
    /// 404: everything is allowed.
    NotFound,
    /// 500: the origin is treated as disallowed (and robots.txt retried later).
    ServerError,
    /// 301 to `/robots-moved.txt`, which disallows `/blocked/`: followed.
    Redirect,
    /// Never answers: unreachable, so disallowed (needs a short first-byte timeout).
    Tarpit,
}

/// `/` links `/open.html` and `/blocked/x.html`; robots.txt answers per `case`.
pub fn mount_robots_status(o: &Origin, case: RobotsCase) -> Expect {
    o.mount(
        "/",
        Endpoint::html(links_page("Home", &["/open.html", "/blocked/x.html"])),
    );
    o.mount("/open.html", Endpoint::html(page("Open", "<p>open</p>")));
    o.mount(
        "/blocked/x.html",
        Endpoint::html(page("Blocked", "<p>x</p>")),
    );
    let mut e = Expect::default();
    match case {
        RobotsCase::NotFound => {
            o.mount("/robots.txt", Endpoint::not_found());
            e.once(o.url("/robots.txt"));
            for p in ["/", "/open.html", "/blocked/x.html"] {
                e.page(o.url(p));
            }
        }
        RobotsCase::ServerError | RobotsCase::Tarpit => {
            let ep = match case {
                RobotsCase::Tarpit => Endpoint::tarpit(),
                _ => Endpoint::status(500),
            };
            o.mount("/robots.txt", ep);
            e.count(o.url("/robots.txt"), Count::AtLeast(1));
            for p in ["/", "/open.html", "/blocked/x.html"] {
                e.never(o.url(p));
            }
        }
        RobotsCase::Redirect => {
            o.mount("/robots.txt", Endpoint::redirect(301, "/robots-moved.txt"));
            o.mount(
                "/robots-moved.txt",
                Endpoint::text("User-agent: *\nDisallow: /blocked/\n"),
            );
            e.once(o.url("/robots.txt"));
            e.once(o.url("/robots-moved.txt"));
            e.page(o.url("/"));
            e.page(o.url("/open.html"));
            e.never(o.url("/blocked/x.html"));
        }
    }
    e
}
