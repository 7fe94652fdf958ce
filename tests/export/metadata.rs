//! Per-page metadata on fixture pages of one site in six languages, each stating its canonical
//! URL, date and author a different way (JSON-LD, meta tags, `<time>` and `rel=author`, or not
//! at all).

use super::{keys_in_order, read_jsonl, Corpus};
use crate::support::corpus::Fixture;
use thresher::crawl::url::{page_id, page_stem};
use thresher::store::Store;
use thresher::template::content::tokens;

const BRAND: &str = "Example News";
const NAV: [&str; 6] = ["Home", "World", "City", "Sport", "Culture", "About us"];
const FOOTER: &str =
    "Example News is published by the Example Media Cooperative, all rights reserved.";

/// One fixture page: what it says and what export must make of it.
pub struct Page {
    pub path: &'static str,
    pub html_lang: &'static str,
    pub title: &'static str,
    /// Extra `<head>` markup (meta tags, canonical link, JSON-LD).
    pub head: &'static str,
    /// A byline paragraph inside the article (markup), or "".
    pub byline: &'static str,
    /// The byline's visible text (for the token count).
    pub byline_text: &'static str,
    pub paragraphs: [&'static str; 2],
    pub lang: &'static str,
    pub canonical: Option<&'static str>,
    pub published: Option<&'static str>,
    pub author: Option<&'static str>,
}

pub const PAGES: [Page; 6] = [
    Page {
        path: "/en/budget",
        html_lang: "en",
        title: "Council approves school budget",
        head: r#"<link rel="canonical" href="/en/budget">
            <script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle",
            "headline":"Council approves school budget","datePublished":"2024-03-01T09:30:00+01:00",
            "author":[{"@type":"Person","name":"Ann Lee"}]}</script>"#,
        byline: "",
        byline_text: "",
        paragraphs: [
            "The city council approved a new budget for schools and libraries on Tuesday evening. After months of debate, members agreed to spend more on teachers and to keep the central library open on Sundays.",
            "Parents who attended the meeting welcomed the decision, although several residents warned that the plan depends on higher property taxes next year.",
        ],
        lang: "eng",
        canonical: Some("https://news.example/en/budget"),
        published: Some("2024-03-01T09:30:00+01:00"),
        author: Some("Ann Lee"),
    },
    Page {
        path: "/de/haushalt?ref=home",
        html_lang: "de",
        title: "Stadtrat beschließt Schulhaushalt",
        head: r#"<meta property="og:url" content="https://news.example/de/haushalt">
            <meta property="article:published_time" content="2024-03-02">
            <meta name="author" content="Bernd Maier">"#,
        byline: "",
        byline_text: "",
        paragraphs: [
            "Der Stadtrat hat am Dienstagabend einen neuen Haushalt für Schulen und Bibliotheken beschlossen. Nach monatelanger Debatte einigten sich die Mitglieder darauf, mehr Geld für Lehrer auszugeben und die Zentralbibliothek auch sonntags geöffnet zu lassen.",
            "Eltern, die an der Sitzung teilnahmen, begrüßten die Entscheidung, obwohl einige Anwohner warnten, dass der Plan von höheren Grundsteuern im nächsten Jahr abhängt.",
        ],
        lang: "deu",
        canonical: Some("https://news.example/de/haushalt"),
        published: Some("2024-03-02"),
        author: Some("Bernd Maier"),
    },
    Page {
        path: "/fr/budget",
        html_lang: "fr",
        title: "Le conseil approuve le budget des écoles",
        head: "",
        byline: r#"<p class="byline">Par <a rel="author" href="/u/claire">Claire Dubois</a>, <time pubdate datetime="2024-03-03T08:00Z">3 mars 2024</time></p>"#,
        byline_text: "Par Claire Dubois, 3 mars 2024",
        paragraphs: [
            "Le conseil municipal a approuvé mardi soir un nouveau budget pour les écoles et les bibliothèques. Après des mois de débat, les élus ont accepté de dépenser davantage pour les enseignants et de garder la bibliothèque centrale ouverte le dimanche.",
            "Les parents présents à la réunion ont salué la décision, même si plusieurs habitants ont averti que le projet dépend d'une hausse des impôts fonciers l'année prochaine.",
        ],
        lang: "fra",
        canonical: None,
        published: Some("2024-03-03T08:00:00Z"),
        author: Some("Claire Dubois"),
    },
    Page {
        path: "/es/presupuesto",
        html_lang: "es",
        title: "El ayuntamiento aprueba el presupuesto escolar",
        head: "",
        byline: "",
        byline_text: "",
        paragraphs: [
            "El ayuntamiento aprobó el martes por la noche un nuevo presupuesto para las escuelas y las bibliotecas. Después de meses de debate, los concejales acordaron gastar más en los maestros y mantener abierta la biblioteca central los domingos.",
            "Los padres que asistieron a la reunión celebraron la decisión, aunque varios vecinos advirtieron que el plan depende de una subida de los impuestos el próximo año.",
        ],
        lang: "spa",
        canonical: None,
        published: None,
        author: None,
    },
    Page {
        path: "/ru/budget",
        html_lang: "ru",
        title: "Горсовет утвердил бюджет школ",
        head: r#"<meta name="date" content="2024-03-05">"#,
        byline: "",
        byline_text: "",
        paragraphs: [
            "Городской совет во вторник вечером утвердил новый бюджет для школ и библиотек. После нескольких месяцев споров депутаты согласились потратить больше денег на учителей и оставить центральную библиотеку открытой по воскресеньям.",
            "Родители, пришедшие на заседание, приветствовали это решение, хотя некоторые жители предупредили, что план зависит от повышения налогов на недвижимость в следующем году.",
        ],
        lang: "rus",
        canonical: None,
        published: Some("2024-03-05"),
        author: None,
    },
    Page {
        path: "/zh/budget",
        html_lang: "zh",
        title: "市议会批准学校预算",
        head: r#"<script type="application/ld+json">{"@type":"Article","datePublished":"2024-03-06","author":"王伟"}</script>"#,
        byline: "",
        byline_text: "",
        paragraphs: [
            "市议会星期二晚上批准了学校和图书馆的新预算。经过几个月的讨论，议员们同意增加教师的开支，并让中央图书馆在星期日继续开放。",
            "参加会议的家长对这一决定表示欢迎，但一些居民警告说，这项计划取决于明年提高房产税。",
        ],
        lang: "cmn",
        canonical: None,
        published: Some("2024-03-06"),
        author: Some("王伟"),
    },
];

