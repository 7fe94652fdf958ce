//! Writing WARC/1.1 records: a record's named fields and block as one gzip member (each record
//! its own member, as Heritrix and StormCrawler write them: a file can be cut between members,
//! read from any member, and checked member by member), its id (`<urn:uuid:…>`), its date and
//! the customary digests (`sha1:` + base32). What goes into a record is the caller's. A block's
//! last part may come compressed already ([`Deflated`], [`gzip_record_spliced`]), so bytes the
//! caller also keeps compressed elsewhere are compressed once.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flate2::{Compress, Compression, FlushCompress, Status};
use sha1::{Digest, Sha1};

/// The version line of every record written.
pub const VERSION: &str = "WARC/1.1";

/// A fresh `WARC-Record-ID`: a random (v4) UUID as `<urn:uuid:…>`.
pub fn record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// A `WARC-Date` (UTC, millisecond precision, which WARC/1.1 allows) of Unix milliseconds.
pub fn date_ms(ms: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// Unix milliseconds of `t` (0 before the epoch).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The sha1 of `parts` concatenated, as `WARC-Block-Digest` and `WARC-Payload-Digest` customarily
/// write it: `sha1:` and the base32 of the 20 bytes.
pub fn sha1_digest(parts: &[&[u8]]) -> String {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    sha1_label(&h.finalize().into())
}

/// A sha1 as a digest field writes it: `sha1:` and the base32 of the 20 bytes.
pub fn sha1_label(sha1: &[u8; 20]) -> String {
    format!("sha1:{}", data_encoding::BASE32.encode(sha1))
}

/// One record as a gzip member: the version line, `fields` in the order given (`WARC-Type`
/// first by convention), `Content-Length` (the exact length of the block), then the block —
/// the concatenation of `block` — and the two CRLFs that end a record. Field values must not
/// hold CR or LF (a target URI with one is the caller's to refuse or escape).
pub fn gzip_record(fields: &[(&str, &str)], block: &[&[u8]], level: Compression) -> Vec<u8> {
    let len: usize = block.iter().map(|b| b.len()).sum();
    let head = record_head(fields, len);
    let mut parts = Vec::with_capacity(block.len() + 2);
    parts.push(head.as_bytes());
    parts.extend_from_slice(block);
    parts.push(RECORD_END);
    // Compressed output is usually well under the input; start at half of it.
    let mut out = Vec::with_capacity(GZIP_HEADER.len() + (head.len() + len) / 2 + 64);
    out.extend_from_slice(&GZIP_HEADER);
    deflate_raw(&mut out, &parts, level, FlushCompress::Finish);
    let mut crc = crc32fast::Hasher::new();
    parts.iter().for_each(|p| crc.update(p));
    gzip_trailer(
        &mut out,
        crc.finalize(),
        head.len() + len + RECORD_END.len(),
    );
    out
}

/// [`gzip_record`] of the block `lead` then `body`, with `body` spliced in as it was compressed
/// (its raw deflate follows the head's, which ends on a sync flush; the member's CRC-32 is the
/// head's combined with the body's): the member inflates to the same record as `gzip_record`'s.
pub fn gzip_record_spliced(
    fields: &[(&str, &str)],
    lead: &[u8],
    body: &Deflated,
    level: Compression,
) -> Vec<u8> {
    let head = record_head(fields, lead.len() + body.len);
    let mut out =
        Vec::with_capacity(GZIP_HEADER.len() + (head.len() + lead.len()) / 2 + body.raw.len() + 64);
    out.extend_from_slice(&GZIP_HEADER);
    deflate_raw(
        &mut out,
        &[head.as_bytes(), lead],
        level,
        FlushCompress::Sync,
    );
    out.extend_from_slice(&body.raw);
    out.extend_from_slice(&LAST_BLOCK_RECORD_END);
    let mut crc = crc32fast::Hasher::new();
    crc.update(head.as_bytes());
    crc.update(lead);
    crc.combine(&crc32fast::Hasher::new_with_initial_len(
        body.crc,
        body.len as u64,
    ));
    crc.update(RECORD_END);
    let total = head.len() + lead.len() + body.len + RECORD_END.len();
    gzip_trailer(&mut out, crc.finalize(), total);
    out
}

/// A gzip member's trailer: the CRC-32 of its bytes and their length modulo 2^32 (RFC 1952).
fn gzip_trailer(out: &mut Vec<u8>, crc: u32, len: usize) {
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&((len as u64 & 0xffff_ffff) as u32).to_le_bytes());
}

