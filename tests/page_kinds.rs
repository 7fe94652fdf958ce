//! Kinds of page beyond the article, each a realistic fixture of our own cleaned in page mode
//! (one page of its host) and in site mode (three pages of one template): a forum thread held in
//! `<noscript>`, a thread of posts, a product grid with facets, a landing page of sibling
//! sections, a product with JSON-LD and tabs, documentation headings that link to themselves,
//! a page carrying a second article after the first, a page hidden until its scripts run, and
//! code samples in tabs.

use thresher::dom::{parse_bytes, Dom};
use thresher::template::{clean_site, Algorithm, Renders};

const NAMES: [&str; 6] = ["marta", "jonas", "priya", "tomasz", "aiko", "femi"];
const THINGS: [&str; 8] = [
    "kettle", "lantern", "backpack", "compass", "hammock", "thermos", "stove", "tarp",
];

fn thing(i: usize) -> &'static str {
    THINGS[i % THINGS.len()]
}

/// A site's chrome around `main`: header navigation, a search form, a footer of link columns.
fn chrome(title: &str, main: &str, head: &str) -> String {
    let nav: String = ["Home", "Shop", "Forum", "Guides", "About", "Contact"]
        .iter()
        .map(|n| format!("<li><a href=/{}>{n}</a></li>", n.to_lowercase()))
        .collect();
    let footer: String = [
        "Shipping",
        "Returns",
        "Privacy policy",
        "Terms of use",
        "Careers",
    ]
    .iter()
    .map(|n| format!("<li><a href=/{}>{n}</a></li>", n.replace(' ', "-")))
    .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title>{head}</head><body>\
         <header class=site-header><a class=logo href=/>Outfitters</a><nav><ul>{nav}</ul></nav>\
         <form class=search><input name=q placeholder=Search><button>Search</button></form>\
         </header>{main}\
         <footer class=site-footer><ul>{footer}</ul>\
         <p>© 2026 Outfitters Ltd. All rights reserved.</p></footer></body></html>"
    )
}

/// The posts of thread `t`: author, date and a reply of its own, each.
fn posts(t: usize) -> Vec<(String, String)> {
    (0..5)
        .map(|k| {
            let who = NAMES[(t + k) % NAMES.len()].to_string();
            let text = format!(
                "I took the {} on trip {t}.{k} and it held up well, though the {} needed a second \
                 look after the rain; next time I would pack the {} closer to the top of the bag.",
                thing(t + k),
                thing(t + k + 3),
                thing(t + 2 * k + 1)
            );
            (who, text)
        })
        .collect()
}

fn thread_markup(t: usize) -> String {
    posts(t)
        .iter()
        .enumerate()
        .map(|(k, (who, text))| {
            format!(
                "<div class=post id=post-{k}><div class=post-meta><a class=author \
                 href=/u/{who}>{who}</a> <time>2026-0{}-1{k}</time></div>\
                 <div class=post-body><p>{text}</p></div>\
                 <div class=post-actions><a href=#reply>Reply</a> <a href=#like>Like</a> \
                 <a href=#report>Report</a></div></div>",
                t % 9 + 1
            )
        })
        .collect()
}

/// A forum thread: its posts in a list, reply and like buttons, related threads beside it.
fn thread_page(t: usize, in_noscript: bool) -> String {
    let posts = thread_markup(t);
    let body = if in_noscript {
        // A forum engine that renders with JavaScript and serves the thread to clients
        // without it.
        format!(
            "<div id=app></div><noscript><div class=topic><h1>Trip report {t}: the {} on a \
             wet week</h1>{posts}</div></noscript>",
            thing(t)
        )
    } else {
        format!(
            "<div class=topic><h1>Trip report {t}: the {} on a wet week</h1>{posts}\
             <div class=pagination><a href=?page=1>1</a> <a href=?page=2>2</a> \
             <a href=?page=2>Next</a></div></div>",
            thing(t)
        )
    };
    let related: String = (1..6)
        .map(|k| format!("<li><a href=/t/{}>Trip report {}</a></li>", t + k, t + k))
        .collect();
    chrome(
        &format!("Trip report {t}"),
        &format!(
            "<main class=forum>{body}<aside class=related><h3>Related threads</h3><ul>{related}\
             </ul></aside></main>"
        ),
        "",
    )
}

