//! A page cut into blocks: the lines of its `dom::layout::Layout` (a paragraph's run of text, a
//! heading, a data table's row, a code block…), each with the counts content scoring needs.
//! Blocks and the layout's lines correspond one to one, so a decision per block is a decision per
//! rendered block, in plain text and in Markdown.

use crate::dom::layout::{Kind, Layout};
use crate::dom::tree::{flags, Dom};

use super::tokens;

/// One rendered line of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Range into `Blocks::nodes`: this block's visible text nodes, in document order.
    pub start: u32,
    pub end: u32,
    /// The element the line belongs to (`dom::layout::Line::element`): a heading, row or code
    /// block's own element, else the innermost block element around the text (0, the
    /// document, when there is none).
    pub container: u32,
    /// What the line is (text, heading, table row, code, formula).
    pub kind: Kind,
    /// Tokens of all the block's text.
    pub tokens: u32,
    /// Tokens inside `<a href>`, template text excluded (a heading's own same-page anchor is
    /// not a link: `<h2><a href="#install">Install</a></h2>` is a heading).
    pub link_tokens: u32,
    /// Tokens in text nodes that belong to the cluster template.
    pub template_tokens: u32,
    /// Own (non-template) tokens in text nodes that other pages of the cluster have too.
    pub repeated_tokens: u32,
    /// Prose punctuation marks (`tokens::is_prose_punct`) outside links and template.
    pub punct: u32,
}

impl Default for Block {
    fn default() -> Block {
        Block {
            start: 0,
            end: 0,
            container: 0,
            kind: Kind::Text,
            tokens: 0,
            link_tokens: 0,
            template_tokens: 0,
            repeated_tokens: 0,
            punct: 0,
        }
    }
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
    /// The layout the blocks are the lines of (what rendering reads).
    pub layout: Layout,
}

/// No block (`Blocks::block_of` of a node that is not visible text).
pub const NONE: u32 = u32::MAX;

impl Blocks {
    /// Cut `dom` into blocks; `class(i)` says whether text node `i` is template text and whether
    /// it is repeated (other pages of the cluster have it, but it is not template).
    pub fn new(dom: &Dom, class: impl Fn(usize) -> (bool, bool)) -> Blocks {
        let layout = Layout::new(dom);
        let n = dom.nodes.len();
        let mut out = Blocks {
            blocks: Vec::with_capacity(layout.lines.len()),
            nodes: layout.nodes.clone(),
            block_of: layout.line_of.clone(),
            node_tokens: vec![0; n],
            in_template: vec![false; n],
            layout: Layout::default(),
        };
        for line in &layout.lines {
            let mut block = Block {
                start: line.start,
                end: line.end,
                container: line.element,
                kind: line.kind,
                ..Block::default()
            };
            let heading = matches!(line.kind, Kind::Heading(_));
            for &n in layout.nodes_of(line) {
                let i = n as usize;
                let node = &dom.nodes[i];
                let Some(t) = dom.text(i) else { continue };
                let tok = tokens::count(&t.text);
                let (template, repeated) = class(i);
                let link = node.flags & flags::IN_LINK != 0
                    && !(heading && node.flags & flags::IN_ANCHOR != 0);
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
                out.node_tokens[i] = tok;
                out.in_template[i] = template;
            }
            out.blocks.push(block);
        }
        out.layout = layout;
        out
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
        assert_eq!(b.blocks.len(), b.layout.lines.len());
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
