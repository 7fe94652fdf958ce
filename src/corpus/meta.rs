//! A page's canonical URL, publication date and author, from what it states about itself
//! (`dom::meta::HtmlMeta`): JSON-LD first (the most structured), then meta tags, then `<time>`
//! elements and `rel=author` / `itemprop=author` bylines. Nothing is guessed from prose. What
//! the markup leaves out, the export may fill from the page's byline as the cleaner read it
//! (`with_byline`: the short lines it dropped at a cluster's byline positions, `template::byline`).
//!
//! `published` is normalised to ISO 8601: `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS` with the zone
//! the page gave (`Z` or `±HH:MM`; none when it gave none). A value in any other form (`March
//! 3, 2024`, `2024/03/03`) is skipped and the next source is tried.

use serde_json::Value as Json;
use url::Url;

use crate::dom::meta::HtmlMeta;
use crate::store::BylineRecord;

/// Meta keys (lower case) that state the publication time, most specific first.
const PUBLISHED_KEYS: &[&str] = &[
    "article:published_time",
    "og:article:published_time",
    "datepublished",
    "dcterms.issued",
    "dc.date.issued",
    "dcterms.created",
    "dc.date",
    "citation_publication_date",
    "citation_date",
    "parsely-pub-date",
    "sailthru.date",
    "pubdate",
    "publishdate",
    "publish-date",
    "publish_date",
    "date",
];

/// Meta keys (lower case) that name the author.
const AUTHOR_KEYS: &[&str] = &[
    "author",
    "article:author",
    "og:article:author",
    "dc.creator",
    "dcterms.creator",
    "citation_author",
    "parsely-author",
    "sailthru.author",
    "byl",
];

/// Longest author string kept (a list of many names is cut at a name boundary).
const MAX_AUTHOR: usize = 200;

/// What the page states about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stated {
    pub canonical: Option<String>,
    pub published: Option<String>,
    pub author: Option<String>,
}

/// Interpret `meta` for the page at `url`.
pub fn stated(meta: &HtmlMeta, url: &str) -> Stated {
    let json_ld: Vec<Json> = meta
        .json_ld
        .iter()
        .filter_map(|s| serde_json::from_str(s).ok())
        .collect();
    Stated {
        canonical: canonical(meta, url),
        published: published(meta, &json_ld),
        author: author(meta, &json_ld),
    }
}

/// Fill `published` and `author` from the page's byline where the markup stated none (the
/// markup always wins). Returns which were filled: (`published`, `author`).
pub fn with_byline(
    published: &mut Option<String>,
    author: &mut Option<String>,
    byline: BylineRecord,
) -> (bool, bool) {
    let fill = |field: &mut Option<String>, value: Option<String>| {
        let filled = field.is_none() && value.is_some();
        if filled {
            *field = value;
        }
        filled
    };
    (
        fill(published, byline.published),
        fill(author, byline.author.map(|a| bound_names(&a))),
    )
}

/// `<link rel=canonical>` resolved against the page URL, else an absolute `og:url`; http(s) only.
fn canonical(meta: &HtmlMeta, url: &str) -> Option<String> {
    let base = Url::parse(url).ok();
    let http = |u: Url| matches!(u.scheme(), "http" | "https").then(|| u.to_string());
    let link = meta
        .canonical
        .as_deref()
        .and_then(|href| match &base {
            Some(b) => b.join(href.trim()).ok(),
            None => Url::parse(href.trim()).ok(),
        })
        .and_then(http);
    let og = || {
        meta.meta(&["og:url"])
            .and_then(|u| Url::parse(u.trim()).ok())
            .and_then(http)
    };
    link.or_else(og)
        .map(|u| crate::crawl::url::without_credentials(&u).into_owned())
}

fn published(meta: &HtmlMeta, json_ld: &[Json]) -> Option<String> {
    let from_ld = json_ld_values(json_ld, "datePublished")
        .into_iter()
        .filter_map(|v| v.as_str().and_then(iso_date))
        .next();
    from_ld
        .or_else(|| {
            PUBLISHED_KEYS
                .iter()
                .filter_map(|k| meta.meta(&[k]))
                .find_map(iso_date)
        })
        .or_else(|| {
            let marked = meta.times.iter().filter(|t| t.published);
            let rest = meta.times.iter().filter(|t| !t.published);
            marked.chain(rest).find_map(|t| iso_date(&t.datetime))
        })
}

