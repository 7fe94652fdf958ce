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
//! - **Articles** (site mode for a cluster whose pages read as articles, `features::ARTICLES_PERCENT`):
//!   as site mode, except that a link line goes as in page mode, recurring or not (a
//!   more-stories list beside a story is related-article chaff even on a site seen once).

use crate::dom::Dom;

use super::blocks::{Block, Blocks};
use super::features::Features;
use super::region;

/// How much cross-page evidence a page is cleaned with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One page alone (or a cluster of one distinct page): no template, no repeated text.
    Page,
    /// Two or more distinct pages: a template and repeated text.
    Site,
    /// Site mode for a cluster whose pages read as articles: link lines go as in page mode.
    Articles,
}

impl Mode {
    /// Cleaned on cross-page evidence (site mode or its articles variant).
    pub fn site(self) -> bool {
        matches!(self, Mode::Site | Mode::Articles)
    }
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
    core: usize,
    region: usize,
    mode: Mode,
    features: &Features,
) -> Vec<bool> {
    let end = dom.nodes[region].end as usize;
    let inside = |first: usize| first > region && first < end;
    let records = Records::new(dom, blocks);
    let short = features.short_repeated;
    let link_goes = |b: &Block, first: usize| match mode {
        Mode::Page | Mode::Articles => region::is_link_block(b),
        Mode::Site => {
            region::is_link_block(b)
                && b.repeated_tokens > 0
                && records.reads_as_links(records.of(dom, first))
        }
    };
    // The prose core and its ancestors: a line whose record is one of them stands in the
    // prose's own flow (an editor line below the article), not in a record of its own.
    let around_core = |a: usize| a <= core && core < dom.nodes[a].end as usize;
    // The first text node of the core's last block of page text (not a short repeated line).
    let core_end = dom.nodes[core].end as usize;
    let last_prose = if mode.site() && features.labels {
        // Blocks are in document order: the last one inside the core that is page text.
        blocks
            .blocks
            .iter()
            .rev()
            .map(|b| (blocks.first_node(b), b))
            .find(|&(f, b)| f > core && f < core_end && !is_label(b, short) && b.own_tokens() > 0)
            .map_or(usize::MAX, |(f, _)| f)
    } else {
        usize::MAX
    };
    let repeated_goes = |b: &Block, first: usize| {
        let own = b.own_tokens();
        b.repeated_tokens == own
            && own < short
            && (!mode.site() || {
                let a = records.of(dom, first);
                a <= region
                    || (features.labels
                        && around_core(a)
                        && first > last_prose
                        && !is_heading(dom, b.container as usize))
            })
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
    if mode.site() && features.labels {
        drop_orphan_labels(dom, blocks, &records, region, short, &mut kept);
    }
    if mode.site() && features.template_in_content {
        template_in_content(
            dom,
            blocks,
            furniture,
            region,
            &records,
            Restore {
                labels: features.labels,
                generated: mode == Mode::Site,
            },
            &mut kept,
        );
    }
    kept
}

/// A short line repeated on other pages: a label, a byline, a category name.
fn is_label(b: &Block, short: u32) -> bool {
    let own = b.own_tokens();
    own > 0 && b.repeated_tokens == own && own < short
}

/// Per node, how many kept blocks whose first text node lies in its subtree pass `count`.
fn kept_below(
    dom: &Dom,
    blocks: &Blocks,
    kept: &[bool],
    count: impl Fn(&Block) -> bool,
) -> Vec<u32> {
    let n = dom.nodes.len();
    let mut below = vec![0u32; n];
    for (b, &k) in blocks.blocks.iter().zip(kept) {
        if k && count(b) {
            below[blocks.first_node(b)] += 1;
        }
    }
    for i in (1..n).rev() {
        let parent = dom.nodes[i].parent as usize;
        below[parent] += below[i];
    }
    below
}

/// Site mode: a short repeated line kept because it sits inside a record (a "Parameters:" term)
/// goes when nothing but labels of that record is kept — the category label of a dropped
/// related-article item, the heading of a dropped box.
fn drop_orphan_labels(
    dom: &Dom,
    blocks: &Blocks,
    records: &Records,
    region: usize,
    short: u32,
    kept: &mut [bool],
) {
    let page_text = |b: &Block| b.own_tokens() > 0 && !is_label(b, short);
    let content = kept_below(dom, blocks, kept, page_text);
    let all = kept_below(dom, blocks, &vec![true; kept.len()], page_text);
    for (b, k) in blocks.blocks.iter().zip(kept.iter_mut()) {
        if *k && is_label(b, short) {
            let a = records.of(dom, blocks.first_node(b));
            if a > region && content[a] == 0 && all[a] > 0 {
                *k = false;
            }
        }
    }
}

/// Which template text `template_in_content` brings back.
#[derive(Clone, Copy)]
struct Restore {
    /// A heading only when what it heads is kept (`Features::labels`).
    labels: bool,
    /// Site mode proper: any template block after the first kept one, not only headings.
    generated: bool,
}

/// Site mode: a block of template text only is kept when its record lies strictly inside the
/// region and holds kept page-specific text — a generated heading or term ("Parameters:",
/// "Method Summary") belongs to the content it introduces — or when it follows the page's first
/// kept block and what it leads to is kept (the next block with text of its own, or none):
/// `generated` (site mode proper), any such block — text generated docs repeat inside every
/// page's content (rustdoc's blanket implementations, "Performs the conversion."); in articles
/// mode, only a heading (`h1`–`h6`, `dt`, `th`, `caption`) before the last kept block. A template
/// label whose next text is dropped ("Advertisement", "Share this") does not come back.
fn template_in_content(
    dom: &Dom,
    blocks: &Blocks,
    furniture: &[bool],
    region: usize,
    records: &Records,
    Restore { labels, generated }: Restore,
    kept: &mut [bool],
) {
    let kept_here = kept_below(dom, blocks, kept, |_| true);
    // Per block, whether the next block with text of its own is kept (what a heading heads).
    let mut next_kept = vec![true; kept.len()];
    let mut ahead = true;
    for (i, b) in blocks.blocks.iter().enumerate().rev() {
        next_kept[i] = ahead;
        if b.own_tokens() > 0 {
            ahead = kept[i];
        }
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
        let within = i > lo
            && (generated || i < hi && is_heading(dom, b.container as usize))
            && (!labels || next_kept[i]);
        if in_record || within {
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
            keep(&dom, &blocks, &furniture, r, r, Mode::Page, &Features::ALL),
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
        let kept = keep(&dom, &blocks, &furniture, 0, 0, Mode::Page, &Features::ALL);
        assert!(kept[0]);
        assert_eq!(kept.iter().filter(|&&k| k).count(), 1);
    }

    #[test]
    fn short_repeated_lines_go_long_repeated_prose_stays() {
        let dom = parse_html(&format!("<p>{}</p><p>Editor: Li Wei</p>", prose(30))).dom;
        let blocks = Blocks::new(&dom, |_| (false, true));
        let furniture = vec![false; 2];
        assert_eq!(
            keep(&dom, &blocks, &furniture, 0, 0, Mode::Page, &Features::ALL),
            vec![true, false]
        );
    }

    /// The text of the blocks site mode keeps of `html`, whose region is `#r` and prose core
    /// `#core`: text starting with `T:` is template, with `R:` repeated on other pages.
    fn site_kept(html: &str, features: &Features) -> Vec<String> {
        kept_in(html, Mode::Site, features)
    }

    /// `site_kept` in `mode`.
    fn kept_in(html: &str, mode: Mode, features: &Features) -> Vec<String> {
        let dom = parse_html(html).dom;
        let blocks = Blocks::new(&dom, |i| {
            let t = dom.text(i).map_or("", |t| t.text.trim_start());
            (t.starts_with("T:"), t.starts_with("R:"))
        });
        let furniture = vec![false; blocks.blocks.len()];
        let by_id = |id: &str| {
            (0..dom.len())
                .find(|&i| dom.element(i).is_some_and(|e| e.id.as_deref() == Some(id)))
                .expect("the fixture has the id")
        };
        let (r, core) = (by_id("r"), by_id("core"));
        let kept = keep(&dom, &blocks, &furniture, core, r, mode, features);
        blocks
            .blocks
            .iter()
            .zip(kept)
            .filter(|&(_, k)| k)
            .filter_map(|(b, _)| Some(dom.text(blocks.first_node(b))?.text.clone()))
            .collect()
    }

    #[test]
    fn a_label_goes_with_the_dropped_items_it_labels() {
        // A related box inside the article: its template heading and the repeated category
        // label of each item go with the items; a "Parameters:" term heading a kept definition,
        // and a list made only of repeated lines (inherited members), stay.
        let html = format!(
            "<div id=r><div id=core><p>{}</p>\
             <div><h3>T:RELATED</h3><ul><li><a href=/1>R:Story one</a></li>\
             <li><a href=/2>R:Story two</a></li></ul></div>\
             <div><h6>R:Finance</h6><p><a href=/3>R:Another headline {}</a></p></div>\
             <p>{}</p>\
             <dl><dt>R:Parameters:</dt><dd>the page's own parameter text</dd></dl>\
             <ul><li>R:fn clone(&amp;self)</li><li>R:fn eq(&amp;self)</li></ul>\
             <p>{}</p></div></div>",
            prose(40),
            prose(25),
            prose(40),
            prose(40)
        );
        let text = site_kept(&html, &Features::ALL);
        for gone in [
            "T:RELATED",
            "R:Finance",
            "R:Story one",
            "R:Another headline",
        ] {
            assert!(
                !text.iter().any(|t| t.starts_with(gone)),
                "{gone} kept: {text:?}"
            );
        }
        for stays in ["R:Parameters:", "R:fn clone(&self)", "R:fn eq(&self)"] {
            assert!(text.iter().any(|t| t == stays), "{stays} dropped: {text:?}");
        }
        // Without the component the labels stay.
        let off = Features::ALL.without("labels").expect("a known name");
        let text = site_kept(&html, &off);
        assert!(text.iter().any(|t| t == "T:RELATED"), "{text:?}");
        assert!(text.iter().any(|t| t == "R:Finance"), "{text:?}");
    }

    #[test]
    fn generated_text_every_page_repeats_inside_the_content_stays_in_site_mode_only() {
        // After the page's own members, a section every page of generated docs carries (a
        // blanket implementation and its one-line description): template text, kept in site
        // mode. In articles mode only headings between kept blocks come back, so it goes.
        let html = format!(
            "<div id=r><div id=core><p>{}</p><ul><li>the page's own member</li></ul>\
             <section><h3>T:Blanket implementations</h3><p>T:Performs the conversion.</p>\
             </section></div></div>",
            prose(40)
        );
        let site = kept_in(&html, Mode::Site, &Features::ALL);
        assert!(
            site.iter().any(|t| t == "T:Performs the conversion."),
            "{site:?}"
        );
        assert!(
            site.iter().any(|t| t == "T:Blanket implementations"),
            "{site:?}"
        );
        let articles = kept_in(&html, Mode::Articles, &Features::ALL);
        assert!(
            !articles.iter().any(|t| t.starts_with("T:")),
            "{articles:?}"
        );
    }

    #[test]
    fn an_editor_line_after_the_prose_goes_a_repeated_line_inside_it_stays() {
        // The region is widened beyond the prose core, so both lines sit inside a record; the
        // one after the core's last paragraph is an editor line, the one between paragraphs
        // is the page's text (a recurring sentence of generated docs).
        let html = format!(
            "<div id=r><div id=core><p>{}</p><p>R:This class follows the concept.</p>\
             <p>{}</p><p>R:(Editor: Li Wei)</p></div><table><tr><td>{}</td></tr></table></div>",
            prose(40),
            prose(40),
            prose(10)
        );
        let text = site_kept(&html, &Features::ALL);
        assert!(!text.iter().any(|t| t == "R:(Editor: Li Wei)"), "{text:?}");
        assert!(
            text.iter()
                .any(|t| t == "R:This class follows the concept."),
            "{text:?}"
        );
    }
}