const LAST_MODIFIED: (&str, &str) = ("last-modified", "Wed, 21 Oct 2015 07:28:00 GMT");

pub fn url(p: &Page) -> String {
    format!("https://news.example{}", p.path)
}

/// The fixture site: one template (brand, navigation, footer) around each page's article; the
/// first page has a `Last-Modified` header.
pub fn fixtures() -> Vec<Fixture> {
    PAGES
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let nav: String = NAV
                .iter()
                .map(|n| format!(r#"<a href="/{}">{n}</a> "#, n.to_lowercase()))
                .collect();
            let html = format!(
                r#"<!doctype html><html lang="{}"><head><meta charset="utf-8"><title>{}</title>{}</head>
<body><header><p>{BRAND}</p><nav>{nav}</nav></header>
<main><article><h1>{}</h1>{}<p>{}</p><p>{}</p></article></main>
<footer><p>{FOOTER}</p></footer></body></html>"#,
                p.html_lang,
                p.title,
                p.head,
                p.title,
                p.byline,
                p.paragraphs[0],
                p.paragraphs[1]
            );
            let mut f = Fixture::new(&url(p), html);
            if i == 0 {
                f.headers.push((LAST_MODIFIED.0.into(), LAST_MODIFIED.1.into()));
            }
            f
        })
        .collect()
}

