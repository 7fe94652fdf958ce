//! Weak hints from markup: an element whose tag, ARIA role, class or id names a page furniture
//! role (comments, related links, share bars, navigation, footers, ads, newsletter boxes…).
//! Class and id values are split into words (`comment-list`, `relatedLinks`, `share_bar`), so a
//! hint matches whole words only: `navy` or `shared-layout-content` do not match `nav`/`share`.
//! A word glued from a furniture word and a part word (`commentbody`, `navlinks`) matches too.

use std::sync::LazyLock;

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::tree::Element;
use crate::template::support::PathMap;

/// Words that name furniture when they appear as a whole word of a class or id.
const FURNITURE: &[&str] = &[
    "ad",
    "ads",
    "advert",
    "advertisement",
    "banner",
    "breadcrumb",
    "breadcrumbs",
    "byline",
    "caption",
    "comment",
    "comments",
    "disqus",
    "footer",
    "login",
    "menu",
    "nav",
    "navbar",
    "navigation",
    "newsletter",
    "outbrain",
    "pager",
    "pagination",
    "popular",
    "promo",
    "recommend",
    "recommended",
    "related",
    "share",
    "sharing",
    "sidebar",
    "signup",
    "social",
    "sponsor",
    "sponsored",
    "subscribe",
    "taboola",
    "toolbar",
    "trending",
    "widget",
];

/// Words that name a part of a thing, not what it is: a class word made of a furniture word and
/// one of these (`commentbody`, `navlinks`, `sharebar`, `footerlinks`) names furniture too,
/// while words that merely start alike (`commentary`, `navy`, `shared`) do not.
const PARTS: &[&str] = &[
    "area",
    "bar",
    "block",
    "body",
    "bottom",
    "box",
    "btn",
    "button",
    "buttons",
    "container",
    "content",
    "elem",
    "form",
    "head",
    "header",
    "inner",
    "item",
    "items",
    "link",
    "links",
    "list",
    "meta",
    "metadata",
    "outer",
    "path",
    "s",
    "section",
    "status",
    "sub",
    "text",
    "title",
    "tool",
    "tools",
    "top",
    "wrap",
    "wrapper",
];

/// Sectioning tags that hold furniture by definition.
const FURNITURE_TAGS: &[&str] = &[
    "nav",
    "aside",
    "footer",
    "form",
    "button",
    "select",
    "figcaption",
];

/// ARIA landmark roles that are not content.
const FURNITURE_ROLES: &[&str] = &[
    "navigation",
    "complementary",
    "contentinfo",
    "banner",
    "search",
    "menu",
    "menubar",
];

/// True when the element's markup names a furniture role.
pub fn is_furniture(e: &Element) -> bool {
    if FURNITURE_TAGS.contains(&&*e.tag) {
        return true;
    }
    if e.role.as_deref().is_some_and(|r| {
        r.split_ascii_whitespace()
            .any(|r| FURNITURE_ROLES.iter().any(|f| f.eq_ignore_ascii_case(r)))
    }) {
        return true;
    }
    [&e.class, &e.id]
        .into_iter()
        .flatten()
        .any(|v| words(v).any(names_furniture))
}

/// A furniture word, or a furniture word followed by a part word (`commentbody`), ignoring
/// ASCII case.
fn names_furniture(w: &str) -> bool {
    static WORDS: LazyLock<GluedWords<()>> =
        LazyLock::new(|| GluedWords::new(FURNITURE.iter().map(|&f| (f, ())), PARTS));
    WORDS.find(w).is_some()
}

/// A vocabulary of class and id words, each naming a `T`, found alone or glued to a part word
/// (`commentbody` = `comment` + `body`), ignoring ASCII case. Where several entries match a
/// word, the first in vocabulary order wins. A hash lookup per part word that ends the word,
/// not a scan of the vocabulary: this runs for every class word of every element (the scan was
/// a fifth of `clean`'s time).
pub(crate) struct GluedWords<T> {
    /// Each word (lower case), by its hash (`xxh3_64`, no two vocabulary words share one:
    /// checked when built), with its first position in the vocabulary and what it names. This
    /// runs for every class word of every element: a hash of a few bytes and one comparison.
    first: PathMap<(Box<str>, usize, T)>,
    /// Part words, lower case, with their last byte (compared before the word: most class
    /// words end in none of them).
    parts: Vec<(u8, String)>,
    /// No word longer than this can match.
    longest: usize,
}

impl<T: Copy> GluedWords<T> {
    pub(crate) fn new<'a>(
        vocabulary: impl IntoIterator<Item = (&'a str, T)>,
        parts: &[&str],
    ) -> GluedWords<T> {
        let mut first: PathMap<(Box<str>, usize, T)> = PathMap::default();
        for (i, (w, t)) in vocabulary.into_iter().enumerate() {
            let w = w.to_ascii_lowercase();
            let entry = first
                .entry(xxh3_64(w.as_bytes()))
                .or_insert_with(|| (w.as_str().into(), i, t));
            assert!(
                *entry.0 == *w,
                "invariant: no two vocabulary words share a hash ({w:?}, {:?})",
                entry.0
            );
        }
        let parts: Vec<(u8, String)> = parts
            .iter()
            .filter_map(|p| {
                let p = p.to_ascii_lowercase();
                Some((*p.as_bytes().last()?, p))
            })
            .collect();
        let longest = first.values().map(|(w, ..)| w.len()).max().unwrap_or(0)
            + parts.iter().map(|(_, p)| p.len()).max().unwrap_or(0);
        GluedWords {
            first,
            parts,
            longest,
        }
    }

