//! What an element's markup says it is, as a set of *roles*: words of its class and id
//! (`comment-list`, `productCard`, `price_box`), its ARIA role, its microdata `itemprop` and
//! `itemtype`, and sectioning tags. A general vocabulary of page parts — navigation, comments,
//! products, prices, posts, filters — read the same way on every site; the content classifier
//! (`classify`) weighs them, nothing here decides.

use std::sync::LazyLock;

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::tree::Element;
use crate::dom::Dom;
use crate::template::support::PathMap;

use super::hints::{words, GluedWords};

/// A page part an element's markup can name. The discriminant is the bit in a role set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Role {
    Nav = 0,
    Header,
    Footer,
    Sidebar,
    Comment,
    Related,
    Share,
    Ad,
    Newsletter,
    Overlay,
    Search,
    Account,
    Pager,
    Filter,
    Tags,
    Byline,
    Title,
    Content,
    Post,
    Item,
    Price,
    Review,
    Description,
    Faq,
    Section,
    Caption,
    Toc,
    Breadcrumb,
    Hidden,
    Form,
    Main,
    Article,
}

/// The number of roles (bits used in a role set).
pub const ROLES: usize = 32;

/// Words (whole words of a class or id, ASCII case ignored) and the role each names. A word may
/// be followed by a plural `s` or a part word (`commentbody`, `productcard`).
const VOCABULARY: &[(&str, Role)] = &[
    ("nav", Role::Nav),
    ("navbar", Role::Nav),
    ("navigation", Role::Nav),
    ("menu", Role::Nav),
    ("megamenu", Role::Nav),
    ("dropdown", Role::Nav),
    ("header", Role::Header),
    ("masthead", Role::Header),
    ("topbar", Role::Header),
    ("footer", Role::Footer),
    ("copyright", Role::Footer),
    ("colophon", Role::Footer),
    ("sidebar", Role::Sidebar),
    ("aside", Role::Sidebar),
    ("widget", Role::Sidebar),
    ("rail", Role::Sidebar),
    ("comment", Role::Comment),
    ("reply", Role::Comment),
    ("replies", Role::Comment),
    ("respond", Role::Comment),
    ("disqus", Role::Comment),
    ("discussion", Role::Comment),
    ("related", Role::Related),
    ("recommend", Role::Related),
    ("recommended", Role::Related),
    ("recommendation", Role::Related),
    ("popular", Role::Related),
    ("trending", Role::Related),
    ("more", Role::Related),
    ("upsell", Role::Related),
    ("crosssell", Role::Related),
    ("share", Role::Share),
    ("sharing", Role::Share),
    ("social", Role::Share),
    ("follow", Role::Share),
    ("ad", Role::Ad),
    ("ads", Role::Ad),
    ("advert", Role::Ad),
    ("advertisement", Role::Ad),
    ("sponsor", Role::Ad),
    ("sponsored", Role::Ad),
    ("promo", Role::Ad),
    ("promotion", Role::Ad),
    ("banner", Role::Ad),
    ("outbrain", Role::Ad),
    ("taboola", Role::Ad),
    ("newsletter", Role::Newsletter),
    ("subscribe", Role::Newsletter),
    ("subscription", Role::Newsletter),
    ("signup", Role::Newsletter),
    ("cta", Role::Newsletter),
    ("cookie", Role::Overlay),
    ("consent", Role::Overlay),
    ("gdpr", Role::Overlay),
    ("modal", Role::Overlay),
    ("popup", Role::Overlay),
    ("overlay", Role::Overlay),
    ("dialog", Role::Overlay),
    ("toast", Role::Overlay),
    ("search", Role::Search),
    ("login", Role::Account),
    ("signin", Role::Account),
    ("account", Role::Account),
    ("cart", Role::Account),
    ("basket", Role::Account),
    ("checkout", Role::Account),
    ("wishlist", Role::Account),
    ("pager", Role::Pager),
    ("pagination", Role::Pager),
    ("paging", Role::Pager),
    ("pagenav", Role::Pager),
    ("prev", Role::Pager),
    ("next", Role::Pager),
    ("filter", Role::Filter),
    ("facet", Role::Filter),
    ("refine", Role::Filter),
    ("sort", Role::Filter),
    ("sorting", Role::Filter),
    ("toolbar", Role::Filter),
    ("tag", Role::Tags),
    ("tags", Role::Tags),
    ("category", Role::Tags),
    ("categories", Role::Tags),
    ("topics", Role::Tags),
    ("label", Role::Tags),
    ("badge", Role::Tags),
    ("byline", Role::Byline),
    ("author", Role::Byline),
    ("meta", Role::Byline),
    ("date", Role::Byline),
    ("time", Role::Byline),
    ("timestamp", Role::Byline),
    ("posted", Role::Byline),
    ("published", Role::Byline),
    ("avatar", Role::Byline),
    ("username", Role::Byline),
    ("user", Role::Byline),
    ("title", Role::Title),
    ("headline", Role::Title),
    ("heading", Role::Title),
    ("name", Role::Title),
    ("content", Role::Content),
    ("main", Role::Content),
    ("article", Role::Content),
    ("entry", Role::Content),
    ("story", Role::Content),
    ("text", Role::Content),
    ("body", Role::Content),
    ("prose", Role::Content),
    ("markdown", Role::Content),
    ("rte", Role::Content),
    ("richtext", Role::Content),
    ("wysiwyg", Role::Content),
    ("post", Role::Post),
    ("message", Role::Post),
    ("thread", Role::Post),
    ("topic", Role::Post),
    ("cooked", Role::Post),
    ("answer", Role::Post),
    ("question", Role::Post),
    ("product", Role::Item),
    ("item", Role::Item),
    ("card", Role::Item),
    ("tile", Role::Item),
    ("listing", Role::Item),
    ("result", Role::Item),
    ("results", Role::Item),
    ("grid", Role::Item),
    ("teaser", Role::Item),
    ("price", Role::Price),
    ("pricing", Role::Price),
    ("cost", Role::Price),
    ("offer", Role::Price),
    ("amount", Role::Price),
    ("review", Role::Review),
    ("rating", Role::Review),
    ("stars", Role::Review),
    ("testimonial", Role::Review),
    ("description", Role::Description),
    ("desc", Role::Description),
    ("details", Role::Description),
    ("detail", Role::Description),
    ("spec", Role::Description),
    ("specs", Role::Description),
    ("specification", Role::Description),
    ("specifications", Role::Description),
    ("features", Role::Description),
    ("summary", Role::Description),
    ("overview", Role::Description),
    ("faq", Role::Faq),
    ("faqs", Role::Faq),
    ("accordion", Role::Faq),
    ("collapse", Role::Faq),
    ("tab", Role::Faq),
    ("tabs", Role::Faq),
    ("panel", Role::Faq),
    ("section", Role::Section),
    ("hero", Role::Section),
    ("feature", Role::Section),
    ("block", Role::Section),
    ("module", Role::Section),
    ("row", Role::Section),
    ("caption", Role::Caption),
    ("credit", Role::Caption),
    ("figure", Role::Caption),
    ("toc", Role::Toc),
    ("contents", Role::Toc),
    ("breadcrumb", Role::Breadcrumb),
    ("breadcrumbs", Role::Breadcrumb),
    ("crumbs", Role::Breadcrumb),
    ("hidden", Role::Hidden),
    ("sr", Role::Hidden),
    ("visually", Role::Hidden),
    ("screenreader", Role::Hidden),
    ("offscreen", Role::Hidden),
];

