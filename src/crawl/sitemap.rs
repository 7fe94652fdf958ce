//! Sitemap parsing (sitemaps.org): XML `<urlset>` (page URLs, with their `<lastmod>`) and
//! `<sitemapindex>` (more sitemaps), plain-text sitemaps (one URL per line), and RSS / Atom
//! feeds read the same way (their items' links are the URLs; a recrawl revisits them first),
//! gzip'd or not. Pure and bounded: inflated
//! bytes and entries are capped, malformed input is an error value, never a panic. The caller
//! fetches, resolves each entry against the sitemap URL (`crawl::url::normalize`), scope-checks
//! it and queues it.

use std::borrow::Cow;
use std::io::Read;

use flate2::read::MultiGzDecoder;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;
use quick_xml::Reader;

/// The entries of one sitemap, as written in it (trimmed, not yet resolved or normalised).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sitemap {
    /// Page URLs (`<urlset><url><loc>`, or the lines of a text sitemap).
    pub urls: Vec<String>,
    /// Nested sitemaps to fetch (`<sitemapindex><sitemap><loc>`).
    pub sitemaps: Vec<String>,
    /// `<lastmod>` of entries of `urls`: (index in `urls`, the value as written).
    pub lastmod: Vec<(usize, String)>,
    /// The body was an RSS or Atom feed: `urls` are its items' links.
    pub feed: bool,
    /// The body was longer than `max_bytes`, or there were more than `max_entries` entries:
    /// the lists hold what came before the cut.
    pub truncated: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    #[error("bad gzip data: {0}")]
    Gzip(std::io::Error),
    #[error("malformed XML at byte {position}: {message}")]
    Xml { position: u64, message: String },
    #[error("XML root element <{0}> is none of <urlset>, <sitemapindex>, <rss>, <feed>")]
    UnknownRoot(String),
}

/// Parse a sitemap body.
///
/// Gzip is recognised by its magic bytes (`.xml.gz` files arrive compressed; a body the HTTP
/// layer already inflated does not start with them), and inflated to at most `max_bytes`.
/// A body starting with `<` (after a BOM and whitespace) is XML, anything else a text sitemap
/// whose lines that are http(s) URLs are kept. At most `max_entries` entries are kept
/// (`robots.max_sitemap_urls`). Input cut by `max_bytes` ends wherever it ends, so an XML error
/// after the cut is not reported: the entries before it are returned with `truncated`.
pub fn parse_sitemap(
    body: &[u8],
    max_bytes: usize,
    max_entries: usize,
) -> Result<Sitemap, SitemapError> {
    let (bytes, cut) = if body.starts_with(&[0x1f, 0x8b]) {
        let (out, cut) = inflate(body, max_bytes)?;
        (Cow::Owned(out), cut)
    } else {
        let cut = body.len() > max_bytes;
        (Cow::Borrowed(&body[..body.len().min(max_bytes)]), cut)
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    let mut sitemap = if text.starts_with('<') {
        parse_xml(text, max_entries, cut)?
    } else {
        parse_text(text, max_entries, cut)
    };
    sitemap.truncated |= cut;
    Ok(sitemap)
}

/// Inflate at most `max_bytes`; `true` when the output was cut.
fn inflate(body: &[u8], max_bytes: usize) -> Result<(Vec<u8>, bool), SitemapError> {
    let mut out = Vec::new();
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let cut = match MultiGzDecoder::new(body).take(limit).read_to_end(&mut out) {
        Ok(_) => out.len() > max_bytes,
        Err(e) if out.is_empty() => return Err(SitemapError::Gzip(e)),
        // A stream cut short (by the fetcher's body cap) still yields its prefix.
        Err(_) => true,
    };
    out.truncate(max_bytes);
    Ok((out, cut))
}

/// Which list a `<loc>` feeds, from the root element.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Urls,
    Sitemaps,
    /// RSS (`<rss>`, RSS 1.0's `<rdf:RDF>`) or Atom (`<feed>`).
    Feed,
}

