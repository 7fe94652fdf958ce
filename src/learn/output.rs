//! Where cleaned text goes: `OUT/<site>/<page id>.txt` (or `.md`, `crawl.format = "markdown"`;
//! written atomically, so a kill -9 never leaves half a file) plus `OUT/<site>/index.tsv` (page
//! id → URL), and the page's `CleanRecord` with its Markdown (and `BylineRecord`, what its
//! byline said) in the store, which `export` reads.
//!
//! The store is the truth: a kill -9 between writing text files and their index leaves them out
//! of step, so the learner calls [`Output::reconcile`] for every site when it starts, which
//! makes the site's directory hold exactly the store's cleaned pages and an index.tsv listing
//! them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::crawl::url::{page_stem, without_credentials};
use crate::output::parts::MarkdownParts;
use crate::output::{site_dir_name, write_atomic};
use crate::output::{FileFormat, TextFormat};
use crate::store::{now_ms, BylineRecord, CleanBatch, CleanRecord, Store, StoreError};
use crate::template::Cleaned;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A page whose cleaned text was just written to its file (what [`Output::notify`]'s callback
/// is told).
#[derive(Clone, Copy)]
pub struct WrittenPage<'a> {
    pub site: &'a str,
    pub page_id: u64,
    /// The page's cluster in its site's clustering.
    pub cluster: u32,
    pub text: &'a str,
    /// `OUT/<site>/<page id>.txt` (`.md` in Markdown).
    pub path: &'a Path,
    store: &'a Store,
}

impl WrittenPage<'_> {
    /// The page's URL (credentials removed), read from the store when asked: one record read.
    pub fn url(&self) -> Option<String> {
        let meta = self.store.page(self.page_id).ok().flatten()?;
        Some(without_credentials(&meta.url).into_owned())
    }
}

impl std::fmt::Debug for WrittenPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrittenPage")
            .field("site", &self.site)
            .field("page_id", &self.page_id)
            .field("cluster", &self.cluster)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A callback told of every page whose cleaned text is written. It runs on the learner's
