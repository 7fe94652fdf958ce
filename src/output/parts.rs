//! What a written Markdown file keeps beyond its text: links (`[text](URL)`) and images
//! (`![alt](URL)`), each of which a user can switch off (`markdown.links`, `markdown.images`).
//!
//! The store keeps every page's Markdown whole; the switches apply where a file or record is
//! written (the crawl's output, `clean`, `export`), so one stored Markdown serves every choice.
//! The Markdown is read with a CommonMark parser (pulldown-cmark, tables and math on, as the
//! renderer writes them) and cut by the source ranges it reports: a link gives way to the
//! source of its text (escapes and emphasis kept), an image goes whole, and a link left with
//! no text goes too. Code spans and blocks are never touched.

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::Deserialize;

/// Which of links and images a Markdown file keeps (both by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkdownParts {
    /// Links as `[text](URL)`; off, their text alone.
    pub links: bool,
    /// Images as `![alt](URL)`; off, none.
    pub images: bool,
}

impl Default for MarkdownParts {
    fn default() -> MarkdownParts {
        MarkdownParts {
            links: true,
            images: true,
        }
    }
}

/// A cut: the source `range` is replaced by the source `keep` (a link's text), or by nothing.
struct Cut {
    range: Range<usize>,
    keep: Option<Range<usize>>,
}

impl MarkdownParts {
    /// `markdown` without the parts switched off (borrowed when both are on).
    pub fn apply<'a>(&self, markdown: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(markdown);
        if !self.images {
            let cuts = image_cuts(&out);
            if !cuts.is_empty() {
                out = Cow::Owned(splice(&out, &cuts));
            }
        }
        // A link left without text (it held an image alone) goes even when links stay.
        let cuts = link_cuts(&out, !self.links);
        if !cuts.is_empty() {
            out = Cow::Owned(splice(&out, &cuts));
        }
        out
    }
}

fn parser(markdown: &str) -> pulldown_cmark::OffsetIter<'_> {
    Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_MATH).into_offset_iter()
}

/// Every outermost image, cut whole.
fn image_cuts(markdown: &str) -> Vec<Cut> {
    let mut cuts = Vec::new();
    let mut depth = 0usize;
    for (event, range) in parser(markdown) {
        match event {
            Event::Start(Tag::Image { .. }) => {
                if depth == 0 {
                    cuts.push(Cut { range, keep: None });
                }
                depth += 1;
            }
            Event::End(TagEnd::Image) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    cuts
}

/// Outermost links: every one given way to its text when `all`, else those without text.
fn link_cuts(markdown: &str, all: bool) -> Vec<Cut> {
    let mut cuts = Vec::new();
    // The outermost open link: its range and the span of what it holds so far.
    let mut open: Option<(Range<usize>, Option<Range<usize>>)> = None;
    let mut depth = 0usize;
    for (event, range) in parser(markdown) {
        match event {
            Event::Start(Tag::Link { .. }) => {
                if depth == 0 {
                    open = Some((range, None));
                    depth = 1;
                    continue;
                }
                depth += 1;
            }
            Event::End(TagEnd::Link) if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    if let Some((whole, text)) = open.take() {
                        let text = text.filter(|t| !markdown[t.clone()].trim().is_empty());
                        if all || text.is_none() {
                            cuts.push(Cut {
                                range: whole,
                                keep: text,
                            });
                        }
                    }
                    continue;
                }
            }
            _ => {}
        }
        if let Some((_, text)) = open.as_mut() {
            *text = Some(match text.take() {
                Some(t) => t.start.min(range.start)..t.end.max(range.end),
                None => range,
            });
        }
    }
    cuts
}

/// `markdown` with `cuts` (in source order, not overlapping) made. A cut that leaves its line
/// blank takes the line, and one blank line of the two it leaves around it.
fn splice(markdown: &str, cuts: &[Cut]) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut at = 0;
    for cut in cuts {
        let mut range = cut.range.clone();
        if cut.keep.is_none() {
            let start = markdown[..range.start].rfind('\n').map_or(0, |i| i + 1);
            let end = markdown[range.end..]
                .find('\n')
                .map_or(markdown.len(), |i| range.end + i);
            if start >= at
                && markdown[start..range.start].trim().is_empty()
                && markdown[range.end..end].trim().is_empty()
            {
                let mut to = (end + 1).min(markdown.len());
                let blank_before = start == 0 || markdown[..start].ends_with("\n\n");
                if blank_before && markdown[to..].starts_with('\n') {
                    to += 1;
                }
                range = start..to;
            }
        }
        out.push_str(&markdown[at..range.start]);
        if let Some(keep) = &cut.keep {
            out.push_str(&markdown[keep.clone()]);
        }
        at = range.end;
    }
    out.push_str(&markdown[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINKS_OFF: MarkdownParts = MarkdownParts {
        links: false,
        images: true,
    };
    const IMAGES_OFF: MarkdownParts = MarkdownParts {
        links: true,
        images: false,
    };
    const BOTH_OFF: MarkdownParts = MarkdownParts {
        links: false,
        images: false,
    };

    /// The text a CommonMark reader renders (image alt text included), words joined by spaces.
    fn rendered(markdown: &str) -> String {
        let mut words = String::new();
        for (event, _) in parser(markdown) {
            if let Event::Text(t) | Event::Code(t) = event {
                words.push_str(&t);
                words.push(' ');
            }
        }
        words.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn both_on_leaves_the_markdown_as_it_is() {
        let md = "See [the *guide*](https://a.example/g) and ![a map](https://a.example/m.png).";
        assert!(matches!(
            MarkdownParts::default().apply(md),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn links_off_keep_their_text_with_its_emphasis_and_escapes() {
        let md = "See [the *guide* \\[v2\\]](https://a.example/g \"Guide\") now.\n\n\
                  - [one](https://a.example/1)\n- <https://a.example/auto>\n";
        let out = LINKS_OFF.apply(md);
        assert_eq!(
            out,
            "See the *guide* \\[v2\\] now.\n\n- one\n- https://a.example/auto\n"
        );
        assert_eq!(rendered(&out), rendered(md));
        assert!(!out.contains("]("), "{out}");
    }

    #[test]
    fn images_off_go_whole_and_take_their_line_when_alone_on_it() {
        let md =
            "Intro.\n\n![A map of the lake](https://a.example/m.png)\n\nInline ![x](y.png) here.\n";
        let out = IMAGES_OFF.apply(md);
        assert_eq!(out, "Intro.\n\nInline  here.\n");
    }

    #[test]
    fn a_link_holding_only_an_image_goes_with_it() {
        let md =
            "[![logo](https://a.example/l.png)](https://a.example/) and [home ![i](i.png)](h)\n";
        assert_eq!(IMAGES_OFF.apply(md), " and [home ](h)\n");
        assert_eq!(BOTH_OFF.apply(md), " and home \n");
        // Images on, links off: the image stays as the link's text.
        assert_eq!(
            LINKS_OFF.apply(md),
            "![logo](https://a.example/l.png) and home ![i](i.png)\n"
        );
    }

    #[test]
    fn code_is_never_touched() {
        let md = "Use `[a](b)` or:\n\n```md\n[a](b) ![c](d)\n```\n\n| k | v |\n|---|---|\n| [x](y) | `![z](w)` |\n";
        assert_eq!(
            BOTH_OFF.apply(md),
            "Use `[a](b)` or:\n\n```md\n[a](b) ![c](d)\n```\n\n| k | v |\n|---|---|\n| x | `![z](w)` |\n"
        );
    }
}