#[test]
fn export_fills_metadata_from_what_each_page_states() {
    let corpus = Corpus::build(&fixtures());
    let out = corpus.path("corpus.jsonl");
    corpus.export_ok(&["--quiet", "--out", super::arg(&out)]);
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), PAGES.len());
    for line in std::fs::read_to_string(&out).unwrap().lines() {
        assert_eq!(
            keys_in_order(line),
            thresher::corpus::Field::DEFAULT.map(|f| f.name()),
            "every field, in order"
        );
    }

    let store = Store::open_existing(&corpus.data(), 8 << 20).unwrap();
    let template_tokens = tokens::count(BRAND)
        + NAV.iter().map(|n| tokens::count(n)).sum::<u32>()
        + tokens::count(FOOTER);
    for (i, p) in PAGES.iter().enumerate() {
        let id = page_id(&url(p).parse().unwrap());
        let row = rows
            .iter()
            .find(|r| r["id"] == page_stem(id).as_str())
            .unwrap_or_else(|| panic!("{} exported", p.path));
        let clean = store.cleaned(id).unwrap().unwrap();
        let str_or_null = |v: Option<&str>| v.map_or(serde_json::Value::Null, Into::into);
        assert_eq!(row["url"], url(p).as_str());
        assert_eq!(row["host"], "news.example");
        assert_eq!(row["title"], p.title);
        assert_eq!(row["text"], clean.text.as_str());
        assert_eq!(row["cluster"], clean.cluster);
        assert_eq!(row["fetched_at"], "2023-11-14T22:13:20Z");
        assert_eq!(row["canonical"], str_or_null(p.canonical), "{}", p.path);
        assert_eq!(row["published"], str_or_null(p.published), "{}", p.path);
        assert_eq!(row["author"], str_or_null(p.author), "{}", p.path);
        assert_eq!(row["lang"], p.lang, "{}: {}", p.path, clean.text);
        let confidence = row["lang_confidence"].as_f64().unwrap();
        assert!(
            confidence > 0.5 && confidence <= 1.0,
            "{}: {confidence}",
            p.path
        );
        assert_eq!(
            row["last_modified"],
            if i == 0 {
                "2015-10-21T07:28:00Z".into()
            } else {
                serde_json::Value::Null
            }
        );
        assert_eq!(row["dup_of"], serde_json::Value::Null);

        // The brand, navigation and footer are the site's template; the rest is the page's own.
        let own = tokens::count(p.title)
            + tokens::count(p.byline_text)
            + p.paragraphs.iter().map(|t| tokens::count(t)).sum::<u32>();
        let expected = f64::from(template_tokens) / f64::from(template_tokens + own);
        let ratio = row["template_ratio"].as_f64().unwrap();
        assert!(
            (ratio - expected).abs() < 0.0006,
            "{}: template_ratio {ratio}, expected {expected:.4}",
            p.path
        );
        // The cleaned text has none of the template.
        assert!(!clean.text.contains("Cooperative"), "{}", clean.text);
    }
}

/// Bylines become metadata: a site whose pages carry a "By <name> · <date>" line at one place
/// and state nothing in markup gets `author` and `published` from it (`from_byline` says so);
/// the one page whose markup states an author keeps the markup's.
#[test]
fn export_fills_author_and_date_from_bylines_only_where_markup_states_none() {
    const WHO: [&str; 3] = ["Ann Reporter", "Bo Writer", "Cy Columnist"];
    let story = |i: usize| {
        format!(
            "The harbour board met on day {i} to discuss the new quay, and the engineers said \
             the plan would change the town of Example for everyone who works near the water. \
             Residents asked for a public hearing on item {i} before any decision is taken."
        )
    };
    let fixtures: Vec<Fixture> = (0..6)
        .map(|i| {
            let head = if i == 0 {
                r#"<meta name="author" content="Markup Name">"#
            } else {
                ""
            };
            let html = format!(
                r#"<!doctype html><html><head><title>Story {i}</title>{head}</head><body>
<header><p>{BRAND}</p></header><main><h1>Harbour story number {i}</h1>
<p class="meta">By <a href="/u/{i}">{}</a> · March {}, 2024</p>
<div class="text"><p>{}</p><p>{}</p></div></main><footer><p>{FOOTER}</p></footer></body></html>"#,
                WHO[i % 3],
                i + 1,
                story(i),
                story(i + 10),
            );
            Fixture::new(&format!("https://byline.example/story/{i}"), html)
        })
        .collect();
    let corpus = Corpus::build(&fixtures);
    let out = corpus.path("bylines.jsonl");
    corpus.export_ok(&[
        "--quiet",
        "--fields",
        "url,author,published,from_byline,text",
        "--out",
        super::arg(&out),
    ]);
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let i: usize = row["url"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(!row["text"].as_str().unwrap().contains("By "), "{row:?}");
        assert_eq!(row["published"], format!("2024-03-{:02}", i + 1), "{row:?}");
        if i == 0 {
            assert_eq!(row["author"], "Markup Name", "markup wins");
            assert_eq!(row["from_byline"], "published");
        } else {
            assert_eq!(row["author"], WHO[i % 3]);
            assert_eq!(row["from_byline"], "author,published");
        }
    }
}