/// threads, in the middle of a step: it should be quick.
pub type WrittenSink = Arc<dyn Fn(&WrittenPage<'_>) + Send + Sync>;

pub struct Output {
    dir: PathBuf,
    format: FileFormat,
    notify: Option<WrittenSink>,
}

impl Output {
    pub fn new(dir: &Path) -> Output {
        Output {
            dir: dir.to_path_buf(),
            format: FileFormat::default(),
            notify: None,
        }
    }

    /// The crawl's output as `config` sets it (`crawl.out_dir`, `crawl.format`, `[markdown]`),
    /// telling `written` of every page it writes.
    pub fn of(config: &Config, written: Option<WrittenSink>) -> Output {
        Output::new(&config.crawl.out_dir)
            .format(config.crawl.format)
            .markdown(config.markdown)
            .notify(written)
    }

    /// Write the pages' files in `format` (plain text by default).
    pub fn format(mut self, format: TextFormat) -> Output {
        self.format.format = format;
        self
    }

    /// What Markdown files keep beyond the text (links and images by default).
    pub fn markdown(mut self, parts: MarkdownParts) -> Output {
        self.format.markdown = parts;
        self
    }

    /// A page's file under `dir`.
    fn file_path(&self, dir: &Path, id: u64) -> PathBuf {
        dir.join(format!("{}.{}", page_stem(id), self.format.extension()))
    }

    /// Tell `sink` (when given) of every page whose text file this output writes.
    pub fn notify(mut self, sink: Option<WrittenSink>) -> Output {
        self.notify = sink;
        self
    }

    pub fn site_dir(&self, site: &str) -> PathBuf {
        self.dir.join(site_dir_name(site))
    }

    /// Record and write one page's cleaned text; `false` when it was already exactly this.
    pub fn page(
        &self,
        store: &Store,
        site: &str,
        id: u64,
        cluster: u32,
        page: Cleaned,
    ) -> Result<bool, OutputError> {
        let mut batch = CleanBatch::default();
        let written = self.file(store, &mut batch, site, id, cluster, page)?;
        store.put_clean_batch(batch)?;
        Ok(written)
    }

    /// Write the page's file if its text (or cluster) changed, and add its record to `batch`
    /// (`false`: unchanged, nothing added). The page's byline goes to `batch` too, when it
    /// changed (a read per page). Callers store a step's batch at once
    /// (`Store::put_clean_batch`), after its files: a kill -9 in between leaves those pages'
    /// old records, which only costs writing their files again.
    pub fn file(
        &self,
        store: &Store,
        batch: &mut CleanBatch,
        site: &str,
        id: u64,
        cluster: u32,
        page: Cleaned,
    ) -> Result<bool, OutputError> {
        let Cleaned {
            text,
            markdown,
            byline,
        } = page;
        let record = BylineRecord {
            author: byline.author.clone(),
            published: byline.published.clone(),
        };
        if store.byline(id)?.unwrap_or_default() != record {
            batch.byline(id, &record);
        }
        let dir = self.site_dir(site);
        let path = self.file_path(&dir, id);
        let sum = (cluster, xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
        if store.cleaned_sum(id)? == Some(sum) && path.exists() {
            return Ok(false);
        }
        let body = self.format.body(&text, &markdown);
        let write = || write_atomic(&path, body.as_bytes());
        let written = match write() {
            // The site's first page (or the directory was removed): create it and try again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&dir).and_then(|()| write())
            }
            other => other,
        };
        written.map_err(|source| OutputError::Write {
            path: path.clone(),
            source,
        })?;
        if let Some(notify) = &self.notify {
            notify(&WrittenPage {
                site,
                page_id: id,
                cluster,
                text: &text,
                path: &path,
                store,
            });
        }
        batch.cleaned(
            site,
            id,
            &CleanRecord {
                cluster,
                text,
                updated_at_ms: now_ms(),
            },
            Some(&markdown),
        );
        Ok(true)
    }

    /// Rewrite `OUT/<site>/index.tsv` for the site's cleaned pages.
    pub fn index(&self, store: &Store, site: &str) -> Result<(), OutputError> {
        self.write_index(site, &self.index_rows(store, site)?)
    }

    /// The rows of `OUT/<site>/index.tsv`: page id → URL of each of the site's cleaned pages
    /// (a scan of the site's pages in the store).
    pub fn index_rows(
        &self,
        store: &Store,
        site: &str,
    ) -> Result<BTreeMap<u64, String>, OutputError> {
        let mut rows = BTreeMap::new();
        for id in store.site_pages(site)? {
            if !store.has_cleaned(id)? {
                continue;
            }
            if let Some(meta) = store.page(id)? {
                rows.insert(id, without_credentials(&meta.url).into_owned());
            }
        }
        Ok(rows)
    }

    /// Make `OUT/<site>/` match the store: a text file for every cleaned page (rewritten from
    /// the store when missing), none for other pages (left by an interrupted step), no
    /// temporary files, and index.tsv listing exactly the cleaned pages. Returns whether
    /// anything had to change.
    pub fn reconcile(&self, store: &Store, site: &str) -> Result<bool, OutputError> {
        let rows = self.index_rows(store, site)?;
        let dir = self.site_dir(site);
        if rows.is_empty() && !dir.exists() {
            return Ok(false);
        }
        let mut changed = false;
        let mut on_disk = std::collections::BTreeSet::new();
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let stray = if name.starts_with('.') && name.ends_with(".tmp") {
                    true
                } else if let Some(stem) = name
                    .strip_suffix(self.format.extension())
                    .and_then(|n| n.strip_suffix('.'))
                {
                    match u64::from_str_radix(stem, 16) {
                        Ok(id) if stem.len() == 16 && rows.contains_key(&id) => {
                            on_disk.insert(id);
                            false
                        }
                        Ok(_) if stem.len() == 16 => true,
                        _ => false,
                    }
                } else {
                    false
                };
                if stray {
                    let path = entry.path();
                    std::fs::remove_file(&path)
                        .map_err(|source| OutputError::Write { path, source })?;
                    changed = true;
                }
            }
        }
        for &id in rows.keys() {
            if on_disk.contains(&id) {
                continue;
            }
            if let Some(clean) = store.cleaned(id)? {
                let path = self.file_path(&dir, id);
                let markdown = match self.format.format {
                    TextFormat::Text => None,
                    // Text stored before Markdown was: its plain text.
                    TextFormat::Markdown => store.cleaned_markdown(id)?,
                };
                let markdown = markdown.as_deref().unwrap_or(&clean.text);
                let body = self.format.body(&clean.text, markdown);
                std::fs::create_dir_all(&dir)
                    .and_then(|()| write_atomic(&path, body.as_bytes()))
                    .map_err(|source| OutputError::Write { path, source })?;
                changed = true;
            }
        }
        // Steps append their rows (in cleaning order), so the file is compared as a set of
        // rows; a torn last line (a kill -9 mid-append) reads as a mismatch.
        let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap_or_default();
        if read_index_tsv(&index).as_ref() != Some(&rows) {
            self.write_index(site, &rows)?;
            changed = true;
        }
        Ok(changed)
    }

    /// Add `rows` (pages cleaned for the first time) at the end of `OUT/<site>/index.tsv`, in
    /// one write: a step costs its own rows, not the site's. Without an index file yet, it is
    /// written whole from the store (every cleaned page, `rows` included).
    pub fn append_index(
        &self,
        store: &Store,
        site: &str,
        rows: &[(u64, String)],
    ) -> Result<(), OutputError> {
        use std::io::Write;
        if rows.is_empty() {
            return Ok(());
        }
        let path = self.site_dir(site).join("index.tsv");
        let mut file = match std::fs::OpenOptions::new().append(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return self.index(store, site),
            Err(source) => return Err(OutputError::Write { path, source }),
        };
        let mut tsv = String::new();
        index_lines(&mut tsv, rows.iter().map(|(id, url)| (*id, url.as_str())));
        file.write_all(tsv.as_bytes())
            .map_err(|source| OutputError::Write { path, source })
    }

    /// Write `OUT/<site>/index.tsv` from `rows` (page id → URL).
    pub fn write_index(&self, site: &str, rows: &BTreeMap<u64, String>) -> Result<(), OutputError> {
        let tsv = index_tsv(rows);
        let dir = self.site_dir(site);
        std::fs::create_dir_all(&dir).map_err(|source| OutputError::Write {
            path: dir.clone(),
            source,
        })?;
        let path = dir.join("index.tsv");
        write_atomic(&path, tsv.as_bytes()).map_err(|source| OutputError::Write { path, source })
    }
}

