//! DOM-node template hashes (Gibson, Punera & Tomkins, "The volume and evolution of web page
//! templates", WWW 2005, the DOM-based algorithm): every node is hashed over its tag, attributes
//! and content (its whole subtree); the hashes are counted over a site's pages; a node is
//! template when its count lies within [lower, upper] and no ancestor is template; adjacent
//! template siblings coalesce into one fragment. Text inside a fragment is removed.
//!
//! Invariant: a node's hash depends only on its subtree, so equal subtrees on different pages
//! (or twice on one page) hash equally, whatever their position.

use std::ops::Range;

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::{Dom, NodeKind};
use crate::template::support::PathMap;
use crate::template::SiteResult;

/// The count window, relative to the site's page count N (docs/detectors.md).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// A hash is template when it occurs at least `lower × N` times (and at least `min_count`):
    /// a fragment repeated on one page in twenty is shared, not page content.
    pub lower: f64,
    /// … and at most `upper × N` times: hashes more common than that are trivial nodes (`|`,
    /// `more`, an empty cell) that recur many times per page, in content as much as in chrome.
    pub upper: f64,
    /// The lower bound never drops below this many occurrences (one page alone is never a
    /// template).
    pub min_count: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            lower: 0.05,
            upper: 2.0,
            min_count: 2,
        }
    }
}

impl Params {
    /// The inclusive count window for a site of `pages` pages.
    pub fn window(&self, pages: usize) -> (u32, u32) {
        let n = pages as f64;
        let lower = ((self.lower * n).ceil() as u32).max(self.min_count);
        let upper = ((self.upper * n).floor() as u32).max(lower);
        (lower, upper)
    }
}

/// Every node's subtree hash, by node index (the document node's covers the whole page).
/// Elements hash their tag, `id`, `class`, `role` and their children's hashes in order; text
/// nodes hash their (normalised) text. Computed as a post-order fold: children have larger
/// indices than their parent, so a reverse scan meets every child before its parent.
pub fn node_hashes(dom: &Dom) -> Vec<u64> {
    let mut hashes = vec![0u64; dom.len()];
    let mut buf: Vec<u8> = Vec::new();
    for i in (0..dom.len()).rev() {
        buf.clear();
        match &dom.nodes[i].kind {
            NodeKind::Text(t) => {
                buf.push(b'T');
                buf.extend_from_slice(t.text.as_bytes());
            }
            NodeKind::Element(e) => {
                buf.push(b'E');
                for part in [
                    Some(&*e.tag),
                    e.id.as_deref(),
                    e.class.as_deref(),
                    e.role.as_deref(),
                ] {
                    // Length-prefixed, so ("a", "bc") and ("ab", "c") differ.
                    let part = part.unwrap_or("");
                    buf.extend_from_slice(&(part.len() as u32).to_le_bytes());
                    buf.extend_from_slice(part.as_bytes());
                }
                for c in dom.children(i) {
                    buf.extend_from_slice(&hashes[c].to_le_bytes());
                }
            }
            NodeKind::Document => {
                buf.push(b'D');
                for c in dom.children(i) {
                    buf.extend_from_slice(&hashes[c].to_le_bytes());
                }
            }
        }
        hashes[i] = xxh3_64(&buf);
    }
    hashes
}

/// Occurrences of every node hash over a site's pages (the document nodes excluded).
pub fn count(pages: &[Vec<u64>]) -> PathMap<u32> {
    let mut counts = PathMap::default();
    for hashes in pages {
        for &h in hashes.iter().skip(1) {
            *counts.entry(h).or_insert(0) += 1;
        }
    }
    counts
}

/// A page's template fragments: node-index ranges, each one template node's subtree or a run
/// of adjacent template siblings. A node is template when `is_template(hash)` and no ancestor
/// is; descendants of a template node are never visited.
pub fn fragments(
    dom: &Dom,
    hashes: &[u64],
    mut is_template: impl FnMut(u64) -> bool,
) -> Vec<Range<usize>> {
    let mut out: Vec<(Range<usize>, u32)> = Vec::new();
    let mut i = 1;
    while i < dom.len() {
        let node = &dom.nodes[i];
        let end = node.end as usize;
        if is_template(hashes[i]) {
            match out.last_mut() {
                // The previous fragment ends where this sibling starts: coalesce.
                Some((r, parent)) if r.end == i && *parent == node.parent => r.end = end,
                _ => out.push((i..end, node.parent)),
            }
            i = end;
        } else {
            i += 1;
        }
    }
    out.into_iter().map(|(r, _)| r).collect()
}

