//! HTML for `universe` sites: the site chrome shared by every page (head, header nav, "most
//! read" widget, footer — one `Bytes` each) and the page layouts (home, section list with
//! numbered pagination, three article variants, static page). Every `<a href>` to the site goes
//! through `Out::link`, so each page's recorded links are exactly the in-scope links in its HTML.

use bytes::Bytes;

use super::lorem::{self, escape, Rng};
use super::universe::{Draft, Kind, Page, ParagraphPool, SiteSpec, SECTIONS};

/// Index of the padding part in every page (empty until `pad`).
const PAD: usize = 1;

pub(super) struct Chrome {
    name: String,
    sections: usize,
    pool: Option<std::sync::Arc<ParagraphPool>>,
    head_open: Bytes,
    head_close: Bytes,
    header: Bytes,
    header_links: Vec<String>,
    most_read: Bytes,
    most_read_links: Vec<String>,
    footer: Bytes,
    footer_links: Vec<String>,
}

/// A page being written: shared parts and owned text, plus the in-scope links written so far.
struct Out {
    parts: Vec<Bytes>,
    cur: String,
    links: Vec<String>,
}

impl Out {
    fn new(chrome: &Chrome, title: &str, body_class: &str) -> Out {
        let mut out = Out {
            parts: vec![chrome.head_open.clone(), Bytes::new()],
            cur: String::new(),
            links: Vec::new(),
        };
        out.push(&format!(
            "<title>{} | {}</title>\n<meta name=\"description\" content=\"{}\">\n",
            escape(title),
            escape(&chrome.name),
            escape(title)
        ));
        out.shared(&chrome.head_close, &[]);
        out.push(&format!("<body class=\"{body_class}\">\n"));
        out.shared(&chrome.header, &chrome.header_links);
        out
    }

    fn push(&mut self, s: &str) {
        self.cur.push_str(s);
    }

    fn flush(&mut self) {
        if !self.cur.is_empty() {
            self.parts
                .push(Bytes::from(std::mem::take(&mut self.cur).into_bytes()));
        }
    }

    /// A shared part and the in-scope links it contains.
    fn shared(&mut self, part: &Bytes, links: &[String]) {
        self.flush();
        self.parts.push(part.clone());
        self.links.extend(links.iter().cloned());
    }

    /// `<a href="{path}" {attrs}>{text}</a>` for an in-scope path.
    fn link(&mut self, path: &str, text: &str, attrs: &str) {
        let sep = if attrs.is_empty() { "" } else { " " };
        self.push(&format!(
            "<a href=\"{}\"{sep}{attrs}>{}</a>",
            escape(path),
            escape(text)
        ));
        self.links.push(path.to_string());
    }

    fn finish(mut self, chrome: &Chrome, path: String, kind: Kind, title: String) -> Page {
        self.shared(&chrome.footer, &chrome.footer_links);
        self.flush();
        let mut seen = std::collections::HashSet::new();
        self.links.retain(|l| seen.insert(l.clone()));
        Page {
            path,
            kind,
            title,
            links: self.links,
            content: Vec::new(),
            parts: self.parts,
        }
    }
}

pub(super) fn section_path(s: usize, page: usize) -> String {
    if page <= 1 {
        format!("/{}/", SECTIONS[s])
    } else {
        format!("/{}/page/{page}/", SECTIONS[s])
    }
}

fn section_title(s: usize) -> String {
    let mut t = SECTIONS[s].to_string();
    t[..1].make_ascii_uppercase();
    t
}

