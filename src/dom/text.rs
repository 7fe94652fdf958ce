//! Visible text of a `Dom` as lines: one line per block (paragraph, heading, list item, cell…),
//! inline neighbours joined with a space only where the source had whitespace. Head and hidden
//! content never render. A `keep` predicate picks which text nodes to render, so the same code
//! writes "all visible text" and every cleaner's output.

use super::tree::{flags, Dom, NodeKind};

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

/// Render the visible text nodes for which `keep(index)` holds, one block per line.
pub fn render(dom: &Dom, mut keep: impl FnMut(usize) -> bool) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let mut last_space_after = false;
    // Ends (exclusive) of the block elements we are inside, innermost last.
    let mut open: Vec<usize> = Vec::new();

    let flush = |line: &mut String, out: &mut String| {
        if !line.is_empty() {
            out.push_str(line);
            out.push('\n');
            line.clear();
        }
    };

    for (i, node) in dom.nodes.iter().enumerate() {
        while open.last().is_some_and(|&end| end <= i) {
            open.pop();
            flush(&mut line, &mut out);
        }
        match &node.kind {
            NodeKind::Element(e) if is_block(&e.tag) => {
                flush(&mut line, &mut out);
                open.push(node.end as usize);
            }
            NodeKind::Text(t) if is_visible(dom, i) && keep(i) => {
                if !line.is_empty() && (last_space_after || t.space_before) {
                    line.push(' ');
                }
                line.push_str(&t.text);
                last_space_after = t.space_after;
            }
            _ => {}
        }
    }
    flush(&mut line, &mut out);
    out
}

/// All visible text, one block per line.
pub fn visible_text(dom: &Dom) -> String {
    render(dom, |_| true)
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
