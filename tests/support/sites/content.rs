//! Content fixtures: non-HTML types that must not be parsed (each carrying a link that must not
//! be followed), HTML under unusual types, and mislabelled or legacy charsets with known text.

use super::{links_page, page, Count, Expect};
use crate::support::blobs;
use crate::support::endpoint::{Body, Endpoint, Reply, HTML};
use crate::support::server::Origin;

/// Content types, linked from `/`. Non-HTML bodies carry an `<a href>` to a page that must never
/// be requested (only text/html and application/xhtml+xml are parsed): `/picture` (image/png),
/// `/document` (application/pdf), `/data` (application/json), `/notes` (text/plain).
/// `/logo.png` is excluded by the default scope regex (never requested). `/xhtml`
/// (application/xhtml+xml) and `/upper` (`TEXT/HTML; Charset=UTF-8`) are parsed: their children
/// are fetched. `/pdf-as-html` (text/html, PDF bytes) is only required not to break the crawl.
pub fn mount_content_types(o: &Origin) -> Expect {
    let a = |p: &str| format!("<a href=\"{p}\">child</a>");
    o.mount(
        "/picture",
        Endpoint::typed("image/png", blobs::png(&a("/from-png.html"))),
    );
    o.mount("/logo.png", Endpoint::typed("image/png", blobs::png("")));
    o.mount(
        "/document",
        Endpoint::typed("application/pdf", blobs::pdf(&a("/from-pdf.html"))),
    );
    o.mount("/pdf-as-html", Endpoint::typed(HTML, blobs::pdf("")));
    o.mount(
        "/data",
        Endpoint::typed(
            "application/json",
            format!(
                "{{\"html\": \"{}\"}}",
                a("/from-json.html").replace('"', "\\\"")
            ),
        ),
    );
    o.mount(
        "/notes",
        Endpoint::typed("text/plain", a("/from-text.html")),
    );
    o.mount(
        "/xhtml",
        Endpoint::typed(
            "application/xhtml+xml",
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\
                 <head><title>X</title></head><body><p>{}</p></body></html>",
                a("/from-xhtml.html")
            ),
        ),
    );
    o.mount(
        "/upper",
        Endpoint::typed(
            "TEXT/HTML; Charset=UTF-8",
            page("Upper", &a("/from-upper.html")),
        ),
    );
    let leaves = [
        "/from-png.html",
        "/from-pdf.html",
        "/from-json.html",
        "/from-text.html",
        "/from-xhtml.html",
        "/from-upper.html",
    ];
    for p in leaves {
        o.mount(p, Endpoint::html(page(p, "<p>leaf</p>")));
    }
    o.mount(
        "/",
        Endpoint::html(links_page(
            "Types",
            &[
                "/picture",
                "/logo.png",
                "/document",
                "/pdf-as-html",
                "/data",
                "/notes",
                "/xhtml",
                "/upper",
            ],
        )),
    );
    let mut e = Expect::default();
    e.page(o.url("/"));
    for p in ["/picture", "/document", "/data", "/notes"] {
        e.once(o.url(p));
        e.not_stored.insert(o.url(p));
    }
    e.count(o.url("/pdf-as-html"), Count::Between(0, 1));
    e.never(o.url("/logo.png"));
    for p in ["/xhtml", "/upper", "/from-xhtml.html", "/from-upper.html"] {
        e.page(o.url(p));
    }
    for p in [
        "/from-png.html",
        "/from-pdf.html",
        "/from-json.html",
        "/from-text.html",
    ] {
        e.never(o.url(p));
    }
    e
}

/// One charset fixture page.
#[derive(Clone, Debug)]
pub struct CharsetCase {
    pub path: &'static str,
    /// Lines the page's visible text must contain when decoded right.
    pub truth: &'static [&'static str],
    /// Whether DESIGN §2's rules can decode it right (`false`: only "no crash, page stored").
    pub recoverable: bool,
}

const ZH: &[&str] = &["新闻中心", "北京报道：今天的天气很好。"];
const EU: &[&str] = &["Zürich café", "Naïve façade in Kraków."];
/// Representable in windows-1252 (no "ó").
const LATIN1: &[&str] = &["Zürich café", "Naïve façade."];

