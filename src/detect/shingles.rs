//! Text shingles (Gibson, Punera & Tomkins, "The volume and evolution of web page templates",
//! WWW 2005, the text-based algorithm): tags are stripped and each page becomes one token
//! stream; a window of W tokens slides over it; a shingle (window hash) is template when it is
//! seen on at least F of P sampled pages, counting only shingles whose hash is 0 mod D;
//! overlapping template windows coalesce into fragments, whose text is removed.
//!
//! Tokens are runs of letters/digits or single CJK characters (so Chinese text shingles by
//! character, as the eval metric tokenises it); punctuation separates tokens and is not one.
//! Windows cross tag boundaries (the tags are stripped), but a token never spans two text
//! nodes, so every token belongs to exactly one text node.

use std::ops::Range;

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::{text, Dom, NodeKind};
use crate::template::content::tokens::is_cjk;
use crate::template::support::PathMap;
use crate::template::SiteResult;

/// docs/detectors.md gives the values' sources.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// W: tokens per shingle.
    pub window: usize,
    /// F: a shingle on at least this many of `sample` pages is template (scaled down in
    /// proportion when the site has fewer pages than `sample`, never below 2).
    pub min_pages: usize,
    /// P: pages sampled per site to count shingles (the pages with the smallest content hash:
    /// deterministic, independent of input order).
    pub sample: usize,
    /// D: only shingles whose hash is 0 mod D are counted and matched (1 = all).
    pub modulus: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            window: 8,
            min_pages: 3,
            sample: 50,
            modulus: 1,
        }
    }
}

impl Params {
    /// F for a site whose sample holds `sampled` pages.
    pub fn threshold(&self, sampled: usize) -> usize {
        let scaled = (self.min_pages * sampled).div_ceil(self.sample.max(1));
        scaled.clamp(2, self.min_pages.max(2))
    }
}

/// A page as a token stream: each token's hash and the text node it came from.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    pub hashes: Vec<u64>,
    pub nodes: Vec<u32>,
}

/// The visible text of `dom` as tokens.
pub fn tokens(dom: &Dom) -> Tokens {
    let mut out = Tokens::default();
    for (i, node) in dom.nodes.iter().enumerate() {
        let NodeKind::Text(t) = &node.kind else {
            continue;
        };
        if !text::is_visible(dom, i) {
            continue;
        }
        let mut push = |tok: &str| {
            out.hashes.push(xxh3_64(tok.as_bytes()));
            out.nodes.push(i as u32);
        };
        let mut start: Option<usize> = None;
        for (at, c) in t.text.char_indices() {
            let word = c.is_alphanumeric() && !is_cjk(c);
            if !word {
                if let Some(s) = start.take() {
                    push(&t.text[s..at]);
                }
                if is_cjk(c) {
                    push(&t.text[at..at + c.len_utf8()]);
                }
            } else if start.is_none() {
                start = Some(at);
            }
        }
        if let Some(s) = start {
            push(&t.text[s..]);
        }
    }
    out
}

/// The hash of every window of `w` tokens (`hashes.len() - w + 1` of them; none when shorter).
pub fn shingles(hashes: &[u64], w: usize) -> Vec<u64> {
    let w = w.max(1);
    let mut buf = Vec::with_capacity(w * 8);
    hashes
        .windows(w)
        .map(|win| {
            buf.clear();
            for h in win {
                buf.extend_from_slice(&h.to_le_bytes());
            }
            xxh3_64(&buf)
        })
        .collect()
}

/// Coalesce the windows starting at `starts` (ascending), each `w` tokens long, into maximal
/// token ranges: overlapping or touching windows become one fragment.
pub fn fragments(starts: impl IntoIterator<Item = usize>, w: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for s in starts {
        match out.last_mut() {
            Some(r) if s <= r.end => r.end = r.end.max(s + w),
            _ => out.push(s..s + w),
        }
    }
    out
}

/// The template shingles of a site: counted on the sample, kept when on at least F pages.
fn template_shingles(pages: &[Tokens], windows: &[Vec<u64>], params: &Params) -> PathMap<()> {
    let mut order: Vec<(u64, usize)> = pages
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let bytes: Vec<u8> = t.hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
            (xxh3_64(&bytes), i)
        })
        .collect();
    order.sort_unstable();
    order.truncate(params.sample.max(1));
    let f = params.threshold(order.len());
    let d = params.modulus.max(1);
    let mut counts: PathMap<usize> = PathMap::default();
    for &(_, page) in &order {
        let mut seen: Vec<u64> = windows[page]
            .iter()
            .copied()
            .filter(|h| h % d == 0)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for h in seen {
            *counts.entry(h).or_insert(0) += 1;
        }
    }
    counts
        .into_iter()
        .filter(|&(_, c)| c >= f)
        .map(|(h, _)| (h, ()))
        .collect()
}

/// Which text nodes of a page to drop given its covered tokens: a node goes when more than
/// half of its tokens are covered; a node without tokens (punctuation) goes when it lies inside
/// a fragment (the tokens before and after it are covered).
fn dropped_nodes(dom: &Dom, toks: &Tokens, covered: &[bool]) -> Vec<bool> {
    let mut tally = vec![(0u32, 0u32); dom.len()];
    for (k, &n) in toks.nodes.iter().enumerate() {
        tally[n as usize].0 += 1;
        tally[n as usize].1 += u32::from(covered[k]);
    }
    let mut drop = vec![false; dom.len()];
    let mut next = 0; // index of the first token at or after the current node
    for i in 0..dom.len() {
        while next < toks.nodes.len() && (toks.nodes[next] as usize) < i {
            next += 1;
        }
        let (total, hit) = tally[i];
        drop[i] = if total > 0 {
            2 * hit > total
        } else if matches!(dom.nodes[i].kind, NodeKind::Text(_)) && !toks.nodes.is_empty() {
            let before = next.checked_sub(1).is_none_or(|k| covered[k]);
            let after = covered.get(next).is_none_or(|&c| c);
            before && after
        } else {
            false
        };
    }
    drop
}

