//! Weak hints from markup: an element whose tag, ARIA role, class or id names a page furniture
//! role (comments, related links, share bars, navigation, footers, ads, newsletter boxes…).
//! Class and id values are split into words (`comment-list`, `relatedLinks`, `share_bar`), so a
//! hint matches whole words only: `navy` or `shared-layout-content` do not match `nav`/`share`.
//! A word glued from a furniture word and a part word (`commentbody`, `navlinks`) matches too.

use crate::dom::tree::Element;

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
    FURNITURE.iter().any(|f| {
        w.len() >= f.len()
            && w.is_char_boundary(f.len())
            && w[..f.len()].eq_ignore_ascii_case(f)
            && (w.len() == f.len() || PARTS.iter().any(|p| w[f.len()..].eq_ignore_ascii_case(p)))
    })
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
