//! A set of WARC files written into one directory. A file is written as `NAME.warc.gz.open`
//! (whole gzip members appended, one record each; the writer holds an exclusive `flock` on it),
//! then fsync'd and renamed to `NAME.warc.gz` when it reaches its size or the set is finished,
//! so a `.warc.gz` is always whole. Each file starts with a `warcinfo` record. A `.open` file
//! that no live writer holds (its writer was killed) is cut back to its last complete gzip member
//! and finished the same way by the next writer on the directory ([`recover`]).
//!
//! Names: `PREFIX-TIMESTAMP-SERIAL-PID-RAND.warc.gz`: UTC creation time to the millisecond (so
//! names sort in time order), a serial per writer, the process id and 16 random bits.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;

use super::write::{date_ms, gzip_record, record_id, sha1_digest, unix_ms};

/// The name of a finished file ends so.
pub const SUFFIX: &str = ".warc.gz";
/// A file being written (or left by a killed writer) ends so.
pub const OPEN_SUFFIX: &str = ".warc.gz.open";

/// A WARC file or directory that cannot be written (the path says which).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct WarcWriteError {
    pub path: PathBuf,
    pub source: io::Error,
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> WarcWriteError + '_ {
    move |source| WarcWriteError {
        path: path.to_path_buf(),
        source,
    }
}

/// What [`recover`] did with a `.open` file left by a killed writer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The finished file (or the `.open` file, removed, when nothing in it was whole).
    pub path: PathBuf,
    /// Bytes kept: the complete members.
    pub kept: u64,
    /// Bytes cut off the end: a member the kill tore.
    pub cut: u64,
}

/// The writer's settings.
#[derive(Clone, Debug)]
pub struct FileSetOptions {
    /// File name prefix (`thresher`).
    pub prefix: String,
    /// A file is finished once it holds this many bytes (it ends after the member that crosses
    /// the size, so a record is never split).
    pub max_bytes: u64,
    pub level: Compression,
    /// The block of each file's `warcinfo` record: `application/warc-fields` lines.
    pub info: String,
}

/// The WARC files being written into a directory (see the module header).
pub struct FileSet {
    dir: PathBuf,
    options: FileSetOptions,
    serial: u32,
    current: Option<OpenFile>,
}

struct OpenFile {
    file: File,
    /// `NAME.warc.gz.open`.
    path: PathBuf,
    /// Bytes of complete members written.
    bytes: u64,
}

impl FileSet {
    /// Writes into `dir` (created if missing), after finishing what killed writers left there
    /// (`recover`). No file is created until the first record.
    pub fn open(
        dir: &Path,
        options: FileSetOptions,
    ) -> Result<(FileSet, Vec<Recovered>), WarcWriteError> {
        std::fs::create_dir_all(dir).map_err(at(dir))?;
        let recovered = recover(dir)?;
        Ok((
            FileSet {
                dir: dir.to_path_buf(),
                options,
                serial: 0,
                current: None,
            },
            recovered,
        ))
    }

    /// Append `members` (whole gzip members, each one record) to the current file, starting a
    /// file first if none is open, and finish the file once it reaches its size. On a write
    /// error the file is cut back to its last complete member, so nothing torn stays in it.
    pub fn append(&mut self, members: &[&[u8]]) -> Result<(), WarcWriteError> {
        if self.current.is_none() {
            self.current = Some(self.start_file()?);
        }
        let cur = self
            .current
            .as_mut()
            .expect("invariant: a file was just opened");
        let before = cur.bytes;
        let written = members.iter().try_for_each(|m| cur.file.write_all(m));
        if let Err(e) = written {
            let _ = cur.file.set_len(before);
            return Err(at(&cur.path)(e));
        }
        cur.bytes += members.iter().map(|m| m.len() as u64).sum::<u64>();
        if cur.bytes >= self.options.max_bytes {
            self.finish_current()?;
        }
        Ok(())
    }

    /// Finish the file being written (fsync, rename to `.warc.gz`); its final path.
    pub fn finish(&mut self) -> Result<Option<PathBuf>, WarcWriteError> {
        self.finish_current()
    }

    fn finish_current(&mut self) -> Result<Option<PathBuf>, WarcWriteError> {
        let Some(cur) = self.current.take() else {
            return Ok(None);
        };
        cur.file.sync_all().map_err(at(&cur.path))?;
        let done = finished_name(&cur.path);
        std::fs::rename(&cur.path, &done).map_err(at(&cur.path))?;
        sync_dir(&self.dir);
        Ok(Some(done))
    }