/// A category page: facets, sort and pagination around a grid of products with blurbs.
fn grid_page(c: usize) -> String {
    let facets: String = ["Brand", "Price", "Weight", "Colour"]
        .iter()
        .map(|f| {
            let options: String = (0..4)
                .map(|k| format!("<li><label><input type=checkbox> {f} {k}</label></li>"))
                .collect();
            format!("<div class=facet><h4>{f}</h4><ul>{options}</ul></div>")
        })
        .collect();
    let items: String = (0..8)
        .map(|k| {
            let name = format!("{} model {c}{k}", thing(c + k));
            format!(
                "<li class=product-card><a href=/p/{c}{k}><img src=/img/{c}{k}.jpg alt=\"\">\
                 <h3>{name}</h3></a><p class=blurb>A {} built for {} nights outside, with a \
                 {} pocket and a spare {} in the box.</p><span class=price>€{}.99</span></li>",
                thing(c + k),
                k + 2,
                thing(c + k + 1),
                thing(c + k + 2),
                20 + k * 7
            )
        })
        .collect();
    chrome(
        &format!("Category {c}"),
        &format!(
            "<main><nav class=breadcrumb><a href=/>Home</a> › <a href=/shop>Shop</a></nav>\
             <h1>Camp gear, range {c}</h1><div class=layout><aside class=filters>\
             <h3>Filter</h3>{facets}</aside><section class=results>\
             <div class=toolbar>Sort by <select><option>Price</option><option>Newest</option>\
             </select> <span>Showing 8 of 64</span></div><ul class=products>{items}</ul>\
             <div class=pagination><a href=?p=2>2</a> <a href=?p=3>3</a> <a href=?p=2>Next</a>\
             </div></section></div></main>"
        ),
        "",
    )
}

/// A service's landing page: hero, features, pricing and FAQ as sibling sections.
fn landing_page(s: usize) -> String {
    let features: String = (0..3)
        .map(|k| {
            format!(
                "<div class=feature><h3>Plan {s} feature {k}</h3><p>Rent a {} for a weekend \
                 and we deliver the {} to your trailhead, cleaned and checked.</p></div>",
                thing(s + k),
                thing(s + k + 4)
            )
        })
        .collect();
    chrome(
        &format!("Rentals {s}"),
        &format!(
            "<main><section class=hero><h1>Gear rental, season {s}</h1><p>Everything for a \
             night out, from the {} to the {}, without buying any of it.</p>\
             <a class=button href=/signup>Start now</a></section>\
             <section class=features><h2>Why rent with us</h2>{features}</section>\
             <section class=pricing><h2>Pricing for season {s}</h2><p>A weekend costs €{} per \
             person, a full week €{}; group rates start at six people.</p></section>\
             <section class=faq><h2>Questions</h2><h3>What if the {} breaks?</h3><p>We swap \
             it at no cost within {} hours of your call, wherever you are on the trail.</p>\
             </section></main>",
            thing(s),
            thing(s + 2),
            30 + s,
            90 + s,
            thing(s + 1),
            12 + s
        ),
        "",
    )
}

/// A product page: gallery, buy box, a description and a specification table in tabs, reviews
/// and a JSON-LD `Product` with the description again.
fn product_page(p: usize) -> String {
    let name = format!("{} Pro {p}", thing(p));
    let description = format!(
        "The {name} weighs under a kilogram, packs into its own {} and keeps working after a \
         night of rain at minus five degrees.",
        thing(p + 1)
    );
    let ld = format!(
        "<script type=application/ld+json>{{\"@context\":\"https://schema.org\",\
         \"@type\":\"Product\",\"name\":\"{name}\",\"description\":\"{description}\"}}</script>"
    );
    chrome(
        &name,
        &format!(
            "<main><div class=product itemscope itemtype=https://schema.org/Product>\
             <div class=gallery><img src=/img/{p}.jpg alt=\"{name}\"></div>\
             <div class=buy-box><h1 itemprop=name>{name}</h1><span class=price>€{}.00</span>\
             <button>Add to cart</button><a href=/wishlist>Add to wishlist</a></div>\
             <div class=tabs><ul role=tablist><li><a href=#desc>Description</a></li>\
             <li><a href=#specs>Specifications</a></li></ul>\
             <div id=desc role=tabpanel><p itemprop=description>{description}</p></div>\
             <div id=specs role=tabpanel hidden><table><tr><th>Weight</th><td>{} g</td></tr>\
             <tr><th>Material</th><td>ripstop {}</td></tr></table></div></div></div></main>",
            40 + p,
            700 + p,
            thing(p + 3)
        ),
        &ld,
    )
}