/// Part words that may follow a vocabulary word in one glued class word (`commentbody`).
const PARTS: &[&str] = &[
    "s",
    "area",
    "bar",
    "block",
    "body",
    "box",
    "btn",
    "container",
    "content",
    "item",
    "items",
    "link",
    "links",
    "list",
    "wrap",
    "wrapper",
    "inner",
    "card",
    "text",
    "title",
    "info",
];

fn role_of_word(w: &str) -> Option<Role> {
    static WORDS: LazyLock<GluedWords<Role>> =
        LazyLock::new(|| GluedWords::new(VOCABULARY.iter().copied(), PARTS));
    WORDS.find(w)
}

/// Each node's roles (`roles`; none for a text node). A page repeats a few class values over
/// thousands of elements: each distinct value's words are looked up once.
pub fn page_roles(dom: &Dom) -> Vec<u32> {
    let mut classes: PathMap<(&str, u32)> = PathMap::default();
    let mut out = Vec::with_capacity(dom.nodes.len());
    for i in 0..dom.nodes.len() {
        let Some(e) = dom.element(i) else {
            out.push(0);
            continue;
        };
        let class = e.class.as_deref().map_or(0, |class| {
            let (seen, set) = *classes
                .entry(xxh3_64(class.as_bytes()))
                .or_insert_with(|| (class, word_roles(class)));
            // Two values sharing a hash: the second is looked up each time.
            if seen == class {
                set
            } else {
                word_roles(class)
            }
        });
        out.push(roles_with(e, class));
    }
    out
}

