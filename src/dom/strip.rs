//! What html5ever need not read, cut from a page's HTML before it does: the bodies of script
//! and style elements (but JSON-LD and TeX scripts, which the parse reads) and the attributes
//! nothing reads (`READ` lists those kept). On today's pages scripts and styles are about two
//! fifths of the bytes (WCXB dev: 29 % script, 12 % style) and attributes most of the rest,
//! which html5ever would otherwise tokenise and copy character by character.
//!
//! The scan follows the HTML tokenizer's states far enough to find only the elements html5ever
//! sees: comments, start and end tags with quoted attribute values, and the raw-text elements
//! (`textarea`, `title`, `xmp`, `iframe`, `noembed`, `noframes`, `plaintext`) whose text holds
//! no tags. Where it cannot be sure where html5ever ends an element (a body holding `<!` — a
//! script's escaped states, CDATA in SVG — or no end tag at all), it stops and leaves the rest
//! as it was: a body it cannot place is parsed, never cut. The parse of every page of the dev
//! sets and WCXB dev (4,223) gives the same DOM, links and page information with and without it.

use std::borrow::Cow;

/// `html` with the bodies of `<script>` (but `application/ld+json` and `math/tex`) and `<style>`
/// elements removed, their tags kept, and the attributes nothing reads removed.
pub fn strip_unread(html: &str) -> Cow<'_, str> {
    let bytes = html.as_bytes();
    // Spans of `html` to drop, in order.
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &bytes[i..]) {
        let lt = i + off;
        let rest = &bytes[lt + 1..];
        if rest.starts_with(b"!--") {
            match find_from(bytes, lt + 4, b"-->") {
                Some(end) => i = end + 3,
                None => break,
            }
        } else if rest.first() == Some(&b'/') && rest.get(1).is_some_and(u8::is_ascii_alphabetic) {
            // An end tag: its attributes (a parse error) are read as a start tag's.
            match start_tag(bytes, lt + 2, None) {
                Some(tag) => i = tag.end,
                None => break,
            }
        } else if matches!(rest.first(), Some(b'!' | b'?' | b'/')) {
            // A doctype or bogus comment: to its `>`.
            match memchr::memchr(b'>', rest) {
                Some(p) => i = lt + 1 + p + 1,
                None => break,
            }
        } else if rest.first().is_some_and(u8::is_ascii_alphabetic) {
            let mark = cuts.len();
            let Some(tag) = start_tag(bytes, lt + 1, Some(&mut cuts)) else {
                cuts.truncate(mark);
                break;
            };
            i = tag.end;
            let skip_only = match tag.name {
                Name::Script => tag.data_type,
                Name::Style => false,
                Name::RawText(_) => true,
                Name::Plaintext => break,
                Name::Other => continue,
            };
            let close = tag.name.close();
            let Some(end) = end_tag(bytes, i, close) else {
                break;
            };
            if !skip_only && end > i {
                if memchr::memmem::find(&bytes[i..end], b"<!").is_some() {
                    break;
                }
                cuts.push((i, end));
            }
            i = end + close.len();
        } else {
            i = lt + 1;
        }
    }
    if cuts.is_empty() {
        return Cow::Borrowed(html);
    }
    let cut: usize = cuts.iter().map(|(a, b)| b - a).sum();
    let mut out = String::with_capacity(html.len() - cut);
    let mut at = 0;
    for (a, b) in cuts {
        out.push_str(&html[at..a]);
        at = b;
    }
    out.push_str(&html[at..]);
    Cow::Owned(out)
}

/// The elements the scan tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Script,
    Style,
    /// A raw-text or RCDATA element (by its end tag's text): its body holds no tags.
    RawText(&'static [u8]),
    Plaintext,
    Other,
}

impl Name {
    fn of(name: &[u8]) -> Name {
        let mut lower = [0u8; 10];
        if name.len() > lower.len() {
            return Name::Other;
        }
        let lower = &mut lower[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        match &*lower {
            b"script" => Name::Script,
            b"style" => Name::Style,
            b"textarea" => Name::RawText(b"</textarea"),
            b"title" => Name::RawText(b"</title"),
            b"xmp" => Name::RawText(b"</xmp"),
            b"iframe" => Name::RawText(b"</iframe"),
            b"noembed" => Name::RawText(b"</noembed"),
            b"noframes" => Name::RawText(b"</noframes"),
            b"plaintext" => Name::Plaintext,
            _ => Name::Other,
        }
    }

    /// The end tag's opening (`</script`), for the elements with a body to find.
    fn close(self) -> &'static [u8] {
        match self {
            Name::Script => b"</script",
            Name::Style => b"</style",
            Name::RawText(close) => close,
            Name::Plaintext | Name::Other => b"",
        }
    }
}

/// A start tag read from its name to its closing `>`.
struct StartTag {
    name: Name,
    /// A script whose `type` says it holds data the parse reads (JSON-LD, TeX).
    data_type: bool,
    /// Just past the `>`.
    end: usize,
}

