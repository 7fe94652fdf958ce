//! URL normalisation and the keys derived from a URL: the politeness key (`origin_key`), the
//! template key (`site_key`) and the stable page id (`page_id`). Pure functions; every URL that
//! enters the frontier or the seen set has gone through [`normalize`], so equal resources compare
//! equal as strings and `normalize` is idempotent.

use url::Url;
use xxhash_rust::xxh3::xxh3_64;

/// URLs longer than this (after normalisation) are dropped: real pages rarely need more, while
/// crawler traps (session ids appended forever, calendars) produce ever longer URLs.
pub const MAX_URL_LEN: usize = 4096;

/// Resolve `href` against `base` and normalise the result; `None` when it is not a crawlable
/// http(s) URL.
///
/// `base` is the page URL, or the page's `<base href>` already resolved against it.
///
/// Rules, in order (the `url` crate's WHATWG parser does the first group):
/// - leading/trailing whitespace and control characters are stripped (also Unicode whitespace
///   such as NBSP, which the WHATWG parser keeps); tabs and newlines inside are removed;
/// - scheme and host lower-cased, IDNA host to punycode, default ports dropped, dot segments
///   (`.`, `..`, `%2e`) removed, an empty path becomes `/`;
/// - only `http` and `https` are kept (`mailto:`, `javascript:`, `data:`, `tel:`… → `None`);
/// - the fragment is dropped, and so are credentials (`user:pass@`);
/// - percent-encoding in path and query is normalised: hex digits upper-cased, octets of
///   unreserved characters (`A-Z a-z 0-9 - . _ ~`) decoded (`%41` → `A`, `%7E` → `~`); reserved
///   ones (`%2F`, `%3F`, `%26`…) stay encoded because decoding them changes the meaning; a `%`
///   not followed by two hex digits becomes `%25` (otherwise decoding could make a new escape and
///   break idempotence);
/// - an empty query (`/a?`) is dropped;
/// - the query keeps its parameter order: sorting would merge URLs that servers may treat
///   differently (order-sensitive parameters, repeated keys), and the page's own links almost
///   always use one order, so sorting would buy little dedup for a real risk of wrong pages.
pub fn normalize(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim_matches(|c: char| c.is_whitespace() || c.is_control());
    normalize_url(base.join(href).ok()?)
}

/// Normalise an absolute URL (the rules of [`normalize`] after resolution).
pub fn normalize_url(mut url: Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return None;
    }
    url.set_fragment(None);
    // Credentials (`user:pass@`, from a link or a redirect) are never kept: they would travel
    // into later URLs, the store, index.tsv and the export.
    if !url.username().is_empty() || url.password().is_some() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    if let Some(path) = normalize_percent(url.path()) {
        url.set_path(&path);
    }
    match url.query() {
        Some("") => url.set_query(None),
        Some(q) => {
            if let Some(q) = normalize_percent(q) {
                url.set_query(Some(&q));
            }
        }
        None => {}
    }
    (url.as_str().len() <= MAX_URL_LEN).then_some(url)
}

/// A stored URL without credentials, for what thresher writes out (index.tsv, export): URLs
/// are normalised without them, but a store written by an older thresher may hold some.
pub fn without_credentials(url: &str) -> std::borrow::Cow<'_, str> {
    if !url.contains('@') {
        return std::borrow::Cow::Borrowed(url);
    }
    match Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            std::borrow::Cow::Owned(u.into())
        }
        _ => std::borrow::Cow::Borrowed(url),
    }
}

/// The politeness key: scheme, host and port, as RFC 6454 serialises an origin
/// (`https://example.com`, `http://127.0.0.1:8080`). robots.txt, Crawl-delay, rate limits and
/// backoff are all per origin (RFC 9309 §2.3).
pub fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The site key: the host, plus `:port` when the port is not the scheme's default
/// (`example.com`, `127.0.0.1:8080`). Templates are learned per site; http and https of one host
/// are one site, while different ports (test servers on 127.0.0.1) are different sites.
pub fn site_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// Stable id of a page: xxh3-64 of its normalised URL string. Stable across runs and machines
/// (used in file names and store keys).
pub fn page_id(url: &Url) -> u64 {
    xxh3_64(url.as_str().as_bytes())
}

/// [`page_id`] as 16 lower-case hex digits.
pub fn page_id_hex(url: &Url) -> String {
    page_stem(page_id(url))
}

/// A page id as 16 hex digits: the stem of its cleaned-text file (`OUT/<site>/<stem>.txt`).
pub fn page_stem(id: u64) -> String {
    format!("{id:016x}")
}

