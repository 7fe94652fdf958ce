//! The HTML of a procedural universe page: five layouts a template era can use (an old table
//! layout, `#wrapper` divs, semantic HTML5, a Bootstrap grid, a CSS-modules app shell), each with
//! its own header/nav, sidebar and footer markup, and the three page bodies (listing, article,
//! feature) written into them. Every in-site `<a href>` goes through `Page::link`, so it names a
//! page the universe serves. Pages are filled with text up to a per-page size target.

use std::fmt::Write;

use super::{Kind, Universe};
use crate::support::lorem::{self, escape, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Table,
    Divs,
    Semantic,
    Bootstrap,
    AppShell,
}

impl Layout {
    pub const ALL: [Layout; 5] = [
        Layout::Table,
        Layout::Divs,
        Layout::Semantic,
        Layout::Bootstrap,
        Layout::AppShell,
    ];

    /// Prefix of the content's class names in this layout.
    fn prefix(self, tag: &str) -> String {
        match self {
            Layout::Table => "t".into(),
            Layout::Divs => "post-".into(),
            Layout::Semantic => "c-".into(),
            Layout::Bootstrap => "bs-".into(),
            Layout::AppShell => format!("Story_{}__", &tag[..3]),
        }
    }
}

/// Salts of the page-level generators (`Universe::rng`, `Universe::pick`), one per purpose.
mod salt {
    pub const SIZE: u64 = 10;
    pub const TEXT: u64 = 11;
    pub const INLINE: u64 = 12;
    pub const RELATED: u64 = 13;
    pub const MORE: u64 = 14;
    pub const RIVER: u64 = 15;
    pub const CARDS: u64 = 16;
    pub const PICKS: u64 = 17;
    pub const TRENDING: u64 = 18;
    /// Era-level (page = era): most-read box, footer picks, nav extras, CSS.
    pub const MOST_READ: u64 = 20;
    pub const FOOTER: u64 = 21;
    pub const NAV: u64 = 22;
    pub const CSS: u64 = 23;
}

/// One page being written.
struct Page<'a> {
    u: &'a Universe,
    origin: usize,
    page: usize,
    era: usize,
    layout: Layout,
    /// Class-name prefix of the content.
    p: String,
    out: String,
}

impl Page<'_> {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// `<a href="…" class="…">title</a>` to page `m` of this origin.
    fn link(&mut self, m: usize, class: &str) {
        let path = self.u.path(self.origin, m);
        let title = escape(&self.u.title(self.origin, m));
        self.anchor(&path, &title, class);
    }

    /// `<a>` with its own text (navigation labels).
    fn link_text(&mut self, m: usize, text: &str, class: &str) {
        let path = self.u.path(self.origin, m);
        self.anchor(&path, text, class);
    }

    fn anchor(&mut self, path: &str, text: &str, class: &str) {
        if class.is_empty() {
            let _ = write!(self.out, "<a href=\"{path}\">{text}</a>");
        } else {
            let _ = write!(self.out, "<a href=\"{path}\" class=\"{class}\">{text}</a>");
        }
    }

    /// Each section's front page as `{open}<a class>{Section}</a>{close}`.
    fn section_items(&mut self, open: &str, close: &str, class: &str) {
        for (m, label) in self.sections() {
            self.push(open);
            self.link_text(m, &label, class);
            self.push(close);
        }
    }

    /// Each page as `{open}<a class>{title}</a>{close}`.
    fn page_items(&mut self, pages: &[usize], open: &str, close: &str, class: &str) {
        for &m in pages {
            self.push(open);
            self.link(m, class);
            self.push(close);
        }
    }

    /// `n` link targets of this page for one purpose.
    fn picks(&self, salt: u64, n: usize) -> Vec<usize> {
        (0..n)
            .map(|k| self.u.pick(self.origin, self.page, salt, k))
            .collect()
    }

    /// An era-level generator: the same on every page of this origin's era.
    fn era_rng(&self, salt: u64) -> Rng {
        self.u.rng(self.origin, usize::MAX - self.era, salt)
    }

    fn era_pick(&self, salt: u64, k: usize) -> usize {
        self.era_rng(salt).fork(k as u64).below(self.u.spec.pages)
    }

    fn sections(&self) -> Vec<(usize, String)> {
        let style = self.u.style(self.origin);
        (0..style.sections.len())
            .map(|s| {
                (
                    self.u.section_front(s),
                    super::capitalise(style.sections[s]),
                )
            })
            .collect()
    }

    /// Paragraphs (3–6 sentences, an inline link in some) until the page holds `until` bytes.
    fn fill(&mut self, rng: &mut Rng, until: usize, tag: &str) {
        let mut k = 0;
        while self.out.len() < until {
            let _ = write!(self.out, "<{tag}>");
            let sentences = rng.range(3, 6);
            for i in 0..sentences {
                if i > 0 {
                    self.push(" ");
                }
                if i == 1 && rng.chance(35) {
                    let m = self.u.pick(self.origin, self.page, salt::INLINE, k);
                    k += 1;
                    self.push("See also ");
                    self.link(m, "");
                    self.push(".");
                } else {
                    let s = lorem::sentence(rng, 8, 18);
                    self.push(&escape(&s));
                }
            }
            let close = tag.split(' ').next().unwrap_or(tag);
            let _ = writeln!(self.out, "</{close}>");
        }
    }
}

