//! Inside the content region, what stays. Two modes, by how much evidence there is:
//!
//! - **Page mode** (one page, no cross-page evidence): blocks go when they read as links or lie
//!   in furniture. (Cutting whole *boxes* whose pruned value was negative — the extractor of the
//!   news era — lost more than it won once the page-mode region widens to its frame.)
//! - **Site mode** (a cluster of two or more distinct pages): the template has already removed
//!   the site's chrome, so text is removed only on evidence that holds across genres. No box is
//!   cut for being made of short lines (a table of members, a definition list); a link line goes
//!   only when its *record* (the smallest element around it holding another block) reads as
//!   links and its text recurs on other pages (related-article and tag lists, not a contents
//!   list or an API index); a short repeated line goes only when it stands alone in the region
//!   (a byline, an editor line), not inside a record (a "Parameters:" term); template text inside
//!   a record of page-specific content comes back (a generated "Method Summary" heading).

use crate::dom::Dom;

use super::blocks::{Block, Blocks};
use super::features::Features;
use super::region;

/// A block repeated on other pages is kept only from this many own tokens on: below it, it is
/// a byline, a source or editor line; above it, shared prose (a story filed twice, a quote).
pub const SHORT_REPEATED: u32 = 20;

/// How much cross-page evidence a page is cleaned with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One page alone (or a cluster of one distinct page): no template, no repeated text.
    Page,
    /// Two or more distinct pages: a template and repeated text.
    Site,
}

/// Per node, subtree sums over blocks: block count, text tokens (own + template) and link
/// tokens. A block's *record* is the nearest ancestor of its first text node holding two or
/// more blocks (a table row, a `dl`, a list, a section).
struct Records {
    count: Vec<u32>,
    text: Vec<u32>,
    links: Vec<u32>,
}

impl Records {
    fn new(dom: &Dom, blocks: &Blocks) -> Records {
        let n = dom.nodes.len();
        let mut r = Records {
            count: vec![0; n],
            text: vec![0; n],
            links: vec![0; n],
        };
        for b in &blocks.blocks {
            let at = blocks.first_node(b);
            r.count[at] += 1;
            // Template text counts as text: a "See also:" term makes its link a reference.
            r.text[at] += b.tokens;
            r.links[at] += b.link_tokens;
        }
        for i in (1..n).rev() {
            let parent = dom.nodes[i].parent as usize;
            r.count[parent] += r.count[i];
            r.text[parent] += r.text[i];
            r.links[parent] += r.links[i];
        }
        r
    }

    /// The record of the block whose first text node is `first`.
    fn of(&self, dom: &Dom, first: usize) -> usize {
        let mut a = dom.nodes[first].parent as usize;
        while a > 0 && self.count[a] < 2 {
            a = dom.nodes[a].parent as usize;
        }
        a
    }

    /// More than half the record's tokens are link text.
    fn reads_as_links(&self, a: usize) -> bool {
        2 * self.links[a] > self.text[a]
    }
}

/// Per block: kept, given the page's content region `region` (a node index).
pub fn keep(
    dom: &Dom,
    blocks: &Blocks,
    furniture: &[bool],
    region: usize,
    mode: Mode,
    features: &Features,
) -> Vec<bool> {
    let end = dom.nodes[region].end as usize;
    let inside = |first: usize| first > region && first < end;
    let records = Records::new(dom, blocks);
    let link_goes = |b: &Block, first: usize| match mode {
        Mode::Page => region::is_link_block(b),
        Mode::Site => {
            region::is_link_block(b)
                && b.repeated_tokens > 0
                && records.reads_as_links(records.of(dom, first))
        }
    };
    let repeated_goes = |b: &Block, first: usize| {
        let own = b.own_tokens();
        b.repeated_tokens == own
            && own < SHORT_REPEATED
            && (mode == Mode::Page || records.of(dom, first) <= region)
    };
    let mut kept: Vec<bool> = blocks
        .blocks
        .iter()
        .zip(furniture)
        .map(|(b, &f)| {
            let first = blocks.first_node(b);
            inside(first)
                && b.own_tokens() > 0
                && !f
                && !(features.links && link_goes(b, first))
                && !(features.repeated && repeated_goes(b, first))
        })
        .collect();
    if mode == Mode::Site && features.template_in_content {
        template_in_content(dom, blocks, furniture, region, &records, &mut kept);
    }
    kept
}

