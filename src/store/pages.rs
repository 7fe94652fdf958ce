//! The store's page files: each stored page's raw HTML (lz4, or the raw deflate of its WARC
//! record) and DOM (lz4) and its path set, the bytes
//! sled held inline before schema 6, appended to `DATA/pages/NNNNNN.pages` and rotated by size, while sled keeps
//! a [`PageRef`] per page, written in the page's commit batch (docs/design.md, "The store").
//!
//! Why: sled keeps an in-memory entry per tree node for as long as a store is open, and 83 % of
//! the record bytes behind those nodes were HTML and DOMs (docs/benchmarks.md, "A million
//! pages"). Out here they cost sled one small reference a page.
//!
//! Crash order: bytes are written (at an offset this module tracks) before the batch holding
//! their reference is applied, so a kill -9 between the two leaves unreferenced bytes, never a
//! reference to bytes not written. `sync` (called by `Store::flush` before sled's own flush)
//! makes them durable; a reference whose bytes are short or fail their xxh3 (lost to a power
//! failure before a flush) reads as absent, with a warning.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use serde::{Deserialize, Serialize};

/// A page file is closed and a new one started past this size (unless the store is told
/// otherwise: `store.page_file_bytes`, whose default says why this much).
pub const FILE_BYTES: u64 = 256 << 20;

/// The subdirectory of the data directory that holds the page files.
pub const DIR: &str = "pages";

/// Where one page's stored bytes are: its HTML at `offset`, its DOM right after, then its path
/// set, each with the xxh3 of its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRef {
    pub file: u32,
    pub offset: u64,
    pub html_len: u32,
    pub html_hash: u64,
    pub dom_len: u32,
    pub dom_hash: u64,
    pub paths_len: u32,
    pub paths_hash: u64,
}