/// A documentation page whose headings are links to themselves.
fn docs_page(d: usize) -> String {
    let sections: String = (0..3)
        .map(|k| {
            let id = format!("{}-{k}", thing(d + k));
            format!(
                "<h2 id={id}><a href=#{id}>Setting up the {} {k}</a></h2><p>To set up the {} \
                 on release {d}, open its config file and set the {} option before the first \
                 run; the defaults suit most trips.</p>",
                thing(d + k),
                thing(d + k),
                thing(d + k + 2)
            )
        })
        .collect();
    chrome(
        &format!("Guide {d}"),
        &format!(
            "<div class=docs><nav class=toc><a href=#a>Contents</a></nav><main>\
             <h1><a href=#top>Guide to the {} {d}</a></h1>{sections}</main></div>",
            thing(d)
        ),
        "",
    )
}

/// A quickstart whose code sample comes in three languages, in tabs: the first shown, the
/// others hidden until their tab is chosen.
fn code_tabs_page(d: usize) -> String {
    let sample = |lang: &str, call: &str| {
        format!(
            "<pre><code class=language-{lang}>client = connect(\"{}-{d}\")\n{call}(client, \
             \"hello from release {d}\")</code></pre>",
            thing(d)
        )
    };
    chrome(
        &format!("Quickstart {d}"),
        &format!(
            "<main><h1>Send your first message, release {d}</h1><p>Install the client for your \
             language, set your key, and run the sample below; the message arrives within a \
             few seconds on the {} you registered.</p><div class=code-tabs>\
             <div role=tablist><button role=tab>Python</button><button role=tab>Node.js\
             </button><button role=tab>Go</button></div>\
             <div role=tabpanel>{}</div><div role=tabpanel hidden>{}</div>\
             <div role=tabpanel style=\"display: none\">{}</div></div>\
             <p>Run the sample from a terminal; the console prints the message's id.</p></main>",
            thing(d + 1),
            sample("python", "send_python"),
            sample("javascript", "await sendNode"),
            sample("go", "SendGo")
        ),
        "",
    )
}

/// A news page that appends the next story below the first (continuous scroll).
fn two_articles_page(a: usize) -> String {
    let story = |n: usize, title: &str| {
        let paragraphs: String = (0..4)
            .map(|k| {
                format!(
                    "<p>Story {n} paragraph {k}: rangers counted the {} left at the lake and \
                     asked walkers to carry out every {} they bring in, a rule that starts in \
                     spring.</p>",
                    thing(n + k),
                    thing(n + k + 5)
                )
            })
            .collect::<String>();
        format!("<article class=story><h1>{title}</h1><p class=byline>By staff</p>{paragraphs}</article>")
    };
    chrome(
        &format!("Story {a}"),
        &format!(
            "<main>{}<div class=next-story><h2>Next story</h2>{}</div></main>",
            story(a, &format!("Lake rules change, story {a}")),
            story(a + 100, &format!("A second story, {}", a + 100))
        ),
        "",
    )
}

fn dom(html: &str) -> Dom {
    parse_bytes(html.as_bytes(), None).dom
}

/// Page mode (the page alone) and site mode (three pages of its kind): the first page's text.
fn cleaned(make: impl Fn(usize) -> String) -> (String, String) {
    let page = clean_site(&[dom(&make(1))], Algorithm::default(), Renders::Text).texts[0].clone();
    let doms: Vec<Dom> = (1..4).map(|i| dom(&make(i))).collect();
    let site = clean_site(&doms, Algorithm::default(), Renders::Text).texts[0].clone();
    (page, site)
}

fn assert_keeps(mode: &str, text: &str, wanted: &[String], chaff: &[&str]) {
    for w in wanted {
        assert!(text.contains(w.as_str()), "{mode} lost {w:?}:\n{text}");
    }
    for c in chaff {
        assert!(!text.contains(c), "{mode} kept {c:?}:\n{text}");
    }
}

const CHROME: [&str; 4] = [
    "Privacy policy",
    "All rights reserved",
    "Careers",
    "Contact",
];

