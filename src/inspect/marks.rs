//! A page's text blocks marked the way cleaning treats them — template text (removed by the
//! cluster template), chaff (dropped by the content model) or content (kept) — and a cluster's
//! template shown readably as the template text nodes of one member page. Pure: no store, no I/O.
//!
//! Invariant: the kept blocks' lines without their template segments, joined as
//! `dom::text::render` joins text, are exactly `ClusterModel::clean(dom)` (tested below), so the
//! report shows what the crawl wrote.

use std::collections::HashMap;

use crate::dom::text::is_visible;
use crate::dom::Dom;
use crate::template::content::blocks::Blocks;
use crate::template::ClusterModel;

/// What cleaning did with a block (one output line of the page).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Every text node of the block is template text.
    Template,
    /// The block has text of its own, which the content model dropped (chaff).
    Dropped,
    /// The block's own text is in the cleaned output.
    Kept,
}

impl State {
    /// The name the report's `data-state` attribute and CSS class use.
    pub fn name(self) -> &'static str {
        match self {
            State::Template => "template",
            State::Dropped => "dropped",
            State::Kept => "kept",
        }
    }
}

/// One text node of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub text: String,
    /// The node's path is in the cluster template.
    pub template: bool,
    space_before: bool,
    space_after: bool,
}

/// One block of the page with its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkedBlock {
    pub state: State,
    /// Tag of the innermost block element around the text (`p`, `li`, `h1`, …).
    pub tag: String,
    pub segments: Vec<Segment>,
}

impl MarkedBlock {
    /// Whether segment `k` is preceded by a space when the segments `shown` are joined the way
    /// `dom::text::render` joins a line's text nodes.
    pub fn spaces(&self, shown: impl Fn(&Segment) -> bool) -> Vec<bool> {
        let mut out = Vec::with_capacity(self.segments.len());
        let mut started = false;
        let mut last_space_after = false;
        for s in &self.segments {
            if !shown(s) {
                out.push(false);
                continue;
            }
            out.push(started && (last_space_after || s.space_before));
            started = true;
            last_space_after = s.space_after;
        }
        out
    }

    /// The block's text as one line, its segments `shown` only.
    pub fn line(&self, shown: impl Fn(&Segment) -> bool + Copy) -> String {
        let mut line = String::new();
        for (s, space) in self.segments.iter().zip(self.spaces(shown)) {
            if shown(s) {
                if space {
                    line.push(' ');
                }
                line.push_str(&s.text);
            }
        }
        line
    }
}

/// Mark `dom`'s blocks with `model`'s verdicts (what `ClusterModel::clean` keeps).
pub fn mark(dom: &Dom, model: &ClusterModel) -> Vec<MarkedBlock> {
    let (blocks, kept) = model.kept_blocks(dom);
    collect(dom, &blocks, |b, segments| {
        if segments.iter().all(|s| s.template) {
            State::Template
        } else if kept[b] {
            State::Kept
        } else {
            State::Dropped
        }
    })
}

/// Mark `dom`'s blocks by the lines of its stored cleaned `text`, for detectors with no per-node
/// template (the baselines): a block is kept when its whole line is one of the text's lines.
/// Approximate: a baseline may remove part of a line.
pub fn mark_by_lines(dom: &Dom, text: &str) -> Vec<MarkedBlock> {
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for l in text.lines() {
        *lines.entry(l).or_default() += 1;
    }
    let blocks = Blocks::new(dom, |_| (false, false));
    let mut out = collect(dom, &blocks, |_, _| State::Dropped);
    for b in &mut out {
        if let Some(n) = lines.get_mut(b.line(|_| true).as_str()).filter(|n| **n > 0) {
            *n -= 1;
            b.state = State::Kept;
        }
    }
    out
}

