//! Dev-only: the parser's speed over datasets (every `DATASET/<site>/*.html`, single thread):
//! pages, MB, seconds, MB/s, ms per page and the path count.
//!
//!   cargo run --release --example parse_speed -- DATASET...

fn main() {
    let mut files = vec![];
    for ds in std::env::args().skip(1) {
        for site in std::fs::read_dir(&ds).unwrap() {
            let site = site.unwrap().path();
            if !site.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&site).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|x| x == "html") {
                    files.push(std::fs::read(&f).unwrap());
                }
            }
        }
    }
    let bytes: usize = files.iter().map(|f| f.len()).sum();
    let t = std::time::Instant::now();
    let mut nodes = 0;
    for f in &files {
        let p = thresher::dom::parse_bytes(f, None);
        nodes += p.dom.path_set().len();
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{} pages {:.1} MB in {:.2}s = {:.1} MB/s, {:.2} ms/page, {} paths",
        files.len(),
        bytes as f64 / 1e6,
        s,
        bytes as f64 / 1e6 / s,
        s * 1000.0 / files.len() as f64,
        nodes
    );
}
