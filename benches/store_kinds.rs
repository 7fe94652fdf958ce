//! What a store's pages cost on disk, by record kind (docs/benchmarks.md, "Memory"):
//! keys, key bytes and value bytes per key prefix (the table in `store`'s module doc), per
//! stored page, against sled's size on disk, and the page files (each page's HTML and DOM, lz4,
//! and path set, outside sled since schema 6), split by part through each page's reference.
//! Reads the whole store once.
//!
//! cargo bench --bench store_kinds -- DATA_DIR

use thresher::store::Store;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .ok_or("usage: store_kinds DATA_DIR")?;
    let store = Store::open_existing(std::path::Path::new(&dir), 64 << 20)?;
    let pages = store.page_count().max(1);
    let page_files = store.page_file_bytes()?;
    let disk = store.size_on_disk() - page_files;
    let kinds = store.bytes_by_kind()?;
    println!("kind\tkeys\tkey_bytes\tvalue_bytes\tbytes_per_page");
    let mut total = 0;
    for k in &kinds {
        let bytes = k.key_bytes + k.value_bytes;
        total += bytes;
        println!(
            "{}\t{}\t{}\t{}\t{:.0}",
            k.prefix,
            k.keys,
            k.key_bytes,
            k.value_bytes,
            bytes as f64 / pages as f64
        );
    }
    println!(
        "all\t\t\t{total}\t{:.0}\nsled on disk\t\t\t{disk}\t{:.0}\npage files\t\t\t{page_files}\t{:.0}\npages\t{pages}",
        total as f64 / pages as f64,
        disk as f64 / pages as f64,
        page_files as f64 / pages as f64
    );
    let (mut html, mut dom, mut paths, mut referenced) = (0u64, 0u64, 0u64, 0u64);
    for page in store.pages() {
        let (id, _) = page?;
        if let Some(r) = store.page_ref(id)? {
            html += u64::from(r.html_len);
            dom += u64::from(r.dom_len);
            paths += u64::from(r.paths_len);
            referenced += 1;
        }
    }
    let per = |b: u64| b as f64 / referenced.max(1) as f64;
    println!(
        "page files by part ({referenced} pages referenced)\nraw HTML\t\t\t{html}\t{:.0}\nDOM\t\t\t{dom}\t{:.0}\npath set\t\t\t{paths}\t{:.0}",
        per(html),
        per(dom),
        per(paths)
    );
    Ok(())
}