    /// What `w` names: the earliest vocabulary entry it is, or is glued to a part word after.
    pub(crate) fn find(&self, w: &str) -> Option<T> {
        const STACK: usize = 64;
        if w.len() > self.longest.min(STACK) {
            return None;
        }
        let mut buf = [0u8; STACK];
        let lower = &mut buf[..w.len()];
        lower.copy_from_slice(w.as_bytes());
        lower.make_ascii_lowercase();
        // ASCII lower-casing keeps UTF-8 valid.
        let lower = std::str::from_utf8(lower).ok()?;
        let mut best = self.get(lower);
        let last = *lower.as_bytes().last()?;
        for (end, p) in &self.parts {
            if *end == last && lower.len() > p.len() && lower.ends_with(p.as_str()) {
                if let Some((i, t)) = self.get(&lower[..lower.len() - p.len()]) {
                    if best.is_none_or(|(b, _)| i < b) {
                        best = Some((i, t));
                    }
                }
            }
        }
        best.map(|(_, t)| t)
    }

    /// The vocabulary word `lower` is, with its position.
    fn get(&self, lower: &str) -> Option<(usize, T)> {
        let (word, i, t) = self.first.get(&xxh3_64(lower.as_bytes()))?;
        (**word == *lower).then_some((*i, *t))
    }
}

/// The words of a class or id value: split at non-alphanumerics and at lower→upper case steps
/// (`relatedLinks` → `related`, `Links`); compare them ignoring ASCII case. Slices of `value`,
/// no allocation: this runs for every element of every page.
pub(crate) fn words(value: &str) -> impl Iterator<Item = &str> + '_ {
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .flat_map(|part| {
            let b = part.as_bytes();
            let mut start = 0;
            let mut i = 1;
            std::iter::from_fn(move || {
                if start >= b.len() {
                    return None;
                }
                while i < b.len() {
                    let step = b[i].is_ascii_uppercase()
                        && (b[i - 1].is_ascii_lowercase() || b[i - 1].is_ascii_digit());
                    i += 1;
                    if step {
                        let word = &part[start..i - 1];
                        start = i - 1;
                        return Some(word);
                    }
                }
                let word = &part[start..];
                start = b.len();
                Some(word)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(tag: &str, class: &str, id: &str) -> Element {
        Element {
            tag: tag.to_string().into(),
            class: (!class.is_empty()).then(|| class.to_string()),
            id: (!id.is_empty()).then(|| id.to_string()),
            role: None,
            extra: None,
        }
    }

    #[test]
    fn whole_words_of_class_and_id_match() {
        assert!(is_furniture(&el("div", "comments_well", "")));
        assert!(is_furniture(&el("div", "", "relatedLinks")));
        assert!(is_furniture(&el("ul", "post-share-bar", "")));
        assert!(is_furniture(&el("aside", "", "")));
        assert!(!is_furniture(&el("div", "navy shared-layout", "")));
        assert!(!is_furniture(&el("div", "article-body", "story")));
    }

    /// Regression (blogs-dev): `<div class="commentbody by-…">` held a blog's comments, which
    /// stayed as content: the class is one glued word.
    #[test]
    fn a_furniture_word_glued_to_a_part_word_matches() {
        for class in [
            "commentbody",
            "commentList",
            "navlinks",
            "sharebar",
            "sidebars",
        ] {
            assert!(is_furniture(&el("div", class, "")), "{class}");
        }
        for class in [
            "commentary",
            "navy",
            "shared",
            "footerless",
            "adventure",
            "menus2",
        ] {
            assert!(!is_furniture(&el("div", class, "")), "{class}");
        }
    }

    /// `GluedWords::find` answers what a scan of the vocabulary in order would: the first entry
    /// that is the word, or the word less a part word at its end.
    #[test]
    fn glued_words_find_what_a_scan_in_order_finds() {
        let vocabulary = [
            ("tab", 1),
            ("tabs", 2),
            ("comment", 3),
            ("comments", 4),
            ("Nav", 5),
        ];
        let parts = ["s", "box", "list", "Bar"];
        let scan = |w: &str| {
            vocabulary.iter().find_map(|&(v, n)| {
                let glued = w.len() > v.len()
                    && w.is_char_boundary(v.len())
                    && w[..v.len()].eq_ignore_ascii_case(v)
                    && parts.iter().any(|p| w[v.len()..].eq_ignore_ascii_case(p));
                (w.eq_ignore_ascii_case(v) || glued).then_some(n)
            })
        };
        let g = GluedWords::new(vocabulary, &parts);
        let mut words: Vec<String> = Vec::new();
        for (v, _) in vocabulary {
            words.push(v.to_string());
            words.push(v.to_uppercase());
            for p in parts {
                words.push(format!("{v}{p}"));
                words.push(format!("{v}{p}x"));
            }
        }
        words.extend(
            [
                "tabss",
                "navbar",
                "NAVBAR",
                "commentsbox",
                "x",
                "",
                "é",
                "tabé",
            ]
            .map(String::from),
        );
        for w in &words {
            assert_eq!(g.find(w), scan(w), "{w:?}");
        }
        assert_eq!(g.find("tabs"), Some(1), "tab + s comes first");
    }

    #[test]
    fn words_split_at_separators_and_case_steps() {
        let w: Vec<&str> = words("relatedLinks post-share_bar x2Y ABc").collect();
        assert_eq!(
            w,
            ["related", "Links", "post", "share", "bar", "x2", "Y", "ABc"]
        );
    }

    #[test]
    fn roles_match() {
        let mut e = el("div", "", "");
        e.role = Some("navigation".to_string());
        assert!(is_furniture(&e));
    }
}