impl Chrome {
    pub(super) fn new(
        name: &str,
        spec: &SiteSpec,
        sections: usize,
        statics: &[&str],
        drafts: &[Draft],
    ) -> Chrome {
        let mut rng = Rng::new(spec.seed ^ 0xC0FFEE);
        let mut header_links = vec!["/".to_string()];
        let mut h = format!(
            "<header class=\"site-header\">\n<div class=\"top-bar\"><span class=\"date\">Today's edition</span> \
             <a class=\"subscribe\" href=\"https://subscribe.example.invalid/\">Subscribe</a></div>\n\
             <div class=\"brand\"><a href=\"/\" class=\"logo\">{}</a></div>\n<nav class=\"main-nav\"><ul>\n\
             <li class=\"nav-item\"><a href=\"/\">Home</a></li>\n",
            escape(name)
        );
        for s in 0..sections {
            let p = section_path(s, 1);
            h.push_str(&format!(
                "<li class=\"nav-item\"><a href=\"{p}\">{}</a></li>\n",
                section_title(s)
            ));
            header_links.push(p);
        }
        h.push_str("</ul></nav>\n");
        if spec.page_bytes > 0 {
            // A mega menu: many links, few targets (as on real news sites).
            h.push_str("<div class=\"mega-menu\" aria-hidden=\"true\">\n");
            for s in 0..sections {
                h.push_str(&format!(
                    "<div class=\"mega-col\"><h4 class=\"mega-title\">{}</h4><ul class=\"mega-list\">\n",
                    section_title(s)
                ));
                for _ in 0..10 {
                    h.push_str(&format!(
                        "<li class=\"mega-item\"><a class=\"mega-link\" href=\"{}\"><span class=\"icon icon-arrow\"></span>{}</a></li>\n",
                        section_path(s, 1),
                        escape(&lorem::title(&mut rng, 1, 3))
                    ));
                }
                h.push_str("</ul></div>\n");
            }
            h.push_str("</div>\n");
        }
        h.push_str(
            "<form class=\"search\" action=\"/search\" method=\"get\"><input type=\"search\" name=\"q\" \
             placeholder=\"Search\"><button type=\"submit\">Go</button></form>\n</header>\n",
        );

        let mut most_read_links = Vec::new();
        let mut m = String::from(
            "<div class=\"widget most-read\"><h3 class=\"widget-title\">Most read</h3><ol>\n",
        );
        for d in drafts.iter().take(5) {
            m.push_str(&format!(
                "<li><a href=\"{}\">{}</a></li>\n",
                d.path,
                escape(&d.title)
            ));
            most_read_links.push(d.path.clone());
        }
        m.push_str("</ol></div>\n<div class=\"widget newsletter\"><h3 class=\"widget-title\">Newsletter</h3>\
                    <p>Get the morning briefing in your inbox.</p></div>\n");

        let mut footer_links = Vec::new();
        let mut f = String::from("<footer class=\"site-footer\">\n<ul class=\"footer-links\">\n");
        for s in statics {
            let p = format!("/{s}/");
            let mut t = s.to_string();
            t[..1].make_ascii_uppercase();
            f.push_str(&format!("<li><a href=\"{p}\">{t}</a></li>\n"));
            footer_links.push(p);
        }
        f.push_str("</ul>\n<ul class=\"social\">\n");
        for url in &spec.external {
            f.push_str(&format!(
                "<li><a href=\"{}\" rel=\"noopener\">Partner</a></li>\n",
                escape(url)
            ));
        }
        f.push_str(&format!(
            "<li><a href=\"https://social.example.invalid/{}\">Follow us</a></li>\n</ul>\n\
             <p class=\"copyright\">© 2024 {}. All rights reserved.</p>\n</footer>\n</body>\n</html>\n",
            spec.seed,
            escape(name)
        ));

        Chrome {
            name: name.to_string(),
            sections,
            pool: spec.pool.clone(),
            head_open: Bytes::from_static(
                b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
                  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
            ),
            head_close: Bytes::from_static(
                b"<link rel=\"stylesheet\" href=\"/static/site.css\">\n</head>\n",
            ),
            header: Bytes::from(h),
            header_links,
            most_read: Bytes::from(m),
            most_read_links,
            footer: Bytes::from(f),
            footer_links,
        }
    }

    fn pool(&self) -> Option<&ParagraphPool> {
        self.pool.as_deref()
    }

    fn sidebar(&self, out: &mut Out) {
        out.push("<aside class=\"sidebar\">\n");
        out.shared(&self.most_read, &self.most_read_links);
        out.push("</aside>\n");
    }

