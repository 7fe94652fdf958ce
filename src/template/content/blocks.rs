//! A page cut into blocks: the lines `dom::text::render` writes (a maximal run of visible text
//! nodes between block-element boundaries), each with the counts content scoring needs. Blocks
//! and the rendered lines correspond one to one, so a decision per block is a decision per
//! output line.

use crate::dom::text::{is_block, is_visible};
use crate::dom::tree::{flags, Dom, NodeKind};

use super::tokens;

/// One rendered line of a page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// Range into `Blocks::nodes`: this block's visible text nodes, in document order.
    pub start: u32,
    pub end: u32,
    /// The innermost block element around the text (0, the document, when there is none).
    pub container: u32,
    /// Tokens of all the block's text.
    pub tokens: u32,
    /// Tokens inside `<a href>`, template text excluded.
    pub link_tokens: u32,
    /// Tokens in text nodes that belong to the cluster template.
    pub template_tokens: u32,
    /// Own (non-template) tokens in text nodes that other pages of the cluster have too.
    pub repeated_tokens: u32,
    /// Prose punctuation marks (`tokens::is_prose_punct`) outside links and template.
    pub punct: u32,
}

impl Block {
    /// Tokens that survive template removal.
    pub fn own_tokens(&self) -> u32 {
        self.tokens - self.template_tokens
    }
}

/// A page's blocks and, per visible text node, its token count and block.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    pub blocks: Vec<Block>,
    /// Visible text node indices grouped by block (see `Block::start`).
    pub nodes: Vec<u32>,
    /// Per DOM node: the block of a visible text node, `u32::MAX` otherwise.
    pub block_of: Vec<u32>,
    /// Per DOM node: the token count of a visible text node, 0 otherwise.
    pub node_tokens: Vec<u32>,
    /// Per DOM node: the text node is template text.
    pub in_template: Vec<bool>,
}

/// Form controls: their text (a textarea's default value, a select's options, a button's label)
/// is user-interface text, never content, so it gets no block. Some sites park whole HTML
/// fragments in hidden textareas.
const CONTROLS: &[&str] = &[
    "textarea", "select", "option", "optgroup", "button", "datalist",
];

/// No block (`Blocks::block_of` of a node that is not visible text).
pub const NONE: u32 = u32::MAX;

impl Blocks {
    /// Cut `dom` into blocks; `class(i)` says whether text node `i` is template text and whether
    /// it is repeated (other pages of the cluster have it, but it is not template).
    pub fn new(dom: &Dom, class: impl Fn(usize) -> (bool, bool)) -> Blocks {
        let n = dom.nodes.len();
        let mut out = Blocks {
            blocks: Vec::new(),
            nodes: Vec::new(),
            block_of: vec![NONE; n],
            node_tokens: vec![0; n],
            in_template: vec![false; n],
        };
        // (index, end) of the block elements we are inside, innermost last.
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut current: Option<Block> = None;
        // End of the form control we are inside (0: none).
        let mut control_end = 0usize;
        for (i, node) in dom.nodes.iter().enumerate() {
            while open.last().is_some_and(|&(_, end)| end <= i) {
                open.pop();
                out.close(&mut current);
            }
            match &node.kind {
                NodeKind::Element(e) => {
                    if i >= control_end && CONTROLS.contains(&&*e.tag) {
                        control_end = node.end as usize;
                    }
                    if is_block(&e.tag) {
                        out.close(&mut current);
                        open.push((i, node.end as usize));
                    }
                }
                NodeKind::Text(t) if i >= control_end && is_visible(dom, i) => {
                    let container = open.last().map_or(0, |&(at, _)| at as u32);
                    let at = out.nodes.len() as u32;
                    let block = current.get_or_insert(Block {
                        start: at,
                        end: at,
                        container,
                        ..Block::default()
                    });
                    let tok = tokens::count(&t.text);
                    let (template, repeated) = class(i);
                    let link = node.flags & flags::IN_LINK != 0;
                    block.end += 1;
                    block.tokens += tok;
                    if repeated && !template {
                        block.repeated_tokens += tok;
                    }
                    if template {
                        block.template_tokens += tok;
                    } else if link {
                        block.link_tokens += tok;
                    } else {
                        block.punct += t
                            .text
                            .chars()
                            .filter(|&c| tokens::is_prose_punct(c))
                            .count() as u32;
                    }
                    out.nodes.push(i as u32);
                    out.block_of[i] = out.blocks.len() as u32;
                    out.node_tokens[i] = tok;
                    out.in_template[i] = template;
                }
                _ => {}
            }
        }
        out.close(&mut current);
        out
    }

    fn close(&mut self, current: &mut Option<Block>) {
        if let Some(b) = current.take() {
            self.blocks.push(b);
        }
    }

    /// The first text node of block `b` (where its scores are attributed).
    pub fn first_node(&self, b: &Block) -> usize {
        self.nodes[b.start as usize] as usize
    }

    /// The text node indices of block `b`.
    pub fn nodes_of(&self, b: &Block) -> &[u32] {
        &self.nodes[b.start as usize..b.end as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;
    use crate::dom::text::visible_text;

    #[test]
    fn blocks_are_the_rendered_lines() {
        let p = parse_html(
            "<body><h1>Title here</h1><p>one <a href=/x>two</a> three.</p>\
             <ul><li><a href=/a>a</a></li><li>b<br>c</li></ul>tail</body>",
        );
        let b = Blocks::new(&p.dom, |_| (false, false));
        assert_eq!(b.blocks.len(), visible_text(&p.dom).lines().count());
        let p1 = &b.blocks[1];
        assert_eq!((p1.tokens, p1.link_tokens, p1.punct), (3, 1, 1));
        assert_eq!(p.dom.tag(p1.container as usize), Some("p"));
        assert_eq!(b.blocks[2].link_tokens, 1);
    }

    #[test]
    fn form_controls_have_no_blocks() {
        let p = parse_html(
            "<p>Story text.</p><textarea class=hidden>&lt;li&gt;markup</textarea>\
             <select><option>Pick one</option></select><button>Send</button>",
        );
        let b = Blocks::new(&p.dom, |_| (false, false));
        assert_eq!(b.blocks.len(), 1);
        assert_eq!(b.blocks[0].tokens, 2);
    }

    #[test]
    fn template_tokens_are_counted_apart() {
        let p = parse_html("<p>Share this: <b>great story</b></p>");
        let b = Blocks::new(&p.dom, |i| {
            (
                p.dom.text(i).is_some_and(|t| t.text.starts_with("Share")),
                false,
            )
        });
        assert_eq!(b.blocks.len(), 1);
        assert_eq!((b.blocks[0].tokens, b.blocks[0].template_tokens), (4, 2));
        assert_eq!(b.blocks[0].own_tokens(), 2);
    }
}