/// What the text being read is.
#[derive(Clone, Copy, PartialEq)]
enum Capture {
    Loc,
    Lastmod,
    FeedLink,
}

fn parse_xml(text: &str, max_entries: usize, cut: bool) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_str(text);
    let mut sitemap = Sitemap::default();
    let mut kind = None;
    // Local names of the open elements; a `<loc>` counts only directly inside `<url>` (urlset)
    // or `<sitemap>` (index), not e.g. `<image:image><image:loc>`.
    let mut stack: Vec<String> = Vec::new();
    let mut loc: Option<String> = None;
    let mut capture = Capture::Loc;
    // The `<url>` being read: its `<loc>` (index in `urls`) and `<lastmod>`.
    let mut entry_loc: Option<usize> = None;
    let mut entry_lastmod: Option<String> = None;
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(_) if cut => break,
            Err(e) => {
                return Err(SitemapError::Xml {
                    position: reader.error_position(),
                    message: e.to_string(),
                })
            }
        };
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                let name = e.local_name().as_ref().to_ascii_lowercase();
                if kind.is_none() {
                    kind = Some(match name.as_str() {
                        "urlset" => Kind::Urls,
                        "sitemapindex" => Kind::Sitemaps,
                        "rss" | "feed" | "rdf" => {
                            sitemap.feed = true;
                            Kind::Feed
                        }
                        _ => return Err(SitemapError::UnknownRoot(name)),
                    });
                }
                let parent = stack.last().map(String::as_str);
                if kind == Some(Kind::Feed) {
                    if name == "link" && matches!(parent, Some("item" | "entry")) {
                        let attr = |n: &str| {
                            e.attributes()
                                .flatten()
                                .find(|a| a.key.local_name().as_ref() == n)
                                .map(|a| a.value.to_string())
                        };
                        match attr("href") {
                            // Atom: the entry's page is its `alternate` link (the default rel).
                            Some(href) if attr("rel").is_none_or(|r| r == "alternate") => {
                                push_entry(&mut sitemap.urls, &href, max_entries);
                            }
                            Some(_) => {}
                            None if !empty => {
                                loc = Some(String::new());
                                capture = Capture::FeedLink;
                            }
                            None => {}
                        }
                    }
                } else if stack.len() == 2 && matches!(parent, Some("url" | "sitemap")) {
                    if name == "loc" {
                        loc = Some(String::new());
                        capture = Capture::Loc;
                    } else if name == "lastmod" && parent == Some("url") {
                        loc = Some(String::new());
                        capture = Capture::Lastmod;
                    }
                }
                if empty {
                    if loc.is_some() {
                        loc = None;
                    }
                    continue;
                }
                stack.push(name);
            }
            Event::Text(t) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&t.xml10_content());
                }
            }
            Event::CData(t) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(loc) = &mut loc {
                    if let Ok(Some(c)) = r.resolve_char_ref() {
                        loc.push(c);
                    } else if let Some(s) = resolve_predefined_entity(&r.xml10_content()) {
                        loc.push_str(s);
                    }
                }
            }
            Event::End(_) => {
                let closed = stack.pop();
                let depth = stack.len();
                // The `</loc>` (`</lastmod>`, a feed's `</link>`) itself, not the end of an
                // element nested in it.
                let at_value = match capture {
                    Capture::Loc | Capture::Lastmod => depth == 2,
                    Capture::FeedLink => stack.last().is_some_and(|p| p == "item" || p == "entry"),
                };
                if at_value && loc.is_some() {
                    let value = loc.take().unwrap_or_default();
                    let value = value.trim();
                    match (capture, kind) {
                        (Capture::Lastmod, _) => entry_lastmod = Some(value.to_string()),
                        (_, Some(Kind::Sitemaps)) => {
                            if !push_entry(&mut sitemap.sitemaps, value, max_entries) {
                                sitemap.truncated = true;
                                return Ok(sitemap);
                            }
                        }
                        _ => {
                            let before = sitemap.urls.len();
                            if !push_entry(&mut sitemap.urls, value, max_entries) {
                                sitemap.truncated = true;
                                return Ok(sitemap);
                            }
                            if sitemap.urls.len() > before && capture == Capture::Loc {
                                entry_loc = Some(before);
                            }
                        }
                    }
                } else if depth == 1 && closed.as_deref() == Some("url") {
                    if let (Some(i), Some(m)) = (entry_loc.take(), entry_lastmod.take()) {
                        if !m.is_empty() {
                            sitemap.lastmod.push((i, m));
                        }
                    }
                    entry_loc = None;
                    entry_lastmod = None;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if kind.is_none() && !cut {
        return Err(SitemapError::Xml {
            position: reader.buffer_position(),
            message: "no root element".into(),
        });
    }
    if !stack.is_empty() && !cut {
        return Err(SitemapError::Xml {
            position: reader.buffer_position(),
            message: format!("unclosed <{}>", stack.join("><")),
        });
    }
    Ok(sitemap)
}

/// Add a non-empty entry to `list`; `false` when the list is full (`max_entries`).
fn push_entry(list: &mut Vec<String>, value: &str, max_entries: usize) -> bool {
    let value = value.trim();
    if value.is_empty() {
        return true;
    }
    if list.len() >= max_entries {
        return false;
    }
    list.push(value.to_string());
    true
}

/// A sitemap `<lastmod>` (W3C datetime: `2024-03-01`, `2024-03-01T09:30Z`,
/// `2024-03-01T09:30:00+01:00`) as Unix ms; `None` when it is not one.
pub fn lastmod_ms(value: &str) -> Option<u64> {
    let v = value.trim();
    let (date, time) = match v.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (v, None),
    };
    let mut parts = date.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next().map_or(Some(1), |m| m.parse().ok())?;
    let day: u32 = parts.next().map_or(Some(1), |d| d.parse().ok())?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    if let Some(t) = time {
        // The offset: `Z`, `+hh:mm` or `-hh:mm` after the clock.
        let (clock, offset) = match t.find(['Z', 'z', '+', '-']) {
            Some(i) => (&t[..i], &t[i..]),
            None => (t, ""),
        };
        let mut hms = clock.split(':');
        let h: i64 = hms.next()?.parse().ok()?;
        let m: i64 = hms.next().map_or(Some(0), |m| m.parse().ok())?;
        let s: f64 = hms.next().map_or(Some(0.0), |s| s.parse().ok())?;
        secs += h * 3600 + m * 60 + s as i64;
        if let Some(rest) = offset.strip_prefix(['+', '-']) {
            let (oh, om) = rest.split_once(':').unwrap_or((rest, "0"));
            let off = oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60;
            secs += if offset.starts_with('+') { -off } else { off };
        }
    }
    u64::try_from(secs).ok().map(|s| s * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_text(text: &str, max_entries: usize, cut: bool) -> Sitemap {
    let mut sitemap = Sitemap::default();
    let mut lines: Vec<&str> = text.lines().collect();
    if cut {
        lines.pop(); // possibly half a URL
    }
    for line in lines {
        let line = line.trim();
        let is_url = url::Url::parse(line).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
        if !is_url {
            continue;
        }
        if sitemap.urls.len() >= max_entries {
            sitemap.truncated = true;
            break;
        }
        sitemap.urls.push(line.to_string());
    }
    sitemap
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;

    const MB: usize = 1 << 20;

    #[test]
    fn lastmod_is_kept_with_its_url() {
        let xml = "<urlset><url><lastmod>2024-03-01</lastmod><loc>https://a/x</loc></url>\
                   <url><loc>https://a/y</loc></url>\
                   <url><loc>https://a/z</loc><lastmod>2024-03-01T10:00:00+01:00</lastmod></url>\
                   </urlset>";
        let s = parse_sitemap(xml.as_bytes(), MB, 100).unwrap();
        assert_eq!(s.urls, vec!["https://a/x", "https://a/y", "https://a/z"]);
        assert_eq!(
            s.lastmod,
            vec![
                (0, "2024-03-01".to_string()),
                (2, "2024-03-01T10:00:00+01:00".to_string())
            ]
        );
        assert!(!s.feed);
        assert_eq!(lastmod_ms("2024-03-01"), Some(1_709_251_200_000));
        assert_eq!(
            lastmod_ms("2024-03-01T10:00:00+01:00"),
            Some(1_709_251_200_000 + 9 * 3_600_000)
        );
        assert_eq!(
            lastmod_ms("2024-03-01T09:00Z"),
            lastmod_ms("2024-03-01T10:00:00+01:00")
        );
        assert_eq!(lastmod_ms("yesterday"), None);
    }

    #[test]
    fn rss_and_atom_feeds_give_their_items_links() {
        let rss = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><link>https://a/</link>\
                   <item><title>T</title><link>https://a/one</link></item>\
                   <item><link> https://a/two </link></item></channel></rss>";
        let s = parse_sitemap(rss.as_bytes(), MB, 100).unwrap();
        assert!(s.feed);
        assert_eq!(s.urls, vec!["https://a/one", "https://a/two"]);
        let atom = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><link href=\"https://a/\"/>\
                    <entry><link rel=\"edit\" href=\"https://a/e\"/><link href=\"https://a/three\"/></entry>\
                    <entry><link rel=\"alternate\" href=\"https://a/four\"></link></entry></feed>";
        let s = parse_sitemap(atom.as_bytes(), MB, 100).unwrap();
        assert!(s.feed);
        assert_eq!(s.urls, vec!["https://a/three", "https://a/four"]);
    }

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc> https://example.com/a?x=1&amp;y=2 </loc>
    <lastmod>2024-01-01</lastmod>
    <image:image><image:loc>https://example.com/img.png</image:loc></image:image>
  </url>
  <url><loc><![CDATA[https://example.com/b]]></loc></url>
  <url><loc>https://example.com/&#99;</loc></url>
  <url><loc></loc></url>
</urlset>"#;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn urlset_locs_with_entities_and_cdata_but_not_image_locs() {
        let s = parse_sitemap(URLSET.as_bytes(), MB, 100).unwrap();
        assert_eq!(
            s.urls,
            [
                "https://example.com/a?x=1&y=2",
                "https://example.com/b",
                "https://example.com/c"
            ]
        );
        assert!(s.sitemaps.is_empty());
        assert!(!s.truncated);
    }

    #[test]
    fn sitemap_index_lists_nested_sitemaps() {
        let xml = "\u{feff}<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                   <sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>x</lastmod></sitemap>\
                   <sitemap><loc>https://example.com/s2.xml</loc></sitemap></sitemapindex>";
        let s = parse_sitemap(xml.as_bytes(), MB, 100).unwrap();
        assert_eq!(
            s.sitemaps,
            [
                "https://example.com/s1.xml.gz",
                "https://example.com/s2.xml"
            ]
        );
        assert!(s.urls.is_empty());
    }

    #[test]
    fn prefixed_namespace_elements() {
        let xml = "<sm:urlset xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                   <sm:url><sm:loc>https://example.com/p</sm:loc></sm:url></sm:urlset>";
        let s = parse_sitemap(xml.as_bytes(), MB, 100).unwrap();
        assert_eq!(s.urls, ["https://example.com/p"]);
    }

    #[test]
    fn text_sitemap_keeps_http_lines() {
        let text = "https://example.com/1\r\n\n  http://example.com/2  \nnot a url\nftp://x/y\n";
        let s = parse_sitemap(text.as_bytes(), MB, 100).unwrap();
        assert_eq!(s.urls, ["https://example.com/1", "http://example.com/2"]);
    }

    #[test]
    fn gzip_bodies_are_inflated() {
        let s = parse_sitemap(&gzip(URLSET.as_bytes()), MB, 100).unwrap();
        assert_eq!(s.urls.len(), 3);
        let s = parse_sitemap(&gzip(b"https://example.com/t\n"), MB, 100).unwrap();
        assert_eq!(s.urls, ["https://example.com/t"]);
    }

    #[test]
    fn gzip_bomb_is_cut_at_max_bytes() {
        // 64 MiB of text sitemap compresses to ~64 KiB; only the first KiB is inflated.
        let line = "https://example.com/page-with-a-long-name\n";
        let big = line.repeat((64 * MB) / line.len());
        let gz = gzip(big.as_bytes());
        assert!(gz.len() < MB);
        let s = parse_sitemap(&gz, 1024, usize::MAX).unwrap();
        assert!(s.truncated);
        assert_eq!(s.urls.len(), 1024 / line.len());
        assert!(s.urls.iter().all(|u| u == line.trim()));
    }

    #[test]
    fn cut_gzip_stream_yields_its_prefix_and_garbage_is_an_error() {
        let gz = gzip(URLSET.as_bytes());
        let s = parse_sitemap(&gz[..gz.len() * 3 / 4], MB, 100).unwrap();
        assert!(s.truncated);
        assert!(s.urls.len() < 3);
        assert!(matches!(
            parse_sitemap(&[0x1f, 0x8b, 0, 0, 1, 2, 3], MB, 100),
            Err(SitemapError::Gzip(_))
        ));
    }

    #[test]
    fn entry_cap_truncates() {
        let s = parse_sitemap(URLSET.as_bytes(), MB, 2).unwrap();
        assert_eq!(s.urls.len(), 2);
        assert!(s.truncated);
        let s = parse_sitemap(b"https://e.com/1\nhttps://e.com/2\n", MB, 1).unwrap();
        assert_eq!(s.urls, ["https://e.com/1"]);
        assert!(s.truncated);
    }

    #[test]
    fn body_cut_at_max_bytes_keeps_entries_before_the_cut() {
        let at = URLSET.find("<url><loc><![CDATA").unwrap() + 12;
        let s = parse_sitemap(URLSET.as_bytes(), at, 100).unwrap();
        assert!(s.truncated);
        assert_eq!(s.urls, ["https://example.com/a?x=1&y=2"]);
        // Text: the last, possibly partial, line is dropped.
        let s = parse_sitemap(b"https://e.com/1\nhttps://e.com/22", 30, 100).unwrap();
        assert_eq!(s.urls, ["https://e.com/1"]);
    }

    #[test]
    fn malformed_xml_is_an_error_not_a_panic() {
        for bad in [
            "<urlset><url><loc>https://e.com/</lo></url></urlset>",
            "<urlset><url><loc>https://e.com/</loc></url>",
            "<urlset><url><loc>https://e.com/</loc></url></urlset></extra>",
            "<urlset attr=\"unterminated><url/></urlset>",
            "<",
            "<!-- only a comment -->",
        ] {
            assert!(
                matches!(
                    parse_sitemap(bad.as_bytes(), MB, 100),
                    Err(SitemapError::Xml { .. })
                ),
                "{bad}: {:?}",
                parse_sitemap(bad.as_bytes(), MB, 100)
            );
        }
        assert!(matches!(
            parse_sitemap(b"<html><body>hi</body></html>", MB, 100),
            Err(SitemapError::UnknownRoot(root)) if root == "html"
        ));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut state: u64 = 7;
        let pieces: &[&[u8]] = &[
            b"<",
            b">",
            b"</",
            b"/>",
            b"urlset",
            b"url",
            b"loc",
            b"sitemap",
            b"&amp;",
            b"&#",
            b"&x;",
            b"<![CDATA[",
            b"]]>",
            b"\"",
            b"=",
            b" ",
            b"\n",
            b"https://e.com/",
            b"\xff",
            b"\x1f\x8b",
            b"<?xml",
            b"?>",
            b"<!--",
            b"-->",
            b"<!DOCTYPE",
        ];
        for _ in 0..3000 {
            let mut body = Vec::new();
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            for _ in 0..(state >> 59) + 1 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                body.extend_from_slice(pieces[(state >> 33) as usize % pieces.len()]);
            }
            let _ = parse_sitemap(&body, 64, 4);
        }
    }
}