/// The page's HTML.
pub fn render(u: &Universe, origin: usize, page: usize) -> String {
    let style = u.style(origin);
    let era = u.era(origin, page);
    let layout = style.eras[era];
    let target = {
        let mut rng = u.rng(origin, page, salt::SIZE);
        u.spec.page_bytes * (70 + rng.below(61)) / 100
    };
    let mut w = Page {
        u,
        origin,
        page,
        era,
        layout,
        p: layout.prefix(&style.tag),
        out: String::with_capacity(target + 8192),
    };
    head(&mut w);
    header(&mut w);
    let kind = u.kind(page);
    let tail = {
        let mut t = Page {
            out: String::with_capacity(8192),
            p: w.p.clone(),
            ..w
        };
        let sidebar = kind != Kind::Feature;
        close_main(&mut t, sidebar);
        if sidebar {
            sidebar_box(&mut t);
            close_sidebar(&mut t);
        }
        footer(&mut t);
        t.out
    };
    let until = target.saturating_sub(tail.len());
    match kind {
        Kind::Listing => listing(&mut w, until),
        Kind::Article => article(&mut w, until),
        Kind::Feature => feature(&mut w, until),
    }
    w.out.push_str(&tail);
    w.out
}

fn head(w: &mut Page) {
    let style = w.u.style(w.origin);
    let title = escape(&w.u.title(w.origin, w.page));
    let _ = write!(
        w.out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head>\n<meta charset=\"utf-8\">\n\
         <title>{title} | {}</title>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"description\" content=\"{title}\">\n\
         <link rel=\"stylesheet\" href=\"/assets/v{}/site-{}.css\">\n<style>\n",
        escape(&style.name),
        w.era + 1,
        style.tag
    );
    // Inline CSS of the era (about a sixth of the page), as pages inline their critical CSS.
    let mut rng = w.era_rng(salt::CSS);
    let until = w.out.len() + w.u.spec.page_bytes / 6;
    let mut i = 0;
    while w.out.len() < until {
        let _ = writeln!(
            w.out,
            ".{}{}-{i}{{margin:{}px {}px;padding:{}px;color:#{:06x};font-size:{}px}}",
            w.p,
            rng.pick(lorem::WORDS)
                .trim_matches(|c: char| !c.is_ascii_alphabetic()),
            rng.below(40),
            rng.below(40),
            rng.below(24),
            rng.next_u64() & 0xFF_FFFF,
            rng.range(11, 28)
        );
        i += 1;
    }
    let _ = write!(
        w.out,
        "</style>\n<script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments)}}\
         gtag('js',new Date());gtag('config','UA-{}-{}',{{'anonymize_ip':true,'page_type':'{:?}'}});</script>\n\
         </head>\n",
        style.tag,
        w.era + 1,
        w.u.kind(w.page)
    );
}

