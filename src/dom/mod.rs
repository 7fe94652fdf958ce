//! The HTML front end shared by the crawler and the template engine: bytes are decoded
//! (`charset`), stripped of what no one reads (`strip`: scripts, styles, unread attributes),
//! parsed once with html5ever into a flat `Send` arena with path hashes (`parse`, `tree`,
//! `paths`), cut into lines (`layout`) and rendered as plain text or Markdown (`render`,
//! `text`); `meta` reads what a page says about itself (canonical, meta tags, JSON-LD, `<time>`)
//! from the raw HTML.
//!
//! Owns: everything html5ever (its `Rc` tree never leaves `parse`; the rest of thresher sees
//! `Dom`), the path hash (stable across runs: the store keeps it) and text rendering. The bottom
//! layer: it imports no other thresher module (docs/design.md, "Layers").

pub mod charset;
pub mod escape;
pub mod layout;
pub mod links;
pub mod meta;
pub mod parse;
pub mod paths;
pub mod render;
pub mod strip;
pub mod text;
pub mod tree;

pub use links::{Link, Links};
pub use parse::{parse_html, MetaRobots, Parsed};
pub use tree::{Dom, Element, Node, NodeKind, Text};

/// Decode raw HTML bytes (with the HTTP `Content-Type`, if known) and parse them.
pub fn parse_bytes(bytes: &[u8], content_type: Option<&str>) -> Parsed {
    parse_html(&charset::decode_html(bytes, content_type).text)
}
