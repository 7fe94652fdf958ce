//! What a CommonMark reader (pulldown-cmark, tables and math on) renders from Markdown, as
//! words: how the Markdown output is held to the plain text of the same page. Shared by the
//! Markdown tests, the renderer's unit tests and `tools/markdown_check.rs` through `#[path]`.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The words of a text: maximal runs of letters and digits, lowercased, in order.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words a reader renders from `markdown`: text, code and math, not image alt text (the
/// plain text has none). Inline markup may start and end inside a word (`*over*charged`);
/// blocks, table cells and inline HTML (a cell's `<br>`) part words, as the plain text's lines
/// and spaces do.
pub fn rendered_words(markdown: &str) -> Vec<String> {
    let mut out = String::new();
    let mut in_image = 0;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_MATH) {
        match event {
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image -= 1,
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. })
            | Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link,
            ) => {}
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t)
                if in_image == 0 =>
            {
                out.push_str(&t)
            }
            Event::Start(_)
            | Event::End(_)
            | Event::SoftBreak
            | Event::HardBreak
            | Event::InlineHtml(_) => out.push(' '),
            _ => {}
        }
    }
    words(&out)
}