/// Body open, masthead and main navigation, up to the start of the content.
fn header(w: &mut Page) {
    let name = escape(&w.u.style(w.origin).name);
    let sections = w.sections();
    let mut extras: Vec<usize> = (0..12usize.saturating_sub(sections.len()))
        .map(|k| w.era_pick(salt::NAV, k))
        .collect();
    extras.dedup();
    let tag = w.u.style(w.origin).tag.clone();
    match w.layout {
        Layout::Table => {
            let _ = write!(
                w.out,
                "<body bgcolor=\"#ffffff\"><center>\n<table class=\"outer\" width=\"960\" cellpadding=\"0\" \
                 cellspacing=\"0\">\n<tr><td colspan=\"2\" class=\"masthead\"><a href=\"/\"><img \
                 src=\"/img/logo.gif\" alt=\"{name}\" width=\"300\" height=\"60\"></a>\
                 <form action=\"/search\"><input name=\"q\" size=\"20\"><input type=\"submit\" \
                 value=\"Go\"></form></td></tr>\n<tr><td colspan=\"2\" class=\"navbar\">"
            );
            for (i, (m, label)) in sections.iter().enumerate() {
                if i > 0 {
                    w.push(" | ");
                }
                w.link_text(*m, label, "nav");
            }
            w.push("<br><font size=\"1\">");
            for m in extras {
                w.link(m, "subnav");
                w.push(" · ");
            }
            w.push("</font></td></tr>\n<tr><td valign=\"top\" class=\"content\">\n");
        }
        Layout::Divs => {
            let _ = write!(
                w.out,
                "<body>\n<div id=\"wrapper\">\n<div id=\"header\"><div class=\"logo\"><a href=\"/\">{name}</a>\
                 </div><div class=\"search\"><form action=\"/search\"><input type=\"text\" name=\"s\">\
                 </form></div>\n<ul id=\"nav\">"
            );
            w.section_items("<li class=\"menu-item\">", "</li>", "menu-link");
            w.push("</ul>\n<ul id=\"subnav\">");
            w.page_items(&extras, "<li>", "</li>", "");
            w.push("</ul></div>\n<div id=\"content\"><div class=\"main-col\">\n");
        }
        Layout::Semantic => {
            let _ = write!(
                w.out,
                "<body class=\"site-{tag}\">\n<header class=\"site-header\"><div class=\"brand\">\
                 <a href=\"/\" rel=\"home\">{name}</a><p class=\"tagline\">Independent news since 1987</p>\
                 </div>\n<nav class=\"primary\" aria-label=\"Main\"><ul>"
            );
            w.section_items("<li>", "</li>", "primary__link");
            w.push("</ul></nav>\n<nav class=\"topics\" aria-label=\"Topics\"><ul>");
            w.page_items(&extras, "<li>", "</li>", "topic");
            w.push("</ul></nav></header>\n<div class=\"layout\"><main id=\"main\">\n");
        }
        Layout::Bootstrap => {
            let _ = write!(
                w.out,
                "<body>\n<nav class=\"navbar navbar-expand-lg navbar-light bg-light\"><div class=\"container\">\
                 <a class=\"navbar-brand\" href=\"/\">{name}</a><button class=\"navbar-toggler\" \
                 type=\"button\"><span class=\"navbar-toggler-icon\"></span></button>\
                 <div class=\"collapse navbar-collapse\"><ul class=\"navbar-nav me-auto\">"
            );
            w.section_items("<li class=\"nav-item\">", "</li>", "nav-link");
            w.push("<li class=\"nav-item dropdown\"><span class=\"nav-link dropdown-toggle\">More</span><ul class=\"dropdown-menu\">");
            w.page_items(&extras, "<li>", "</li>", "dropdown-item");
            w.push("</ul></li></ul></div></div></nav>\n<div class=\"container mt-4\"><div class=\"row\">\
                    <div class=\"col-lg-8\">\n");
        }
        Layout::AppShell => {
            let t = &tag[..3];
            let _ = write!(
                w.out,
                "<body>\n<div id=\"root\"><div class=\"App_{t}\"><div class=\"Header_bar_{t}\"><div \
                 class=\"Header_inner_{t}\"><div class=\"Logo_{t}\"><a href=\"/\"><span>{name}</span></a>\
                 </div><div class=\"Menu_{t}\">"
            );
            w.section_items(
                &format!("<div class=\"MenuItem_{t}\">"),
                "</div>",
                &format!("MenuLink_{t}"),
            );
            let _ = write!(w.out, "</div><div class=\"Drawer_{t}\"><div>");
            w.page_items(&extras, "<div><span>", "</span></div>", "");
            let _ = write!(
                w.out,
                "</div></div></div></div>\n<div class=\"Page_{t}\"><div class=\"Main_{t}\">\n"
            );
        }
    }
}