/// Clean one host's pages: drop the text under template shingles.
pub fn clean_site(doms: &[Dom], params: &Params) -> SiteResult {
    let w = params.window.max(1);
    let pages: Vec<Tokens> = doms.iter().map(tokens).collect();
    let windows: Vec<Vec<u64>> = pages.iter().map(|t| shingles(&t.hashes, w)).collect();
    let template = template_shingles(&pages, &windows, params);
    let dropped: Vec<Vec<bool>> = doms
        .iter()
        .zip(pages.iter().zip(&windows))
        .map(|(dom, (toks, wins))| {
            let starts = wins
                .iter()
                .enumerate()
                .filter(|(_, h)| template.contains_key(h))
                .map(|(j, _)| j);
            let mut covered = vec![false; toks.hashes.len()];
            for r in fragments(starts, w) {
                covered[r].fill(true);
            }
            dropped_nodes(dom, toks, &covered)
        })
        .collect();
    super::unclustered(doms, &dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    const NAV: &str = "<div><a href=/>Home</a> | <a href=/world>World news</a> | \
                       <a href=/biz>Business and markets</a> | <a href=/tech>Technology</a> | <a href=/sport>Sport</a></div>";
    const FOOTER: &str = "<footer>Copyright 2024 Example Media Group, all rights reserved \
                          worldwide.</footer>";

    /// A page body whose every token is its own (`b{i}t{k}`), so no window in it is shared.
    fn body(i: usize) -> (String, String) {
        let head: Vec<String> = (0..5).map(|k| format!("h{i}t{k}")).collect();
        let para: Vec<String> = (0..12).map(|k| format!("b{i}t{k}")).collect();
        (head.join(" "), para.join(" "))
    }

    fn site(pages: usize) -> Vec<Dom> {
        (0..pages)
            .map(|i| {
                let (h, p) = body(i);
                parse_html(&format!("<body>{NAV}<h1>{h}</h1><p>{p}</p>{FOOTER}</body>")).dom
            })
            .collect()
    }

    #[test]
    fn shared_nav_and_footer_go_bodies_stay() {
        let r = clean_site(&site(6), &Params::default());
        for (i, text) in r.texts.iter().enumerate() {
            let (h, p) = body(i);
            assert_eq!(text, &format!("{h}\n{p}\n"));
        }
    }

    #[test]
    fn a_phrase_repeated_on_one_page_only_stays() {
        let mut doms = site(6);
        let shared = "<p>one two three four five six seven eight nine ten</p>";
        doms[0] = parse_html(&format!("<body>{shared}<p>alpha</p>{shared}</body>")).dom;
        // Shingles are counted once per page: twice on one page is one page, below F = 2.
        let r = clean_site(&doms, &Params::default());
        assert_eq!(r.texts[0].matches("one two three").count(), 2);
    }

    #[test]
    fn tokens_split_words_and_cjk_characters_per_node() {
        let dom = parse_html("<p>Hello, wörld 42</p><p>中文abc</p>").dom;
        let t = tokens(&dom);
        assert_eq!(t.hashes.len(), 6); // hello wörld 42 中 文 abc
        assert_eq!(t.hashes[0], xxh3_64(b"Hello"));
        assert_eq!(t.hashes[3], xxh3_64("中".as_bytes()));
        assert_eq!(t.hashes[5], xxh3_64(b"abc"));
        assert_ne!(t.nodes[2], t.nodes[3]);
    }

    #[test]
    fn overlapping_windows_coalesce() {
        assert_eq!(fragments([0, 2, 4, 20], 4), vec![0..8, 20..24]);
        assert_eq!(fragments([0, 4], 4), vec![0..8], "touching windows join");
        assert!(fragments([], 4).is_empty());
    }

    #[test]
    fn shingles_slide_one_token_at_a_time() {
        let s = shingles(&[1, 2, 3, 1, 2, 3], 3);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0], s[3]);
        assert_ne!(s[0], s[1]);
        assert!(shingles(&[1, 2], 3).is_empty());
    }

    #[test]
    fn threshold_scales_with_small_samples() {
        let p = Params::default();
        assert_eq!(p.threshold(50), 3);
        assert_eq!(p.threshold(20), 2);
        assert_eq!(p.threshold(3), 2);
    }

    #[test]
    fn the_sample_does_not_depend_on_page_order() {
        let p = Params {
            sample: 3,
            ..Params::default()
        };
        let mut doms = site(6);
        // Page 5 shares a phrase with page 4 only: whether it is template depends on which
        // pages are sampled, so a sample taken by position would change with the order.
        let shared = "<p>one two three four five six seven eight nine ten</p>";
        for i in [4, 5] {
            let (h, b) = body(i);
            doms[i] = parse_html(&format!("<body><h1>{h}</h1>{shared}<p>{b}</p></body>")).dom;
        }
        let forward = clean_site(&doms, &p).texts;
        doms.reverse();
        let mut backward = clean_site(&doms, &p).texts;
        backward.reverse();
        assert_eq!(forward, backward);
    }

    #[test]
    fn sampling_modulus_only_matches_sampled_shingles() {
        let p = Params {
            modulus: u64::MAX,
            ..Params::default()
        };
        // With D huge no shingle is 0 mod D (bar a 2^-64 chance): nothing is removed.
        let r = clean_site(&site(6), &p);
        assert!(r.texts[0].starts_with("Home"));
    }
}