/// The roles the words of a class or id value name.
fn word_roles(value: &str) -> u32 {
    words(value)
        .filter_map(role_of_word)
        .fold(0, |set, r| set | 1 << (r as u8))
}

/// The roles `e`'s markup names, as a bit set (bit `Role as u8`).
pub fn roles(e: &Element) -> u32 {
    roles_with(e, e.class.as_deref().map_or(0, word_roles))
}

/// `roles`, given what `e`'s class words name.
fn roles_with(e: &Element, class: u32) -> u32 {
    let mut set = class | e.id.as_deref().map_or(0, word_roles);
    let mut add = |r: Role| set |= 1 << (r as u8);
    match &*e.tag {
        "nav" => add(Role::Nav),
        "header" => add(Role::Header),
        "footer" => add(Role::Footer),
        "aside" => add(Role::Sidebar),
        "form" => add(Role::Form),
        "main" => add(Role::Main),
        "article" => add(Role::Article),
        "section" => add(Role::Section),
        "figcaption" => add(Role::Caption),
        "time" => add(Role::Byline),
        _ => {}
    }
    if let Some(role) = e.role.as_deref() {
        for r in role.split_ascii_whitespace() {
            match r.to_ascii_lowercase().as_str() {
                "navigation" | "menu" | "menubar" => add(Role::Nav),
                "banner" => add(Role::Header),
                "contentinfo" => add(Role::Footer),
                "complementary" => add(Role::Sidebar),
                "search" => add(Role::Search),
                "main" => add(Role::Main),
                "article" => add(Role::Article),
                "dialog" | "alertdialog" => add(Role::Overlay),
                "tablist" | "tabpanel" => add(Role::Faq),
                _ => {}
            }
        }
    }
    if let Some(p) = e.itemprop() {
        for w in p.split_ascii_whitespace() {
            let w = w.to_ascii_lowercase();
            match w.as_str() {
                "articlebody" | "text" | "reviewbody" | "description" => add(Role::Description),
                "name" | "headline" => add(Role::Title),
                "price" | "offers" | "pricecurrency" => add(Role::Price),
                "author" | "datepublished" | "datemodified" => add(Role::Byline),
                "review" | "aggregaterating" | "ratingvalue" => add(Role::Review),
                "comment" => add(Role::Comment),
                "itemlistelement" => add(Role::Item),
                _ => {}
            }
        }
    }
    if let Some(t) = e.itemtype() {
        let t = t.to_ascii_lowercase();
        if t.ends_with("/product") || t.ends_with("/offer") {
            add(Role::Item);
        } else if t.ends_with("/comment") {
            add(Role::Comment);
        } else if t.contains("posting") || t.ends_with("/question") || t.ends_with("/answer") {
            add(Role::Post);
        } else if t.ends_with("article") {
            add(Role::Article);
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(tag: &str, class: &str) -> Element {
        Element {
            tag: tag.to_string().into(),
            class: (!class.is_empty()).then(|| class.to_string()),
            ..Element::default()
        }
    }

    fn has(set: u32, r: Role) -> bool {
        set & (1 << r as u8) != 0
    }

    #[test]
    fn a_page_s_roles_are_each_element_s() {
        let dom = crate::dom::parse_html(
            "<nav class='menu'><a class='menu-link'>A</a></nav><div class='product-card'>\
             <span class='price' itemprop='price'>1</span></div><div class='product-card' \
             id='comments' role='main'>x</div><aside class='menu'>y</aside>",
        )
        .dom;
        let one_by_one: Vec<u32> = (0..dom.nodes.len())
            .map(|i| dom.element(i).map_or(0, roles))
            .collect();
        assert_eq!(page_roles(&dom), one_by_one);
        assert!(one_by_one.iter().filter(|&&r| has(r, Role::Item)).count() >= 2);
    }

    #[test]
    fn class_words_tags_and_glued_parts_name_roles() {
        let s = roles(&el("div", "product-card price_box commentList"));
        assert!(has(s, Role::Item) && has(s, Role::Price) && has(s, Role::Comment));
        assert!(has(roles(&el("nav", "")), Role::Nav));
        assert_eq!(roles(&el("div", "navy commentary")), 0);
    }
}