    fn teaser(&self, d: &Draft) -> String {
        let first = d
            .paragraph_texts(self.pool())
            .into_iter()
            .next()
            .unwrap_or_default();
        let words: Vec<&str> = first.split(' ').take(18).collect();
        format!("{}…", words.join(" "))
    }
}

pub(super) fn home(chrome: &Chrome, drafts: &[Draft]) -> Page {
    let title = format!("{} — news, analysis and opinion", chrome.name);
    let mut out = Out::new(chrome, &title, "home");
    out.push("<div class=\"container\">\n<main id=\"content\" class=\"home-main\">\n<section class=\"top-stories\"><h2>Top stories</h2>\n");
    for d in drafts.iter().take(12) {
        out.push("<article class=\"teaser\"><h3>");
        out.link(&d.path, &d.title, "");
        out.push(&format!(
            "</h3><p class=\"teaser-text\">{}</p></article>\n",
            escape(&chrome.teaser(d))
        ));
    }
    out.push("</section>\n<section class=\"section-blocks\">\n");
    for s in 0..chrome.sections {
        out.push("<div class=\"block\"><h2>");
        out.link(&section_path(s, 1), &section_title(s), "");
        out.push("</h2><ul>\n");
        for d in drafts.iter().filter(|d| d.section == s).take(3) {
            out.push("<li>");
            out.link(&d.path, &d.title, "");
            out.push("</li>\n");
        }
        out.push("</ul>");
        out.link(
            &section_path(s, 1),
            &format!("More {}", section_title(s)),
            "class=\"more\"",
        );
        out.push("</div>\n");
    }
    out.push("</section>\n</main>\n");
    chrome.sidebar(&mut out);
    out.push("</div>\n");
    out.finish(chrome, "/".to_string(), Kind::Home, title)
}

pub(super) fn list(
    chrome: &Chrome,
    drafts: &[Draft],
    s: usize,
    p: usize,
    n: usize,
    items: &[usize],
) -> Page {
    let title = if p == 1 {
        section_title(s)
    } else {
        format!("{} — page {p}", section_title(s))
    };
    let mut out = Out::new(chrome, &title, "list");
    out.push("<div class=\"container\">\n<main id=\"content\" class=\"listing\">\n<nav class=\"breadcrumb\">");
    out.link("/", "Home", "");
    out.push(&format!(
        " › <span>{}</span></nav>\n<h1 class=\"section-title\">{}</h1>\n<ul class=\"teasers\">\n",
        section_title(s),
        escape(&title)
    ));
    for &i in items {
        let d = &drafts[i];
        out.push("<li class=\"teaser\">");
        out.link(&d.path, &d.title, "class=\"teaser-link\"");
        out.push(&format!(
            "<p><time>{}</time> {}</p></li>\n",
            d.date,
            escape(&chrome.teaser(d))
        ));
    }
    out.push("</ul>\n<nav class=\"pagination\">");
    if p > 1 {
        out.link(&section_path(s, p - 1), "‹ Newer", "rel=\"prev\"");
    }
    for k in 1..=n {
        if k == p {
            out.push(&format!("<span class=\"current\">{k}</span>"));
        } else if k == 1 || k == n || k.abs_diff(p) <= 2 {
            out.link(&section_path(s, k), &k.to_string(), "class=\"page\"");
        }
    }
    if p < n {
        out.link(&section_path(s, p + 1), "Older ›", "rel=\"next\"");
    }
    out.push("</nav>\n</main>\n");
    chrome.sidebar(&mut out);
    out.push("</div>\n");
    out.finish(
        chrome,
        section_path(s, p),
        Kind::List {
            section: s,
            page: p,
        },
        title,
    )
}

pub(super) fn static_page(chrome: &Chrome, name: &str, rng: &mut Rng) -> Page {
    let mut title = name.to_string();
    title[..1].make_ascii_uppercase();
    let mut out = Out::new(chrome, &title, "static");
    out.push(&format!(
        "<div class=\"container\">\n<main id=\"content\" class=\"static\">\n<h1>{title}</h1>\n"
    ));
    for _ in 0..2 {
        out.push(&format!("<p>{}</p>\n", escape(&lorem::paragraph(rng, 3))));
    }
    out.push("</main>\n</div>\n");
    out.finish(chrome, format!("/{name}/"), Kind::Static, title)
}