/// Close the content column: open the sidebar column, or (no sidebar) close the columns.
fn close_main(w: &mut Page, sidebar: bool) {
    let t = w.u.style(w.origin).tag[..3].to_string();
    match (w.layout, sidebar) {
        (Layout::Table, true) => w.push("</td><td valign=\"top\" width=\"240\" class=\"rail\">\n"),
        (Layout::Table, false) => w.push("</td></tr>\n"),
        (Layout::Divs, true) => w.push("</div><div class=\"sidebar\">\n"),
        (Layout::Divs, false) => w.push("</div></div>\n"),
        (Layout::Semantic, true) => w.push("</main><aside class=\"rail\">\n"),
        (Layout::Semantic, false) => w.push("</main></div>\n"),
        (Layout::Bootstrap, true) => w.push("</div><div class=\"col-lg-4\">\n"),
        (Layout::Bootstrap, false) => w.push("</div></div></div>\n"),
        (Layout::AppShell, true) => {
            let _ = writeln!(w.out, "</div><div class=\"Rail_{t}\">");
        }
        (Layout::AppShell, false) => w.push("</div></div>\n"),
    }
}

/// Close the sidebar column and the columns.
fn close_sidebar(w: &mut Page) {
    w.push(match w.layout {
        Layout::Table => "</td></tr>\n",
        Layout::Divs => "</div><div class=\"clear\"></div></div>\n",
        Layout::Semantic => "</aside></div>\n",
        Layout::Bootstrap => "</div></div></div>\n",
        Layout::AppShell => "</div></div>\n",
    });
}

/// Most read (the same on every page of the era), trending and latest (the next pages in the
/// sequence: every page links to the page after it, so the site is connected).
fn sidebar_box(w: &mut Page) {
    let (box_open, h, ul, box_close) = match w.layout {
        Layout::Table => (
            "<table class=\"box\" width=\"100%\"><tr><td>",
            "b",
            "ul",
            "</td></tr></table>",
        ),
        Layout::Divs => ("<div class=\"widget\">", "h3", "ul", "</div>"),
        Layout::Semantic => ("<section class=\"rail__box\">", "h2", "ol", "</section>"),
        Layout::Bootstrap => (
            "<div class=\"card mb-3\"><div class=\"card-body\">",
            "h5",
            "ul",
            "</div></div>",
        ),
        Layout::AppShell => ("<div class=\"RailBox\"><div>", "div", "div", "</div></div>"),
    };
    let pages = w.u.spec.pages;
    let boxes: [(&str, Vec<usize>); 3] = [
        (
            "Most read",
            (0..10).map(|k| w.era_pick(salt::MOST_READ, k)).collect(),
        ),
        (
            "Trending",
            (0..8)
                .map(|k| w.u.pick(w.origin, w.page, salt::TRENDING, k))
                .collect(),
        ),
        ("Latest", (1..=8).map(|k| (w.page + k) % pages).collect()),
    ];
    for (title, links) in boxes {
        let _ = write!(w.out, "{box_open}<{h}>{title}</{h}><{ul}>");
        let (open, close) = if ul == "div" {
            ("<div>", "</div>")
        } else {
            ("<li>", "</li>")
        };
        w.page_items(&links, open, close, "");
        let _ = writeln!(w.out, "</{ul}>{box_close}");
    }
}

