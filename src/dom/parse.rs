//! HTML text → `Parsed`: one synchronous html5ever + markup5ever_rcdom parse that yields the
//! page's arena `Dom` (with path hashes), its links, `<base href>` and meta robots. The `Rc` DOM
//! is built and dropped inside `parse_html`, so callers only ever hold `Send` data.
//!
//! The page is read as a browser with scripting *disabled* shows it: thresher runs no scripts,
//! so `<noscript>` content is parsed as markup and kept (forum engines serve whole threads
//! there). `<pre>` text keeps its whitespace; formulas (`<math>`, MathJax's `math/tex`
//! scripts) become text nodes of TeX source; JSON-LD types go to `Dom::info`.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{parse_document, ParseOpts};
use markup5ever_rcdom::{Handle, NodeData, RcDom};

use super::links::Links;
use super::paths::{element_path, text_path, DOCUMENT};
use super::strip::{find_from, JSON_LD_SCRIPT, TEX_SCRIPT};
use super::tree::{
    flags, static_tag, Dom, Element, Extra, Node, NodeKind, PageInfo, Text, MAX_ATTR, MAX_LD_TYPES,
    MAX_NODES, NO_PARENT,
};

/// Elements whose subtree carries no visible content: skipped entirely (no paths, no text).
/// `script` is read for what it declares (JSON-LD, MathJax TeX) before it is skipped; `math`
/// becomes one text node of TeX source.
const SKIPPED: &[&str] = &[
    "script", "style", "template", "iframe", "svg", "object", "embed", "canvas",
];

/// The longest JSON-LD block read for its types, in bytes (longer ones are not read).
const MAX_LD_BYTES: usize = 256 * 1024;

/// `<meta name="robots">` (and `googlebot`-independent) directives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetaRobots {
    pub noindex: bool,
    pub nofollow: bool,
}