pub(super) fn article(chrome: &Chrome, drafts: &[Draft], d: &Draft, spec: &SiteSpec) -> Page {
    let variant = d.section % spec.variants.clamp(1, 3);
    let section = section_title(d.section);
    let texts = d.paragraph_texts(chrome.pool());
    let mut out = Out::new(chrome, &d.title, &format!("article layout-{variant}"));
    let t = escape(&d.title);
    match variant {
        0 => {
            out.push("<div class=\"container\">\n<main id=\"content\" class=\"col-main\">\n");
            breadcrumb(&mut out, d.section, &section);
            out.push(&format!(
                "<article class=\"story\">\n<h1 class=\"headline\">{t}</h1>\n<p class=\"byline\">By {} · <time>{}</time></p>\n<div class=\"story-body\">\n",
                escape(&d.byline), d.date
            ));
            body(&mut out, chrome, d, 0);
            out.push("</div>\n</article>\n");
            share(&mut out, d);
            related(&mut out, drafts, d, "section", "related");
            prev_next(&mut out, drafts, d);
            comments(&mut out, d, "section", "comments");
            out.push("</main>\n");
            chrome.sidebar(&mut out);
            out.push("</div>\n");
        }
        1 => {
            out.push(
                "<div id=\"page\" class=\"site\">\n<div id=\"primary\" class=\"content-area\">\n",
            );
            breadcrumb(&mut out, d.section, &section);
            out.push(&format!(
                "<div class=\"entry\">\n<header class=\"entry-header\"><h1 class=\"entry-title\">{t}</h1>\n<div class=\"entry-meta\"><span class=\"author\">{}</span> <time>{}</time></div></header>\n<div class=\"entry-content\">\n",
                escape(&d.byline), d.date
            ));
            body(&mut out, chrome, d, 0);
            out.push("</div>\n<footer class=\"entry-footer\">");
            share(&mut out, d);
            out.push("</footer>\n</div>\n");
            prev_next(&mut out, drafts, d);
            comments(&mut out, d, "div", "comments-area");
            out.push("</div>\n<div id=\"secondary\" class=\"widget-area\">\n");
            related(&mut out, drafts, d, "div", "widget related-posts");
            chrome.sidebar(&mut out);
            out.push("</div>\n</div>\n");
        }
        _ => {
            out.push("<div class=\"feature\">\n");
            breadcrumb(&mut out, d.section, &section);
            let dek = texts.first().map(|s| escape(s)).unwrap_or_default();
            out.push(&format!(
                "<section class=\"hero\"><h1 class=\"feature-title\">{t}</h1>\n<p class=\"dek\">{dek}</p>\n<p class=\"credit\">{} — {}</p></section>\n<div class=\"article-grid\">\n<div class=\"article-text\">\n",
                escape(&d.byline), d.date
            ));
            body(&mut out, chrome, d, 1);
            out.push("</div>\n<aside class=\"rail\">\n");
            related(&mut out, drafts, d, "div", "rail-related");
            share(&mut out, d);
            out.push("</aside>\n</div>\n");
            prev_next(&mut out, drafts, d);
            comments(&mut out, d, "div", "discussion");
            out.push("</div>\n");
        }
    }
    let mut page = out.finish(
        chrome,
        d.path.clone(),
        Kind::Article {
            section: d.section,
            variant,
        },
        d.title.clone(),
    );
    page.content = std::iter::once(d.title.clone()).chain(texts).collect();
    page
}

fn breadcrumb(out: &mut Out, s: usize, section: &str) {
    out.push("<nav class=\"breadcrumb\">");
    out.link("/", "Home", "");
    out.push(" › ");
    out.link(&section_path(s, 1), section, "");
    out.push("</nav>\n");
}