/// Footer: the sections, ten picks of the era, the legal line.
fn footer(w: &mut Page) {
    let name = escape(&w.u.style(w.origin).name);
    let picks: Vec<usize> = (0..10).map(|k| w.era_pick(salt::FOOTER, k)).collect();
    let mut rng = w.era_rng(salt::FOOTER);
    let legal = format!(
        "&copy; {} {name}. {}",
        2025 - w.era,
        escape(&lorem::sentence(&mut rng, 14, 24))
    );
    let t = w.u.style(w.origin).tag[..3].to_string();
    // (open, item open, item close, link class, between the lists, close before the legal line,
    // after it)
    let (open, item, item_close, class, middle, before_legal, after_legal) = match w.layout {
        Layout::Table => (
            "<tr><td colspan=\"2\" class=\"footer\"><font size=\"1\">".to_string(),
            "",
            " | ",
            "",
            "<br>".to_string(),
            "<br>".to_string(),
            "</font></td></tr>\n</table></center>".to_string(),
        ),
        Layout::Divs => (
            "<div id=\"footer\"><div class=\"footer-cols\"><div class=\"col\"><h4>Sections</h4><ul>".into(),
            "<li>",
            "</li>",
            "",
            "</ul></div><div class=\"col\"><h4>Don't miss</h4><ul>".into(),
            "</ul></div></div><p class=\"copyright\">".into(),
            "</p></div>\n</div>".into(),
        ),
        Layout::Semantic => (
            "<footer class=\"site-footer\"><nav class=\"footer-nav\"><section><h4>Sections</h4><ul>".into(),
            "<li>",
            "</li>",
            "",
            "</ul></section><section><h4>Editors' picks</h4><ul>".into(),
            "</ul></section></nav><small>".into(),
            "</small></footer>".into(),
        ),
        Layout::Bootstrap => (
            "<footer class=\"footer mt-5 py-4 bg-dark text-white\"><div class=\"container\"><div class=\"row\">\
             <div class=\"col-6 col-md-3\"><h5>Sections</h5><ul class=\"list-unstyled\">".into(),
            "<li>",
            "</li>",
            "text-white",
            "</ul></div><div class=\"col-6 col-md-9\"><h5>Read more</h5><ul class=\"list-unstyled\">".into(),
            "</ul></div></div><p class=\"small\">".into(),
            "</p></div></footer>".into(),
        ),
        Layout::AppShell => (
            format!(
                "<div class=\"Footer_{t}\"><div class=\"FooterGrid_{t}\"><div class=\"FooterCol_{t}\">\
                 <div class=\"FooterTitle_{t}\">Sections</div>"
            ),
            "<div>",
            "</div>",
            "",
            format!("</div><div class=\"FooterCol_{t}\"><div class=\"FooterTitle_{t}\">More</div>"),
            format!("</div></div><div class=\"Legal_{t}\">"),
            format!(
                "</div></div></div></div>\n<script>window.__STATE__={{\"page\":{},\"era\":{}}}</script>",
                w.page, w.era
            ),
        ),
    };
    w.push(&open);
    w.section_items(item, item_close, class);
    w.push(&middle);
    w.page_items(&picks, item, item_close, class);
    let _ = writeln!(w.out, "{before_legal}{legal}{after_legal}\n</body></html>");
}