fn author(meta: &HtmlMeta, json_ld: &[Json]) -> Option<String> {
    let from_ld = json_ld_values(json_ld, "author")
        .into_iter()
        .find_map(|v| names(v).filter(|s| !s.is_empty()));
    from_ld
        .or_else(|| {
            AUTHOR_KEYS
                .iter()
                .filter_map(|k| meta.meta(&[k]))
                .find_map(person)
        })
        .or_else(|| meta.author_links.iter().find_map(|s| person(s)))
        .map(|a| bound_names(&a))
}

/// A person's name as a page writes it: `By ` dropped; URLs (profile links) are not names.
fn person(s: &str) -> Option<String> {
    let s = s.trim();
    let s = match s.get(..3) {
        Some(p) if p.eq_ignore_ascii_case("by ") => s[3..].trim_start(),
        _ => s,
    };
    let url_like = s.starts_with("http://") || s.starts_with("https://") || s.starts_with('/');
    (!s.is_empty() && !url_like).then(|| s.to_string())
}

/// A JSON-LD `author`: a name, a `{"name": …}` object, or a list of either (joined by ", ").
fn names(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => person(s),
        Json::Object(o) => o.get("name").and_then(names),
        Json::Array(items) => {
            let all: Vec<String> = items.iter().filter_map(names).collect();
            (!all.is_empty()).then(|| all.join(", "))
        }
        _ => None,
    }
}

fn bound_names(s: &str) -> String {
    if s.len() <= MAX_AUTHOR {
        return s.to_string();
    }
    let mut end = MAX_AUTHOR;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &s[..end];
    cut.rfind(", ").map_or(cut, |at| &cut[..at]).to_string()
}

/// The values of `key` in every JSON-LD object, article-like objects (`@type` ending in
/// `Article`, `Posting` or `Report`) first, each group in document order.
fn json_ld_values<'a>(docs: &'a [Json], key: &str) -> Vec<&'a Json> {
    fn walk<'a>(v: &'a Json, key: &str, depth: usize, out: &mut Vec<(bool, &'a Json)>) {
        if depth > 32 {
            return;
        }
        match v {
            Json::Object(o) => {
                if let Some(found) = o.get(key) {
                    out.push((is_article(o.get("@type")), found));
                }
                for (k, child) in o {
                    if k != key {
                        walk(child, key, depth + 1, out);
                    }
                }
            }
            Json::Array(items) => {
                for item in items {
                    walk(item, key, depth + 1, out);
                }
            }
            _ => {}
        }
    }
    fn is_article(t: Option<&Json>) -> bool {
        let one =
            |s: &str| s.ends_with("Article") || s.ends_with("Posting") || s.ends_with("Report");
        match t {
            Some(Json::String(s)) => one(s),
            Some(Json::Array(a)) => a.iter().any(|x| x.as_str().is_some_and(one)),
            _ => false,
        }
    }
    let mut found = Vec::new();
    for d in docs {
        walk(d, key, 0, &mut found);
    }
    let (mut first, rest): (Vec<_>, Vec<_>) = found.into_iter().partition(|(a, _)| *a);
    first.extend(rest);
    first.into_iter().map(|(_, v)| v).collect()
}

