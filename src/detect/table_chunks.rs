//! Table text chunks (Ma, Goharian, Chowdhury & Chung, "Extracting unstructured data from
//! template generated web documents", CIKM 2003): the visible text between two consecutive
//! table-node boundaries (the start or end of a `<table>`, `<tr>`, `<td>`, …) is one chunk; a
//! chunk whose document frequency over the site's pages exceeds a threshold is template, and
//! its text is removed.
//!
//! The method counts a chunk once per page. Its known weakness follows: a chunk repeated many
//! times on one page (a "Share" button per comment) counts as one page. And on pages laid out
//! without tables the whole body is one chunk, so nothing is found.

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::{text, Dom, NodeKind};
use crate::template::support::PathMap;
use crate::template::SiteResult;

/// The table elements whose start and end delimit chunks.
pub const TABLE_TAGS: &[&str] = &[
    "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th",
];

/// docs/detectors.md gives the values' sources.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Elements that delimit chunks.
    pub boundaries: &'static [&'static str],
    /// A chunk is template when its document frequency exceeds `max_share × N` …
    pub max_share: f64,
    /// … and is at least this many pages.
    pub min_pages: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            boundaries: TABLE_TAGS,
            max_share: 0.05,
            min_pages: 2,
        }
    }
}

impl Params {
    /// Whether a chunk on `df` of `pages` pages is template.
    pub fn is_template(&self, df: u32, pages: usize) -> bool {
        df >= self.min_pages && f64::from(df) > self.max_share * pages as f64
    }
}

/// One chunk of a page: the hash of its text (visible text nodes joined by single spaces) and
/// its text nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub key: u64,
    pub nodes: Vec<usize>,
}

/// A page's non-empty chunks in document order.
pub fn chunks(dom: &Dom, boundaries: &[&str]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut text_buf = String::new();
    let mut nodes: Vec<usize> = Vec::new();
    let mut close = |text_buf: &mut String, nodes: &mut Vec<usize>| {
        if !nodes.is_empty() {
            out.push(Chunk {
                key: xxh3_64(text_buf.as_bytes()),
                nodes: std::mem::take(nodes),
            });
        }
        text_buf.clear();
    };
    // Ends (exclusive) of the boundary elements we are inside, innermost last.
    let mut open: Vec<usize> = Vec::new();
    for (i, node) in dom.nodes.iter().enumerate() {
        while open.last().is_some_and(|&end| end <= i) {
            open.pop();
            close(&mut text_buf, &mut nodes);
        }
        match &node.kind {
            NodeKind::Element(e) if boundaries.contains(&&*e.tag) => {
                close(&mut text_buf, &mut nodes);
                open.push(node.end as usize);
            }
            NodeKind::Text(t) if text::is_visible(dom, i) => {
                if !text_buf.is_empty() {
                    text_buf.push(' ');
                }
                text_buf.push_str(&t.text);
                nodes.push(i);
            }
            _ => {}
        }
    }
    close(&mut text_buf, &mut nodes);
    out
}

/// Clean one host's pages: drop the text of chunks with a high document frequency.
pub fn clean_site(doms: &[Dom], params: &Params) -> SiteResult {
    let pages: Vec<Vec<Chunk>> = doms.iter().map(|d| chunks(d, params.boundaries)).collect();
    let mut df: PathMap<u32> = PathMap::default();
    for page in &pages {
        let mut keys: Vec<u64> = page.iter().map(|c| c.key).collect();
        keys.sort_unstable();
        keys.dedup(); // once per page
        for k in keys {
            *df.entry(k).or_insert(0) += 1;
        }
    }
    let dropped: Vec<Vec<bool>> = doms
        .iter()
        .zip(&pages)
        .map(|(dom, page)| {
            let mut drop = vec![false; dom.len()];
            for c in page {
                if params.is_template(df[&c.key], doms.len()) {
                    for &n in &c.nodes {
                        drop[n] = true;
                    }
                }
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

    fn page(i: usize, extra: &str) -> Dom {
        parse_html(&format!(
            "<body><table><tr><td><a href=/>Home</a> <a href=/n>News</a></td></tr>\
             <tr><td><h1>Story {i}</h1><p>Unique body {i}.</p>{extra}</td></tr>\
             <tr><td>Copyright Example</td></tr></table></body>"
        ))
        .dom
    }

    #[test]
    fn shared_nav_and_footer_go_bodies_stay() {
        let doms: Vec<Dom> = (0..6).map(|i| page(i, "")).collect();
        let r = clean_site(&doms, &Params::default());
        for (i, text) in r.texts.iter().enumerate() {
            assert_eq!(text, &format!("Story {i}\nUnique body {i}.\n"));
        }
    }

    #[test]
    fn a_chunk_repeated_within_a_page_counts_once() {
        // "Sponsored" is its own chunk three times on page 0 and on no other page: document
        // frequency 1, so it stays (counting occurrences, 3, would have removed it).
        let extra = "<table><tr><td>Sponsored</td><td>Sponsored</td><td>Sponsored</td></tr>\
                     </table>";
        let mut doms: Vec<Dom> = (0..6).map(|i| page(i, "")).collect();
        doms[0] = page(0, extra);
        let r = clean_site(&doms, &Params::default());
        assert_eq!(r.texts[0].matches("Sponsored").count(), 3);
        let ch = chunks(&doms[0], TABLE_TAGS);
        let sponsored = ch.iter().filter(|c| c.key == xxh3_64(b"Sponsored")).count();
        assert_eq!(sponsored, 3);
    }

    #[test]
    fn chunks_join_text_between_boundaries() {
        let dom = parse_html("<p>a <b>b</b></p><table><tr><td>c</td><td>d</td></tr></table>e").dom;
        let keys: Vec<u64> = chunks(&dom, TABLE_TAGS).iter().map(|c| c.key).collect();
        let want: Vec<u64> = ["a b", "c", "d", "e"]
            .iter()
            .map(|s| xxh3_64(s.as_bytes()))
            .collect();
        assert_eq!(keys, want);
    }

    #[test]
    fn without_tables_the_page_is_one_chunk_and_nothing_is_found() {
        let doms: Vec<Dom> = (0..4)
            .map(|i| parse_html(&format!("<div>Menu</div><p>Body {i}</p>")).dom)
            .collect();
        let r = clean_site(&doms, &Params::default());
        assert_eq!(r.texts[1], "Menu\nBody 1\n");
    }
}
