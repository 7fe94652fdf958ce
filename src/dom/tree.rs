//! The parsed page as a flat arena in document (pre)order: `Send`, serialisable, and the only DOM
//! the rest of thresher sees (html5ever's `Rc` tree never leaves `dom::parse`).
//!
//! Invariants: node 0 is the document; every other node's `parent` is a smaller index; a node's
//! subtree is exactly the index range `i..nodes[i].end`; `path` is the 64-bit hash of the node's
//! root-to-node path (docs/design.md, "Pages as path sets"), so the page's path set is the set of
//! its nodes' `path`s.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// `parent` of the document node.
pub const NO_PARENT: u32 = u32::MAX;

/// A page's hard cap on arena nodes: a hostile page cannot make one parse unbounded work.
pub const MAX_NODES: usize = 500_000;

/// Node flags, inherited from ancestors where the name says "in".
pub mod flags {
    /// The node or an ancestor is hidden (`hidden`, `aria-hidden=true`, inline `display:none`
    /// or `visibility:hidden`; never a tab panel), unless it hides nearly the whole page
    /// (`parse::unveil`).
    pub const HIDDEN: u16 = 1;
    /// The node is inside an `<a href>`.
    pub const IN_LINK: u16 = 2;
    /// The node is inside `<head>`.
    pub const IN_HEAD: u16 = 4;
    /// The node is inside `<pre>` (its text nodes keep their whitespace verbatim, and
    /// whitespace-only text there is a node of its own).
    pub const IN_PRE: u16 = 8;
    /// The node is inside `<noscript>` (read as a browser without scripting shows it).
    pub const IN_NOSCRIPT: u16 = 16;
    /// A text node holding a formula's TeX source (from `<math>` or a MathJax script).
    pub const MATH: u16 = 32;
    /// With `MATH`: a display formula (a block of its own), not an inline one.
    pub const DISPLAY: u16 = 64;
    /// The node is inside an `<a href>` that points into the same page (`href="#…"`): a
    /// heading's own anchor, a table of contents.
    pub const IN_ANCHOR: u16 = 128;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dom {
    #[serde(deserialize_with = "nodes_sized")]
    pub nodes: Vec<Node>,
    /// What the page says about itself outside its visible text (structured data).
    pub info: PageInfo,
    /// The address the page was fetched from (its final URL, with its `<base href>` resolved
    /// when the page was parsed with it), when whoever read the page knows it: the crawl's and
    /// a WARC's pages. Not stored: the store sets it from the page's record when it reads a DOM
    /// back (`Parsed::locate`).
    #[serde(skip)]
    pub address: Option<String>,
}

/// A page's structured self-description, read while parsing: what kind of thing the page says
/// it is, and the descriptions its structured data carries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageInfo {
    /// JSON-LD `@type` values (top-level objects and `@graph` members; at most
    /// `MAX_LD_TYPES`), and `og:type`, as written.
    pub types: Vec<String>,
    /// The `description` of a JSON-LD object whose type is a product, at most `MAX_ATTR`
    /// bytes (a product page whose visible description is drawn by scripts).
    pub product_description: Option<String>,
    /// The address the page gives itself: `<link rel=canonical>`, else `og:url` (as written,
    /// at most `MAX_ATTR` bytes).
    pub url: Option<String>,
}

/// JSON-LD types kept per page.
pub const MAX_LD_TYPES: usize = 16;

/// Longest attribute value kept on an element, in bytes (longer ones are cut at a char
/// boundary).
pub const MAX_ATTR: usize = 2048;

/// The nodes read back with the capacity the encoding states (bounded by the arena's cap):
/// serde's own `Vec` starts from a cautious hint (1 MiB of elements) and doubles, so a page of
/// 460,000 nodes read back from the store took up to twice its size, and a moment three times
/// it while the last doubling copied (134 MB for the 230,000-link pages).
fn nodes_sized<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Node>, D::Error> {
    struct Nodes;
    impl<'de> serde::de::Visitor<'de> for Nodes {
        type Value = Vec<Node>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence of nodes")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<Node>, A::Error> {
            let cap = seq.size_hint().unwrap_or(0);
            let mut nodes = Vec::with_capacity(cap.min(MAX_NODES + 1));
            while let Some(node) = seq.next_element()? {
                nodes.push(node);
            }
            Ok(nodes)
        }
    }
    d.deserialize_seq(Nodes)
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub parent: u32,
    /// One past the last index of this node's subtree.
    pub end: u32,
    /// Hash of the root-to-node path (`dom::paths`).
    pub path: u64,
    pub flags: u16,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    Document,
    Element(Element),
    Text(Text),
}

