//! What counts as visible text and where blocks begin: the predicates `layout` cuts lines by,
//! and plain-text rendering of a `keep` predicate (`render` does the work), so the same code
//! writes "all visible text" and every cleaner's output. Head and hidden content never render.

use super::tree::Dom;

pub use super::tree::{is_block, is_visible};

/// Render the visible text nodes for which `keep(index)` holds as plain text, one block per
/// line (`render::render` with `Format::Text`).
pub fn render(dom: &Dom, keep: impl Fn(usize) -> bool) -> String {
    super::render::render(
        dom,
        &super::layout::Layout::new(dom),
        keep,
        &super::render::Format::Text,
    )
}

/// All visible text, one block per line.
pub fn visible_text(dom: &Dom) -> String {
    super::render::text_of(dom)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse::parse_html;

    #[test]
    fn blocks_become_lines_and_inline_text_joins() {
        let p = parse_html(
            "<head><title>T</title></head><body><h1>Head line</h1><p>one <b>two</b>three</p>\
             <ul><li>a</li><li>b<br>c</li></ul><div hidden>secret</div>tail</body>",
        );
        assert_eq!(
            visible_text(&p.dom),
            "Head line\none twothree\na\nb\nc\ntail\n"
        );
    }

    #[test]
    fn keep_selects_nodes() {
        let p = parse_html("<p>keep</p><p>drop</p>");
        let out = render(&p.dom, |i| p.dom.text(i).is_some_and(|t| t.text == "keep"));
        assert_eq!(out, "keep\n");
    }
}