/// Site mode: a block of template text only is kept when its record lies strictly inside the
/// region and holds kept page-specific text — a generated heading or term ("Parameters:",
/// "Method Summary") belongs to the content it introduces — or when it is a heading (`h1`–`h6`,
/// `dt`, `th`, `caption`) between the first and the last kept block (a generated section such as
/// "Auto Trait Implementations" inside generated docs). A template label standing alone
/// ("Advertisement", "Share this") does not come back.
fn template_in_content(
    dom: &Dom,
    blocks: &Blocks,
    furniture: &[bool],
    region: usize,
    records: &Records,
    kept: &mut [bool],
) {
    let n = dom.nodes.len();
    let mut kept_here = vec![0u32; n];
    for (b, &k) in blocks.blocks.iter().zip(kept.iter()) {
        if k {
            kept_here[blocks.first_node(b)] += 1;
        }
    }
    for i in (1..n).rev() {
        let parent = dom.nodes[i].parent as usize;
        kept_here[parent] += kept_here[i];
    }
    let end = dom.nodes[region].end as usize;
    // Blocks in document order: the first and last kept ones bound the page's content.
    let lo = kept.iter().position(|&k| k).unwrap_or(usize::MAX);
    let hi = kept.iter().rposition(|&k| k).unwrap_or(0);
    for (i, (k, (b, &f))) in kept
        .iter_mut()
        .zip(blocks.blocks.iter().zip(furniture))
        .enumerate()
    {
        let first = blocks.first_node(b);
        if b.own_tokens() != 0 || b.template_tokens == 0 || f || first <= region || first >= end {
            continue;
        }
        let a = records.of(dom, first);
        let in_record = a > region && kept_here[a] > 0;
        let heading_within = i > lo && i < hi && is_heading(dom, b.container as usize);
        if in_record || heading_within {
            *k = true;
        }
    }
}

/// Elements that title what follows them: headings, definition terms, table headers, captions.
fn is_heading(dom: &Dom, i: usize) -> bool {
    matches!(
        dom.tag(i),
        Some("h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "dt" | "th" | "caption")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    fn prose(n: usize) -> String {
        (0..n).map(|i| format!("word{i} ")).collect()
    }

    #[test]
    fn a_box_of_short_lines_goes_a_short_line_in_prose_stays() {
        let dom = parse_html(&format!(
            "<div id=r><p>{}</p><p>Happy New Year.</p><p>{}</p>\
             <div><p><a href=#s>Share</a></p><p><a href=#t>Tweet</a></p>\
             <p><a href=#e>Email</a></p></div></div>",
            prose(40),
            prose(40)
        ))
        .dom;
        let blocks = Blocks::new(&dom, |_| (false, false));
        let furniture = vec![false; blocks.blocks.len()];
        let r = (0..dom.len())
            .find(|&i| dom.element(i).is_some_and(|e| e.id.as_deref() == Some("r")))
            .unwrap();
        assert_eq!(
            keep(&dom, &blocks, &furniture, r, Mode::Page, &Features::ALL),
            vec![true, true, true, false, false, false]
        );
    }

    #[test]
    fn a_box_with_prose_and_a_negative_box_keeps_the_prose() {
        let links: String = (0..10)
            .map(|i| format!("<li><a href=/{i}>Another story {i}</a></li>"))
            .collect();
        let dom = parse_html(&format!(
            "<div id=r><div><p>{}</p><ul>{links}</ul></div></div>",
            prose(60)
        ))
        .dom;
        let blocks = Blocks::new(&dom, |_| (false, false));
        let furniture = vec![false; blocks.blocks.len()];
        let kept = keep(&dom, &blocks, &furniture, 0, Mode::Page, &Features::ALL);
        assert!(kept[0]);
        assert_eq!(kept.iter().filter(|&&k| k).count(), 1);
    }

    #[test]
    fn short_repeated_lines_go_long_repeated_prose_stays() {
        let dom = parse_html(&format!("<p>{}</p><p>Editor: Li Wei</p>", prose(30))).dom;
        let blocks = Blocks::new(&dom, |_| (false, true));
        let furniture = vec![false; 2];
        assert_eq!(
            keep(&dom, &blocks, &furniture, 0, Mode::Page, &Features::ALL),
            vec![true, false]
        );
    }
}