impl MetaRobots {
    /// These directives with those of an `X-Robots-Tag` header value (`noindex`, `nofollow`,
    /// `none`, as the crawl reads it): what decides whether the crawl stores a page, and
    /// whether `clean --warc` cleans a crawled one.
    pub fn with_header(self, x_robots_tag: Option<&str>) -> MetaRobots {
        let header = x_robots_tag.unwrap_or_default().to_ascii_lowercase();
        let none = header.contains("none");
        MetaRobots {
            noindex: self.noindex || none || header.contains("noindex"),
            nofollow: self.nofollow || none || header.contains("nofollow"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Parsed {
    pub dom: Dom,
    /// `<a href>` and `<area href>` in document order.
    pub links: Links,
    /// The first `<base href>`.
    pub base_href: Option<String>,
    pub robots: MetaRobots,
    /// The arena hit `MAX_NODES` and the rest of the page was dropped.
    pub truncated: bool,
    /// `og:url`, the page's address when it has no canonical link.
    og_url: Option<String>,
    /// Elements that hide themselves by their own attributes, in document order (`unveil`).
    hiders: Vec<u32>,
}

impl Parsed {
    /// Record where the page was fetched from (`url`, its final URL) as `Dom::address`, with the
    /// page's `<base href>` resolved against it: the base of the Markdown's links for a page
    /// that states no address of its own.
    pub fn locate(&mut self, url: &str) {
        let Ok(at) = url::Url::parse(url) else {
            return;
        };
        let base = self.base_href.as_deref().and_then(|b| at.join(b).ok());
        self.dom.address = Some(String::from(base.unwrap_or(at)));
    }
}

/// Nesting depth beyond which the rest of a document is dropped. html5ever's scope checks walk
/// the stack of open elements, so deep `<div>` nesting costs O(depth²) (100k levels: two
/// minutes); browsers cap DOM depth in the same way (Blink: 512).
pub const MAX_DEPTH: usize = 1500;

/// Parsing stops feeding input after this long (last resort against inputs that are slow in
/// ways the depth guard does not catch); the page is then `truncated`.
pub const PARSE_BUDGET: Duration = Duration::from_secs(3);

/// The budget `parse_html` applies: `PARSE_BUDGET`, except in this crate's unit tests, which run
/// on machines of any load and must not see a page cut by the wall clock (a 20,000-link page
/// took over 3 s in a debug build on a loaded 2-core machine). Nothing tests the budget itself.
fn parse_budget() -> Duration {
    if cfg!(test) {
        Duration::from_secs(600)
    } else {
        PARSE_BUDGET
    }
}

const CHUNK: usize = 64 * 1024;

/// Parse a decoded HTML document.
pub fn parse_html(html: &str) -> Parsed {
    parse_html_releasing(html, &|| {})
}

/// Flattening calls the caller's `release` once per this many `Rc` nodes it has freed.
pub const RELEASE_EVERY: usize = 1 << 16;

/// [`parse_html`], calling `release` every [`RELEASE_EVERY`] nodes while the `Rc` tree is
/// freed into the arena, so a caller can give the freed part back to the OS as it goes (a huge
/// page's tree and its arena were otherwise resident at once).
pub fn parse_html_releasing(html: &str, release: &dyn Fn()) -> Parsed {
    let cut = depth_cut(html.as_bytes(), MAX_DEPTH);
    let stripped = super::strip::strip_unread(&html[..cut.unwrap_or(html.len())]);
    let html = &*stripped;
    let started = Instant::now();
    let opts = ParseOpts {
        tree_builder: TreeBuilderOpts {
            scripting_enabled: false,
            ..TreeBuilderOpts::default()
        },
        ..ParseOpts::default()
    };
    let mut parser = parse_document(RcDom::default(), opts);
    let mut rest = html;
    let mut over_budget = false;
    while !rest.is_empty() {
        if started.elapsed() > parse_budget() {
            over_budget = true;
            break;
        }
        let mut at = rest.len().min(CHUNK);
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        parser.process(StrTendril::from_slice(&rest[..at]));
        rest = &rest[at..];
    }
    let rc = parser.finish();
    let mut out = Parsed {
        dom: Dom {
            nodes: Vec::with_capacity(html.len() / 40 + 16),
            info: PageInfo::default(),
            address: None,
        },
        links: Links::default(),
        base_href: None,
        robots: MetaRobots::default(),
        truncated: cut.is_some() || over_budget,
        og_url: None,
        hiders: Vec::new(),
    };
    flatten(&rc.document, &mut out, release);
    unveil(&mut out);
    if out.dom.info.url.is_none() {
        out.dom.info.url = out.og_url.take();
    }
    out
}

/// Byte offset of the tag that would open element number `max_depth + 1` on the stack, counting
/// only elements that stay open (void and end-tag-optional elements are not counted; comments,
/// scripts and styles are skipped). `None` when the document never nests that deep.
fn depth_cut(html: &[u8], max_depth: usize) -> Option<usize> {
    // `matches!` on byte strings compiles to a dispatch on the length: this runs once per tag.
    fn uncounted(name: &[u8]) -> bool {
        matches!(
            name,
            b"area"
                | b"base"
                | b"br"
                | b"col"
                | b"embed"
                | b"hr"
                | b"img"
                | b"input"
                | b"link"
                | b"meta"
                | b"source"
                | b"track"
                | b"wbr"
                | b"param"
                | b"keygen"
                | b"p"
                | b"li"
                | b"dt"
                | b"dd"
                | b"option"
                | b"optgroup"
                | b"tr"
                | b"td"
                | b"th"
                | b"tbody"
                | b"thead"
                | b"tfoot"
                | b"rb"
                | b"rp"
                | b"rt"
                | b"rtc"
                | b"colgroup"
                | b"caption"
                | b"html"
                | b"head"
                | b"body"
        )
    }
    fn raw(name: &[u8]) -> bool {
        matches!(
            name,
            b"script" | b"style" | b"textarea" | b"title" | b"xmp" | b"plaintext"
        )
    }
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &html[i..]) {
        let lt = i + off;
        i = lt + 1;
        if html[i..].starts_with(b"!--") {
            i = find_from(html, i + 3, b"-->").map_or(html.len(), |e| e + 3);
            continue;
        }
        let closing = html.get(i) == Some(&b'/');
        let name_at = i + usize::from(closing);
        let len = html[name_at..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if len == 0 {
            continue;
        }
        // Every listed name is short: a longer one is simply an element that counts.
        let mut lower = [0u8; 16];
        let name: &[u8] = if len <= lower.len() {
            lower[..len].copy_from_slice(&html[name_at..name_at + len]);
            lower[..len].make_ascii_lowercase();
            &lower[..len]
        } else {
            b""
        };
        let tag_end =
            memchr::memchr(b'>', &html[name_at + len..]).map_or(html.len(), |p| name_at + len + p);
        let self_closing = tag_end > 0 && html[tag_end - 1] == b'/';
        if closing {
            if !uncounted(name) {
                depth = depth.saturating_sub(1);
            }
        } else if raw(name) {
            let mut close = b"</".to_vec();
            close.extend_from_slice(name);
            let lower_rest = tag_end.min(html.len());
            i = find_ci(html, lower_rest, &close).unwrap_or(html.len());
            continue;
        } else if !self_closing && !uncounted(name) {
            depth += 1;
            if depth > max_depth {
                return Some(lt);
            }
        }
        i = tag_end.min(html.len());
    }
    None
}

fn find_ci(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    // Candidates start with the needle's first byte (`<`, never a letter), so memchr finds them.
    let (&first, rest) = needle.split_first()?;
    let mut at = from;
    while let Some(p) = memchr::memchr(first, hay.get(at..)?) {
        let start = at + p;
        let tail = hay.get(start + 1..start + needle.len())?;
        if tail.eq_ignore_ascii_case(rest) {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

enum Frame {
    Enter {
        handle: Handle,
        parent: u32,
        parent_path: u64,
        inherited: u16,
    },
    Exit(u32),
}

/// Iterative pre-order walk (hostile pages nest deeply; recursion would overflow the stack).
fn flatten(document: &Handle, out: &mut Parsed, release: &dyn Fn()) {
    out.dom.nodes.push(Node {
        parent: NO_PARENT,
        end: 1,
        path: DOCUMENT,
        flags: 0,
        kind: NodeKind::Document,
    });
    let mut stack: Vec<Frame> = vec![Frame::Exit(0)];
    push_children(&mut stack, document, 0, DOCUMENT, 0);
    let mut spacing = Spacing::default();
    let mut freed = 0usize;

    while let Some(frame) = stack.pop() {
        let (handle, parent, parent_path, inherited) = match frame {
            Frame::Exit(at) => {
                let end = out.dom.nodes.len() as u32;
                out.dom.nodes[at as usize].end = end;
                continue;
            }
            Frame::Enter {
                handle,
                parent,
                parent_path,
                inherited,
            } => (handle, parent, parent_path, inherited),
        };
        // `handle` is freed at the end of this iteration (its children are on the stack).
        freed += 1;
        if freed % RELEASE_EVERY == 0 {
            release();
        }
        if out.dom.nodes.len() >= MAX_NODES {
            out.truncated = true;
            continue;
        }
        match &handle.data {
            NodeData::Text { contents } if inherited & flags::IN_PRE != 0 => push_pre_text(
                &mut out.dom.nodes,
                &contents.borrow(),
                parent,
                parent_path,
                inherited,
            ),
            NodeData::Text { contents } => push_text(
                &mut out.dom.nodes,
                &mut spacing,
                &contents.borrow(),
                parent,
                parent_path,
                inherited,
            ),
            NodeData::Element { name, attrs, .. } => {
                let attrs = attrs.borrow();
                let attr = |key: &str| -> Option<&str> {
                    attrs
                        .iter()
                        .find(|a| &*a.name.local == key)
                        .map(|a| &*a.value)
                };
                match &*name.local {
                    "script" => {
                        read_script(out, &handle, &attr, parent, parent_path, inherited);
                        continue;
                    }
                    "math" => {
                        push_math(out, &handle, &attr, parent, parent_path, inherited);
                        continue;
                    }
                    _ => {}
                }
                let element = push_element(out, &name.local, &attr, parent, parent_path, inherited);
                if let Some((at, path, own)) = element {
                    stack.push(Frame::Exit(at));
                    push_children(&mut stack, &handle, at, path, own);
                }
            }
            // Comments, doctypes and processing instructions carry no content.
            _ => {}
        }
    }
}

/// Whitespace-only text is dropped, but it still separates its neighbours
/// (`<span>Share</span> <a>Post</a>` is "Share Post").
#[derive(Default)]
struct Spacing {
    /// The arena index of the last text node pushed.
    last_text: Option<usize>,
    /// Whitespace-only text came since it.
    pending_space: bool,
}

/// A text node into the arena (normalised; whitespace-only text only marks the spacing).
fn push_text(
    nodes: &mut Vec<Node>,
    spacing: &mut Spacing,
    raw: &str,
    parent: u32,
    parent_path: u64,
    inherited: u16,
) {
    let text = normalise_space(raw);
    if text.is_empty() {
        if !raw.is_empty() {
            spacing.pending_space = true;
            if let Some(NodeKind::Text(t)) = spacing.last_text.map(|i| &mut nodes[i].kind) {
                t.space_after = true;
            }
        }
        return;
    }
    let first = std::mem::take(&mut spacing.pending_space)
        || raw.chars().next().is_some_and(char::is_whitespace);
    let last = raw.chars().next_back().is_some_and(char::is_whitespace);
    spacing.last_text = Some(nodes.len());
    nodes.push(Node {
        parent,
        end: nodes.len() as u32 + 1,
        path: text_path(parent_path, &text),
        flags: inherited,
        kind: NodeKind::Text(Text {
            text,
            space_before: first,
            space_after: last,
        }),
    });
}

/// A text node inside `<pre>`: kept verbatim (whitespace-only text too: a code line's
/// indentation is often a node of its own between highlighted spans). Its path hashes its
/// normalised text, as every text path does.
fn push_pre_text(nodes: &mut Vec<Node>, raw: &str, parent: u32, parent_path: u64, inherited: u16) {
    if raw.is_empty() {
        return;
    }
    let normalised = normalise_space(raw);
    nodes.push(Node {
        parent,
        end: nodes.len() as u32 + 1,
        path: text_path(parent_path, &normalised),
        flags: inherited,
        kind: NodeKind::Text(Text {
            text: raw.to_string(),
            space_before: raw.starts_with(char::is_whitespace),
            space_after: raw.ends_with(char::is_whitespace),
        }),
    });
}

/// The text of `handle`'s text children, joined.
fn child_text(handle: &Handle) -> String {
    let mut s = String::new();
    for child in handle.children.borrow().iter() {
        if let NodeData::Text { contents } = &child.data {
            s.push_str(&contents.borrow());
        }
    }
    s
}

/// A formula as one text node of TeX source (`flags::MATH`, plus `flags::DISPLAY` for a
/// display formula), under `parent`. Empty TeX adds nothing.
fn push_formula(
    out: &mut Parsed,
    tex: &str,
    display: bool,
    parent: u32,
    parent_path: u64,
    inherited: u16,
) {
    let tex = tex.trim();
    if tex.is_empty() || out.dom.nodes.len() >= MAX_NODES {
        return;
    }
    let mut f = inherited | flags::MATH;
    if display {
        f |= flags::DISPLAY;
    }
    let nodes = &mut out.dom.nodes;
    nodes.push(Node {
        parent,
        end: nodes.len() as u32 + 1,
        path: text_path(parent_path, &normalise_space(tex)),
        flags: f,
        kind: NodeKind::Text(Text {
            text: cut(tex, MAX_ATTR).to_string(),
            space_before: true,
            space_after: true,
        }),
    });
}

/// `<script>`: JSON-LD types go to `Dom::info`, MathJax's `math/tex` source becomes a formula;
/// anything else is skipped.
fn read_script<'a>(
    out: &mut Parsed,
    handle: &Handle,
    attr: &impl Fn(&str) -> Option<&'a str>,
    parent: u32,
    parent_path: u64,
    inherited: u16,
) {
    let kind = attr("type").unwrap_or("").trim().to_ascii_lowercase();
    if kind.starts_with(TEX_SCRIPT) {
        let display = kind.contains("mode=display");
        push_formula(
            out,
            &child_text(handle),
            display,
            parent,
            parent_path,
            inherited,
        );
    } else if kind == JSON_LD_SCRIPT {
        let text = child_text(handle);
        if text.len() <= MAX_LD_BYTES {
            read_json_ld(&mut out.dom.info, &text);
        }
    }
}

/// The types (and a product's description) of one JSON-LD block: its top-level object or
/// array, and the members of an `@graph`.
fn read_json_ld(info: &mut PageInfo, text: &str) {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text.trim()) else {
        return;
    };
    let mut objects: Vec<&serde_json::Value> = match &value {
        serde_json::Value::Array(items) => items.iter().collect(),
        v => vec![v],
    };
    let graph: Vec<&serde_json::Value> = objects
        .iter()
        .filter_map(|o| o.get("@graph")?.as_array())
        .flatten()
        .collect();
    objects.extend(graph);
    for o in objects {
        let types: Vec<&str> = match o.get("@type") {
            Some(serde_json::Value::String(t)) => vec![t.as_str()],
            Some(serde_json::Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str()).collect(),
            _ => continue,
        };
        for t in &types {
            if info.types.len() < MAX_LD_TYPES && !info.types.iter().any(|k| k == t) {
                info.types.push(cut(t, 64).to_string());
            }
        }
        if info.product_description.is_none()
            && types.iter().any(|t| t.eq_ignore_ascii_case("product"))
        {
            if let Some(d) = o.get("description").and_then(|d| d.as_str()) {
                let d = normalise_space(d);
                if !d.is_empty() {
                    info.product_description = Some(cut(&d, MAX_ATTR).to_string());
                }
            }
        }
    }
}

/// `<math>`: one formula of its `alttext`, else its TeX annotation, else its text.
fn push_math<'a>(
    out: &mut Parsed,
    handle: &Handle,
    attr: &impl Fn(&str) -> Option<&'a str>,
    parent: u32,
    parent_path: u64,
    inherited: u16,
) {
    if inherited & flags::HIDDEN != 0 || is_hidden(attr) {
        return;
    }
    let display = attr("display").is_some_and(|d| d.eq_ignore_ascii_case("block"));
    let tex = match attr("alttext").filter(|t| !t.trim().is_empty()) {
        Some(t) => t.to_string(),
        None => tex_annotation(handle).unwrap_or_else(|| normalise_space(&subtree_text(handle))),
    };
    push_formula(out, &tex, display, parent, parent_path, inherited);
}

/// The text of an `<annotation encoding="application/x-tex">` below `handle`.
fn tex_annotation(handle: &Handle) -> Option<String> {
    let mut stack = vec![handle.clone()];
    while let Some(h) = stack.pop() {
        if let NodeData::Element { name, attrs, .. } = &h.data {
            if &*name.local == "annotation"
                && attrs.borrow().iter().any(|a| {
                    &*a.name.local == "encoding"
                        && a.value.eq_ignore_ascii_case("application/x-tex")
                })
            {
                return Some(child_text(&h));
            }
        }
        stack.extend(h.children.borrow().iter().rev().cloned());
    }
    None
}

/// All text below `handle`, in document order (a `<math>` without TeX: its symbols).
fn subtree_text(handle: &Handle) -> String {
    let mut s = String::new();
    let mut stack = vec![handle.clone()];
    while let Some(h) = stack.pop() {
        if let NodeData::Text { contents } = &h.data {
            s.push_str(&contents.borrow());
            s.push(' ');
        }
        stack.extend(h.children.borrow().iter().rev().cloned());
    }
    s
}

/// `s` cut to at most `max` bytes, at a char boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut at = max;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    &s[..at]
}

/// The attributes of `Extra` an element carries, or `None` when it has none of them.
fn extra<'a>(tag: &str, attr: &impl Fn(&str) -> Option<&'a str>) -> Option<Box<Extra>> {
    let keep = |v: Option<&str>| v.map(|v| cut(v.trim(), MAX_ATTR).to_string());
    let mut e = Extra {
        itemprop: keep(attr("itemprop")),
        itemtype: keep(attr("itemtype")),
        ..Extra::default()
    };
    match tag {
        "a" | "area" => e.href = keep(attr("href")),
        "img" => {
            let src = attr("src")
                .filter(|s| !s.trim().is_empty() && !s.trim_start().starts_with("data:"));
            e.src = keep(
                src.or_else(|| attr("data-src"))
                    .or_else(|| attr("data-lazy-src")),
            );
            e.alt = keep(attr("alt")).filter(|a| !a.is_empty());
        }
        _ => {}
    }
    let any = e.href.is_some()
        || e.src.is_some()
        || e.alt.is_some()
        || e.itemprop.is_some()
        || e.itemtype.is_some();
    any.then(|| Box::new(e))
}

/// An element into the arena, its link, `<base href>` or meta robots into `out`. Gives the
/// element's arena index, path hash and flags (what its children inherit), or `None` for a
/// skipped element (`SKIPPED`: its subtree is dropped).
fn push_element<'a>(
    out: &mut Parsed,
    tag: &str,
    attr: &impl Fn(&str) -> Option<&'a str>,
    parent: u32,
    parent_path: u64,
    inherited: u16,
) -> Option<(u32, u64, u16)> {
    if SKIPPED.contains(&tag) {
        return None;
    }
    let mut own = inherited;
    match tag {
        "head" => own |= flags::IN_HEAD,
        "pre" | "listing" | "xmp" | "plaintext" => own |= flags::IN_PRE,
        "noscript" => own |= flags::IN_NOSCRIPT,
        _ => {}
    }
    if is_hidden(attr) {
        own |= flags::HIDDEN;
        out.hiders.push(out.dom.nodes.len() as u32);
    }
    if note_metadata(out, tag, attr) {
        own |= flags::IN_LINK;
        if attr("href").is_some_and(|h| h.trim_start().starts_with('#')) {
            own |= flags::IN_ANCHOR;
        }
    }
    let path = element_path(parent_path, tag);
    let nodes = &mut out.dom.nodes;
    let at = nodes.len() as u32;
    nodes.push(Node {
        parent,
        end: at + 1,
        path,
        flags: own,
        kind: NodeKind::Element(Element {
            tag: static_tag(tag).map_or_else(|| Cow::Owned(tag.to_string()), Cow::Borrowed),
            id: attr("id").map(str::to_string),
            class: attr("class").map(str::to_string),
            role: attr("role").map(str::to_string),
            extra: extra(tag, attr),
        }),
    });
    Some((at, path, own))
}

/// What an element tells about the page rather than its content: a link (`a` / `area` with an
/// `href`: true is returned), the first `<base href>`, `<meta name=robots>` directives.
fn note_metadata<'a>(out: &mut Parsed, tag: &str, attr: &impl Fn(&str) -> Option<&'a str>) -> bool {
    match tag {
        "a" | "area" => {
            if let Some(href) = attr("href") {
                let nofollow = attr("rel").is_some_and(|r| {
                    r.split_ascii_whitespace()
                        .any(|t| t.eq_ignore_ascii_case("nofollow"))
                });
                out.links.push(href.trim(), nofollow);
                return true;
            }
        }
        "base" if out.base_href.is_none() => {
            out.base_href = attr("href").map(|h| h.trim().to_string());
        }
        "link" => {
            let canonical = attr("rel").is_some_and(|r| {
                r.split_ascii_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("canonical"))
            });
            if canonical && out.dom.info.url.is_none() {
                out.dom.info.url = attr("href")
                    .map(str::trim)
                    .filter(|h| !h.is_empty())
                    .map(|h| cut(h, MAX_ATTR).to_string());
            }
        }
        "meta" => {
            if attr("property").is_some_and(|p| p.eq_ignore_ascii_case("og:url")) {
                if let Some(u) = attr("content").map(str::trim).filter(|u| !u.is_empty()) {
                    out.og_url = Some(cut(u, MAX_ATTR).to_string());
                }
            }
            if attr("property").is_some_and(|p| p.eq_ignore_ascii_case("og:type")) {
                if let Some(t) = attr("content").map(str::trim).filter(|t| !t.is_empty()) {
                    let info = &mut out.dom.info;
                    if info.types.len() < MAX_LD_TYPES && !info.types.iter().any(|k| k == t) {
                        info.types.push(cut(t, 64).to_string());
                    }
                }
            }
            let name = attr("name").unwrap_or("");
            if name.eq_ignore_ascii_case("robots") {
                if let Some(content) = attr("content") {
                    for d in content.split(',').map(str::trim) {
                        let none = d.eq_ignore_ascii_case("none");
                        out.robots.noindex |= none || d.eq_ignore_ascii_case("noindex");
                        out.robots.nofollow |= none || d.eq_ignore_ascii_case("nofollow");
                    }
                }
            }
        }
        _ => {}
    }
    false
}

