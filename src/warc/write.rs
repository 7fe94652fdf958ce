//! Writing WARC/1.1 records: a record's named fields and block as one gzip member (each record
//! its own member, as Heritrix and StormCrawler write them: a file can be cut between members,
//! read from any member, and checked member by member), its id (`<urn:uuid:…>`), its date and
//! the customary digests (`sha1:` + base32). What goes into a record is the caller's.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flate2::write::GzEncoder;
use flate2::Compression;
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
    format!("sha1:{}", data_encoding::BASE32.encode(&h.finalize()))
}

/// One record as a gzip member: the version line, `fields` in the order given (`WARC-Type`
/// first by convention), `Content-Length` (the exact length of the block), then the block —
/// the concatenation of `block` — and the two CRLFs that end a record. Field values must not
/// hold CR or LF (a target URI with one is the caller's to refuse or escape).
pub fn gzip_record(fields: &[(&str, &str)], block: &[&[u8]], level: Compression) -> Vec<u8> {
    let len: usize = block.iter().map(|b| b.len()).sum();
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
    // Compressed output is usually well under the input; start at a third of it.
    let mut gz = GzEncoder::new(Vec::with_capacity((head.len() + len) / 3 + 64), level);
    let write = |gz: &mut GzEncoder<Vec<u8>>| -> std::io::Result<()> {
        gz.write_all(head.as_bytes())?;
        for part in block {
            gz.write_all(part)?;
        }
        gz.write_all(b"\r\n\r\n")
    };
    write(&mut gz).expect("invariant: writing to a Vec does not fail");
    gz.finish()
        .expect("invariant: finishing into a Vec does not fail")
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

    #[test]
    fn dates_are_utc_with_milliseconds() {
        assert_eq!(date_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(unix_ms(UNIX_EPOCH + Duration::from_millis(42)), 42);
    }
}