/// index.tsv's header line.
const INDEX_HEADER: &str = "page_id\turl\n";

/// index.tsv's text for `rows` (page id → URL).
fn index_tsv(rows: &BTreeMap<u64, String>) -> String {
    let mut tsv = String::from(INDEX_HEADER);
    index_lines(&mut tsv, rows.iter().map(|(&id, url)| (id, url.as_str())));
    tsv
}

fn index_lines<'a>(tsv: &mut String, rows: impl Iterator<Item = (u64, &'a str)>) {
    for (id, url) in rows {
        tsv.push_str(&page_stem(id));
        tsv.push('\t');
        tsv.push_str(url);
        tsv.push('\n');
    }
}

/// The rows of an index.tsv's text, in any order; `None` when it is not a whole index (no
/// header, a torn or malformed line, a page listed twice).
fn read_index_tsv(text: &str) -> Option<BTreeMap<u64, String>> {
    let body = text.strip_prefix(INDEX_HEADER)?;
    if !body.is_empty() && !body.ends_with('\n') {
        return None;
    }
    let mut rows = BTreeMap::new();
    for line in body.lines() {
        let (stem, url) = line.split_once('\t')?;
        if stem.len() != 16 {
            return None;
        }
        let id = u64::from_str_radix(stem, 16).ok()?;
        if rows.insert(id, url.to_string()).is_some() {
            return None;
        }
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_reads_back_in_any_order_and_a_torn_one_does_not() {
        let rows: BTreeMap<u64, String> =
            [(1, "http://a/1".to_string()), (2, "http://a/2".to_string())].into();
        assert_eq!(read_index_tsv(&index_tsv(&rows)), Some(rows.clone()));
        let swapped = format!(
            "{INDEX_HEADER}{}\thttp://a/2\n{}\thttp://a/1\n",
            page_stem(2),
            page_stem(1)
        );
        assert_eq!(read_index_tsv(&swapped), Some(rows.clone()));
        let whole = index_tsv(&rows);
        assert_eq!(read_index_tsv(&whole[..whole.len() - 3]), None, "torn");
        assert_eq!(
            read_index_tsv(&whole[INDEX_HEADER.len()..]),
            None,
            "no header"
        );
        assert_eq!(
            read_index_tsv(&format!("{whole}{}\tx\n", page_stem(1))),
            None
        );
    }
}
