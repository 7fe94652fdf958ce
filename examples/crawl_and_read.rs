//! Crawl a few seeds with thresher as a library and read each page's cleaned text as it is
//! written: a `CrawlRun` (what `thresher crawl` runs) with an event handler.
//!
//!   cargo run --release --example crawl_and_read                 # a demo site served here
//!   cargo run --release --example crawl_and_read -- https://example.com/ …
//!
//! Without URLs it serves a small site on 127.0.0.1 (a home page and eight articles that share a
//! header, a menu and a footer) and crawls that; with URLs it crawls those sites politely (robots.txt,
//! 500 ms between requests to a host) up to 50 pages. The store and the cleaned text go to a
//! temporary directory, removed when the example ends.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use thresher::config::Config;
use thresher::run::{CrawlRun, Event};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let urls: Vec<String> = std::env::args().skip(1).collect();
    let work = tempfile::tempdir()?;
    let mut config = Config::default();
    config.crawl.data_dir = work.path().join("data");
    config.crawl.out_dir = work.path().join("out");
    config.crawl.max_pages = 50;
    let seeds = if urls.is_empty() {
        // Our own server: no need to wait between requests.
        config.crawl.delay = Duration::ZERO;
        vec![url::Url::parse(&serve_demo_site()?)?]
    } else {
        urls.iter()
            .map(|u| url::Url::parse(u))
            .collect::<Result<_, _>>()?
    };

    let report = CrawlRun::new(config).seeds(seeds).run(|event| {
        // Called from the run's threads as things happen; `Event::Tick` (every 200 ms) and the
        // others are what `thresher crawl` turns into its progress display.
        if let Event::Written(page) = event {
            let first = page
                .text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            println!(
                "{} (cluster {}, {} lines): {first}",
                page.url().unwrap_or_default(),
                page.cluster,
                page.text.lines().count()
            );
        }
    })?;

    let s = &report.crawl;
    println!(
        "{} responses, {} pages stored, {} errors in {:.2} s",
        s.fetched,
        s.stored,
        s.errors,
        s.elapsed.as_secs_f64()
    );
    if let Some(learned) = &report.learned {
        println!("{} text files written", learned.pages_written);
    }
    Ok(())
}

/// Serve the demo site on 127.0.0.1 (a port of the system's choosing) from a thread; its home
/// page's URL.
fn serve_demo_site() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let home = format!("http://{}/", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = answer(stream);
            });
        }
    });
    Ok(home)
}

const TOPICS: [(&str, &str); 8] = [
    (
        "rivers",
        "Rivers carry water from the hills to the sea, shaping valleys as they go.",
    ),
    (
        "bridges",
        "A bridge spans a gap; the oldest were fallen trees, the newest are steel.",
    ),
    (
        "harbours",
        "Harbours shelter ships from the open sea behind walls of stone.",
    ),
    (
        "canals",
        "Canals join rivers, and locks lift boats from one level to the next.",
    ),
    (
        "lighthouses",
        "A lighthouse marks a dangerous coast with a light seen for miles.",
    ),
    (
        "ferries",
        "Ferries carry people and cars across water where no bridge stands.",
    ),
    (
        "dams",
        "A dam holds a river back, and the lake behind it turns turbines.",
    ),
    (
        "tides",
        "Tides rise and fall twice a day, pulled by the moon and the sun.",
    ),
];

/// One HTTP/1.1 request, one answer, then the connection closes.
fn answer(stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let body = page(path);
    let status = if body.is_some() {
        "200 OK"
    } else {
        "404 Not Found"
    };
    let body = body.unwrap_or_default();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The demo site's page at `path`: the home page, an article, or none.
fn page(path: &str) -> Option<String> {
    let menu: String = TOPICS
        .iter()
        .map(|(t, _)| format!("<li><a href=\"/{t}\">{t}</a></li>"))
        .collect();
    let (title, main) = if path == "/" {
        let list: String = TOPICS
            .iter()
            .map(|(t, s)| format!("<li><a href=\"/{t}\">{t}</a>: {s}</li>"))
            .collect();
        (
            "Waterways".to_string(),
            format!("<h2>Every article</h2><ul>{list}</ul>"),
        )
    } else {
        let (name, sentence) = TOPICS.iter().find(|(t, _)| path == format!("/{t}"))?;
        (
            format!("{name} | Waterways"),
            format!(
                "<article><h2>About {name}</h2><p>{sentence}</p><p>This page tells a little \
                 more about {name}, so that it has text of its own that no other page of the \
                 site repeats.</p></article>"
            ),
        )
    };
    Some(format!(
        "<!doctype html><html><head><title>{title}</title></head><body>\
         <header><h1>Waterways</h1><p>A small site about water</p></header>\
         <nav><ul>{menu}</ul></nav><main>{main}</main>\
         <footer><p>Copyright Waterways. All rights reserved.</p></footer></body></html>"
    ))
}