/// The children move out of `handle` into the stack: each `Rc` node is then dropped as soon as
/// it is flattened, so the `Rc` DOM shrinks while the arena grows instead of both being whole
/// at once (a 4.95 MB page of 230,000 links: 115 MB of `Rc` nodes beside a 60 MB arena).
fn push_children(stack: &mut Vec<Frame>, handle: &Handle, parent: u32, path: u64, inherited: u16) {
    let children = std::mem::take(&mut *handle.children.borrow_mut());
    for child in children.into_iter().rev() {
        stack.push(Frame::Enter {
            handle: child,
            parent,
            parent_path: path,
            inherited,
        });
    }
}

/// The hidden text (characters) below which `unveil` leaves a page as it is: a page with less
/// hidden is a page with little text, not one waiting for its scripts.
const UNVEIL_MIN_CHARS: usize = 500;

/// How many times the prose a page shows (text outside links) the element that hides its
/// title must hold for `unveil` to show it. A shop's product page hidden whole until its
/// scripts run shows a header and its menus beside it (WCXB dev: 3–60 % of the hidden text
/// as a whole, but a third of its prose or less); a dialog or menu that hides itself holds no
/// title, and a page that shows its title is not waiting for scripts.
const UNVEIL_TITLE_PROSE: usize = 3;