    fn start_file(&mut self) -> Result<OpenFile, WarcWriteError> {
        let now = std::time::SystemTime::now();
        let stamp: String = date_ms(unix_ms(now))
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let name = format!(
            "{}-{stamp}-{:05}-{}-{:04x}{SUFFIX}",
            self.options.prefix,
            self.serial,
            std::process::id(),
            uuid::Uuid::new_v4().as_u128() as u16
        );
        self.serial += 1;
        let path = self.dir.join(format!("{name}.open"));
        // Append mode: after a failed write is cut back (`append`), the next write goes to the
        // new end, not past the cut.
        let mut file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(at(&path))?;
        if !try_lock(&file).map_err(at(&path))? {
            return Err(at(&path)(io::Error::other("locked by another process")));
        }
        let block = self.options.info.as_bytes();
        let id = record_id();
        let date = date_ms(unix_ms(now));
        let digest = sha1_digest(&[block]);
        let info = gzip_record(
            &[
                ("WARC-Type", "warcinfo"),
                ("WARC-Record-ID", &id),
                ("WARC-Date", &date),
                ("WARC-Filename", &name),
                ("Content-Type", "application/warc-fields"),
                ("WARC-Block-Digest", &digest),
            ],
            &[block],
            self.options.level,
        );
        file.write_all(&info).map_err(at(&path))?;
        Ok(OpenFile {
            file,
            path,
            bytes: info.len() as u64,
        })
    }
}

impl Drop for FileSet {
    /// A set dropped without `finish` (an error unwinding the crawl) still finishes its file:
    /// what it holds is whole.
    fn drop(&mut self) {
        let _ = self.finish_current();
    }
}

/// `NAME.warc.gz.open` → `NAME.warc.gz`.
fn finished_name(open: &Path) -> PathBuf {
    let name = open.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    open.with_file_name(name.strip_suffix(".open").unwrap_or(&name))
}

/// Finish every `.open` file in `dir` that no live writer holds: cut it back to its last
/// complete gzip member, fsync it and rename it to `.warc.gz` (or remove it when nothing in it
/// was whole). Files a live writer holds (its `flock`) are left alone.
pub fn recover(dir: &Path) -> Result<Vec<Recovered>, WarcWriteError> {
    let mut done = Vec::new();
    let mut open: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(at(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(OPEN_SUFFIX))
        })
        .collect();
    open.sort();
    for path in open {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(at(&path))?;
        if !try_lock(&file).map_err(at(&path))? {
            continue;
        }
        let len = file.metadata().map_err(at(&path))?.len();
        let kept = complete_prefix(&file).map_err(at(&path))?;
        if kept < len {
            file.set_len(kept).map_err(at(&path))?;
        }
        file.sync_all().map_err(at(&path))?;
        let path = if kept == 0 {
            std::fs::remove_file(&path).map_err(at(&path))?;
            path
        } else {
            let target = finished_name(&path);
            std::fs::rename(&path, &target).map_err(at(&path))?;
            target
        };
        done.push(Recovered {
            path,
            kept,
            cut: len - kept,
        });
    }
    if !done.is_empty() {
        sync_dir(dir);
    }
    Ok(done)
}

/// The length of the run of complete gzip members at the start of `file`: each member decodes
/// to its end and its CRC-32 and length trailer match. A member cut short or damaged ends the
/// run; an error reading the file itself is an error (nothing is cut on a failing disk).
fn complete_prefix(file: &File) -> io::Result<u64> {
    let mut r = Counting {
        inner: BufReader::with_capacity(1 << 16, file),
        pos: 0,
    };
    let mut good = 0;
    loop {
        if r.fill_buf()?.is_empty() {
            return Ok(good);
        }
        let mut member = flate2::bufread::GzDecoder::new(&mut r);
        match io::copy(&mut member, &mut io::sink()) {
            Ok(_) => good = r.pos,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::InvalidData
                        | io::ErrorKind::InvalidInput
                        | io::ErrorKind::UnexpectedEof
                ) =>
            {
                return Ok(good)
            }
            Err(e) => return Err(e),
        }
    }
}

/// A `BufRead` that counts the bytes consumed from it: where a gzip member ended.
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// Take the exclusive `flock` of `file` without waiting: false when another open file
/// description holds it (a live writer). Released when the file is closed or its process dies.
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only takes a descriptor this `File` owns and flags; no memory is passed.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Elsewhere there is no lock: a `.open` file is taken as left over.
#[cfg(not(unix))]
fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}