/// Normalise percent-escapes (upper-case hex, decode unreserved, lone `%` → `%25`) in an
/// already-parsed path or query, or a robots.txt pattern; `None` when nothing changes.
pub(crate) fn normalize_percent(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let needs_work = b.iter().enumerate().any(|(i, &c)| {
        c == b'%'
            && match hex_pair(b, i) {
                Some(v) => is_unreserved(v) || b[i + 1..i + 3].iter().any(u8::is_ascii_lowercase),
                None => true,
            }
    });
    if !needs_work {
        return None;
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            match hex_pair(b, i) {
                Some(v) if is_unreserved(v) => out.push(char::from(v)),
                Some(v) => out.push_str(&format!("%{v:02X}")),
                None => {
                    out.push_str("%25");
                    i += 1;
                    continue;
                }
            }
            i += 3;
        } else {
            // Copy the run up to the next '%' (keeps multi-byte chars whole).
            let end = b[i..]
                .iter()
                .position(|&c| c == b'%')
                .map_or(b.len(), |p| i + p);
            out.push_str(&s[i..end]);
            i = end;
        }
    }
    Some(out)
}

/// The octet of the escape at `b[i] == '%'`, if two hex digits follow.
fn hex_pair(b: &[u8], i: usize) -> Option<u8> {
    let hi = char::from(*b.get(i + 1)?).to_digit(16)?;
    let lo = char::from(*b.get(i + 2)?).to_digit(16)?;
    u8::try_from(hi * 16 + lo).ok()
}