/// Lift the veil of a page that hides its text until its scripts have run, so a crawler that
/// runs none would see an empty page where a reader sees the loaded one. Two shapes:
/// - nearly all its text under one element (`visibility:hidden` on an application's root
///   against a flash of unstyled content, `aria-hidden` on the page behind a dialog): the text
///   shown is under a tenth of the text hidden, and one outermost hiding element holds most of
///   the hidden text;
/// - its title under one element (`hidden` or `display:none` on a shop's product or listing
///   until its scripts fill it in): no `<h1>` is shown, the outermost hiding element around
///   the first holds `UNVEIL_MIN_CHARS` of prose and `UNVEIL_TITLE_PROSE` times the prose
///   shown.
///
/// That element's own hiding is dropped; what it holds that hides itself stays hidden.
fn unveil(out: &mut Parsed) {
    let nodes = &out.dom.nodes;
    let chars = |n: &Node| match &n.kind {
        NodeKind::Text(t) if n.flags & flags::IN_HEAD == 0 => t.text.len(),
        _ => 0,
    };
    let prose = |n: &Node| {
        if n.flags & flags::IN_LINK == 0 {
            chars(n)
        } else {
            0
        }
    };
    let (mut shown, mut hidden, mut shown_prose) = (0usize, 0usize, 0usize);
    for n in nodes.iter() {
        if n.flags & flags::HIDDEN != 0 {
            hidden += chars(n);
        } else {
            shown += chars(n);
            shown_prose += prose(n);
        }
    }
    if hidden < UNVEIL_MIN_CHARS {
        return;
    }
    let held = |h: u32, f: &dyn Fn(&Node) -> usize| -> usize {
        let n = &nodes[h as usize];
        nodes[h as usize..n.end as usize].iter().map(f).sum()
    };
    let outermost_hider = |mut i: usize| {
        while nodes[i].parent != NO_PARENT
            && nodes[nodes[i].parent as usize].flags & flags::HIDDEN != 0
        {
            i = nodes[i].parent as usize;
        }
        i as u32
    };
    let page_veil = (shown * 10 < hidden)
        .then(|| {
            out.hiders
                .iter()
                .copied()
                .filter(|&h| outermost_hider(h as usize) == h)
                .map(|h| (h, held(h, &chars)))
                .max_by_key(|&(_, c)| c)
                .filter(|&(_, most)| most * 2 >= hidden)
                .map(|(h, _)| h)
        })
        .flatten();
    let is_h1 = |n: &Node| matches!(&n.kind, NodeKind::Element(e) if &*e.tag == "h1");
    let title_veil = || {
        let mut h1s = nodes.iter().enumerate().filter(|(_, n)| is_h1(n));
        let (first, n) = h1s.next()?;
        if n.flags & flags::HIDDEN == 0 || h1s.any(|(_, n)| n.flags & flags::HIDDEN == 0) {
            return None;
        }
        let veil = outermost_hider(first);
        let veil_prose = held(veil, &prose);
        (veil_prose >= UNVEIL_MIN_CHARS && veil_prose >= UNVEIL_TITLE_PROSE * shown_prose)
            .then_some(veil)
    };
    let Some(veil) = page_veil.or_else(title_veil) else {
        return;
    };
    let nodes = &mut out.dom.nodes;
    let end = nodes[veil as usize].end;
    nodes[veil as usize].flags &= !flags::HIDDEN;
    for i in veil + 1..end {
        let parent = nodes[i as usize].parent as usize;
        let hides = out.hiders.binary_search(&i).is_ok();
        let flag = if hides || nodes[parent].flags & flags::HIDDEN != 0 {
            flags::HIDDEN
        } else {
            0
        };
        nodes[i as usize].flags = (nodes[i as usize].flags & !flags::HIDDEN) | flag;
    }
}

