//! Bytes → text (docs/design.md, "Fetching and decoding"): BOM, then valid UTF-8 wins over any
//! declaration (real sites declare gb2312 and send UTF-8), then the Content-Type charset, then
//! `<meta charset>` / `http-equiv` in the first bytes, then chardetng's guess. Never fails: bad
//! bytes become U+FFFD.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};

/// How far into the document `<meta charset>` is looked for (HTML's prescan uses 1024; real
/// pages put it later behind long comments, so look a little further).
const PRESCAN_BYTES: usize = 4096;

/// Where the chosen encoding came from (kept for logs and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Bom,
    ValidUtf8,
    Header,
    Meta,
    Guess,
}

#[derive(Debug)]
pub struct Decoded<'a> {
    /// Borrows the input when it is already valid UTF-8 (the common case: no copy).
    pub text: Cow<'a, str>,
    pub encoding: &'static Encoding,
    pub source: Source,
    /// Some bytes were not valid in the chosen encoding and were replaced.
    pub had_errors: bool,
}

/// Decode an HTML body. `content_type` is the HTTP header value, if any.
pub fn decode_html<'a>(bytes: &'a [u8], content_type: Option<&str>) -> Decoded<'a> {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        return finish(&bytes[bom_len..], enc, Source::Bom);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Decoded {
            text: Cow::Borrowed(text),
            encoding: UTF_8,
            source: Source::ValidUtf8,
            had_errors: false,
        };
    }
    if let Some(enc) = content_type.and_then(charset_from_content_type) {
        return finish(bytes, enc, Source::Header);
    }
    if let Some(enc) = meta_charset(&bytes[..bytes.len().min(PRESCAN_BYTES)]) {
        return finish(bytes, enc, Source::Meta);
    }
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(bytes, true);
    finish(
        bytes,
        det.guess(None, chardetng::Utf8Detection::Allow),
        Source::Guess,
    )
}

fn finish<'a>(bytes: &'a [u8], enc: &'static Encoding, source: Source) -> Decoded<'a> {
    // A declared UTF-16 on a document without a BOM is treated as UTF-8, as browsers do.
    let enc = enc.output_encoding();
    let (text, had_errors) = enc.decode_without_bom_handling(bytes);
    Decoded {
        text,
        encoding: enc,
        source,
        had_errors,
    }
}

/// `text/html; charset="gbk"` → GBK.
pub fn charset_from_content_type(value: &str) -> Option<&'static Encoding> {
    value.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        Encoding::for_label(v.trim().trim_matches(|c| c == '"' || c == '\'').as_bytes())
    })
}

/// `<meta charset=…>` or `<meta http-equiv=content-type content="…; charset=…">` in `head`.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"<meta") {
        let start = from + pos;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(at) = find(tag, b"charset") {
            let rest = &tag[at + b"charset".len()..];
            let rest = trim_start(rest);
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = trim_start(rest);
                let rest = rest
                    .strip_prefix(b"\"")
                    .or_else(|| rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let label_end = rest
                    .iter()
                    .position(|&b| matches!(b, b'"' | b'\'' | b';' | b' ' | b'/' | b'>'))
                    .unwrap_or(rest.len());
                if let Some(enc) = Encoding::for_label(&rest[..label_end]) {
                    return Some(enc);
                }
            }
        }
        from = end;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &s[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_utf8_beats_a_lying_meta_charset() {
        let html = "<meta charset=gb2312><p>中文</p>".as_bytes();
        let d = decode_html(html, Some("text/html; charset=gb2312"));
        assert_eq!(d.source, Source::ValidUtf8);
        assert!(d.text.contains("中文"));
    }

    #[test]
    fn header_charset_decodes_gbk() {
        let (bytes, _, _) = encoding_rs::GBK.encode("<p>中文</p>");
        let d = decode_html(&bytes, Some("text/html; charset=\"GBK\""));
        assert_eq!(d.source, Source::Header);
        assert_eq!(d.text, "<p>中文</p>");
    }

    #[test]
    fn meta_charset_and_http_equiv() {
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode("<meta charset='windows-1252'>café");
        let d = decode_html(&bytes, None);
        assert_eq!((d.source, d.text.ends_with("café")), (Source::Meta, true));
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(
            r#"<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">日本"#,
        );
        let d = decode_html(&bytes, None);
        assert_eq!(d.encoding, encoding_rs::SHIFT_JIS);
        assert!(d.text.ends_with("日本"));
    }

    #[test]
    fn bom_wins() {
        let mut bytes = vec![0xEF, 0xBB, 0xBF];
        bytes.extend_from_slice("ü".as_bytes());
        let d = decode_html(&bytes, Some("text/html; charset=iso-8859-1"));
        assert_eq!((d.source, &*d.text), (Source::Bom, "ü"));
    }

    #[test]
    fn garbage_bytes_never_fail() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
        let d = decode_html(&bytes, Some("text/html; charset=nonsense"));
        assert!(!d.text.is_empty());
    }
}