/// `s` as an ISO 8601 date or date-time (see the module doc), or `None`.
pub fn iso_date(s: &str) -> Option<String> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&mo) {
        return None;
    }
    if !(1..=31).contains(&d) || y < 1000 {
        return None;
    }
    let date = format!("{y:04}-{mo:02}-{d:02}");
    if b.len() == 10 {
        return Some(date);
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (h, mi) = (num(11, 2)?, num(14, 2)?);
    if b.get(13) != Some(&b':') || h > 23 || mi > 59 {
        return None;
    }
    let mut at = 16;
    let mut sec = 0;
    if b.get(at) == Some(&b':') {
        sec = num(17, 2)?;
        if sec > 60 {
            return None;
        }
        at = 19;
        if b.get(at) == Some(&b'.') {
            at += 1;
            while b.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
        }
    }
    let zone = match &s[at..] {
        "" => String::new(),
        "Z" | "z" => "Z".into(),
        z => {
            let sign = z.as_bytes()[0];
            if !matches!(sign, b'+' | b'-') {
                return None;
            }
            let digits: String = z[1..].chars().filter(|&c| c != ':').collect();
            if !matches!(digits.len(), 2 | 4) || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let zh: u32 = digits[..2].parse().ok()?;
            let zm: u32 = digits.get(2..).map_or(Some(0), |m| m.parse().ok())?;
            if zh > 14 || zm > 59 {
                return None;
            }
            format!("{}{zh:02}:{zm:02}", sign as char)
        }
    };
    Some(format!("{date}T{h:02}:{mi:02}:{sec:02}{zone}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::meta::scan;

    #[test]
    fn dates_normalise_to_iso_8601_or_are_refused() {
        assert_eq!(iso_date("2024-03-01").as_deref(), Some("2024-03-01"));
        assert_eq!(
            iso_date(" 2024-03-01T10:05:07.123+0200 ").as_deref(),
            Some("2024-03-01T10:05:07+02:00")
        );
        assert_eq!(
            iso_date("2024-03-01 10:05Z").as_deref(),
            Some("2024-03-01T10:05:00Z")
        );
        assert_eq!(
            iso_date("2024-03-01T10:05:00").as_deref(),
            Some("2024-03-01T10:05:00")
        );
        for bad in [
            "March 3, 2024",
            "2024/03/01",
            "2024-13-01",
            "2024-03-01T25:00",
            "2024-03-01Tnoon",
            "2024-03-01T10:00+99:00",
            "2024-03-01T10:00…",
            "2024-03-01T10:00:00.5é",
            "",
        ] {
            assert_eq!(iso_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn json_ld_wins_over_meta_and_meta_over_time_elements() {
        let html = r#"<html><head>
            <meta property="article:published_time" content="2023-01-02T03:04:05Z">
            <meta name="author" content="Meta Author">
            <script type="application/ld+json">{"@context":"https://schema.org","@graph":[
              {"@type":"WebSite","author":"Site Owner"},
              {"@type":"NewsArticle","datePublished":"2022-05-06",
               "author":[{"@type":"Person","name":"Ann Lee"},{"name":"Bo Ek"}]}]}</script>
            </head><body><time datetime="2021-01-01">x</time></body></html>"#;
        let s = stated(&scan(html), "https://e.example/a");
        assert_eq!(s.published.as_deref(), Some("2022-05-06"));
        assert_eq!(s.author.as_deref(), Some("Ann Lee, Bo Ek"));

        let html = r#"<meta property="article:published_time" content="not a date">
            <meta name="date" content="2023-01-02">
            <meta name="author" content="https://e.example/u/ann">
            <a rel=author href=/u/ann>By Ann Lee</a><time datetime="2021-01-01">"#;
        let s = stated(&scan(html), "https://e.example/a");
        assert_eq!(s.published.as_deref(), Some("2023-01-02"));
        assert_eq!(
            s.author.as_deref(),
            Some("Ann Lee"),
            "profile URLs are not names"
        );

        let s = stated(
            &scan(r#"<time datetime=2021-01-01>a</time><time pubdate datetime=2020-02-02>"#),
            "https://e.example/a",
        );
        assert_eq!(s.published.as_deref(), Some("2020-02-02"));
        assert_eq!(
            stated(&scan("<p>nothing</p>"), "https://e.example/"),
            Stated::default()
        );
    }

    #[test]
    fn canonical_resolves_against_the_page_and_falls_back_to_og_url() {
        let m = scan(
            r#"<link rel=canonical href="../b?x=1"><meta property=og:url content="https://o.example/">"#,
        );
        assert_eq!(
            stated(&m, "https://e.example/d/a").canonical.as_deref(),
            Some("https://e.example/b?x=1")
        );
        let m = scan(
            r#"<link rel=canonical href="javascript:x()"><meta property=og:url content="https://o.example/p">"#,
        );
        assert_eq!(
            stated(&m, "https://e.example/").canonical.as_deref(),
            Some("https://o.example/p")
        );
        let m = scan(r#"<meta property=og:url content="/relative">"#);
        assert_eq!(stated(&m, "https://e.example/").canonical, None);
    }

    #[test]
    fn bylines_fill_only_what_markup_does_not_state() {
        let byline = || BylineRecord {
            author: Some("Byline Name".into()),
            published: Some("2024-03-01".into()),
        };
        let (mut published, mut author) = (None, Some("Markup Name".to_string()));
        assert_eq!(
            with_byline(&mut published, &mut author, byline()),
            (true, false)
        );
        assert_eq!(published.as_deref(), Some("2024-03-01"));
        assert_eq!(author.as_deref(), Some("Markup Name"), "markup wins");
        let (mut published, mut author) = (Some("2020-01-01".to_string()), None);
        assert_eq!(
            with_byline(&mut published, &mut author, BylineRecord::default()),
            (false, false)
        );
        assert_eq!((published.as_deref(), author), (Some("2020-01-01"), None));
    }

    #[test]
    fn long_author_lists_are_cut_at_a_name() {
        let names: Vec<String> = (0..40).map(|i| format!("Author Number {i}")).collect();
        let cut = bound_names(&names.join(", "));
        assert!(cut.len() <= MAX_AUTHOR);
        assert!(cut.ends_with(char::is_numeric), "{cut}");
    }
}
