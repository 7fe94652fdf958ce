//! Weak hints from markup: an element whose tag, ARIA role, class or id names a page furniture
//! role (comments, related links, share bars, navigation, footers, ads, newsletter boxes…).
//! Class and id values are split into words (`comment-list`, `relatedLinks`, `share_bar`), so a
//! hint matches whole words only: `navy` or `shared-layout-content` do not match `nav`/`share`.

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
        .any(|v| words(v).any(|w| FURNITURE.contains(&w.as_str())))
}

/// The words of a class or id value: split at non-alphanumerics and at lower→upper case steps,
/// lower-cased (`relatedLinks` → `related`, `links`).
fn words(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .flat_map(|part| {
            let mut out = Vec::new();
            let mut cur = String::new();
            let mut prev_lower = false;
            for c in part.chars() {
                if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
                cur.push(c.to_ascii_lowercase());
            }
            if !cur.is_empty() {
                out.push(cur);
            }
            out
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

    #[test]
    fn roles_match() {
        let mut e = el("div", "", "");
        e.role = Some("navigation".to_string());
        assert!(is_furniture(&e));
    }
}