/// The start tag whose name begins at `at` (just past `<`), read as the tokenizer does: the name
/// runs to whitespace, `/` or `>`; an attribute's value is quoted only when its first character
/// after `=` is a quote. `None` when the document ends inside the tag. With `cuts`, the spans
/// of the attributes nothing reads (`READ`) are added to it.
fn start_tag(
    bytes: &[u8],
    at: usize,
    mut cuts: Option<&mut Vec<(usize, usize)>>,
) -> Option<StartTag> {
    let name_len = bytes[at..]
        .iter()
        .take_while(|&&b| !b.is_ascii_whitespace() && b != b'/' && b != b'>')
        .count();
    let name = Name::of(&bytes[at..at + name_len]);
    let mut data_type = false;
    let mut typed = false;
    let mut i = at + name_len;
    loop {
        while bytes
            .get(i)
            .is_some_and(|&b| b.is_ascii_whitespace() || b == b'/')
        {
            i += 1;
        }
        match *bytes.get(i)? {
            b'>' => {
                return Some(StartTag {
                    name,
                    data_type,
                    end: i + 1,
                })
            }
            _ => {
                // An attribute name runs to whitespace, `/`, `>` or an `=` after its first
                // character.
                let start = i;
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|&b| !b.is_ascii_whitespace() && !matches!(b, b'/' | b'>' | b'='))
                {
                    i += 1;
                }
                let attr = &bytes[start..i];
                let name_end = i;
                while bytes.get(i).is_some_and(|&b| b.is_ascii_whitespace()) {
                    i += 1;
                }
                if bytes.get(i) != Some(&b'=') {
                    if let Some(cuts) = cuts.as_deref_mut() {
                        if !is_read(attr) {
                            cuts.push((start, name_end));
                        }
                    }
                    continue;
                }
                i += 1;
                while bytes.get(i).is_some_and(|&b| b.is_ascii_whitespace()) {
                    i += 1;
                }
                let value = match *bytes.get(i)? {
                    q @ (b'"' | b'\'') => {
                        let close = memchr::memchr(q, &bytes[i + 1..])? + i + 1;
                        let value = &bytes[i + 1..close];
                        i = close + 1;
                        value
                    }
                    _ => {
                        let start = i;
                        while bytes
                            .get(i)
                            .is_some_and(|&b| !b.is_ascii_whitespace() && b != b'>')
                        {
                            i += 1;
                        }
                        &bytes[start..i]
                    }
                };
                // A repeated attribute is dropped: the first `type` is the script's.
                if name == Name::Script && !typed && attr.eq_ignore_ascii_case(b"type") {
                    data_type = holds_data(value);
                    typed = true;
                }
                if let Some(cuts) = cuts.as_deref_mut() {
                    if !is_read(attr) {
                        cuts.push((start, i));
                    }
                }
            }
        }
    }
}

/// The attributes the parse reads (`parse::push_element`, `is_hidden`, `read_script`,
/// `push_math`, links and `<meta>`), and those html5ever's tree builder reads (`type` of an
/// input in a table, `color`/`face`/`size` of a `<font>` in SVG, `encoding` of an
/// `annotation-xml`, `shadowrootmode` of a template). Every other attribute (`d` of an SVG
/// path, `data-*`, `srcset`, `on*`: about half of a page's bytes once scripts and styles are
/// gone) is cut before the parse.
const READ: &[&[u8]] = &[
    b"id",
    b"class",
    b"role",
    b"style",
    b"hidden",
    b"aria-hidden",
    b"type",
    b"href",
    b"rel",
    b"src",
    b"data-src",
    b"data-lazy-src",
    b"alt",
    b"itemprop",
    b"itemtype",
    b"property",
    b"content",
    b"name",
    b"display",
    b"alttext",
    b"encoding",
    b"color",
    b"face",
    b"size",
    b"shadowrootmode",
];

fn is_read(attr: &[u8]) -> bool {
    READ.iter().any(|r| r.eq_ignore_ascii_case(attr))
}

/// Whether a script of this `type` holds what the parse reads (`script_is_read`), or may:
/// a value with a character reference (`ld&#x2B;json`) is not decoded here, so it is kept.
fn holds_data(kind: &[u8]) -> bool {
    kind.contains(&b'&')
        || std::str::from_utf8(kind)
            .map_or(true, |k| script_is_read(&k.trim().to_ascii_lowercase()))
}

/// Where the end tag `close` (`</script`, any case, then whitespace, `/` or `>`) first starts
/// at or after `from`.
fn end_tag(bytes: &[u8], from: usize, close: &[u8]) -> Option<usize> {
    let mut at = from;
    loop {
        let start = at + memchr::memmem::find(&bytes[at..], b"</")?;
        let after = start + close.len();
        if bytes
            .get(start + 2..after)
            .is_some_and(|n| n.eq_ignore_ascii_case(&close[2..]))
            && bytes
                .get(after)
                .is_some_and(|&b| b.is_ascii_whitespace() || b == b'/' || b == b'>')
        {
            return Some(start);
        }
        at = start + 2;
    }
}

