//! The seed list: one URL per line, `#` comments and blank lines allowed. Bad lines are
//! reported with their line number and skipped; the good ones come back normalised and
//! deduplicated, in file order.

use std::fmt;
use std::path::Path;

use url::Url;

use crate::crawl::url::normalize_url;

/// A seed line that cannot be crawled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {text:?} — {reason}")]
pub struct SeedError {
    /// 1-based.
    pub line: usize,
    /// The line as written (trimmed, comment removed).
    pub text: String,
    pub reason: SeedErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeedErrorKind {
    #[error("unsupported scheme {0} (only http and https)")]
    UnsupportedScheme(String),
    #[error("not a URL: {0}")]
    NotAUrl(String),
    #[error("not UTF-8 text (byte 0x{byte:02X} at column {column}); save the file as UTF-8")]
    NotUtf8 { byte: u8, column: usize },
}

impl SeedError {
    /// `seeds.txt:7: "ftp://x" — unsupported scheme ftp (only http and https)`.
    pub fn display_in<'a>(&'a self, file: &'a Path) -> impl fmt::Display + 'a {
        struct InFile<'a>(&'a SeedError, &'a Path);
        impl fmt::Display for InFile<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let e = self.0;
                write!(
                    f,
                    "{}:{}: {:?} — {}",
                    self.1.display(),
                    e.line,
                    e.text,
                    e.reason
                )
            }
        }
        InFile(self, file)
    }
}

/// A seeds file's bytes as text for [`parse_seeds`]: a UTF-8 byte-order mark is dropped, and a
/// line that is not UTF-8 (a Latin-1 byte) becomes an empty line plus an error with its line
/// number, so one bad line does not reject the file and the other lines keep their numbers.
pub fn decode_seeds(bytes: &[u8]) -> (String, Vec<SeedError>) {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut text = String::with_capacity(bytes.len());
    let mut errors = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            text.push('\n');
        }
        match std::str::from_utf8(line) {
            Ok(l) => text.push_str(l),
            Err(e) => errors.push(SeedError {
                line: i + 1,
                text: String::from_utf8_lossy(line).trim().to_string(),
                reason: SeedErrorKind::NotUtf8 {
                    byte: line[e.valid_up_to()],
                    column: e.valid_up_to() + 1,
                },
            }),
        }
    }
    (text, errors)
}

/// Parse a seed list.
///
/// Each line is trimmed; blank lines, lines starting with `#`, and trailing ` # comments` are
/// skipped (a `#` preceded by whitespace: a URL's fragment `#` never is). A line without a
/// scheme that looks like a host (`example.com`, `example.com/path`, `localhost:8080`,
/// `127.0.0.1:3000/x`) gets `https://`: it is what a browser would try first, and sites without
/// https usually redirect or fail loudly. Other schemes (`ftp:`, `file:`, `mailto:`) and lines
/// that are not URLs are errors. Seeds equal after normalisation are kept once.
pub fn parse_seeds(text: &str) -> (Vec<Url>, Vec<SeedError>) {
    let mut seeds: Vec<Url> = Vec::new();
    // A set, not `seeds.contains`: that made loading quadratic (200,000 seeds took 44 s).
    let mut kept: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        match parse_seed(line) {
            Ok(url) => {
                if kept.insert(url.as_str().to_string()) {
                    seeds.push(url);
                }
            }
            Err(reason) => errors.push(SeedError {
                line: i + 1,
                text: line.to_string(),
                reason,
            }),
        }
    }
    (seeds, errors)
}

fn strip_comment(line: &str) -> &str {
    let line = line.trim_start();
    if line.starts_with('#') {
        return "";
    }
    match line.find([' ', '\t']) {
        Some(ws) => match line[ws..].find('#') {
            Some(hash) if line[ws..ws + hash].trim().is_empty() => &line[..ws],
            _ => line,
        },
        None => line,
    }
}

/// One seed URL (a line of the seeds file, or a command-line argument).
pub fn parse_seed(line: &str) -> Result<Url, SeedErrorKind> {
    let with_scheme = match explicit_scheme(line) {
        Some(scheme) if !matches!(scheme.as_str(), "http" | "https") => {
            return Err(SeedErrorKind::UnsupportedScheme(scheme));
        }
        Some(_) => line.to_string(),
        None => {
            let host = line.split(['/', '?', '#']).next().unwrap_or_default();
            let host = host.rsplit_once(':').map_or(host, |(h, _port)| h);
            if !(host.contains('.')
                || host.eq_ignore_ascii_case("localhost")
                || host.starts_with('['))
            {
                return Err(SeedErrorKind::NotAUrl(
                    "no scheme, and not a host name (expected e.g. https://example.com/)".into(),
                ));
            }
            format!("https://{line}")
        }
    };
    let url = Url::parse(&with_scheme).map_err(|e| SeedErrorKind::NotAUrl(e.to_string()))?;
    normalize_url(url).ok_or_else(|| SeedErrorKind::NotAUrl("no host, or too long".into()))
}

