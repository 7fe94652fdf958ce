//! Clean a directory of one site's saved pages with thresher as a library: the same work as
//! `thresher clean DIR --out OUT`. Every `*.html` file in DIR is a page of the site; the site's
//! templates are learned from all of them, and each page's text without the template is written
//! to `OUT/<dir name>/<file stem>.txt`, then shown here.
//!
//!   cargo run --release --example clean_site -- DIR [OUT]
//!
//! Without DIR it first writes a small demo site (six pages sharing a header, a menu and a
//! footer) to a temporary directory and cleans that.

use std::path::{Path, PathBuf};

use thresher::clean::{Clean, Observer};

/// Say what is skipped as it happens (every other event is left at its default: nothing).
struct Warnings;

impl Observer for Warnings {
    fn problem(&self, msg: &str) {
        eprintln!("skipped: {msg}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let demo = tempfile::tempdir()?;
    let dir = match args.next() {
        Some(dir) => dir,
        None => demo_site(&demo.path().join("demo.example"))?,
    };
    let out = args.next().unwrap_or_else(|| demo.path().join("out"));

    let outcome = Clean::new(&out).site_dir(&dir).run(&Warnings)?;

    for site in &outcome.sites {
        println!(
            "{}: {} pages in {} template clusters ({:.1} KB of HTML)",
            site.name,
            site.pages,
            site.clusters,
            site.bytes as f64 / 1e3
        );
        let mut pages: Vec<PathBuf> = std::fs::read_dir(out.join(&site.name))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        pages.sort();
        for page in pages {
            let text = std::fs::read_to_string(&page)?;
            let name = page.file_name().unwrap_or_default().to_string_lossy();
            println!("--- {name}\n{}", text.trim_end());
        }
    }
    Ok(())
}

/// Six pages of one site: the same header, menu and footer around different articles.
fn demo_site(dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let topics = [
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
    ];
    for (name, sentence) in topics {
        let menu: String = topics
            .iter()
            .map(|(t, _)| format!("<li><a href=\"/{t}.html\">{t}</a></li>"))
            .collect();
        let html = format!(
            "<!doctype html><html><head><title>{name} | Waterways</title></head><body>\
             <header><h1>Waterways</h1><p>A small site about water</p></header>\
             <nav><ul>{menu}</ul></nav>\
             <main><article><h2>About {name}</h2><p>{sentence}</p>\
             <p>This page tells a little more about {name}, so that it has text of its own \
             that no other page of the site repeats.</p></article></main>\
             <footer><p>Copyright Waterways. All rights reserved.</p>\
             <p><a href=\"/about.html\">About us</a> <a href=\"/contact.html\">Contact</a></p>\
             </footer></body></html>"
        );
        std::fs::write(dir.join(format!("{name}.html")), html)?;
    }
    Ok(dir.to_path_buf())
}
