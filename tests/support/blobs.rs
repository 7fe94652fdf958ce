//! Byte payloads for fixtures, built once per process: HTML filler for streamed bodies, the gzip
//! bomb, minimal PNG/PDF files that carry an `<a href>` (so a crawler that parses non-HTML is
//! caught following it), text in legacy encodings, and garbage.

use std::io::Write;
use std::sync::OnceLock;

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::lorem::{self, Rng};

/// Size the gzip bomb inflates to: 1 GiB.
pub const BOMB_INFLATED: u64 = 1 << 30;

/// 64 KiB of HTML paragraphs: the unit endless and over-cap bodies repeat.
pub fn html_filler() -> Bytes {
    static FILLER: OnceLock<Bytes> = OnceLock::new();
    FILLER
        .get_or_init(|| {
            let mut rng = Rng::new(64);
            let mut s = String::with_capacity(70 * 1024);
            while s.len() < 64 * 1024 {
                s.push_str("<p>");
                s.push_str(&lorem::sentence(&mut rng, 10, 20));
                s.push_str("</p>\n");
            }
            let mut b = s.into_bytes();
            // Cut at an ASCII byte so repeats never split a UTF-8 sequence.
            b.truncate(64 * 1024);
            while b.last().is_some_and(|c| !c.is_ascii()) {
                b.pop();
            }
            Bytes::from(b)
        })
        .clone()
}

/// The opening every bomb inflates to, then spaces up to `BOMB_INFLATED` bytes.
pub const BOMB_HEAD: &[u8] =
    b"<!doctype html><html><head><title>Inflated</title></head><body><p>bomb</p>";

/// A gzip member (~1 MB) that inflates to `BOMB_INFLATED` bytes of HTML. Compressed streaming
/// from a reused 1 MiB buffer, so building it never holds the inflated size.
pub fn gzip_bomb() -> Bytes {
    static BOMB: OnceLock<Bytes> = OnceLock::new();
    BOMB.get_or_init(|| {
        let mut gz = GzEncoder::new(Vec::with_capacity(2 << 20), Compression::best());
        gz.write_all(BOMB_HEAD).expect("write to Vec");
        let chunk = vec![b' '; 1 << 20];
        let mut left = BOMB_INFLATED - BOMB_HEAD.len() as u64;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            gz.write_all(&chunk[..n]).expect("write to Vec");
            left -= n as u64;
        }
        Bytes::from(gz.finish().expect("finish gzip into Vec"))
    })
    .clone()
}

/// A valid 1×1 PNG with `trailer` appended after IEND (decoders ignore it; an HTML parser run on
/// the bytes would find any link in it).
pub fn png(trailer: &str) -> Bytes {
    const PNG_1X1: &[u8] = &[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F,
        0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ];
    let mut b = PNG_1X1.to_vec();
    b.extend_from_slice(trailer.as_bytes());
    b.into()
}

/// A minimal PDF whose comment line holds `html` (e.g. an `<a href>`).
pub fn pdf(html: &str) -> Bytes {
    format!(
        "%PDF-1.4\n%{html}\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\
         2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n\
         trailer\n<< /Root 1 0 R >>\n%%EOF\n"
    )
    .into_bytes()
    .into()
}

/// `text` encoded in `encoding` (e.g. `encoding_rs::GBK`); panics if it is not representable.
pub fn encode(text: &str, encoding: &'static encoding_rs::Encoding) -> Bytes {
    let (bytes, _, unmappable) = encoding.encode(text);
    assert!(
        !unmappable,
        "fixture text not representable in {}",
        encoding.name()
    );
    Bytes::from(bytes.into_owned())
}

/// `len` bytes of deterministic noise (not valid UTF-8, no `<`).
pub fn garbage(seed: u64, len: usize) -> Bytes {
    let mut rng = Rng::new(seed);
    let mut b = Vec::with_capacity(len + 8);
    while b.len() < len {
        b.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    b.truncate(len);
    for c in &mut b {
        if *c == b'<' {
            *c = 0xFF;
        }
    }
    if let Some(c) = b.first_mut() {
        *c = 0xC3; // a lone lead byte: never valid UTF-8
    }
    if let Some(c) = b.get_mut(1) {
        *c = 0x28;
    }
    b.into()
}