/// An element with the few attributes content scoring and reports use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Element {
    /// Lower-case local name (`div`, `p`, …): borrowed from a static table for HTML's own
    /// tags (no allocation per element, when parsed and when read back from the store), owned
    /// for anything else.
    #[serde(deserialize_with = "tag_from")]
    pub tag: Cow<'static, str>,
    pub id: Option<String>,
    pub class: Option<String>,
    /// ARIA `role`, kept because `navigation`/`main`/`article` say what a region is.
    pub role: Option<String>,
    /// The few other attributes rendering and scoring read, when the element has any.
    pub extra: Option<Box<Extra>>,
}

/// Attributes of an element beyond its tag, class, id and role (each at most `MAX_ATTR`
/// bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extra {
    /// `href` of `<a>` and `<area>`, as written.
    pub href: Option<String>,
    /// An image's address: `src`, or a lazy-loading `data-src` when `src` is missing or a
    /// `data:` placeholder.
    pub src: Option<String>,
    /// An image's `alt` text.
    pub alt: Option<String>,
    /// Microdata `itemprop` (`price`, `description`, `reviewBody`…).
    pub itemprop: Option<String>,
    /// Microdata `itemtype` (`https://schema.org/Product`…).
    pub itemtype: Option<String>,
}

impl Element {
    /// The element's `href`, if it has one.
    pub fn href(&self) -> Option<&str> {
        self.extra.as_ref()?.href.as_deref()
    }

    /// The element's image address, if it has one.
    pub fn src(&self) -> Option<&str> {
        self.extra.as_ref()?.src.as_deref()
    }

    /// The element's `alt` text, if it has one.
    pub fn alt(&self) -> Option<&str> {
        self.extra.as_ref()?.alt.as_deref()
    }

    /// The element's microdata `itemprop`, if it has one.
    pub fn itemprop(&self) -> Option<&str> {
        self.extra.as_ref()?.itemprop.as_deref()
    }

    /// The element's microdata `itemtype`, if it has one.
    pub fn itemtype(&self) -> Option<&str> {
        self.extra.as_ref()?.itemtype.as_deref()
    }
}

/// A text node, whitespace-normalised (runs collapsed to one space, trimmed, never empty) —
/// except inside `<pre>` (`flags::IN_PRE`), where it is the text verbatim (newlines, tabs and
/// whitespace-only runs kept: a code block's indentation), and in a `flags::MATH` node, which
/// holds a formula's TeX source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    pub text: String,
    /// The raw text began / ended with whitespace: decides whether neighbours join with a space.
    pub space_before: bool,
    pub space_after: bool,
}

/// A tag name read back from bytes: HTML's own names borrow the static table.
fn tag_from<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Cow<'static, str>, D::Error> {
    struct Tag;
    impl serde::de::Visitor<'_> for Tag {
        type Value = Cow<'static, str>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a tag name")
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(static_tag(v).map_or_else(|| Cow::Owned(v.to_string()), Cow::Borrowed))
        }
    }
    d.deserialize_str(Tag)
}

/// HTML's element names (and a few common obsolete ones), sorted for binary search.
pub(super) const KNOWN_TAGS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "area",
    "article",
    "aside",
    "audio",
    "b",
    "base",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "body",
    "br",
    "button",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "data",
    "datalist",
    "dd",
    "del",
    "details",
    "dfn",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "em",
    "fieldset",
    "figcaption",
    "figure",
    "font",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "i",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "legend",
    "li",
    "link",
    "main",
    "map",
    "mark",
    "menu",
    "meta",
    "meter",
    "nav",
    "nobr",
    "ol",
    "optgroup",
    "option",
    "output",
    "p",
    "param",
    "picture",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "search",
    "section",
    "select",
    "small",
    "source",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "time",
    "title",
    "tr",
    "track",
    "tt",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
];

/// `tag` as a `'static` name when it is one of HTML's own: a binary search of `KNOWN_TAGS` by
/// their `packed` names (integer compares; every element read back from the store looks its
/// name up here, and `str` compares were a third of decoding a DOM).
pub(super) fn static_tag(tag: &str) -> Option<&'static str> {
    let key = packed(tag.as_bytes())?;
    let i = PACKED_TAGS.binary_search(&key).ok()?;
    // The same length too: padding reads as NUL bytes ("a\0" packs as "a").
    (KNOWN_TAGS[i].len() == tag.len()).then_some(KNOWN_TAGS[i])
}

/// A name of at most 16 bytes as a big-endian integer, zero-padded: for names without NUL
/// bytes, integer order is the names' byte order, so `KNOWN_TAGS` stays sorted packed (a name
/// ending in NUL bytes packs as the name without them).
const fn packed(name: &[u8]) -> Option<u128> {
    if name.len() > 16 {
        return None;
    }
    let mut bytes = [0u8; 16];
    let mut i = 0;
    while i < name.len() {
        bytes[i] = name[i];
        i += 1;
    }
    Some(u128::from_be_bytes(bytes))
}

