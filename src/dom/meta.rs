//! What a page says about itself in markup the DOM arena does not keep: `<html lang>`,
//! `<link rel=canonical>`, `<meta>` name/property/itemprop pairs, JSON-LD blocks, `<time
//! datetime>` and `rel=author` link text. Read by one pass of html5ever's tokenizer (no tree),
//! so it costs a fraction of a parse; `corpus::meta` interprets what it collects.
//!
//! Invariant: bounded output whatever the page — at most `MAX_METAS` meta pairs, `MAX_JSON_LD`
//! JSON-LD blocks of at most `MAX_JSON_LD_BYTES` each (a longer one is dropped, not cut), and
//! `MAX_TIMES` times; every kept string is at most `MAX_VALUE` bytes.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Meta pairs kept per page.
pub const MAX_METAS: usize = 256;
/// JSON-LD blocks kept per page.
pub const MAX_JSON_LD: usize = 16;
/// Longest JSON-LD block kept, in bytes.
pub const MAX_JSON_LD_BYTES: usize = 256 * 1024;
/// `<time datetime>` values kept per page.
pub const MAX_TIMES: usize = 16;
/// Longest attribute value or link text kept, in bytes (longer ones are cut at a char boundary).
pub const MAX_VALUE: usize = 2048;

/// A `<time datetime>` element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeTag {
    pub datetime: String,
    /// It says it is the publication time (`itemprop=datePublished` or the `pubdate` attribute).
    pub published: bool,
}

/// The page's self-description, as written (nothing resolved or validated).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HtmlMeta {
    /// `<html lang>`.
    pub lang: Option<String>,
    /// The first `<link rel=canonical href>`.
    pub canonical: Option<String>,
    /// `(key, content)` of `<meta>` elements with a `content`: the key is the lower-cased
    /// `property`, else `name`, else `itemprop`.
    pub metas: Vec<(String, String)>,
    /// Text of each `<script type="application/ld+json">`.
    pub json_ld: Vec<String>,
    pub times: Vec<TimeTag>,
    /// Text of `<a rel=author>` links, and of elements with `itemprop=author` that carry no
    /// nested `itemprop=name` (a byline such as `<span itemprop=author>Ann Lee</span>`).
    pub author_links: Vec<String>,
    /// `href` of `<link rel=alternate>` with an RSS or Atom type (the site's feeds; at most 4).
    pub feeds: Vec<String>,
}

impl HtmlMeta {
    /// The first meta content under any of `keys` (lower case), in the order of `keys`.
    pub fn meta(&self, keys: &[&str]) -> Option<&str> {
        keys.iter().find_map(|k| {
            self.metas
                .iter()
                .find(|(key, v)| key == k && !v.trim().is_empty())
                .map(|(_, v)| v.as_str())
        })
    }
}

/// Scan `html` for its metadata.
pub fn scan(html: &str) -> HtmlMeta {
    let sink = Sink::default();
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // `feed` returns early only for `TokenSinkResult::Script`, which this sink never returns.
    let _ = tok.feed(&input);
    tok.end();
    tok.sink.state.into_inner().out
}

/// What the sink is inside of while it collects text.
#[derive(Debug, Default, PartialEq, Eq)]
enum Capture {
    #[default]
    None,
    JsonLd,
    /// Link or byline text; the element's tag, to end at its end tag.
    Author(String),
}

#[derive(Default)]
struct State {
    out: HtmlMeta,
    capture: Capture,
    text: String,
    /// The capture went over its byte limit (a JSON-LD block is then dropped).
    overflow: bool,
}

#[derive(Default)]
struct Sink {
    state: RefCell<State>,
}

fn attr<'a>(tag: &'a Tag, name: &str) -> Option<&'a str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn has_word(value: Option<&str>, word: &str) -> bool {
    value.is_some_and(|v| {
        v.split_ascii_whitespace()
            .any(|w| w.eq_ignore_ascii_case(word))
    })
}