/// Bytes compressed once, for a record's block ([`gzip_record_spliced`]) and for whoever else
/// keeps them compressed (the crawl's store keeps a page's HTML as this raw deflate when the
/// archive is on, docs/warc.md "Figures").
#[derive(Clone, Debug)]
pub struct Deflated {
    /// Raw deflate (no zlib or gzip wrapper) ending on a sync flush: byte-aligned, with no
    /// final block, and referring to nothing before its own start, so it may follow any other
    /// such stream and be followed by a final block.
    pub raw: Vec<u8>,
    /// CRC-32 of the bytes (a gzip member's trailer covers them).
    pub crc: u32,
    /// Their length.
    pub len: usize,
}

impl Deflated {
    pub fn of(bytes: &[u8], level: Compression) -> Deflated {
        // HTML deflates to about 0.4 of itself at level 1: half is room enough, without a copy.
        let mut raw = Vec::with_capacity(bytes.len() / 2 + 64);
        deflate_raw(&mut raw, &[bytes], level, FlushCompress::Sync);
        Deflated {
            raw,
            crc: crc32fast::hash(bytes),
            len: bytes.len(),
        }
    }
}

/// The two CRLFs that end a record.
const RECORD_END: &[u8] = b"\r\n\r\n";

/// [`RECORD_END`] as a final stored deflate block, starting on a byte boundary: BFINAL 1 and
/// BTYPE 00 (then padding) in one byte, LEN 4 and its complement, the 4 bytes.
const LAST_BLOCK_RECORD_END: [u8; 9] = [0x01, 0x04, 0x00, 0xfb, 0xff, b'\r', b'\n', b'\r', b'\n'];