/// A listing: heading, a river of 30 teasers, pagination, then section notes up to the size.
fn listing(w: &mut Page, until: usize) {
    let p = w.p.clone();
    let mut rng = w.u.rng(w.origin, w.page, salt::TEXT);
    let title = escape(&w.u.title(w.origin, w.page));
    let _ = writeln!(
        w.out,
        "<h1 class=\"{p}section-title\">{title}</h1>\n<ol class=\"{p}river\">"
    );
    for k in 0..30 {
        let m = w.u.pick(w.origin, w.page, salt::RIVER, k);
        let (y, mo, d) = w.u.date(w.origin, m);
        let _ = write!(w.out, "<li class=\"{p}teaser\"><h3>");
        w.link(m, &format!("{p}teaser-link"));
        let teaser = lorem::sentence(&mut rng, 12, 30);
        let _ = writeln!(
            w.out,
            "</h3><p class=\"{p}summary\">{}</p><span class=\"{p}meta\">{y}-{mo:02}-{d:02}</span></li>",
            escape(&teaser)
        );
    }
    let _ = write!(w.out, "</ol>\n<nav class=\"{p}pagination\">");
    let step = super::BLOCK * w.u.style(w.origin).sections.len();
    let pages = w.u.spec.pages;
    for k in 1..=8 {
        let m = (w.page + k * step) % pages;
        w.link(m, &format!("{p}page-link"));
    }
    w.push("</nav>\n");
    let _ = write!(w.out, "<div class=\"{p}section-about\">");
    w.fill(&mut rng, until.saturating_sub(7), "p");
    w.push("</div>\n");
}

/// An article: breadcrumbs, headline, byline, body up to the size, tags, related, previous and
/// next, more from the site, comments.
fn article(w: &mut Page, until: usize) {
    let p = w.p.clone();
    let mut rng = w.u.rng(w.origin, w.page, salt::TEXT);
    let s = w.u.section(w.origin, w.page);
    let (y, mo, d) = w.u.date(w.origin, w.page);
    let section_name = super::capitalise(w.u.style(w.origin).sections[s]);
    let _ = write!(
        w.out,
        "<div class=\"{p}breadcrumbs\"><a href=\"/\">Home</a> › "
    );
    w.link_text(w.u.section_front(s), &section_name, "");
    let title = escape(&w.u.title(w.origin, w.page));
    let _ = write!(
        w.out,
        "</div>\n<article class=\"{p}article\"><h1 class=\"{p}headline\">{title}</h1>\n\
         <p class=\"{p}byline\">By <span class=\"{p}author\">{}</span> · <time datetime=\"{y}-{mo:02}-{d:02}\">\
         {y}-{mo:02}-{d:02}</time></p>\n<div class=\"{p}share\"><button>Share</button><button>Save</button></div>\n\
         <div class=\"{p}body\">\n",
        escape(rng.pick::<&str>(lorem::NAMES))
    );
    // What follows the body, written first so the body can fill up to the size target.
    let mut after = Page {
        out: String::with_capacity(4096),
        p: p.clone(),
        ..*w
    };
    after.push("</div>\n");
    let _ = write!(after.out, "<ul class=\"{p}tags\">");
    let sections = w.u.style(w.origin).sections.len();
    let fronts: Vec<usize> = (0..5)
        .map(|k| w.u.section_front((s + k) % sections))
        .collect();
    after.page_items(&fronts, "<li>", "</li>", "");
    let _ = write!(
        after.out,
        "</ul>\n<div class=\"{p}related\"><h3>Related</h3><ul>"
    );
    after.page_items(&w.picks(salt::RELATED, 10), "<li>", "</li>", "");
    let pages = w.u.spec.pages;
    let _ = write!(after.out, "</ul></div>\n<div class=\"{p}prevnext\">");
    after.link((w.page + pages - 1) % pages, &format!("{p}prev"));
    after.link((w.page + 1) % pages, &format!("{p}next"));
    let _ = write!(
        after.out,
        "</div>\n</article>\n<div class=\"{p}more\"><h3>More from {}</h3><ul>",
        escape(&w.u.style(w.origin).name)
    );
    after.page_items(&w.picks(salt::MORE, 12), "<li>", "</li>", "");
    after.push("</ul></div>\n");
    let comments = rng.range(0, 5);
    let _ = write!(
        after.out,
        "<section class=\"{p}comments\"><h3>{comments} comments</h3>"
    );
    for _ in 0..comments {
        let _ = write!(
            after.out,
            "<div class=\"{p}comment\"><b>{}</b><p>{}</p></div>",
            escape(rng.pick::<&str>(lorem::NAMES)),
            escape(&lorem::sentence(&mut rng, 6, 24))
        );
    }
    after.push("</section>\n");
    let after = after.out;
    let mut sub = 0;
    let until = until.saturating_sub(after.len());
    while w.out.len() < until {
        let chunk = w.out.len() + 1500;
        w.fill(&mut rng, chunk.min(until), "p");
        sub += 1;
        if sub % 3 == 0 && w.out.len() < until {
            let _ = writeln!(w.out, "<h2>{}</h2>", escape(&lorem::title(&mut rng, 3, 6)));
        } else if sub % 5 == 0 {
            let _ = writeln!(
                w.out,
                "<blockquote>{}</blockquote>",
                escape(&lorem::sentence(&mut rng, 10, 20))
            );
        }
    }
    w.push(&after);
}

