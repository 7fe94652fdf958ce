//! What a store's pages cost on disk, by record kind (docs/benchmarks.md, "A million pages"):
//! keys, key bytes and value bytes per key prefix (the table in `store`'s module doc), per
//! stored page, against sled's size on disk, and the page files (each page's HTML and DOM, lz4,
//! outside sled since schema 6). Reads the whole store once.
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
    Ok(())
}