/// Make renames in `dir` durable (best effort: not every platform can open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(max_bytes: u64) -> FileSetOptions {
        FileSetOptions {
            prefix: "test".into(),
            max_bytes,
            level: Compression::fast(),
            info: "software: test\r\n".into(),
        }
    }

    fn member(n: usize) -> Vec<u8> {
        let body = format!("record {n} {}", "x".repeat(n * 7));
        gzip_record(
            &[("WARC-Type", "resource"), ("WARC-Record-ID", &record_id())],
            &[body.as_bytes()],
            Compression::fast(),
        )
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn records(path: &Path) -> Vec<crate::warc::Record> {
        crate::warc::open(path)
            .unwrap()
            .map(|r| r.expect("every record whole"))
            .collect()
    }

    #[test]
    fn files_rotate_by_size_and_each_starts_with_warcinfo() {
        let dir = tempfile::tempdir().unwrap();
        let (mut set, recovered) = FileSet::open(dir.path(), options(600)).unwrap();
        assert!(recovered.is_empty());
        assert!(
            names(dir.path()).is_empty(),
            "no file before the first record"
        );
        for n in 0..12 {
            set.append(&[&member(n)]).unwrap();
        }
        set.finish().unwrap();
        let files = names(dir.path());
        assert!(files.len() >= 3, "{files:?}");
        let mut seen = 0;
        for (i, f) in files.iter().enumerate() {
            assert!(f.ends_with(SUFFIX), "{f}");
            assert!(
                f.contains(&format!("-{i:05}-{}-", std::process::id())),
                "{f}"
            );
            let recs = records(&dir.path().join(f));
            assert_eq!(recs[0].warc_type().as_deref(), Some("warcinfo"));
            assert_eq!(recs[0].header("WARC-Filename"), Some(f.as_str()));
            assert_eq!(recs[0].block, b"software: test\r\n");
            seen += recs.len() - 1;
        }
        assert_eq!(seen, 12, "every record in exactly one file");
    }

    #[test]
    fn a_torn_open_file_is_cut_to_its_last_whole_member_at_any_tear() {
        let dir = tempfile::tempdir().unwrap();
        let (mut set, _) = FileSet::open(dir.path(), options(u64::MAX)).unwrap();
        let (a, b) = (member(1), member(2));
        set.append(&[&a, &b]).unwrap();
        // Close the file without finishing it, as kill -9 would (its lock goes with it).
        let cur = set.current.take().unwrap();
        let open = cur.path.clone();
        drop(cur);
        drop(set);
        let whole = std::fs::read(&open).unwrap();
        let info_len = whole.len() - a.len() - b.len();
        for tear in 1..=whole.len() {
            let sub = tempfile::tempdir().unwrap();
            let name = sub.path().join(open.file_name().unwrap());
            std::fs::write(&name, &whole[..tear]).unwrap();
            let rec = recover(sub.path()).unwrap();
            let expect_kept = if tear == whole.len() {
                whole.len()
            } else if tear >= info_len + a.len() {
                info_len + a.len()
            } else if tear >= info_len {
                info_len
            } else {
                0
            };
            assert_eq!(
                rec,
                vec![Recovered {
                    path: if expect_kept == 0 {
                        name.clone()
                    } else {
                        finished_name(&name)
                    },
                    kept: expect_kept as u64,
                    cut: (tear - expect_kept) as u64,
                }],
                "tear at {tear}"
            );
            if expect_kept > 0 {
                let recs = records(&finished_name(&name));
                let want = 1
                    + usize::from(expect_kept > info_len)
                    + usize::from(expect_kept == whole.len());
                assert_eq!(recs.len(), want, "tear at {tear}");
            } else {
                assert!(names(sub.path()).is_empty(), "tear at {tear}");
            }
        }
    }

    #[test]
    fn an_open_file_a_live_writer_holds_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (mut live, _) = FileSet::open(dir.path(), options(u64::MAX)).unwrap();
        live.append(&[&member(1)]).unwrap();
        let before = names(dir.path());
        assert!(before[0].ends_with(OPEN_SUFFIX));
        let (mut other, recovered) = FileSet::open(dir.path(), options(u64::MAX)).unwrap();
        assert!(recovered.is_empty(), "{recovered:?}");
        assert_eq!(names(dir.path()), before);
        other.finish().unwrap();
        live.finish().unwrap();
        assert!(names(dir.path())[0].ends_with(SUFFIX));
    }
}
