//! Scoring a page's blocks and elements, to find its content region. Every block scores its
//! prose tokens for, its link tokens twice against, and a fixed cost per block (a run of short
//! lines — menus, bylines, tag lists — weighs nothing or less); template text counts a quarter
//! token against. An element scores the sum over its subtree, and the best-scoring element is the
//! page's content region. `signature` names an element across a cluster's pages, so a cluster
//! can agree on where its pages keep their content.
//!
//! Weights are integers in `SCALE` units: sums do not depend on summation order, so results do
//! not depend on thread count or page order.

use crate::dom::tree::{Dom, NodeKind};

use super::blocks::{Block, Blocks, NONE};
use super::hints;

/// Fixed-point scale of scores.
pub const SCALE: i64 = 100;

/// The fixed cost of a block, in tokens: a block must carry more prose than this to count for
/// its element (lenient, so that short lines inside an article — subheadings, a one-line
/// paragraph — do not split it).
pub const BLOCK_COST: i64 = 3;

/// A block's score in `SCALE` units. `furniture`: the block lies in an element whose markup
/// names furniture (`furniture_blocks`); it counts as a short line.
pub fn block_score(b: &Block, furniture: bool) -> i64 {
    let own = i64::from(b.own_tokens());
    let template = -i64::from(b.template_tokens) * SCALE / 4;
    if own == 0 {
        return template;
    }
    let text = if furniture {
        0
    } else {
        own - 2 * i64::from(b.link_tokens)
    };
    template + SCALE * (text - BLOCK_COST)
}

/// A block more than half of whose own tokens are link text.
pub fn is_link_block(b: &Block) -> bool {
    2 * b.link_tokens > b.own_tokens()
}

/// Per DOM node, the sum of the scores of the blocks that start in its subtree.
pub fn subtree_scores(dom: &Dom, blocks: &Blocks, furniture: &[bool]) -> Vec<i64> {
    let mut score = vec![0i64; dom.nodes.len()];
    for (b, &f) in blocks.blocks.iter().zip(furniture) {
        score[blocks.first_node(b)] = block_score(b, f);
    }
    for i in (1..dom.nodes.len()).rev() {
        let parent = dom.nodes[i].parent as usize;
        score[parent] += score[i];
    }
    score
}

/// The element with the highest positive score, the deepest on ties (a tighter region holding the
/// same content); the document when no element scores above zero (no prose anywhere: every block
/// is then judged by pruning alone, rather than an empty `<head>` winning with its score of 0).
pub fn best(dom: &Dom, scores: &[i64]) -> usize {
    let mut best = 0;
    let mut top = 0;
    for (i, n) in dom.nodes.iter().enumerate().skip(1) {
        if !matches!(n.kind, NodeKind::Element(_)) || scores[i] <= 0 {
            continue;
        }
        // Equal scores: keep an earlier unrelated element, take a descendant.
        if scores[i] > top || (scores[i] == top && i < dom.nodes[best].end as usize) {
            best = i;
            top = scores[i];
        }
    }
    best
}

/// The share of a page's eligible text (own, non-link tokens of blocks that are not furniture
/// or link lines) the site-mode region must hold: generated documentation keeps tables, code
/// and member lists beside its prose, and a region that holds less than this is widened to its
/// ancestors. 70 is what leave-one-site-out and leave-one-dataset-out tuning pick on every set
/// (60 loses docs 0.011, 80 loses news 0.004–0.006, 90 news 0.015; docs/quality.md).
pub const FRAME_PERCENT: u64 = 70;

/// The share of a page's eligible text the page-mode region must hold (one page, no template to
/// tell chrome from content, so a lower bar than site mode's): an article whose text the page
/// splits across sibling containers (a lead beside its body, a body cut by an ad slot) is kept
/// whole, while comments or a sidebar holding more text than the article's remainder stay out.
/// 40 is what leave-one-site-out tuning picks on single-page-dev (docs/quality.md).
pub const PAGE_FRAME_PERCENT: u64 = 40;