fn collect(
    dom: &Dom,
    blocks: &Blocks,
    state: impl Fn(usize, &[Segment]) -> State,
) -> Vec<MarkedBlock> {
    blocks
        .blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            let segments: Vec<Segment> = blocks
                .nodes_of(block)
                .iter()
                .filter_map(|&i| {
                    let t = dom.text(i as usize)?;
                    Some(Segment {
                        text: t.text.clone(),
                        template: blocks.in_template[i as usize],
                        space_before: t.space_before,
                        space_after: t.space_after,
                    })
                })
                .collect();
            MarkedBlock {
                state: state(b, &segments),
                tag: dom
                    .tag(block.container as usize)
                    .unwrap_or("body")
                    .to_string(),
                segments,
            }
        })
        .collect()
}

/// The cleaned text the marks stand for: the kept blocks' own (non-template) text, one line
/// each — `ClusterModel::clean`'s output when the marks came from `mark`.
pub fn kept_text(blocks: &[MarkedBlock]) -> String {
    let mut out = String::new();
    for b in blocks.iter().filter(|b| b.state == State::Kept) {
        let line = b.line(|s| !s.template);
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// One template text node of a member page, for showing a cluster's template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateLine {
    /// Readable element path to the text (`body › div#main › nav › a`), shortened.
    pub path: String,
    pub text: String,
    /// Text nodes of the page with this path (a repeated link label shows once).
    pub count: usize,
}

/// Longest template text shown, in characters.
const TEXT_CHARS: usize = 160;
/// Element steps shown of a path (the innermost ones).
const PATH_STEPS: usize = 5;

/// The visible text nodes of `dom` whose path is in `template`, first occurrence of each path in
/// document order, at most `cap` of them; and how many distinct template text paths the page
/// has in all.
pub fn template_lines(dom: &Dom, template: &[u64], cap: usize) -> (Vec<TemplateLine>, usize) {
    let mut lines: Vec<TemplateLine> = Vec::new();
    // Path → its line, if it got one before the cap.
    let mut seen: HashMap<u64, Option<usize>> = HashMap::new();
    for i in 0..dom.nodes.len() {
        let p = dom.nodes[i].path;
        if !is_visible(dom, i) || template.binary_search(&p).is_err() {
            continue;
        }
        if let Some(at) = seen.get(&p) {
            if let Some(&at) = at.as_ref() {
                lines[at].count += 1;
            }
            continue;
        }
        let fits = lines.len() < cap;
        seen.insert(p, fits.then_some(lines.len()));
        if fits {
            let text = dom.text(i).map_or("", |t| t.text.as_str());
            lines.push(TemplateLine {
                path: readable_path(dom, i),
                text: truncate(text, TEXT_CHARS),
                count: 1,
            });
        }
    }
    (lines, seen.len())
}

/// Node `i`'s element ancestors as `tag#id.class` steps, outermost first, without `html` and
/// the document; only the innermost `PATH_STEPS` steps, after `…` when cut.
pub fn readable_path(dom: &Dom, i: usize) -> String {
    let mut steps: Vec<String> = dom
        .ancestors(i)
        .filter_map(|a| {
            let e = dom.element(a)?;
            if e.tag == "html" {
                return None;
            }
            let mut s = e.tag.to_string();
            if let Some(id) = e.id.as_deref().filter(|s| !s.is_empty()) {
                s.push('#');
                s.push_str(id);
            }
            if let Some(class) = e.class.as_deref().and_then(|c| c.split_whitespace().next()) {
                s.push('.');
                s.push_str(class);
            }
            Some(s)
        })
        .collect();
    let cut = steps.len() > PATH_STEPS;
    steps.truncate(PATH_STEPS);
    steps.reverse();
    let joined = steps.join(" › ");
    if cut {
        format!("… › {joined}")
    } else {
        joined
    }
}

fn truncate(s: &str, chars: usize) -> String {
    match s.char_indices().nth(chars) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::{parse_html, NodeKind};
    use crate::template::clean::tests::{body_paragraph, site};
    use crate::template::engine::{essential_sets, learn_cluster};

    fn text_nodes(dom: &Dom) -> usize {
        dom.nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Text(_)))
            .count()
    }

    fn model(doms: &[Dom]) -> (Vec<u64>, ClusterModel) {
        let essential = essential_sets(doms);
        let pages: Vec<&Dom> = doms.iter().collect();
        let sets: Vec<&[u64]> = essential.iter().map(Vec::as_slice).collect();
        learn_cluster(&pages, &sets)
    }

    #[test]
    fn kept_blocks_are_exactly_the_cleaned_text() {
        let doms = site(6);
        let (_, model) = model(&doms);
        for dom in &doms {
            let marked = mark(dom, &model);
            assert_eq!(kept_text(&marked), model.clean(dom));
        }
    }

    #[test]
    fn the_three_states_land_where_cleaning_puts_them() {
        let doms = site(6);
        let (_, model) = model(&doms);
        let marked = mark(&doms[2], &model);
        let state_of = |needle: &str| {
            marked
                .iter()
                .find(|b| b.line(|_| true).contains(needle))
                .map(|b| b.state)
        };
        assert_eq!(state_of("Copyright 2024"), Some(State::Template));
        assert_eq!(state_of("Most read"), Some(State::Template));
        assert_eq!(state_of(&body_paragraph(2, 1)), Some(State::Kept));
        assert_eq!(state_of("hours ago"), Some(State::Dropped));
        assert_eq!(
            marked.iter().map(|b| b.segments.len()).sum::<usize>(),
            text_nodes(&doms[2]) - 1,
            "every visible text node is in a block (the title is in the head)"
        );
    }

    #[test]
    fn lines_join_like_render() {
        let p = parse_html("<p>one <b>two</b>three <i>four</i></p>");
        let marked = mark(&p.dom, &ClusterModel::default());
        assert_eq!(marked.len(), 1);
        assert_eq!(marked[0].line(|_| true), "one twothree four");
        assert_eq!(marked[0].line(|s| s.text != "two"), "one three four");
        assert_eq!(marked[0].tag, "p");
    }

    #[test]
    fn baseline_marks_follow_the_stored_lines() {
        let p = parse_html("<nav>Home</nav><p>Story text.</p><p>Home</p>");
        let marked = mark_by_lines(&p.dom, "Story text.\nHome\n");
        let states: Vec<State> = marked.iter().map(|b| b.state).collect();
        // The first "Home" takes the one stored "Home" line: lines are matched in order.
        assert_eq!(states, [State::Kept, State::Kept, State::Dropped]);
    }

    #[test]
    fn template_lines_are_capped_and_counted() {
        let doms = site(6);
        let (template, _) = model(&doms);
        let (all, total) = template_lines(&doms[0], &template, usize::MAX);
        assert_eq!(all.len(), total);
        assert!(all
            .iter()
            .any(|l| l.text.contains("Copyright") && l.path.ends_with("p")));
        assert!(!all.iter().any(|l| l.text.contains(&body_paragraph(0, 0))));
        let (some, total2) = template_lines(&doms[0], &template, 3);
        assert_eq!((some.len(), total2), (3, total));
        assert_eq!(some[..], all[..3]);
    }

    #[test]
    fn readable_paths_name_ids_and_classes_and_cut_deep_ones() {
        let p = parse_html(
            "<body><div id=main class='page wide'><p>x</p></div>\
             <div><div><div><div><div><span>deep</span></div></div></div></div></div></body>",
        );
        let x = (0..p.dom.len())
            .find(|&i| p.dom.text(i).is_some_and(|t| t.text == "x"))
            .unwrap();
        assert_eq!(readable_path(&p.dom, x), "body › div#main.page › p");
        let deep = (0..p.dom.len())
            .find(|&i| p.dom.text(i).is_some_and(|t| t.text == "deep"))
            .unwrap();
        assert_eq!(
            readable_path(&p.dom, deep),
            "… › div › div › div › div › span"
        );
    }

    #[test]
    fn long_text_is_truncated_on_a_char_boundary() {
        assert_eq!(truncate("ééé", 2), "éé…");
        assert_eq!(truncate("ab", 2), "ab");
    }
}
