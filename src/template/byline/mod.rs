//! Bylines become metadata: the short lines the cleaner drops at a fixed place of a cluster's
//! pages (an author line, a date line, "By Ann Lee · June 3, 2024") read as the page's author
//! and publication date. Owns the byline-position rule, learned per cluster from its pages'
//! dropped lines (`Positions::learn`), and reading one page's byline (`Positions::read`);
//! `parse` reads one line.
//!
//! A *dropped line* is a block the cleaner does not keep with 1 to `MAX_TOKENS` own tokens; its
//! *position* is the signature of its block element (`region::signature`: DOM path, class and
//! id). A position holds bylines when, across the cluster's distinct pages, it holds a dropped
//! line on at least `MIN_PAGES` pages and a third of them, at most one on most of those pages,
//! with text that differs between pages, and that text reads as a date (on two thirds of them)
//! or names an author after a cue (`By`, `Posted by`, `作者`: on half of them). Nothing here is
//! keyed to a site, a CMS or a language beyond the generic cue lists in `parse`.
//!
//! A line of a few capitalised words with no cue is not read as a name: on the dev sets such
//! lines at fixed places were mostly labels ("Related Stories", "Fast Track Watch", "Mikes
//! Profile"), not authors (docs/export.md, "Bylines").
//!
//! Pure and deterministic like the rest of `template`: counts only, ties broken by signature.

pub mod parse;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dom::{Dom, NodeKind};

use super::content::blocks::Blocks;
use super::content::region::signature;

/// What a page's byline says: `published` as `YYYY-MM-DD`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Byline {
    pub author: Option<String>,
    pub published: Option<String>,
}

impl Byline {
    pub fn is_empty(&self) -> bool {
        self.author.is_none() && self.published.is_none()
    }
}

/// Longest dropped line read as a byline, in tokens (a CJK character is one): a Chinese byline
/// box with time, source, author and editor fields runs to about 30; beyond 40 a line is a
/// sentence or a list, not a byline.
pub const MAX_TOKENS: u32 = 40;

/// A position is a byline position only when it holds a dropped line on at least this many
/// distinct pages: one page is no evidence of a fixed place.
const MIN_PAGES: u32 = 2;

/// ... and on at least one page in this many of the cluster's distinct pages: a line a cluster's
/// pages mostly lack is not a part of its template.
const PRESENT_ONE_IN: u32 = 3;

/// A byline position's lines are read as dates when at least this share of them (numerator,
/// denominator) hold one: a position of dates that sometimes holds a note.
const MOSTLY: (u32, u32) = (2, 3);

/// A position's lines are read as author names after a cue when at least half of them have one:
/// a cue is strong evidence, and one site's byline box may hold a name on some pages only.
const CUED_HALF: (u32, u32) = (1, 2);

/// A byline position, with what its lines have shown.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Position {
    signature: u64,
    /// Dates: numeric dates here show the day first (`Some(true)`) or the month first.
    day_first: Option<bool>,
}

/// A cluster's byline positions, best first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Positions {
    dates: Vec<Position>,
    names: Vec<Position>,
}

/// One page's dropped lines by position: the first line's text and how many lines it holds.
pub type PageLines = BTreeMap<u64, (String, u32)>;

/// What a position's lines showed across a cluster's pages.
#[derive(Default)]
struct Stat {
    pages: u32,
    multi: u32,
    dates: u32,
    day_first: u32,
    month_first: u32,
    cued: u32,
    /// Smallest and largest hash of the first line's text: equal when every page says the same.
    lo: u64,
    hi: u64,
}

/// The page's dropped lines (see the module doc) at the positions `wanted` accepts.
pub fn dropped_lines(
    dom: &Dom,
    blocks: &Blocks,
    kept: &[bool],
    wanted: impl Fn(u64) -> bool,
) -> PageLines {
    let mut lines = PageLines::new();
    for (b, &k) in blocks.blocks.iter().zip(kept) {
        let own = b.own_tokens();
        if k || own == 0 || b.tokens > MAX_TOKENS {
            continue;
        }
        let sig = signature(dom, b.container as usize);
        if !wanted(sig) {
            continue;
        }
        match lines.get_mut(&sig) {
            Some((_, n)) => *n += 1,
            None => {
                lines.insert(sig, (block_text(dom, blocks.nodes_of(b)), 1));
            }
        }
    }
    lines
}