/// The deepest ancestor of `core` (or `core` itself) holding at least `percent` % of the page's
/// eligible text (`FRAME_PERCENT`); with `title`, widened further to the content's own heading.
pub fn frame(
    dom: &Dom,
    blocks: &Blocks,
    furniture: &[bool],
    core: usize,
    percent: u64,
    title: bool,
) -> usize {
    let n = dom.nodes.len();
    // Eligible tokens per subtree, and those of them outside headings.
    let mut eligible = vec![0u64; n];
    let mut plain = vec![0u64; n];
    for (b, &f) in blocks.blocks.iter().zip(furniture) {
        if !f && !is_link_block(b) {
            let t = u64::from(b.own_tokens() - b.link_tokens);
            eligible[blocks.first_node(b)] += t;
            if !is_heading(dom, b.container as usize) {
                plain[blocks.first_node(b)] += t;
            }
        }
    }
    for i in (1..n).rev() {
        let parent = dom.nodes[i].parent as usize;
        eligible[parent] += eligible[i];
        plain[parent] += plain[i];
    }
    let total = eligible.first().copied().unwrap_or(0);
    let mut r = core;
    while r > 0 && 100 * eligible[r] < percent * total {
        r = dom.nodes[r].parent as usize;
    }
    // The content's own heading (a post's or an article's title beside its body): widen while
    // the parent adds heading text and nothing else that is eligible.
    while title && r > 0 {
        let p = dom.nodes[r].parent as usize;
        if plain[p] == plain[r] && eligible[p] > eligible[r] {
            r = p;
        } else {
            break;
        }
    }
    r
}

/// `h1`–`h6`.
fn is_heading(dom: &Dom, i: usize) -> bool {
    matches!(dom.tag(i), Some("h1" | "h2" | "h3" | "h4" | "h5" | "h6"))
}