/// A feature: hero, chapters with pull quotes up to the size, then editors' picks and a grid
/// of cards (the first card is the next page).
fn feature(w: &mut Page, until: usize) {
    let p = w.p.clone();
    let mut rng = w.u.rng(w.origin, w.page, salt::TEXT);
    let title = escape(&w.u.title(w.origin, w.page));
    let _ = write!(
        w.out,
        "<div class=\"{p}hero\"><h1>{title}</h1><p class=\"{p}dek\">{}</p><figure><img src=\"/img/f{}.jpg\" \
         alt=\"\"><figcaption>{}</figcaption></figure></div>\n<div class=\"{p}feature-body\">\n",
        escape(&lorem::sentence(&mut rng, 12, 20)),
        w.page,
        escape(&lorem::sentence(&mut rng, 5, 10))
    );
    let mut after = Page {
        out: String::with_capacity(4096),
        p: p.clone(),
        ..*w
    };
    let _ = write!(
        after.out,
        "</div>\n<div class=\"{p}picks\"><h2>Editors' picks</h2><ul>"
    );
    after.page_items(&w.picks(salt::PICKS, 12), "<li>", "</li>", "");
    let _ = write!(
        after.out,
        "</ul></div>\n<div class=\"{p}cards\"><h2>More features</h2>"
    );
    let pages = w.u.spec.pages;
    for k in 0..24 {
        let m = if k == 0 {
            (w.page + 1) % pages
        } else {
            w.u.pick(w.origin, w.page, salt::CARDS, k)
        };
        let _ = write!(
            after.out,
            "<div class=\"{p}card\"><img src=\"/img/c{m}.jpg\" alt=\"\">"
        );
        after.link(m, "");
        after.push("</div>");
    }
    after.push("</div>\n");
    let after = after.out;
    let until = until.saturating_sub(after.len());
    let mut chapter = 0;
    while w.out.len() < until {
        chapter += 1;
        let _ = writeln!(
            w.out,
            "<h2 id=\"ch{chapter}\">{}</h2>",
            escape(&lorem::title(&mut rng, 2, 5))
        );
        let chunk = w.out.len() + 2500;
        w.fill(&mut rng, chunk.min(until), "p");
        let _ = writeln!(
            w.out,
            "<aside class=\"{p}pullquote\">“{}”</aside>",
            escape(&lorem::sentence(&mut rng, 8, 14))
        );
    }
    w.push(&after);
}