fn body(out: &mut Out, chrome: &Chrome, d: &Draft, from: usize) {
    for part in d.paragraph_html(chrome.pool(), from) {
        out.shared(&part, &[]);
    }
}

fn share(out: &mut Out, d: &Draft) {
    out.push(&format!(
        "<div class=\"share-bar\"><span>Share</span> \
         <a class=\"share\" href=\"https://share.social.invalid/?u={p}\" rel=\"nofollow\">Post</a> \
         <a class=\"share\" href=\"mailto:?subject={t}\">Email</a> \
         <a class=\"share\" href=\"javascript:window.print()\">Print</a></div>\n",
        p = escape(&d.path),
        t = escape(&d.title)
    ));
}

fn related(out: &mut Out, drafts: &[Draft], d: &Draft, tag: &str, class: &str) {
    if d.related.is_empty() {
        return;
    }
    out.push(&format!("<{tag} class=\"{class}\"><h2>Related</h2><ul>\n"));
    for &j in &d.related {
        out.push("<li>");
        out.link(&drafts[j].path, &drafts[j].title, "");
        out.push("</li>\n");
    }
    out.push(&format!("</ul></{tag}>\n"));
}

fn prev_next(out: &mut Out, drafts: &[Draft], d: &Draft) {
    out.push("<nav class=\"post-nav\">");
    if let Some(j) = d.prev_next.0 {
        out.link(
            &drafts[j].path,
            &format!("← {}", drafts[j].title),
            "rel=\"prev\"",
        );
    }
    if let Some(j) = d.prev_next.1 {
        out.link(
            &drafts[j].path,
            &format!("{} →", drafts[j].title),
            "rel=\"next\"",
        );
    }
    out.push("</nav>\n");
}

fn comments(out: &mut Out, d: &Draft, tag: &str, class: &str) {
    out.push(&format!(
        "<{tag} class=\"{class}\"><h2>{} comments</h2>\n",
        d.comments.len()
    ));
    for (who, what) in &d.comments {
        out.push(&format!(
            "<div class=\"comment\"><span class=\"comment-author\">{}</span><p>{}</p></div>\n",
            escape(who),
            escape(what)
        ));
    }
    out.push(&format!(
        "<form class=\"comment-form\"><textarea name=\"c\"></textarea><button>Post comment</button></form></{tag}>\n"
    ));
}

/// Fill every page's padding slot with one shared `<style>` + `<script>` block sized so the
/// average page is about `page_bytes` (no-op when pages are already that big or `page_bytes`
/// is 0).
pub(super) fn pad(chrome: &Chrome, pages: &mut [Page], page_bytes: usize) {
    if page_bytes == 0 || pages.is_empty() {
        return;
    }
    let avg = pages.iter().map(Page::len).sum::<usize>() / pages.len();
    let Some(want) = page_bytes.checked_sub(avg).filter(|w| *w > 64) else {
        return;
    };
    let mut rng = Rng::new(chrome.name.len() as u64);
    let mut css = String::from("<style>\n");
    let mut i = 0;
    while css.len() < want / 3 {
        css.push_str(&format!(
            ".c{i} .{w}{{margin:{m}px {n}px;color:#{c:06x};font-size:{f}rem}}\n",
            w = rng.pick(lorem::WORDS).len(),
            m = rng.below(40),
            n = rng.below(40),
            c = rng.next_u64() & 0xFFFFFF,
            f = 1 + rng.below(3)
        ));
        i += 1;
    }
    css.push_str("</style>\n<script>window.__SITE_CONFIG__ = {\"ads\": [\n");
    let mut s = css;
    while s.len() < want.saturating_sub(40) {
        s.push_str(&format!(
            "{{\"slot\": \"s{}\", \"size\": [{}, {}], \"key\": \"{:016x}\"}},\n",
            rng.below(1000),
            rng.below(1000),
            rng.below(1000),
            rng.next_u64()
        ));
    }
    s.push_str("{}]};</script>\n");
    let pad = Bytes::from(s);
    for p in pages {
        p.parts[PAD] = pad.clone();
    }
}