/// RFC 3986 §2.3 unreserved characters.
fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("https://example.com/dir/page.html").unwrap()
    }

    fn n(href: &str) -> Option<String> {
        normalize(&base(), href).map(|u| u.to_string())
    }

    #[test]
    fn resolves_relative_references() {
        assert_eq!(
            n("other.html").unwrap(),
            "https://example.com/dir/other.html"
        );
        assert_eq!(n("/top").unwrap(), "https://example.com/top");
        assert_eq!(
            n("//cdn.example.org/x").unwrap(),
            "https://cdn.example.org/x"
        );
        assert_eq!(n("?q=1").unwrap(), "https://example.com/dir/page.html?q=1");
        assert_eq!(n("").unwrap(), "https://example.com/dir/page.html");
    }

    #[test]
    fn only_http_and_https() {
        for href in [
            "mailto:a@example.com",
            "javascript:void(0)",
            "data:text/html,hi",
            "tel:+123",
            "ftp://example.com/f",
            "file:///etc/passwd",
        ] {
            assert_eq!(n(href), None, "{href}");
        }
        assert_eq!(n("HTTP://example.com/").unwrap(), "http://example.com/");
    }

    #[test]
    fn drops_fragment() {
        assert_eq!(n("a#top").unwrap(), "https://example.com/dir/a");
        assert_eq!(n("#only").unwrap(), "https://example.com/dir/page.html");
    }

    #[test]
    fn lowercases_scheme_and_host_and_applies_idna() {
        assert_eq!(
            n("HTTPS://WWW.Example.COM/Path").unwrap(),
            "https://www.example.com/Path"
        );
        assert_eq!(
            n("https://bücher.de/").unwrap(),
            "https://xn--bcher-kva.de/"
        );
    }

    #[test]
    fn drops_default_ports_only() {
        assert_eq!(n("http://example.com:80/").unwrap(), "http://example.com/");
        assert_eq!(
            n("https://example.com:443/").unwrap(),
            "https://example.com/"
        );
        assert_eq!(
            n("https://example.com:8443/").unwrap(),
            "https://example.com:8443/"
        );
        assert_eq!(
            n("http://example.com:443/").unwrap(),
            "http://example.com:443/"
        );
    }

    #[test]
    fn percent_encoding_uppercased_unreserved_decoded_reserved_kept() {
        assert_eq!(
            n("/%7euser/%41b%2fc").unwrap(),
            "https://example.com/~user/Ab%2Fc"
        );
        assert_eq!(
            n("/a?x=%2f%3d%26&y=%5F").unwrap(),
            "https://example.com/a?x=%2F%3D%26&y=_"
        );
        assert_eq!(n("/caf%c3%a9").unwrap(), "https://example.com/caf%C3%A9");
        // Non-ASCII is encoded by the parser, so equal to its escaped form.
        assert_eq!(n("/café"), n("/caf%C3%A9"));
        // A stray '%' is escaped, so a later pass cannot decode a new escape out of it.
        assert_eq!(n("/100%").unwrap(), "https://example.com/100%25");
        assert_eq!(n("/%%34%31").unwrap(), "https://example.com/%2541");
    }

    #[test]
    fn removes_dot_segments_and_empty_path_is_slash() {
        assert_eq!(n("../a/./b/../c").unwrap(), "https://example.com/a/c");
        assert_eq!(n("/a/%2e%2E/b").unwrap(), "https://example.com/b");
        assert_eq!(n("https://example.com").unwrap(), "https://example.com/");
        assert_eq!(
            n("https://example.com?q").unwrap(),
            "https://example.com/?q"
        );
    }

    #[test]
    fn empty_query_dropped_order_kept() {
        assert_eq!(n("/a?").unwrap(), "https://example.com/a");
        assert_eq!(n("/a?b=2&a=1").unwrap(), "https://example.com/a?b=2&a=1");
    }

    #[test]
    fn strips_whitespace_and_control_chars() {
        assert_eq!(n("  /a \n").unwrap(), "https://example.com/a");
        assert_eq!(n("\u{a0}/a\u{a0}").unwrap(), "https://example.com/a");
        assert_eq!(n("/a\tb\nc").unwrap(), "https://example.com/abc");
        assert_eq!(n("\u{0}/x\u{1f}").unwrap(), "https://example.com/x");
        assert_eq!(n(" mailto:x@y "), None);
    }

    #[test]
    fn credentials_are_dropped() {
        assert_eq!(
            n("http://user:secret@example.com/a").unwrap(),
            "http://example.com/a"
        );
        assert_eq!(
            n("https://user@example.com/").unwrap(),
            "https://example.com/"
        );
    }

    #[test]
    fn stored_urls_lose_their_credentials_on_the_way_out() {
        assert_eq!(
            without_credentials("http://u:p@a.example/x"),
            "http://a.example/x"
        );
        assert_eq!(
            without_credentials("http://a.example/x?m=a@b"),
            "http://a.example/x?m=a@b"
        );
    }

    #[test]
    fn overlong_urls_dropped() {
        let long = format!("/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(n(&long), None);
    }

    #[test]
    fn normalize_is_idempotent() {
        for href in [
            "/%7euser/%41b%2fc?x=%2f%3d&y=%5F#f",
            "/100%",
            "/%%34%31",
            "/%2541",
            "/a b/ü?q=ä ö&x=%zz",
            "HTTPS://WWW.Example.COM:443/./a/../b?",
            "https://bücher.de/%c3%bc",
            "/a/%2e%2E/b",
            "/a;p=1?%3f",
        ] {
            let once = normalize(&base(), href).unwrap();
            let twice = normalize(&once, once.as_str()).unwrap();
            assert_eq!(once, twice, "{href}");
            let again = normalize_url(once.clone()).unwrap();
            assert_eq!(once, again, "{href}");
        }
    }

    #[test]
    fn normalize_is_idempotent_on_generated_hrefs() {
        // Deterministic generator (no extra crates): hrefs built from the characters that
        // interact in normalisation.
        const PARTS: &[&str] = &[
            "%", "%2", "%2e", "%2E", "%41", "%7e", "%2f", "%3F", "%25", "a", "Z", "/", ".", "..",
            "?", "&", "=", "#", " ", "ü", "\t", "%c3%bc", "~", ";", ":", "@",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5000 {
            let mut href = String::from("/");
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            for _ in 0..(state >> 60) + 1 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                href.push_str(PARTS[(state >> 33) as usize % PARTS.len()]);
            }
            let Some(once) = normalize(&base(), &href) else {
                continue;
            };
            let twice = normalize(&once, once.as_str());
            assert_eq!(Some(&once), twice.as_ref(), "{href:?}");
        }
    }

    #[test]
    fn keys() {
        let u = Url::parse("https://Example.com:8443/a?b").unwrap();
        assert_eq!(origin_key(&u), "https://example.com:8443");
        assert_eq!(site_key(&u), "example.com:8443");
        let u = Url::parse("http://example.com:80/").unwrap();
        assert_eq!(origin_key(&u), "http://example.com");
        assert_eq!(site_key(&u), "example.com");
        let https = Url::parse("https://example.com/").unwrap();
        assert_ne!(origin_key(&u), origin_key(&https));
        assert_eq!(site_key(&u), site_key(&https));
        let local = Url::parse("http://127.0.0.1:40001/").unwrap();
        assert_eq!(site_key(&local), "127.0.0.1:40001");
    }

    #[test]
    fn page_id_is_stable_and_distinguishes_urls() {
        let a = Url::parse("https://example.com/a").unwrap();
        let b = Url::parse("https://example.com/b").unwrap();
        assert_eq!(page_id(&a), xxh3_64(b"https://example.com/a"));
        assert_ne!(page_id(&a), page_id(&b));
        let hex = page_id_hex(&a);
        assert_eq!(hex.len(), 16);
        assert_eq!(u64::from_str_radix(&hex, 16).unwrap(), page_id(&a));
    }
}