/// An element's identity across a cluster's pages: its tag path plus its own class and id with
/// ASCII digits removed (ids like `post-1234` differ per page; the element's role does not).
pub fn signature(dom: &Dom, i: usize) -> u64 {
    let node = &dom.nodes[i];
    let mut h = node.path;
    if let NodeKind::Element(e) = &node.kind {
        for attr in [&e.class, &e.id] {
            // FNV-1a over the bytes that are not digits, then a separator.
            for &b in attr.as_deref().unwrap_or("").as_bytes() {
                if !b.is_ascii_digit() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
            h = (h ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Per block: whether it lies inside an element whose markup names furniture
/// (`hints::is_furniture`). An element holding half or more of the page's own tokens is a page
/// wrapper whatever its class says (`<body class="has-sidebar">`), and never counts.
/// Per block: the outermost element around it whose markup names furniture, `NONE` when there
/// is none.
pub fn furniture_roots(dom: &Dom, blocks: &Blocks) -> Vec<u32> {
    let n = dom.nodes.len();
    let mut own = vec![0u64; n];
    for (i, own) in own.iter_mut().enumerate() {
        if !blocks.in_template[i] {
            *own = u64::from(blocks.node_tokens[i]);
        }
    }
    for i in (1..n).rev() {
        let parent = dom.nodes[i].parent as usize;
        own[parent] += own[i];
    }
    let total = own.first().copied().unwrap_or(0);
    // Inherited down the pre-order arena: a parent is always decided before its children.
    let mut root = vec![NONE; n];
    for i in 1..n {
        let parent = root[dom.nodes[i].parent as usize];
        root[i] = if parent != NONE {
            parent
        } else if dom
            .element(i)
            .is_some_and(|e| 2 * own[i] < total && hints::is_furniture(e))
        {
            i as u32
        } else {
            NONE
        };
    }
    blocks
        .blocks
        .iter()
        .map(|b| root[blocks.first_node(b)])
        .collect()
}

/// Furniture markup around at least this many tokens of prose inside the content is content
/// (a documentation tip box, a note set in an article), not a sidebar: captions, bylines and
/// share bars are shorter (40–60 flat: docs +0.017, blogs −0.003, big9 −0.001 at 60).
pub const EMBEDDED_PROSE: u32 = 60;

/// Per block: furniture, except inside an element whose markup names furniture but which lies
/// strictly inside the prose core `core`, between the core's first and last prose blocks, and
/// holds `min_prose` tokens or more of prose of its own (`EMBEDDED_PROSE`).
pub fn embedded_furniture(
    dom: &Dom,
    blocks: &Blocks,
    roots: &[u32],
    core: usize,
    min_prose: u32,
) -> Vec<bool> {
    let end = dom.nodes[core].end as usize;
    let inside = |r: usize| r > core && r < end;
    let prose = |b: &Block| b.own_tokens() > b.link_tokens && !is_link_block(b);
    let plain: Vec<usize> = (0..blocks.blocks.len())
        .filter(|&i| {
            let b = &blocks.blocks[i];
            roots[i] == NONE && inside(blocks.first_node(b)) && prose(b)
        })
        .collect();
    let (Some(&lo), Some(&hi)) = (plain.first(), plain.last()) else {
        return roots.iter().map(|&r| r != NONE).collect();
    };
    let mut root_prose: std::collections::BTreeMap<u32, u32> = Default::default();
    for (b, &r) in blocks.blocks.iter().zip(roots) {
        if r != NONE {
            *root_prose.entry(r).or_default() += b.own_tokens() - b.link_tokens;
        }
    }
    roots
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            r != NONE
                && !(inside(r as usize)
                    && i > lo
                    && i < hi
                    && root_prose.get(&r).is_some_and(|&t| t >= min_prose))
        })
        .collect()
}

/// Per block: whether it lies inside an element whose markup names furniture
/// (`furniture_roots`).
pub fn furniture_blocks(dom: &Dom, blocks: &Blocks) -> Vec<bool> {
    furniture_roots(dom, blocks)
        .into_iter()
        .map(|r| r != NONE)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    fn scored(html: &str) -> (Dom, Blocks, Vec<bool>) {
        let dom = parse_html(html).dom;
        let blocks = Blocks::new(&dom, |_| (false, false));
        let furniture = furniture_blocks(&dom, &blocks);
        (dom, blocks, furniture)
    }

    fn prose(n: usize) -> String {
        (0..n).map(|i| format!("word{i} ")).collect()
    }

    #[test]
    fn prose_scores_for_links_and_short_lines_against() {
        let (_, blocks, f) = scored(&format!(
            "<p>{}</p><p><a href=/a>one two three four five six</a></p><p>By Jo</p>",
            prose(40)
        ));
        let s: Vec<i64> = blocks
            .blocks
            .iter()
            .zip(&f)
            .map(|(b, &f)| block_score(b, f))
            .collect();
        assert_eq!(
            s,
            vec![SCALE * (40 - 3), SCALE * (6 - 12 - 3), SCALE * (2 - 3)]
        );
    }

    #[test]
    fn the_region_is_the_article_not_the_page() {
        let links: String = (0..30)
            .map(|i| format!("<li><a href=/{i}>Other story number {i}</a></li>"))
            .collect();
        let (dom, blocks, f) = scored(&format!(
            "<body><ul>{links}</ul><div id=story><p>{}</p><p>{}</p></div><ul>{links}</ul></body>",
            prose(50),
            prose(30)
        ));
        let scores = subtree_scores(&dom, &blocks, &f);
        let r = best(&dom, &scores);
        assert_eq!(dom.element(r).and_then(|e| e.id.as_deref()), Some("story"));
    }

    #[test]
    fn a_page_without_prose_is_its_own_region_not_an_empty_head() {
        // Regression: `<p>only one</p>` came out empty: every element scored below zero and the
        // empty `<head>` (score 0) won the region.
        let (dom, blocks, f) = scored("<html><head></head><body><p>only one</p></body></html>");
        let scores = subtree_scores(&dom, &blocks, &f);
        assert_eq!(best(&dom, &scores), 0);
    }

    #[test]
    fn furniture_hints_skip_page_wrappers() {
        let (_, _, f) = scored(&format!(
            "<body class=has-sidebar><div class=comments><p>{}</p></div><p>{}</p></body>",
            prose(10),
            prose(30)
        ));
        assert_eq!(f, vec![true, false]);
        let (_, _, f) = scored(&format!("<div class=sidebar><p>{}</p></div>", prose(10)));
        assert_eq!(f, vec![false], "the whole page is not furniture");
    }

    #[test]
    fn a_tip_box_inside_the_prose_is_content_a_sidebar_beside_it_is_not() {
        let (dom, blocks, _) = scored(&format!(
            "<body><div id=core><p>{}</p><div class=sidebar><p>{}</p></div><p>{}</p></div>\
             <div class=sidebar><p>{}</p></div></body>",
            prose(40),
            prose(70),
            prose(40),
            prose(70)
        ));
        let roots = furniture_roots(&dom, &blocks);
        let core = (0..dom.len())
            .find(|&i| {
                dom.element(i)
                    .is_some_and(|e| e.id.as_deref() == Some("core"))
            })
            .unwrap();
        assert_eq!(
            embedded_furniture(&dom, &blocks, &roots, core, EMBEDDED_PROSE),
            vec![false, false, false, true]
        );
    }

    #[test]
    fn signatures_ignore_digits_but_not_classes() {
        let dom = parse_html("<div id=post-12 class=body>a</div><div id=post-345 class=body>b</div><div class=side>c</div>").dom;
        let divs: Vec<usize> = (0..dom.len())
            .filter(|&i| dom.tag(i) == Some("div"))
            .collect();
        assert_eq!(signature(&dom, divs[0]), signature(&dom, divs[1]));
        assert_ne!(signature(&dom, divs[0]), signature(&dom, divs[2]));
    }
}