#[test]
fn a_thread_held_in_noscript_is_read() {
    let (page, site) = cleaned(|t| thread_page(t, true));
    let wanted: Vec<String> = posts(1).into_iter().map(|(_, text)| text).collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        assert_keeps(mode, text, &wanted, &CHROME);
    }
}

#[test]
fn a_thread_of_posts_keeps_every_post_not_the_related_threads() {
    let (page, site) = cleaned(|t| thread_page(t, false));
    let wanted: Vec<String> = posts(1).into_iter().map(|(_, text)| text).collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        let mut chaff = CHROME.to_vec();
        chaff.extend(["Related threads", "Report"]);
        assert_keeps(mode, text, &wanted, &chaff);
    }
}

#[test]
fn a_product_grid_keeps_its_items_not_the_facets() {
    let (page, site) = cleaned(grid_page);
    let wanted: Vec<String> = (0..8)
        .map(|k| format!("{} model 1{k}", thing(1 + k)))
        .collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        let mut chaff = CHROME.to_vec();
        chaff.extend(["Brand 2", "Weight 3", "Showing 8 of 64"]);
        assert_keeps(mode, text, &wanted, &chaff);
    }
}

#[test]
fn a_landing_page_keeps_all_its_sections() {
    let (page, site) = cleaned(landing_page);
    let mut wanted = vec![
        "Everything for a night out".to_string(),
        "Plan 1 feature 2".to_string(),
        "A weekend costs €31 per person".to_string(),
        format!("What if the {} breaks?", thing(2)),
    ];
    // A known gap (docs/quality.md): page mode drops the last answer of the FAQ, the block
    // nearest the footer; the site's other pages show that it is content.
    assert_keeps("page", &page, &wanted, &CHROME);
    wanted.push("We swap it at no cost within 13 hours".to_string());
    assert_keeps("site", &site, &wanted, &CHROME);
}

#[test]
fn a_product_page_keeps_its_description() {
    let (page, site) = cleaned(product_page);
    let wanted = vec![format!("The {} Pro 1 weighs under a kilogram", thing(1))];
    for (mode, text) in [("page", &page), ("site", &site)] {
        let mut chaff = CHROME.to_vec();
        chaff.push("Add to wishlist");
        assert_keeps(mode, text, &wanted, &chaff);
    }
}

#[test]
fn headings_that_link_to_themselves_are_kept() {
    let (page, site) = cleaned(docs_page);
    let wanted: Vec<String> = (0..3)
        .map(|k| format!("\nSetting up the {} {k}\n", thing(1 + k)))
        .collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        assert_keeps(mode, text, &wanted, &CHROME);
    }
}

#[test]
fn a_page_with_a_second_article_keeps_the_first() {
    let (page, site) = cleaned(two_articles_page);
    let wanted: Vec<String> = (0..4).map(|k| format!("Story 1 paragraph {k}:")).collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        assert_keeps(mode, text, &wanted, &CHROME);
    }
}

/// `html` with its whole body in an element hidden until the page's scripts run (against a
/// flash of unstyled content), holding a dialog that hides itself.
fn veiled(html: String) -> String {
    html.replacen(
        "<body>",
        "<body><div style=\"visibility:hidden;min-height:100vh\">\
         <div class=cookie-dialog style=\"display:none\"><p>We use cookies to improve your \
         experience. Manage cookie settings or accept all cookies.</p></div>",
        1,
    )
    .replacen("</body>", "</div></body>", 1)
}

#[test]
fn regression_a_page_veiled_until_its_scripts_run_comes_out_empty() {
    let (page, site) = cleaned(|a| veiled(two_articles_page(a)));
    let wanted: Vec<String> = (0..4).map(|k| format!("Story 1 paragraph {k}:")).collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        let mut chaff = CHROME.to_vec();
        chaff.push("cookie settings");
        assert_keeps(mode, text, &wanted, &chaff);
    }
}

#[test]
fn a_code_sample_keeps_the_languages_in_its_hidden_tabs() {
    let (page, site) = cleaned(code_tabs_page);
    let wanted: Vec<String> = ["send_python", "await sendNode", "SendGo"]
        .iter()
        .map(|call| format!("{call}(client, \"hello from release 1\")"))
        .collect();
    for (mode, text) in [("page", &page), ("site", &site)] {
        assert_keeps(mode, text, &wanted, &CHROME);
    }
}