impl PageRef {
    /// Bytes this page takes in its file.
    pub fn len(&self) -> u64 {
        u64::from(self.html_len) + u64::from(self.dom_len) + u64::from(self.paths_len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An HTML part is lz4 with its length in front (`lz4_flex`'s size-prepended block), or, when
/// the crawl deflated the page's body for its WARC record, these 4 bytes, the HTML's length
/// (u32, little-endian) and a raw deflate stream. No lz4 part starts so: its length prefix is
/// the length of a body under the fetch cap (`fetch.max_body_bytes`, 5 MiB by default), never
/// `u32::MAX`.
const DEFLATE_MAGIC: [u8; 4] = [0xff; 4];

/// The last block of a raw deflate stream that ended on a sync flush: a final fixed-Huffman
/// block holding only its end code (BFINAL 1, BTYPE 01, seven zero bits).
const FINAL_EMPTY_BLOCK: [u8; 2] = [0x03, 0x00];

/// An HTML part of `html` (lz4).
pub fn html_part(html: &[u8]) -> Vec<u8> {
    lz4_flex::compress_prepend_size(html)
}

/// An HTML part of `len` bytes whose raw deflate, ending on a sync flush with no final block
/// (`warc::write::Deflated::raw`), is `raw`: the bytes the WARC record holds are kept as they
/// are, so a page's body is compressed once (docs/warc.md, "Figures").
pub fn html_part_deflated(len: usize, raw: &[u8]) -> Vec<u8> {
    let len = u32::try_from(len).expect("invariant: a page body is under the fetch cap, < 4 GiB");
    let mut part = Vec::with_capacity(8 + raw.len() + FINAL_EMPTY_BLOCK.len());
    part.extend_from_slice(&DEFLATE_MAGIC);
    part.extend_from_slice(&len.to_le_bytes());
    part.extend_from_slice(raw);
    part.extend_from_slice(&FINAL_EMPTY_BLOCK);
    part
}

/// The HTML an HTML part holds, either codec.
pub fn html_of_part(part: &[u8]) -> Result<Vec<u8>, String> {
    let Some(rest) = part.strip_prefix(&DEFLATE_MAGIC) else {
        return lz4_flex::decompress_size_prepended(part).map_err(|e| e.to_string());
    };
    let (len, raw) = rest
        .split_first_chunk::<4>()
        .ok_or("deflate part shorter than its header")?;
    let len = u32::from_le_bytes(*len) as usize;
    let mut html = Vec::with_capacity(len);
    std::io::Read::read_to_end(&mut flate2::bufread::DeflateDecoder::new(raw), &mut html)
        .map_err(|e| e.to_string())?;
    if html.len() != len {
        return Err(format!(
            "deflate part holds {} bytes, not {len}",
            html.len()
        ));
    }
    Ok(html)
}

/// Which of a page's byte strings to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Html,
    Dom,
    Paths,
}

/// The file being appended to.
struct Writer {
    id: u32,
    file: File,
    /// Where the next bytes go: the file's length when opened, then what this writer wrote
    /// (a failed write is overwritten by the next one).
    len: u64,
    /// Files written since the last `sync` (a rotated one, the current one, a new directory
    /// entry): what `sync` must make durable.
    unsynced: bool,
    dir_unsynced: bool,
}

pub struct PageFiles {
    dir: PathBuf,
    /// [`FILE_BYTES`] (smaller in tests).
    pub(super) file_bytes: u64,
    writer: Mutex<Option<Writer>>,
    /// Read handles by file id, opened on first read (`pread` on a shared handle).
    readers: RwLock<HashMap<u32, Arc<File>>>,
}

impl PageFiles {
    /// The page files of the store in `data_dir` (nothing is created until the first append).
    pub fn new(data_dir: &Path) -> PageFiles {
        PageFiles {
            dir: data_dir.join(DIR),
            file_bytes: FILE_BYTES,
            writer: Mutex::new(None),
            readers: RwLock::new(HashMap::new()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: u32) -> PathBuf {
        self.dir.join(format!("{id:06}.pages"))
    }

    /// The page files present, by id, with their lengths.
    pub fn files(&self) -> io::Result<Vec<(u32, u64)>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".pages"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            out.push((id, entry.metadata()?.len()));
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The file appended to now (or next): the last one. Compaction never removes it, so the
    /// marker's record of it (`Store::flush`) stays comparable.
    pub fn last(&self) -> io::Result<Option<(u32, u64)>> {
        if let Some(w) = self
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            return Ok(Some((w.id, w.len)));
        }
        Ok(self.files()?.last().copied())
    }

    /// Remove page file `id` (compaction moved its live pages to the last file, and the store
    /// flushed their new references first).
    pub fn remove(&self, id: u32) -> io::Result<()> {
        self.readers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        std::fs::remove_file(self.path(id))
    }

    /// Bytes in all page files.
    pub fn total_bytes(&self) -> io::Result<u64> {
        Ok(self.files()?.iter().map(|(_, len)| len).sum())
    }

    /// Append a page's `html`, `dom` and `paths` bytes; the reference to put in its commit
    /// batch.
    pub fn append(&self, html: &[u8], dom: &[u8], paths: &[u8]) -> io::Result<PageRef> {
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let adding = (html.len() + dom.len() + paths.len()) as u64;
        let w = match guard.take() {
            Some(w) => w,
            None => {
                std::fs::create_dir_all(&self.dir)?;
                match self.files()?.last() {
                    Some(&(id, _)) => Writer::open(&self.path(id), id)?,
                    None => Writer::create(&self.path(0), 0)?,
                }
            }
        };
        let w = if w.len > 0 && w.len + adding > self.file_bytes {
            w.file.sync_data()?;
            Writer::create(&self.path(w.id + 1), w.id + 1)?
        } else {
            w
        };
        let w = guard.insert(w);
        let offset = w.len;
        w.file.write_all_at(html, offset)?;
        w.file.write_all_at(dom, offset + html.len() as u64)?;
        w.file
            .write_all_at(paths, offset + (html.len() + dom.len()) as u64)?;
        w.len += adding;
        w.unsynced = true;
        Ok(PageRef {
            file: w.id,
            offset,
            html_len: html.len() as u32,
            html_hash: xxhash_rust::xxh3::xxh3_64(html),
            dom_len: dom.len() as u32,
            dom_hash: xxhash_rust::xxh3::xxh3_64(dom),
            paths_len: paths.len() as u32,
            paths_hash: xxhash_rust::xxh3::xxh3_64(paths),
        })
    }

    /// Make every byte appended so far durable (and a new file's name).
    pub fn sync(&self) -> io::Result<()> {
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let Some(w) = guard.as_mut() else {
            return Ok(());
        };
        if w.unsynced {
            w.file.sync_data()?;
            w.unsynced = false;
        }
        if w.dir_unsynced {
            File::open(&self.dir)?.sync_all()?;
            w.dir_unsynced = false;
        }
        Ok(())
    }

    /// One part of a stored page: `None` when its bytes are missing or are not the ones
    /// referenced (logged: only a power failure before a flush, or a damaged file, does that).
    pub fn read(&self, r: &PageRef, part: Part) -> io::Result<Option<Vec<u8>>> {
        let (offset, len, hash) = match part {
            Part::Html => (r.offset, r.html_len, r.html_hash),
            Part::Dom => (r.offset + u64::from(r.html_len), r.dom_len, r.dom_hash),
            Part::Paths => (
                r.offset + u64::from(r.html_len) + u64::from(r.dom_len),
                r.paths_len,
                r.paths_hash,
            ),
        };
        let Some(file) = self.reader(r.file)? else {
            tracing::warn!(file = %self.path(r.file).display(), "page file missing: page read as absent");
            return Ok(None);
        };
        let mut buf = vec![0; len as usize];
        match file.read_exact_at(&mut buf, offset) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                tracing::warn!(file = %self.path(r.file).display(), offset, "page file too short: page read as absent");
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
        if xxhash_rust::xxh3::xxh3_64(&buf) != hash {
            tracing::warn!(file = %self.path(r.file).display(), offset, "page bytes fail their hash: page read as absent");
            return Ok(None);
        }
        Ok(Some(buf))
    }

    fn reader(&self, id: u32) -> io::Result<Option<Arc<File>>> {
        if let Some(f) = self
            .readers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
        {
            return Ok(Some(f.clone()));
        }
        let file = match File::open(self.path(id)) {
            Ok(f) => Arc::new(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        self.readers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, file.clone());
        Ok(Some(file))
    }
}

impl Writer {
    fn create(path: &Path, id: u32) -> io::Result<Writer> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        let len = file.metadata()?.len();
        Ok(Writer {
            id,
            file,
            len,
            unsynced: false,
            dir_unsynced: true,
        })
    }

    /// The last file of an earlier run: appended to after what it holds (a torn tail left by a
    /// kill -9 was never referenced and stays as dead bytes).
    fn open(path: &Path, id: u32) -> io::Result<Writer> {
        let mut w = Writer::create(path, id)?;
        w.dir_unsynced = false;
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_part_of_either_codec_reads_back_and_a_bad_one_is_an_error() {
        let html = b"<html><p>one body, compressed once</p></html>".repeat(100);
        assert_eq!(html_of_part(&html_part(&html)).unwrap(), html);
        // Raw deflate ending on a sync flush, as the WARC writer makes it.
        let mut z = flate2::Compress::new(flate2::Compression::fast(), false);
        let mut raw = Vec::with_capacity(html.len() + 64);
        z.compress_vec(&html, &mut raw, flate2::FlushCompress::Sync)
            .unwrap();
        assert_eq!(z.total_in() as usize, html.len());
        let part = html_part_deflated(html.len(), &raw);
        assert_eq!(html_of_part(&part).unwrap(), html);
        assert!(html_of_part(&html_part_deflated(html.len() + 1, &raw)).is_err());
        assert!(html_of_part(&part[..part.len() / 2]).is_err());
        assert!(html_of_part(&DEFLATE_MAGIC).is_err());
    }

    #[test]
    fn appended_parts_read_back_and_files_rotate_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let files = PageFiles {
            file_bytes: 1000,
            ..PageFiles::new(dir.path())
        };
        assert!(
            files.files().unwrap().is_empty(),
            "nothing before the first append"
        );
        let big = vec![7u8; 490];
        let a = files.append(b"<p>a</p>", b"dom a", b"paths a").unwrap();
        let b = files.append(&big, &big, &[]).unwrap();
        let c = files.append(b"<p>c</p>", b"dom c", &[]).unwrap();
        assert_eq!(
            (a.file, b.file, c.file),
            (0, 0, 1),
            "a file past its size is closed"
        );
        assert_eq!(files.read(&a, Part::Html).unwrap().unwrap(), b"<p>a</p>");
        assert_eq!(files.read(&a, Part::Dom).unwrap().unwrap(), b"dom a");
        assert_eq!(files.read(&a, Part::Paths).unwrap().unwrap(), b"paths a");
        assert_eq!(files.read(&b, Part::Dom).unwrap().unwrap(), big);
        assert_eq!(files.read(&c, Part::Dom).unwrap().unwrap(), b"dom c");
        files.sync().unwrap();
        assert_eq!(files.total_bytes().unwrap(), a.len() + b.len() + c.len());
    }

    #[test]
    fn a_new_writer_appends_after_an_earlier_runs_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let a = PageFiles::new(dir.path())
            .append(b"one", b"1", b"")
            .unwrap();
        // A kill -9 mid-append: a torn tail nobody references.
        let path = dir.path().join(DIR).join("000000.pages");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut f, b"torn").unwrap();
        let files = PageFiles::new(dir.path());
        let b = files.append(b"two", b"2", b"").unwrap();
        assert_eq!(b.offset, a.len() + 4);
        assert_eq!(files.read(&a, Part::Html).unwrap().unwrap(), b"one");
        assert_eq!(files.read(&b, Part::Html).unwrap().unwrap(), b"two");
    }

    #[test]
    fn a_new_writer_starts_a_new_file_when_the_last_one_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let small = |d: &Path| PageFiles {
            file_bytes: 8,
            ..PageFiles::new(d)
        };
        let a = small(dir.path()).append(b"01234", b"567", b"").unwrap();
        let b = small(dir.path()).append(b"x", b"", b"").unwrap();
        assert_eq!(
            (a.file, b.file),
            (0, 1),
            "the next run's first page went to a full file"
        );
    }

    #[test]
    fn bytes_lost_or_changed_read_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let files = PageFiles::new(dir.path());
        let a = files.append(b"html", b"dom", b"p").unwrap();
        let path = dir.path().join(DIR).join("000000.pages");
        std::fs::write(&path, b"htmX").unwrap();
        assert_eq!(files.read(&a, Part::Html).unwrap(), None, "hash differs");
        assert_eq!(files.read(&a, Part::Dom).unwrap(), None, "file too short");
        let gone = PageRef { file: 9, ..a };
        assert_eq!(files.read(&gone, Part::Html).unwrap(), None, "no such file");
    }
}