/// `KNOWN_TAGS`, `packed` (each name is at most 16 bytes: a longer one fails the build).
const PACKED_TAGS: [u128; KNOWN_TAGS.len()] = {
    let mut out = [0u128; KNOWN_TAGS.len()];
    let mut i = 0;
    while i < KNOWN_TAGS.len() {
        out[i] = match packed(KNOWN_TAGS[i].as_bytes()) {
            Some(k) => k,
            None => panic!("a known tag longer than 16 bytes"),
        };
        i += 1;
    }
    out
};

impl Dom {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The page's path set: sorted, without duplicates, the document node excluded.
    pub fn path_set(&self) -> Vec<u64> {
        let mut set: Vec<u64> = self.nodes.iter().skip(1).map(|n| n.path).collect();
        set.sort_unstable();
        set.dedup();
        set
    }

    pub fn element(&self, i: usize) -> Option<&Element> {
        match &self.nodes.get(i)?.kind {
            NodeKind::Element(e) => Some(e),
            _ => None,
        }
    }

    pub fn text(&self, i: usize) -> Option<&Text> {
        match &self.nodes.get(i)?.kind {
            NodeKind::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn tag(&self, i: usize) -> Option<&str> {
        self.element(i).map(|e| &*e.tag)
    }

    /// Direct children of node `i`, in order.
    pub fn children(&self, i: usize) -> Children<'_> {
        Children {
            dom: self,
            next: i + 1,
            end: self.nodes.get(i).map_or(0, |n| n.end as usize),
        }
    }

    /// Indices of `i`'s ancestors, nearest first (the document last).
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let mut cur = self.nodes.get(i).map_or(NO_PARENT, |n| n.parent);
        std::iter::from_fn(move || {
            if cur == NO_PARENT {
                return None;
            }
            let at = cur as usize;
            cur = self.nodes[at].parent;
            Some(at)
        })
    }

    /// The `<title>` text, if any.
    pub fn title(&self) -> Option<String> {
        let at = self.nodes.iter().position(|n| {
            matches!(&n.kind, NodeKind::Element(e) if e.tag == "title")
                && n.flags & flags::IN_HEAD != 0
        })?;
        let t: Vec<&str> = (at + 1..self.nodes[at].end as usize)
            .filter_map(|j| self.text(j).map(|t| t.text.as_str()))
            .collect();
        let joined = t.join(" ");
        (!joined.is_empty()).then_some(joined)
    }

    /// Compact binary encoding for storage: [`ENCODING`], then the arena (postcard).
    pub fn to_bytes(&self) -> Vec<u8> {
        postcard::to_extend(self, ENCODING.to_vec()).expect("invariant: a Dom always serialises")
    }

    /// A `Dom` from [`Dom::to_bytes`]; [`DomBytesError::Older`] for bytes of an earlier
    /// encoding (the page must be parsed again from its HTML).
    pub fn from_bytes(bytes: &[u8]) -> Result<Dom, DomBytesError> {
        match bytes.strip_prefix(&ENCODING) {
            Some(rest) => postcard::from_bytes(rest).map_err(DomBytesError::Decode),
            None => Err(DomBytesError::Older),
        }
    }
}

/// What stored DOM bytes start with: a length prefix no arena can have (a varint of 2³² − 1
/// nodes: the encodings before this one started with the node count, always smaller), then
/// the encoding's version. Version 2: flags of 16 bits, `Element::extra`, `Dom::info`,
/// `<noscript>` parsed as markup, `<pre>` whitespace and formulas kept as text. Version 3: the
/// same bytes, but a page hidden whole until its scripts run and a hidden tab panel are no
/// longer hidden (`parse::unveil`, `parse::is_hidden`), so version 2 is read as older (parsed
/// again from its HTML).
pub const ENCODING: [u8; 6] = [0xff, 0xff, 0xff, 0xff, 0x0f, 3];

/// Why stored DOM bytes cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DomBytesError {
    #[error("a DOM stored by an earlier version (parse its HTML again)")]
    Older,
    #[error("DOM bytes: {0}")]
    Decode(postcard::Error),
}

pub struct Children<'a> {
    dom: &'a Dom,
    next: usize,
    end: usize,
}

impl Iterator for Children<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.next >= self.end {
            return None;
        }
        let at = self.next;
        self.next = self.dom.nodes[at].end as usize;
        Some(at)
    }
}

/// Elements that start and end a line.
pub fn is_block(tag: &str) -> bool {
    matches!(
        tag,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "option"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
            | "br"
            | "select"
            | "textarea"
            | "title"
    )
}

/// True when text node `i` is visible body text (not in `<head>`, not hidden).
pub fn is_visible(dom: &Dom, i: usize) -> bool {
    let n = &dom.nodes[i];
    matches!(n.kind, NodeKind::Text(_)) && n.flags & (flags::HIDDEN | flags::IN_HEAD) == 0
}