/// A gzip member's header as flate2 writes it: deflate, no flags, no time, no extra flags, OS
/// unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// The version line, `fields`, `Content-Length: len` and the blank line that ends a record's
/// named fields.
fn record_head(fields: &[(&str, &str)], len: usize) -> String {
    let mut head = String::with_capacity(64 * (fields.len() + 2));
    head.push_str(VERSION);
    head.push_str("\r\n");
    for (name, value) in fields {
        debug_assert!(!value.contains(['\r', '\n']), "{name} holds a line break");
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    head
}

/// Append to `out` the raw deflate of `parts` concatenated, ending with `end`: a sync flush (see
/// [`Deflated::raw`]) or the final block.
fn deflate_raw(out: &mut Vec<u8>, parts: &[&[u8]], level: Compression, end: FlushCompress) {
    with_deflate(level, |z| {
        for (i, part) in parts.iter().enumerate() {
            let flush = if i + 1 == parts.len() {
                end
            } else {
                FlushCompress::None
            };
            let mut input = *part;
            loop {
                if out.capacity() - out.len() < 64 {
                    out.reserve(out.len().max(1024));
                }
                let before = z.total_in();
                let status = z
                    .compress_vec(input, out, flush)
                    .expect("invariant: deflate into spare capacity does not fail");
                let used = usize::try_from(z.total_in() - before)
                    .expect("invariant: consumed at most the input's length");
                input = &input[used..];
                // Done once the input is in and: the stream ended (finish), or room was left
                // (a sync flush that fills the output may not be complete: zlib's rule).
                let done = match flush {
                    FlushCompress::None => input.is_empty(),
                    FlushCompress::Finish => status == Status::StreamEnd,
                    _ => input.is_empty() && out.len() < out.capacity(),
                };
                if done {
                    break;
                }
            }
        }
    });
}

/// Deflate states kept for reuse, at most this many: a zlib-rs state is ~300 KB, allocated and
/// zeroed when made, which cost a small record's head more than compressing it (three states a
/// page with the archive on).
const POOL_MAX: usize = 8;

static POOL: Mutex<Vec<(Compression, Compress)>> = Mutex::new(Vec::new());

/// Run `f` with a raw deflate state at `level`, fresh (a kept one, reset, or a new one).
fn with_deflate<R>(level: Compression, f: impl FnOnce(&mut Compress) -> R) -> R {
    let kept = {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        let at = pool.iter().position(|(l, _)| *l == level);
        at.map(|i| pool.swap_remove(i).1)
    };
    let mut z = match kept {
        Some(mut z) => {
            z.reset();
            z
        }
        None => Compress::new(level, false),
    };
    let r = f(&mut z);
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if pool.len() < POOL_MAX {
        pool.push((level, z));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_digest_is_base32_of_sha1() {
        // sha1("abc") = a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d
        assert_eq!(
            sha1_digest(&[b"a", b"bc"]),
            "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"
        );
    }

    #[test]
    fn a_record_is_one_gzip_member_the_reader_reads_back() {
        let id = record_id();
        assert!(id.starts_with("<urn:uuid:") && id.ends_with('>') && id.len() == 47);
        let gz = gzip_record(
            &[("WARC-Type", "resource"), ("WARC-Record-ID", &id)],
            &[b"hello ", b"world"],
            Compression::fast(),
        );
        let mut member = flate2::bufread::GzDecoder::new(&gz[..]);
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut member, &mut plain).unwrap();
        assert!(plain.starts_with(b"WARC/1.1\r\nWARC-Type: resource\r\n"));
        let recs: Vec<_> = crate::warc::WarcReader::new(&plain[..]).collect();
        assert_eq!(recs.len(), 1);
        let r = recs[0].as_ref().unwrap();
        assert_eq!(r.block, b"hello world");
        assert_eq!(r.header("Content-Length"), Some("11"));
        assert_eq!(r.header("WARC-Record-ID"), Some(id.as_str()));
    }

    fn gunzip(member: &[u8]) -> Vec<u8> {
        // GzDecoder checks the trailer's CRC-32 and length.
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::bufread::GzDecoder::new(member), &mut plain)
            .unwrap();
        plain
    }

    #[test]
    fn a_spliced_record_inflates_to_the_record_gzip_record_writes() {
        let fields = [("WARC-Type", "response"), ("WARC-Target-URI", "http://a/")];
        // Empty, small, and past every buffer (compressible and not).
        let mut noise = Vec::new();
        let mut x: u64 = 1;
        for _ in 0..300_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            noise.push((x >> 56) as u8);
        }
        let html = "<p>grain and chaff</p>\n".repeat(20_000).into_bytes();
        for body in [&b""[..], b"<html>x</html>", &html, &noise] {
            let lead = b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n";
            let whole = gzip_record(&fields, &[lead, body], Compression::fast());
            let deflated = Deflated::of(body, Compression::fast());
            assert_eq!(
                (deflated.len, deflated.crc),
                (body.len(), crc32fast::hash(body))
            );
            let spliced = gzip_record_spliced(&fields, lead, &deflated, Compression::fast());
            assert_eq!(gunzip(&spliced), gunzip(&whole), "{} bytes", body.len());
            // The member ends where its trailer says: two in a row read as two records.
            let mut two = spliced.clone();
            two.extend_from_slice(&spliced);
            let mut plain = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::bufread::MultiGzDecoder::new(&two[..]),
                &mut plain,
            )
            .unwrap();
            let recs: Vec<_> = crate::warc::WarcReader::new(&plain[..]).collect();
            assert_eq!(recs.len(), 2);
            let r = recs[0].as_ref().unwrap();
            assert_eq!(r.block.len(), lead.len() + body.len());
            assert_eq!(&r.block[lead.len()..], body);
        }
    }

    #[test]
    fn dates_are_utc_with_milliseconds() {
        assert_eq!(date_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(unix_ms(UNIX_EPOCH + Duration::from_millis(42)), 42);
    }
}