/// Whether an element's own attributes hide it. A tab panel never hides (`role=tabpanel`: the
/// other languages of a code sample, a product's specifications and reviews): its text is one
/// click away and is as much the page's as the panel shown.
fn is_hidden<'a>(attr: &impl Fn(&str) -> Option<&'a str>) -> bool {
    if attr("role").is_some_and(|r| r.trim().eq_ignore_ascii_case("tabpanel")) {
        return false;
    }
    if attr("hidden").is_some() {
        return true;
    }
    if attr("aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return true;
    }
    attr("style").is_some_and(|s| {
        let s: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        s.contains("display:none") || s.contains("visibility:hidden")
    })
}

/// Collapse runs of whitespace (Unicode, so NBSP and ideographic space too) to one space; trim.
pub fn normalise_space(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::paths::path_string;
    use crate::dom::tree::KNOWN_TAGS;

    fn shown(html: &str) -> String {
        crate::dom::text::visible_text(&parse_html(html).dom)
    }

    const PROSE: &str = "<p>Rangers counted the boats left at the lake and asked walkers to \
        carry out everything they bring in, a rule that starts in spring and runs all summer long \
        for every visitor of the park.</p>";

    #[test]
    fn a_page_hidden_whole_until_its_scripts_run_is_shown_but_what_hides_itself_stays_hidden() {
        let html = format!(
            "<body><div id=root style='visibility: hidden'><h1>Lake rules</h1>{}\
             <div style='display:none'><p>Cookie dialog</p></div>\
             <div aria-hidden=true><div hidden><p>Search overlay</p></div></div></div></body>",
            PROSE.repeat(4)
        );
        let text = shown(&html);
        assert!(
            text.contains("Lake rules") && text.contains("Rangers counted"),
            "{text}"
        );
        assert!(
            !text.contains("Cookie dialog") && !text.contains("Search overlay"),
            "{text}"
        );
    }

    /// Regression: shops hide a product page whole (`hidden`, `display:none`) until their
    /// scripts fill it in, while the header and its menus show; the page read as its header.
    #[test]
    fn a_title_hidden_until_the_scripts_run_is_shown_with_its_page() {
        let menu: String = (0..40)
            .map(|k| format!("<li><a href=/c/{k}>Category number {k}</a></li>"))
            .collect();
        let page = |veil: &str, title: &str| {
            format!(
                "<body><header><p>Free shipping over 40 euros</p><ul>{menu}</ul></header>\
                 <div {veil}><h1>Almond thins</h1>{}<div hidden><p>Sign-up dialog</p></div>\
                 </div>{title}</body>",
                PROSE.repeat(3)
            )
        };
        for veil in ["hidden", "style='display: none'"] {
            let text = shown(&page(veil, ""));
            assert!(
                text.contains("Almond thins") && text.contains("Rangers counted"),
                "{veil}: {text}"
            );
            assert!(!text.contains("Sign-up dialog"), "{text}");
        }
        // A page that shows a title is not waiting for its scripts.
        let text = shown(&page("hidden", "<h1>Shown title</h1>"));
        assert!(!text.contains("Rangers counted"), "{text}");
        // Nor is one whose hidden title holds less prose than three times what it shows.
        let text = shown(&page(
            "hidden",
            &PROSE.repeat(2).replace("<p>", "<p>Shown "),
        ));
        assert!(!text.contains("Almond thins"), "{text}");
    }

    #[test]
    fn a_hidden_tab_panel_is_shown_but_what_hides_itself_inside_stays_hidden() {
        let html = "<body><div role=tablist><button role=tab>Specs</button></div>\
            <div role=tabpanel hidden><p>Weight 700 g</p><p style='display:none'>Old price</p>\
            </div><div role='TabPanel' style='display: none'><p>Reviews</p></div>\
            <div hidden><p>Dialog</p></div></body>";
        let text = shown(html);
        assert!(
            text.contains("Weight 700 g") && text.contains("Reviews"),
            "{text}"
        );
        assert!(
            !text.contains("Old price") && !text.contains("Dialog"),
            "{text}"
        );
    }

    #[test]
    fn hidden_parts_of_a_page_that_shows_its_text_stay_hidden() {
        // Shown text a tenth of the hidden: the hidden part is a dialog, a tab, a menu.
        let html = format!(
            "<body><main>{}</main><div aria-hidden=true>{}</div></body>",
            PROSE,
            PROSE.replace("Rangers", "Dialog").repeat(8)
        );
        let text = shown(&html);
        assert!(
            text.contains("Rangers") && !text.contains("Dialog"),
            "{text}"
        );
        // Little text hidden at all: nothing to lift.
        let html = "<body><div style='visibility:hidden'><p>Loading the map</p></div></body>";
        assert_eq!(shown(html).trim(), "");
    }

    /// Regression: a page of 230,000 links held its whole `Rc` DOM until the arena was complete.
    #[test]
    fn flatten_frees_each_rc_node_once_it_is_in_the_arena() {
        let html = "<html><body><p>a</p><div><a href=/x>x</a></div><p>b</p></body></html>";
        let rc = parse_document(RcDom::default(), ParseOpts::default()).one(html);
        let mut weak = Vec::new();
        let mut stack = vec![rc.document.clone()];
        while let Some(h) = stack.pop() {
            weak.push(std::rc::Rc::downgrade(&h));
            stack.extend(h.children.borrow().iter().cloned());
        }
        drop(stack);
        let mut out = Parsed {
            dom: Dom::default(),
            links: Links::default(),
            base_href: None,
            robots: MetaRobots::default(),
            truncated: false,
            og_url: None,
            hiders: Vec::new(),
        };
        flatten(&rc.document, &mut out, &|| {});
        assert_eq!(out.links.len(), 1);
        assert!(out.dom.nodes.len() > 6);
        // The document is still held; every node below it is gone already.
        assert_eq!(weak.iter().filter(|w| w.upgrade().is_some()).count(), 1);
    }

    fn texts(p: &Parsed) -> Vec<&str> {
        p.dom
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn text_paths_read_as_in_the_papers() {
        let p = parse_html("<html><body><h1>Template  Extraction\n</h1></body></html>");
        let at = p
            .dom
            .nodes
            .iter()
            .position(|n| matches!(n.kind, NodeKind::Text(_)))
            .unwrap();
        assert_eq!(
            path_string(&p.dom, at),
            "Document\\<html>\\<body>\\<h1>\\Template Extraction"
        );
        let h1 = p.dom.nodes[at].parent as usize;
        assert_eq!(
            p.dom.nodes[at].path,
            text_path(p.dom.nodes[h1].path, "Template Extraction")
        );
    }

    #[test]
    fn scripts_styles_comments_carry_no_paths() {
        let with =
            parse_html("<body><p>x</p><script>var a=1</script><style>p{}</style><!-- c --></body>");
        let without = parse_html("<body><p>x</p></body>");
        assert_eq!(with.dom.path_set(), without.dom.path_set());
        assert_eq!(texts(&with), vec!["x"]);
    }

    /// A forum engine serves its whole thread inside `<noscript>` to clients without
    /// scripts: parsed as a browser with scripting off parses it, the posts are text.
    #[test]
    fn regression_noscript_content_is_read_as_markup() {
        let p = parse_html(
            "<body><div id=app></div><noscript><div class=post><p>First post text.</p></div>             <div class=post><p>A reply.</p></div></noscript></body>",
        );
        assert_eq!(texts(&p), vec!["First post text.", "A reply."]);
        let post = p
            .dom
            .nodes
            .iter()
            .position(|n| matches!(&n.kind, NodeKind::Text(t) if t.text == "A reply."))
            .unwrap();
        assert_ne!(p.dom.nodes[post].flags & flags::IN_NOSCRIPT, 0);
    }

    #[test]
    fn pre_keeps_whitespace_and_formulas_become_tex() {
        let p = parse_html(
            "<pre>  a\n\tb <i>c</i></pre><p><math alttext='x^2'><mi>x</mi></math>             <script type='math/tex; mode=display'>y=1</script>             <script type='application/ld+json'>{\"@type\":\"Product\",\"description\":\"A  fine chair.\"}</script></p>",
        );
        assert_eq!(texts(&p), vec!["  a\n\tb ", "c", "x^2", "y=1"]);
        let y = p
            .dom
            .nodes
            .iter()
            .position(|n| matches!(&n.kind, NodeKind::Text(t) if t.text == "y=1"))
            .unwrap();
        assert_eq!(
            p.dom.nodes[y].flags & (flags::MATH | flags::DISPLAY),
            flags::MATH | flags::DISPLAY
        );
        assert_eq!(p.dom.info.types, vec!["Product"]);
        assert_eq!(
            p.dom.info.product_description.as_deref(),
            Some("A fine chair.")
        );
    }

    #[test]
    fn subtree_ranges_and_parents_are_consistent() {
        let p = parse_html("<div><p>a<b>b</b></p><ul><li>c</li><li>d</li></ul></div><p>e</p>");
        for (i, n) in p.dom.nodes.iter().enumerate().skip(1) {
            let parent = &p.dom.nodes[n.parent as usize];
            assert!((n.parent as usize) < i && i < parent.end as usize);
            assert!(n.end as usize <= parent.end as usize);
        }
        let ul = (0..p.dom.len())
            .find(|&i| p.dom.tag(i) == Some("ul"))
            .unwrap();
        assert_eq!(p.dom.children(ul).count(), 2);
        assert_eq!(texts(&p), vec!["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn links_base_and_meta_robots() {
        let p = parse_html(
            r#"<head><base href="/b/"><meta name="ROBOTS" content="noindex, NoFollow"></head>
               <body><a href=" x.html ">x</a><a rel="ugc nofollow" href="y">y</a><a>no href</a>
               <map><area href="z"></map></body>"#,
        );
        assert_eq!(p.base_href.as_deref(), Some("/b/"));
        assert_eq!(
            p.robots,
            MetaRobots {
                noindex: true,
                nofollow: true
            }
        );
        let links: Vec<(&str, bool)> = p.links.iter().map(|l| (l.href, l.nofollow)).collect();
        assert_eq!(links, vec![("x.html", false), ("y", true), ("z", false)]);
    }

    #[test]
    fn flags_mark_hidden_links_and_head() {
        let p = parse_html(
            r#"<head><title>T</title></head><body><div style="display: none">h</div>
               <a href="/">l</a><p aria-hidden="true">x</p><p>v</p></body>"#,
        );
        let flag_of = |s: &str| {
            p.dom
                .nodes
                .iter()
                .find(|n| matches!(&n.kind, NodeKind::Text(t) if t.text == s))
                .unwrap()
                .flags
        };
        assert_eq!(flag_of("T"), flags::IN_HEAD);
        assert_eq!(flag_of("h"), flags::HIDDEN);
        assert_eq!(flag_of("l"), flags::IN_LINK);
        assert_eq!(flag_of("x"), flags::HIDDEN);
        assert_eq!(flag_of("v"), 0);
        assert_eq!(p.dom.title().as_deref(), Some("T"));
    }

    #[test]
    fn deep_nesting_is_cut_at_max_depth_quickly() {
        // Regression: 100k nested <div>s took two minutes in html5ever (quadratic scope checks).
        // No timing here (machines are shared): the document is cut at MAX_DEPTH before
        // html5ever sees it, which is what keeps the parse linear.
        let html = "<p>before</p>".to_string()
            + &"<div>".repeat(100_000)
            + "deep"
            + &"</div>".repeat(100_000);
        let cut = depth_cut(html.as_bytes(), MAX_DEPTH).expect("cut");
        assert!(cut <= "<p>before</p>".len() + 5 * (MAX_DEPTH + 1), "{cut}");
        let p = parse_html(&html);
        assert!(p.truncated);
        assert_eq!(texts(&p), vec!["before"]);
    }

    #[test]
    fn deep_spans_do_not_overflow_the_stack() {
        let html = "<span>".repeat(MAX_DEPTH) + "deep" + &"</span>".repeat(MAX_DEPTH);
        let p = parse_html(&html);
        assert!(!p.truncated);
        assert!(texts(&p).contains(&"deep"));
    }

    #[test]
    fn depth_guard_ignores_unclosed_optional_tags_comments_and_scripts() {
        let html = "<ul>".to_string()
            + &"<li><p>x".repeat(5000)
            + "<!--"
            + &"<div>".repeat(5000)
            + "-->"
            + "<script>"
            + &"<div>".repeat(5000)
            + "</SCRIPT>"
            + "<div/>".repeat(5000).as_str();
        assert_eq!(depth_cut(html.as_bytes(), 100), None);
        assert_eq!(depth_cut(b"<div><div><div>", 2), Some(10));
    }

    #[test]
    fn whitespace_is_normalised_and_remembered() {
        let p = parse_html("<p>a<b>\u{a0} bold\n text </b>c</p>");
        let t: Vec<&Text> = p
            .dom
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Text(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(t[1].text, "bold text");
        assert!(t[1].space_before && t[1].space_after);
        assert!(!t[0].space_after && !t[2].space_before);
    }

    #[test]
    fn regression_whitespace_between_inline_elements_separates_words() {
        // Broke: the whitespace-only node between </span> and <a> was dropped, giving "SharePost".
        let p = parse_html("<p><span>Share</span> <a href=x>Post</a>\n<b>Now</b><i>Glued</i></p>");
        assert_eq!(
            crate::dom::text::visible_text(&p.dom),
            "Share Post NowGlued\n"
        );
    }

    #[test]
    fn known_tags_table_is_sorted_and_unknown_tags_are_kept() {
        assert!(KNOWN_TAGS.windows(2).all(|w| w[0] < w[1]));
        for tag in KNOWN_TAGS {
            assert_eq!(crate::dom::tree::static_tag(tag), Some(*tag));
        }
        for other in [
            "",
            "custom-el",
            "A",
            "di",
            "divx",
            "a\0",
            "sixteen-byte-tag",
            "x".repeat(40).as_str(),
        ] {
            assert_eq!(crate::dom::tree::static_tag(other), None, "{other}");
        }
        let p = parse_html("<p><custom-el>x</custom-el></p>");
        let tags: Vec<&str> = (0..p.dom.len()).filter_map(|i| p.dom.tag(i)).collect();
        assert!(
            tags.contains(&"custom-el") && tags.contains(&"p"),
            "{tags:?}"
        );
    }

    /// Regression: a huge page's DOM read back from the store grew by doubling (up to twice its
    /// size, three times while copying).
    #[test]
    fn dom_read_back_from_bytes_reserves_exactly_its_nodes() {
        let links: String = (0..20_000)
            .map(|i| format!("<a href=/{i}>{i}</a>"))
            .collect();
        let p = parse_html(&format!("<body>{links}</body>"));
        assert!(p.dom.len() > 40_000);
        let back = Dom::from_bytes(&p.dom.to_bytes()).unwrap();
        assert_eq!(back, p.dom);
        assert_eq!(back.nodes.capacity(), back.nodes.len());
        // A length the bytes cannot hold is an error, not an allocation of that size.
        let mut lying = crate::dom::tree::ENCODING.to_vec();
        lying.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        lying.extend_from_slice(&p.dom.to_bytes()[9..100]);
        assert!(Dom::from_bytes(&lying).is_err());
    }

    /// Regression (`links3`): a huge page's freed `Rc` nodes stayed resident until its whole
    /// arena was built; the caller now gets to give them back every `RELEASE_EVERY` nodes.
    #[test]
    fn huge_page_flatten_releases_as_its_tree_is_freed() {
        let links: String = (0..RELEASE_EVERY)
            .map(|i| format!("<a href=/{i}>{i}</a>\n"))
            .collect();
        let html = format!("<body>{links}</body>");
        let calls = std::cell::Cell::new(0);
        let p = parse_html_releasing(&html, &|| calls.set(calls.get() + 1));
        // An `a`, its text and the newline after it: three nodes a link.
        assert_eq!(calls.get(), 3);
        assert_eq!(p.links.len(), RELEASE_EVERY);
        assert_eq!(p.dom, parse_html(&html).dom);
    }

    #[test]
    fn dom_round_trips_through_bytes() {
        let p = parse_html("<p class=a id=b>x</p><custom-el>y</custom-el>");
        let back = Dom::from_bytes(&p.dom.to_bytes()).unwrap();
        assert_eq!(back, p.dom);
        // Known tags come back borrowed from the static table (no allocation per element).
        let tags: Vec<&Cow<'static, str>> = back
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Element(e) => Some(&e.tag),
                _ => None,
            })
            .collect();
        assert!(tags.iter().any(|t| matches!(t, Cow::Borrowed("p"))));
        assert!(tags
            .iter()
            .any(|t| matches!(t, Cow::Owned(s) if s == "custom-el")));
    }
}