/// Clean one host's pages: drop the text inside template fragments.
pub fn clean_site(doms: &[Dom], params: &Params) -> SiteResult {
    let hashes: Vec<Vec<u64>> = doms.iter().map(node_hashes).collect();
    let counts = count(&hashes);
    let (lower, upper) = params.window(doms.len());
    let is_template = |h: u64| {
        let c = counts.get(&h).copied().unwrap_or(0);
        (lower..=upper).contains(&c)
    };
    let dropped: Vec<Vec<bool>> = doms
        .iter()
        .zip(&hashes)
        .map(|(dom, h)| {
            let mut drop = vec![false; dom.len()];
            for r in fragments(dom, h, is_template) {
                drop[r].fill(true);
            }
            drop
        })
        .collect();
    super::unclustered(doms, &dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    /// Six pages sharing a nav and a footer, each with its own article.
    fn site() -> Vec<Dom> {
        (0..6)
            .map(|i| {
                parse_html(&format!(
                    "<body><div id=nav><a href=/>Home</a> <a href=/news>News</a></div>\
                     <div class=main><h1>Story {i} headline</h1><p>Body text number {i} is \
                     unique.</p></div><footer><p>Copyright Example Corp</p></footer></body>"
                ))
                .dom
            })
            .collect()
    }

    #[test]
    fn shared_nav_and_footer_go_bodies_stay() {
        let r = clean_site(&site(), &Params::default());
        for (i, text) in r.texts.iter().enumerate() {
            assert_eq!(
                text,
                &format!("Story {i} headline\nBody text number {i} is unique.\n")
            );
        }
    }

    #[test]
    fn equal_subtrees_hash_equally_and_attributes_count() {
        let a = parse_html("<div class=x><p>same</p></div><div class=y><p>same</p></div>").dom;
        let h = node_hashes(&a);
        let divs: Vec<usize> = (0..a.len()).filter(|&i| a.tag(i) == Some("div")).collect();
        let ps: Vec<usize> = (0..a.len()).filter(|&i| a.tag(i) == Some("p")).collect();
        assert_eq!(h[ps[0]], h[ps[1]]);
        assert_ne!(h[divs[0]], h[divs[1]], "class is part of the hash");
        let b = parse_html("<div class=x><p>other</p></div>").dom;
        let hb = node_hashes(&b);
        let db = (0..b.len()).find(|&i| b.tag(i) == Some("div")).unwrap();
        assert_ne!(h[divs[0]], hb[db], "content is part of the hash");
    }

    #[test]
    fn template_siblings_coalesce_and_descendants_are_not_visited() {
        let dom = parse_html("<ul><li>a</li><li>b</li><li>c</li></ul><p>x</p>").dom;
        let hashes = node_hashes(&dom);
        let li: Vec<usize> = (0..dom.len())
            .filter(|&i| dom.tag(i) == Some("li"))
            .collect();
        let template: Vec<u64> = vec![hashes[li[0]], hashes[li[1]], hashes[li[1] + 1]];
        let mut asked = Vec::new();
        let f = fragments(&dom, &hashes, |h| {
            asked.push(h);
            template.contains(&h)
        });
        // li a and li b coalesce; li c is not template; the text "b" inside li b is never asked.
        assert_eq!(f, vec![li[0]..li[2]]);
        assert!(!asked.contains(&hashes[li[1] + 1]));
    }

    #[test]
    fn counts_outside_the_window_are_not_template() {
        // "|" occurs five times per page: above upper = 2·N, so it is not template by itself.
        let doms: Vec<Dom> = (0..4)
            .map(|i| {
                parse_html(&format!(
                    "<p><b>x</b>|<i>{i}a</i>|<i>{i}b</i>|<i>{i}c</i>|<i>{i}d</i>|</p>"
                ))
                .dom
            })
            .collect();
        let r = clean_site(&doms, &Params::default());
        assert_eq!(r.texts[2], "|2a|2b|2c|2d|\n");
    }

    #[test]
    fn window_scales_with_the_site_and_keeps_its_floor() {
        let p = Params::default();
        assert_eq!(p.window(6), (2, 12));
        assert_eq!(p.window(100), (5, 200));
        assert_eq!(p.window(1), (2, 2));
    }
}