/// The scheme of `line` if it has one. `host:port` is not a scheme (`localhost:8080`), and
/// neither is anything before a `/`.
fn explicit_scheme(line: &str) -> Option<String> {
    let (scheme, rest) = line.split_once(':')?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let is_port = rest.starts_with(|c: char| c.is_ascii_digit()) && !rest.starts_with("//");
    (valid && !is_port).then(|| scheme.to_ascii_lowercase())
}

/// A seed that names a sitemap rather than a page: its path ends in `.xml` or `.xml.gz`, or its
/// last segment contains "sitemap" (`/sitemap`, `/sitemap_index.xml`, `/news-sitemap.php`). Such
/// a seed is read as a sitemap, and the pages it lists are queued.
pub fn is_sitemap(url: &Url) -> bool {
    let path = url.path().to_ascii_lowercase();
    let last = path.rsplit('/').next().unwrap_or("");
    path.ends_with(".xml") || path.ends_with(".xml.gz") || last.contains("sitemap")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Vec<String> {
        let (seeds, errors) = parse_seeds(text);
        assert!(errors.is_empty(), "{errors:?}");
        seeds.iter().map(Url::to_string).collect()
    }

    #[test]
    fn urls_comments_and_blank_lines() {
        let text =
            "# my seeds\n\nhttps://example.com/\n   http://Example.org/a#frag  \n\t# indented\n\
                    https://example.net/x # trailing comment\nhttps://example.net/y#frag\n";
        assert_eq!(
            ok(text),
            [
                "https://example.com/",
                "http://example.org/a",
                "https://example.net/x",
                "https://example.net/y"
            ]
        );
    }

    #[test]
    fn bare_hosts_get_https() {
        assert_eq!(
            ok("example.com\nexample.com/path?q=1\nlocalhost:8080\n127.0.0.1:3000/x\nwww.bücher.de\n"),
            [
                "https://example.com/",
                "https://example.com/path?q=1",
                "https://localhost:8080/",
                "https://127.0.0.1:3000/x",
                "https://www.xn--bcher-kva.de/"
            ]
        );
    }

    #[test]
    fn duplicates_after_normalisation_dropped() {
        assert_eq!(
            ok("https://example.com\nHTTPS://EXAMPLE.COM:443/\nexample.com\nhttps://example.com/#x\n"),
            ["https://example.com/"]
        );
        // http and https are different seeds.
        assert_eq!(ok("http://e.com/\nhttps://e.com/\n").len(), 2);
    }

    #[test]
    fn bad_lines_reported_with_line_numbers() {
        let text = "https://ok.com/\nftp://x\n\nfile:///etc/passwd\nmailto:a@b.c\nhello\n\
                    https://exa mple.com/\nhttp://\njavascript:alert(1)\nhttps://ok.org/\n";
        let (seeds, errors) = parse_seeds(text);
        assert_eq!(seeds.len(), 2);
        let got: Vec<(usize, &str)> = errors.iter().map(|e| (e.line, e.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (2, "ftp://x"),
                (4, "file:///etc/passwd"),
                (5, "mailto:a@b.c"),
                (6, "hello"),
                (7, "https://exa mple.com/"),
                (8, "http://"),
                (9, "javascript:alert(1)"),
            ]
        );
        assert_eq!(
            errors[0].reason,
            SeedErrorKind::UnsupportedScheme("ftp".into())
        );
        assert!(matches!(errors[3].reason, SeedErrorKind::NotAUrl(_)));
    }

    #[test]
    fn a_bom_and_a_latin1_line_do_not_reject_the_file() {
        let (text, bad) = decode_seeds(
            b"\xEF\xBB\xBFhttps://a.example/\nhttps://caf\xE9.example/\nhttps://b.example/\n",
        );
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 2);
        assert!(matches!(
            bad[0].reason,
            SeedErrorKind::NotUtf8 {
                byte: 0xE9,
                column: 12
            }
        ));
        assert_eq!(ok(&text), ["https://a.example/", "https://b.example/"]);
    }

    #[test]
    fn error_display() {
        let (_, errors) = parse_seeds("\n\n\n\n\n\nftp://x\n");
        assert_eq!(
            errors[0].display_in(Path::new("seeds.txt")).to_string(),
            "seeds.txt:7: \"ftp://x\" — unsupported scheme ftp (only http and https)"
        );
        assert_eq!(
            errors[0].to_string(),
            "line 7: \"ftp://x\" — unsupported scheme ftp (only http and https)"
        );
    }

    #[test]
    fn sitemap_seeds_are_told_from_page_seeds() {
        let sm = |u: &str| is_sitemap(&Url::parse(u).unwrap());
        assert!(sm("https://a.example/sitemap.xml"));
        assert!(sm("https://a.example/news/sitemap_index.XML"));
        assert!(sm("https://a.example/sitemap"));
        assert!(sm("https://a.example/s/pages.xml.gz"));
        assert!(!sm("https://a.example/"));
        assert!(!sm("https://a.example/sitemaps-are-fun/post.html"));
        assert!(!sm("https://a.example/feed.rss"));
    }
}