fn bounded(s: &str) -> String {
    let s = s.trim();
    let mut end = s.len().min(MAX_VALUE);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

impl State {
    fn start(&mut self, tag: &Tag) {
        let out = &mut self.out;
        match &*tag.name {
            "html" if out.lang.is_none() => out.lang = attr(tag, "lang").map(bounded),
            "link" if out.canonical.is_none() && has_word(attr(tag, "rel"), "canonical") => {
                out.canonical = attr(tag, "href").map(bounded);
            }
            "link"
                if out.feeds.len() < 4
                    && has_word(attr(tag, "rel"), "alternate")
                    && attr(tag, "type").is_some_and(|t| {
                        let t = t.trim().to_ascii_lowercase();
                        t == "application/rss+xml" || t == "application/atom+xml"
                    }) =>
            {
                if let Some(href) = attr(tag, "href") {
                    out.feeds.push(bounded(href));
                }
            }
            "meta" if out.metas.len() < MAX_METAS => {
                let key = attr(tag, "property")
                    .or_else(|| attr(tag, "name"))
                    .or_else(|| attr(tag, "itemprop"));
                if let (Some(key), Some(content)) = (key, attr(tag, "content")) {
                    out.metas
                        .push((bounded(key).to_ascii_lowercase(), bounded(content)));
                }
            }
            "script"
                if out.json_ld.len() < MAX_JSON_LD
                    && attr(tag, "type")
                        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json")) =>
            {
                self.begin(Capture::JsonLd);
            }
            "time" if out.times.len() < MAX_TIMES => {
                if let Some(dt) = attr(tag, "datetime") {
                    out.times.push(TimeTag {
                        datetime: bounded(dt),
                        published: attr(tag, "pubdate").is_some()
                            || has_word(attr(tag, "itemprop"), "datePublished"),
                    });
                }
            }
            _ => {}
        }
        let byline = (&*tag.name == "a" && has_word(attr(tag, "rel"), "author"))
            || (has_word(attr(tag, "itemprop"), "author") && attr(tag, "content").is_none());
        if byline && self.capture == Capture::None && self.out.author_links.len() < 4 {
            self.begin(Capture::Author(tag.name.to_string()));
        }
    }

    fn begin(&mut self, capture: Capture) {
        self.capture = capture;
        self.text.clear();
        self.overflow = false;
    }

    fn end(&mut self, name: &str) {
        let done = match &self.capture {
            Capture::JsonLd => name == "script",
            Capture::Author(tag) => tag == name,
            Capture::None => false,
        };
        if !done {
            return;
        }
        let text = std::mem::take(&mut self.text);
        match std::mem::take(&mut self.capture) {
            Capture::JsonLd if !self.overflow => self.out.json_ld.push(text),
            Capture::Author(_) => {
                let t = bounded(&crate::dom::parse::normalise_space(&text));
                if !t.is_empty() {
                    self.out.author_links.push(t);
                }
            }
            _ => {}
        }
    }

    fn chars(&mut self, s: &str) {
        let limit = match self.capture {
            Capture::None => return,
            Capture::JsonLd => MAX_JSON_LD_BYTES,
            Capture::Author(_) => MAX_VALUE,
        };
        if self.text.len() + s.len() > limit {
            self.overflow = true;
            return;
        }
        self.text.push_str(s);
    }
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut st = self.state.borrow_mut();
        match token {
            Token::TagToken(tag) => match tag.kind {
                TagKind::StartTag => {
                    st.start(&tag);
                    // The tokenizer alone does not know which elements hold raw text (the tree
                    // builder tells it): without this, `<script>` bodies would be read as markup.
                    if !tag.self_closing {
                        return match &*tag.name {
                            "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                                TokenSinkResult::RawData(RawKind::Rawtext)
                            }
                            "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
                            "plaintext" => TokenSinkResult::Plaintext,
                            _ => TokenSinkResult::Continue,
                        };
                    }
                }
                TagKind::EndTag => st.end(&tag.name),
            },
            Token::CharacterTokens(s) => st.chars(&s),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_lang_canonical_metas_json_ld_times_and_bylines() {
        let m = scan(
            r#"<!doctype html><html lang="de-AT"><head>
            <link rel="alternate" href="/feed"><link rel="Canonical" href="/a?x=1">
            <meta property="og:url" content="https://e.example/a">
            <meta name="Author" content=" Ann Lee ">
            <meta itemprop="datePublished" content="2024-03-01">
            <script>var s = "<time datetime='1999-01-01'>";</script>
            <script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2024-03-02"}</script>
            <style>a{}</style></head><body>
            <p>By <a rel="author" href="/u/ann">Ann  <b>Lee</b></a>
            <span itemprop="author">Bo Ek</span>
            <time datetime="2024-03-03T10:00Z">March 3</time>
            <time pubdate datetime="2024-03-04">March 4</time></p></body></html>"#,
        );
        assert_eq!(m.lang.as_deref(), Some("de-AT"));
        assert_eq!(m.canonical.as_deref(), Some("/a?x=1"));
        assert_eq!(m.meta(&["og:url"]), Some("https://e.example/a"));
        assert_eq!(m.meta(&["author"]), Some("Ann Lee"));
        assert_eq!(m.meta(&["nope", "datepublished"]), Some("2024-03-01"));
        assert_eq!(m.json_ld.len(), 1);
        assert!(m.json_ld[0].contains("NewsArticle"));
        // The time inside the script string is not markup.
        assert_eq!(
            m.times,
            vec![
                TimeTag {
                    datetime: "2024-03-03T10:00Z".into(),
                    published: false
                },
                TimeTag {
                    datetime: "2024-03-04".into(),
                    published: true
                }
            ]
        );
        assert_eq!(m.author_links, vec!["Ann Lee", "Bo Ek"]);
    }

    #[test]
    fn an_oversized_json_ld_block_is_dropped_not_cut() {
        let big = format!(
            r#"<script type="application/ld+json">{{"a":"{}"}}</script><script type="application/ld+json">{{}}</script>"#,
            "x".repeat(MAX_JSON_LD_BYTES)
        );
        assert_eq!(scan(&big).json_ld, vec!["{}".to_string()]);
    }

    #[test]
    fn meta_pairs_are_capped() {
        let html: String = (0..MAX_METAS + 50)
            .map(|i| format!("<meta name=k{i} content=v>"))
            .collect();
        assert_eq!(scan(&html).metas.len(), MAX_METAS);
    }
}