fn charset_html(meta: &str, lines: &[&str], link: &str) -> String {
    format!(
        "<!doctype html><html><head>{meta}<title>{}</title></head><body><h1>{}</h1><p>{}</p>{link}</body></html>",
        lines[0], lines[0], lines[1]
    )
}

/// Mislabelled and legacy charsets, linked from `/`. Pages with non-ASCII links (`/新闻/…`,
/// `/café/…`) check that links are decoded with the page: their children must be requested
/// (percent-encoded UTF-8 paths, exactly once).
pub fn mount_charsets(o: &Origin) -> (Expect, Vec<CharsetCase>) {
    use encoding_rs::{GBK, UTF_8, WINDOWS_1252};
    let gbk_link = "<a href=\"/新闻/gbk-child.html\">子页</a>";
    let meta_link = "<a href=\"/café/meta-child.html\">child</a>";
    let gbk_meta = "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\">";
    let pages: Vec<(CharsetCase, Reply)> = vec![
        (
            CharsetCase {
                path: "/gbk-declared",
                truth: ZH,
                recoverable: true,
            },
            Reply::new(
                200,
                "text/html; charset=gbk",
                body(blobs::encode(&charset_html("", ZH, gbk_link), GBK)),
            ),
        ),
        (
            CharsetCase {
                path: "/gbk-as-utf8",
                truth: ZH,
                recoverable: false,
            },
            Reply::new(
                200,
                HTML,
                body(blobs::encode(&charset_html("", ZH, ""), GBK)),
            ),
        ),
        (
            CharsetCase {
                path: "/gbk-meta-only",
                truth: ZH,
                recoverable: true,
            },
            Reply::new(
                200,
                "text/html",
                body(blobs::encode(&charset_html(gbk_meta, ZH, ""), GBK)),
            ),
        ),
        (
            CharsetCase {
                path: "/utf8-as-latin1",
                truth: ZH,
                recoverable: true,
            },
            Reply::new(
                200,
                "text/html; charset=iso-8859-1",
                body(blobs::encode(&charset_html("", ZH, ""), UTF_8)),
            ),
        ),
        (
            CharsetCase {
                path: "/utf8-meta-gb2312",
                truth: EU,
                recoverable: true,
            },
            Reply::new(
                200,
                "text/html",
                body(blobs::encode(
                    &charset_html("<meta charset=\"gb2312\">", EU, meta_link),
                    UTF_8,
                )),
            ),
        ),
        (
            CharsetCase {
                path: "/utf8-bom",
                truth: EU,
                recoverable: true,
            },
            Reply::new(200, "text/html; charset=windows-1252", {
                let mut b = b"\xEF\xBB\xBF".to_vec();
                b.extend_from_slice(charset_html("", EU, "").as_bytes());
                body(b.into())
            }),
        ),
        (
            CharsetCase {
                path: "/latin1-declared",
                truth: LATIN1,
                recoverable: true,
            },
            Reply::new(
                200,
                "text/html; charset=iso-8859-1",
                body(blobs::encode(&charset_html("", LATIN1, ""), WINDOWS_1252)),
            ),
        ),
        (
            CharsetCase {
                path: "/garbage",
                truth: &[],
                recoverable: false,
            },
            Reply::new(200, "text/html", body(blobs::garbage(3, 16 * 1024))),
        ),
    ];
    let mut e = Expect::default();
    let mut cases = Vec::new();
    let mut hrefs = Vec::new();
    for (case, reply) in pages {
        o.mount(case.path, reply);
        e.page(o.url(case.path));
        hrefs.push(case.path);
        cases.push(case);
    }
    o.mount(
        "/%E6%96%B0%E9%97%BB/gbk-child.html",
        Endpoint::html(page("子页", "<p>ok</p>")),
    );
    o.mount(
        "/caf%C3%A9/meta-child.html",
        Endpoint::html(page("child", "<p>ok</p>")),
    );
    e.page(o.url("/%E6%96%B0%E9%97%BB/gbk-child.html"));
    e.page(o.url("/caf%C3%A9/meta-child.html"));
    o.mount("/", Endpoint::html(links_page("Charsets", &hrefs)));
    e.page(o.url("/"));
    (e, cases)
}

fn body(b: bytes::Bytes) -> Body {
    Body::full(b)
}