/// The script types the parse reads (`parse::read_script`): TeX (a prefix:
/// `math/tex; mode=display`) and JSON-LD.
pub(super) const TEX_SCRIPT: &str = "math/tex";
pub(super) const JSON_LD_SCRIPT: &str = "application/ld+json";

/// Whether a script of type `kind` (trimmed, lower case) holds what the parse reads.
pub(super) fn script_is_read(kind: &str) -> bool {
    kind.starts_with(TEX_SCRIPT) || kind == JSON_LD_SCRIPT
}

/// Where `needle` first starts at or after `from`.
pub(super) fn find_from(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay.get(from..)?, needle).map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_and_style_bodies_go_and_their_tags_stay() {
        let html = "<head><style>p{color:red}</style><script>if (a < b) x()</script></head>\
                    <body><p>Text</p><SCRIPT type=module>let y = '</scrip';</SCRIPT ><p>More</p>";
        assert_eq!(
            strip_unread(html),
            "<head><style></style><script></script></head>\
             <body><p>Text</p><SCRIPT type=module></SCRIPT ><p>More</p>"
        );
    }

    #[test]
    fn json_ld_and_tex_scripts_keep_their_bodies() {
        // regression: a type written with a character reference (`ld&#x2B;json`) lost the
        // page's JSON-LD types.
        let encoded = r#"<script type="application/ld&#x2B;json">{"@type":"Article"}</script>"#;
        assert_eq!(strip_unread(encoded), encoded);
        let html = r#"<script type=" application/LD+JSON ">{"@type":"Product"}</script><script type='math/tex; mode=display'>x^2</script><script type="text/javascript">go()</script>"#;
        assert_eq!(
            strip_unread(html),
            r#"<script type=" application/LD+JSON ">{"@type":"Product"}</script><script type='math/tex; mode=display'>x^2</script><script type="text/javascript"></script>"#
        );
    }

    #[test]
    fn what_is_not_a_tag_to_the_tokenizer_is_left_alone() {
        // In a comment, an attribute value, a textarea or a title, `<script>` is text.
        for html in [
            "<!-- <script>x</script> --><p>a</p>",
            "<p class='<script>x</script>'>a</p>",
            "<p class=\"a>b<script>x</script>\">a</p>",
            "</p title='<script>x</script>'><p>a</p>",
            "<textarea><script>x</script></textarea>",
            "<title>A <style>b</style></title>",
            "<plaintext><script>x</script>",
            "<p>a < b <script", // the document ends inside the tag
            "<script>never closed",
        ] {
            assert_eq!(strip_unread(html), html, "{html}");
        }
    }

    #[test]
    fn a_body_it_cannot_place_stops_the_scan() {
        // Script data's escaped states: the first `</script>` does not end this script.
        let html = "<script><!-- document.write('<script></script>') --></script><p>a</p>\
                    <script>later()</script>";
        assert_eq!(strip_unread(html), html);
        // What comes before it is still cut.
        let html = "<style>a{}</style><svg><style><![CDATA[b{}]]></style></svg>";
        assert_eq!(
            strip_unread(html),
            "<style></style><svg><style><![CDATA[b{}]]></style></svg>"
        );
    }

    #[test]
    fn attributes_nothing_reads_go_and_the_rest_stay() {
        let html = "<svg viewBox='0 0 1 1'><path d=\"M0 0L1 1\" fill='red'/></svg>\
                    <img src=a.png srcset='a.png 1x, b.png 2x' alt=\"An > image\" loading=lazy>\
                    <div CLASS=x data-track=1 hidden onclick=\"go('>')\">t</div>";
        assert_eq!(
            strip_unread(html),
            "<svg ><path  /></svg><img src=a.png  alt=\"An > image\" >\
             <div CLASS=x  hidden >t</div>"
        );
    }

    #[test]
    fn every_attribute_the_parse_reads_is_kept() {
        // A new `attr("…")` in the parse must be added to `READ`, or the strip would cut it.
        let source = include_str!("parse.rs");
        let mut read = 0;
        for pattern in ["attr(\"", "a.name.local == \""] {
            for (at, _) in source.match_indices(pattern) {
                let rest = &source[at + pattern.len()..];
                let name = &rest[..rest.find('"').expect("a closing quote")];
                assert!(
                    is_read(name.as_bytes()),
                    "parse reads {name:?}: add it to READ"
                );
                read += 1;
            }
        }
        assert!(
            read >= 20,
            "found {read} reads: has the parse's accessor changed name?"
        );
    }

    #[test]
    fn a_near_miss_end_tag_does_not_end_the_body() {
        let html = "<script>a = '</scripts>'; b = '</script'</script>";
        assert_eq!(strip_unread(html), "<script></script>");
    }

    #[test]
    fn multibyte_text_around_the_cuts_stays_whole() {
        let html = "<p>é</p><script>ü()</script><p>日本</p>";
        assert_eq!(strip_unread(html), "<p>é</p><script></script><p>日本</p>");
    }
}
