//! Inside the content region, what stays. A *box* is an element holding two or more blocks; a
//! box whose best pruned value is negative (it holds more links, short lines and furniture than
//! prose, even after its own negative boxes are cut) goes as a whole: related-article lists,
//! share bars, comment threads, info boxes, pagers. Then single blocks go when they read as
//! links, lie in furniture, are template text, or are short lines repeated verbatim on other
//! pages of the cluster (bylines, editor and source lines, copyright notes).

use crate::dom::Dom;

use super::blocks::Blocks;
use super::region::{self, Pass};

/// A block repeated on other pages is kept only from this many own tokens on: below it, it is
/// a byline, a source or editor line; above it, shared prose (a story filed twice, a quote).
pub const SHORT_REPEATED: u32 = 20;

/// Per DOM node, the best score its subtree reaches when boxes that would score below zero are
/// cut away (`Pass::Prune` weights), and per node its block count. A lone block is never cut
/// here: a short line inside prose stays.
pub fn pruned_values(dom: &Dom, blocks: &Blocks, furniture: &[bool]) -> (Vec<i64>, Vec<u32>) {
    let mut value = vec![0i64; dom.nodes.len()];
    let mut count = vec![0u32; dom.nodes.len()];
    for (b, &f) in blocks.blocks.iter().zip(furniture) {
        let at = blocks.first_node(b);
        value[at] = region::block_score(b, f, Pass::Prune);
        count[at] = 1;
    }
    for i in (1..dom.nodes.len()).rev() {
        let parent = dom.nodes[i].parent as usize;
        let v = if count[i] >= 2 {
            value[i].max(0)
        } else {
            value[i]
        };
        value[parent] += v;
        count[parent] += count[i];
    }
    (value, count)
}

/// Per block: kept, given the page's content region `region` (a node index).
pub fn keep(dom: &Dom, blocks: &Blocks, furniture: &[bool], region: usize) -> Vec<bool> {
    let (value, count) = pruned_values(dom, blocks, furniture);
    let end = dom.nodes[region].end as usize;
    // Nodes inside a cut box.
    let mut cut = vec![false; dom.nodes.len()];
    let mut i = region + 1;
    while i < end {
        let node_end = dom.nodes[i].end as usize;
        if dom.element(i).is_some() && count[i] >= 2 && value[i] < 0 {
            cut[i..node_end].fill(true);
            i = node_end;
        } else {
            i += 1;
        }
    }
    blocks
        .blocks
        .iter()
        .zip(furniture)
        .map(|(b, &f)| {
            let first = blocks.first_node(b);
            let own = b.own_tokens();
            first > region
                && first < end
                && !cut[first]
                && own > 0
                && !f
                && !region::is_link_block(b)
                && !(b.repeated_tokens == own && own < SHORT_REPEATED)
        })
        .collect()
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
             <div><p>Share</p><p>Tweet</p><p>Email</p></div></div>",
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
            keep(&dom, &blocks, &furniture, r),
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
        let kept = keep(&dom, &blocks, &furniture, 0);
        assert!(kept[0]);
        assert_eq!(kept.iter().filter(|&&k| k).count(), 1);
    }

    #[test]
    fn short_repeated_lines_go_long_repeated_prose_stays() {
        let dom = parse_html(&format!("<p>{}</p><p>Editor: Li Wei</p>", prose(30))).dom;
        let blocks = Blocks::new(&dom, |_| (false, true));
        let furniture = vec![false; 2];
        assert_eq!(keep(&dom, &blocks, &furniture, 0), vec![true, false]);
    }
}