/// A block's text as `dom::text::render` writes its line.
fn block_text(dom: &Dom, nodes: &[u32]) -> String {
    let mut line = String::new();
    let mut space_after = false;
    for &i in nodes {
        if let NodeKind::Text(t) = &dom.nodes[i as usize].kind {
            if !line.is_empty() && (space_after || t.space_before) {
                line.push(' ');
            }
            line.push_str(&t.text);
            space_after = t.space_after;
        }
    }
    line
}

impl Positions {
    /// The byline positions of a cluster from its distinct pages' dropped lines (one
    /// `PageLines` per distinct page, every position wanted).
    pub fn learn(pages: &[PageLines]) -> Positions {
        let mut stats: BTreeMap<u64, Stat> = BTreeMap::new();
        for page in pages {
            for (&sig, (text, n)) in page {
                let st = stats.entry(sig).or_default();
                let h = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
                if st.pages == 0 {
                    (st.lo, st.hi) = (h, h);
                }
                st.lo = st.lo.min(h);
                st.hi = st.hi.max(h);
                st.pages += 1;
                st.multi += u32::from(*n > 1);
                if parse::date_in(text).is_some() {
                    st.dates += 1;
                    match parse::order_of(text) {
                        Some(true) => st.day_first += 1,
                        Some(false) => st.month_first += 1,
                        None => {}
                    }
                }
                st.cued += u32::from(parse::cued_name(text).is_some());
            }
        }
        let distinct = pages.len() as u32;
        let share = |hits: u32, of: u32, (num, den): (u32, u32)| hits * den >= of * num;
        let mut dates = Vec::new();
        let mut names = Vec::new();
        for (sig, st) in stats {
            let fixed = st.pages >= MIN_PAGES
                && st.pages * PRESENT_ONE_IN >= distinct
                && st.multi * 3 <= st.pages
                && st.lo != st.hi;
            if !fixed {
                continue;
            }
            if share(st.dates, st.pages, MOSTLY) {
                let day_first = match st.day_first.cmp(&st.month_first) {
                    std::cmp::Ordering::Greater => Some(true),
                    std::cmp::Ordering::Less => Some(false),
                    std::cmp::Ordering::Equal => None,
                };
                dates.push((st.dates, sig, day_first));
            }
            if share(st.cued, st.pages, CUED_HALF) {
                names.push((st.cued, sig));
            }
        }
        dates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        names.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Positions {
            dates: dates
                .into_iter()
                .map(|(_, signature, day_first)| Position {
                    signature,
                    day_first,
                })
                .collect(),
            names: names
                .into_iter()
                .map(|(_, signature)| Position {
                    signature,
                    day_first: None,
                })
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.dates.is_empty() && self.names.is_empty()
    }

    fn holds(&self, sig: u64) -> bool {
        self.dates
            .iter()
            .chain(&self.names)
            .any(|p| p.signature == sig)
    }

    /// One page's byline: the first date and the first name its dropped lines hold at the
    /// cluster's byline positions, best position first. Kept blocks are content, never read.
    pub fn read(&self, dom: &Dom, blocks: &Blocks, kept: &[bool]) -> Byline {
        if self.is_empty() {
            return Byline::default();
        }
        let lines = dropped_lines(dom, blocks, kept, |sig| self.holds(sig));
        let text = |p: &Position| lines.get(&p.signature).map(|(t, _)| t.as_str());
        Byline {
            published: self
                .dates
                .iter()
                .find_map(|p| parse::date_in(text(p)?).and_then(|d| d.iso(p.day_first))),
            author: self.names.iter().find_map(|p| parse::cued_name(text(p)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;
    use crate::template::clean::tests::{body_paragraph, news_page};
    use crate::template::engine::{clean_clusters, essential_sets};
    use crate::template::Clustering;

    /// The byline `news_page(i)` carries: `<p class=meta>By {name} | June {i}, 2024</p>`.
    const NAMES: [&str; 2] = ["Ann Reporter", "Bo Writer"];

    fn meta_line(i: usize) -> String {
        format!("<p class=meta>By {} | June {i}, 2024</p>", NAMES[i % 2])
    }

    /// `news_page(i)` with its byline line replaced by `byline`.
    fn page_with(i: usize, byline: &str) -> String {
        let page = news_page(i);
        assert!(page.contains(&meta_line(i)), "the fixture's byline");
        page.replace(&meta_line(i), byline)
    }

    /// The pages as one cluster, cleaned: (texts, bylines).
    fn cleaned(pages: &[String]) -> (Vec<String>, Vec<Byline>) {
        let doms: Vec<Dom> = pages.iter().map(|h| parse_html(h).dom).collect();
        let one = Clustering {
            clusters: vec![(0..doms.len() as u32).collect()],
        };
        let r = clean_clusters(&doms, &essential_sets(&doms), one);
        (r.texts, r.bylines)
    }

    #[test]
    fn a_byline_at_a_fixed_place_gives_author_and_date() {
        let pages: Vec<String> = (1..7)
            .map(|i| {
                page_with(
                    i,
                    &format!(
                        "<p class=meta>By <a href=/u/{i}>{}</a> · June {i}, 2024</p>",
                        NAMES[i % 2]
                    ),
                )
            })
            .collect();
        let (texts, bylines) = cleaned(&pages);
        for (k, (text, b)) in texts.iter().zip(&bylines).enumerate() {
            let i = k + 1;
            assert!(
                !text.contains("June"),
                "the cleaner drops the byline: {text}"
            );
            assert_eq!(b.author.as_deref(), Some(NAMES[i % 2]), "page {i}");
            assert_eq!(b.published, Some(format!("2024-06-{i:02}")), "page {i}");
        }
    }

    #[test]
    fn the_text_is_the_same_with_bylines_read() {
        let doms: Vec<Dom> = (0..5).map(|i| parse_html(&news_page(i)).dom).collect();
        let refs: Vec<&Dom> = doms.iter().collect();
        let essential = essential_sets(&doms);
        let template = crate::template::support::template(essential.iter().map(Vec::as_slice));
        let (model, cleaned) =
            crate::template::ClusterModel::learn_and_clean_pages(&refs, &template);
        assert!(cleaned.iter().skip(1).all(|c| c.byline.author.is_some()));
        for (dom, c) in doms.iter().zip(&cleaned) {
            assert_eq!(c.text, model.clean(dom));
            assert_eq!(c, &model.clean_page(dom));
        }
    }

    #[test]
    fn a_site_without_bylines_gets_none() {
        let pages: Vec<String> = (1..7).map(|i| page_with(i, "")).collect();
        let (_, bylines) = cleaned(&pages);
        assert!(bylines.iter().all(Byline::is_empty), "{bylines:?}");
        // A fixed line that says the same on every page is template, not a byline.
        let pages: Vec<String> = (1..7)
            .map(|i| page_with(i, "<p class=meta>By Example Staff | June 1, 2024</p>"))
            .collect();
        let (_, bylines) = cleaned(&pages);
        assert!(bylines.iter().all(Byline::is_empty), "{bylines:?}");
    }

    #[test]
    fn a_date_in_the_content_is_not_taken() {
        // Each story opens with a short dated sentence inside its own text: content, kept by
        // the cleaner, so not a byline, even at the same place on every page.
        let pages: Vec<String> = (1..7)
            .map(|i| {
                page_with(i, "").replace(
                    "<div class=text>",
                    &format!(
                        "<div class=text><p>June {i}, 2024 was the day the {} changed.</p>",
                        ["bridge", "market", "school"][i % 3]
                    ),
                )
            })
            .collect();
        let (texts, bylines) = cleaned(&pages);
        for (text, b) in texts.iter().zip(&bylines) {
            assert!(text.contains(", 2024 was the day"), "{text}");
            assert_eq!(b.published, None, "{text}");
        }
    }

    #[test]
    fn a_list_of_dates_is_not_a_byline() {
        // Dated headlines in a box: several dated lines at one place per page.
        let pages: Vec<String> = (1..7)
            .map(|i| {
                let items: String = (0..3)
                    .map(|k| {
                        format!(
                            "<p class=item>Story {k} of {} · June {}, 2024</p>",
                            body_paragraph(i, k).len(),
                            i + k
                        )
                    })
                    .collect();
                page_with(i, &format!("<div class=box>{items}</div>"))
            })
            .collect();
        let (_, bylines) = cleaned(&pages);
        assert!(bylines.iter().all(|b| b.published.is_none()), "{bylines:?}");
    }

    #[test]
    fn numeric_dates_take_the_order_their_position_shows() {
        // Day-first dates: 25/03/2024 settles the order of 03/04/2024 at the same place.
        let dates = ["25/03/2024", "03/04/2024", "14/05/2024", "02/06/2024"];
        let pages: Vec<String> = (1..5)
            .map(|i| {
                page_with(
                    i,
                    &format!("<p class=meta>By {} | {}</p>", NAMES[i % 2], dates[i - 1]),
                )
            })
            .collect();
        let (_, bylines) = cleaned(&pages);
        let got: Vec<Option<&str>> = bylines.iter().map(|b| b.published.as_deref()).collect();
        assert_eq!(
            got,
            [
                Some("2024-03-25"),
                Some("2024-04-03"),
                Some("2024-05-14"),
                Some("2024-06-02")
            ]
        );
    }
}
