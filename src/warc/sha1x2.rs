//! Two SHA-1 digests computed side by side: a response record's `WARC-Payload-Digest` (the
//! body) and `WARC-Block-Digest` (the HTTP head, then the body) hash the same body twice.
//! One SHA-1 stream is bound by the latency of the CPU's SHA rounds (each four rounds wait on
//! the four before), so with SHA-NI the two streams' blocks are interleaved round by round and
//! the second digest costs little more than the first (docs/warc.md, "Figures"). Without
//! SHA-NI the `sha1` crate hashes each stream in turn.

use sha1::{Digest, Sha1};

/// The SHA-1 of `a`'s parts concatenated and of `b`'s.
pub fn sha1_two(a: &[&[u8]], b: &[&[u8]]) -> ([u8; 20], [u8; 20]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sha")
        && std::arch::is_x86_feature_detected!("sse4.1")
        && std::arch::is_x86_feature_detected!("ssse3")
    {
        let (mut sa, mut sb) = (Blocks::new(a), Blocks::new(b));
        let (mut ha, mut hb) = (INIT, INIT);
        // SAFETY: the CPU has the features `ni::two` is compiled for (checked just above).
        unsafe { ni::two(&mut ha, &mut sa, &mut hb, &mut sb) };
        return (be_bytes(&ha), be_bytes(&hb));
    }
    (one(a), one(b))
}

/// The SHA-1 of `parts` concatenated, by the `sha1` crate.
fn one(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    parts.iter().for_each(|p| h.update(p));
    h.finalize().into()
}

const INIT: [u32; 5] = [
    0x6745_2301,
    0xEFCD_AB89,
    0x98BA_DCFE,
    0x1032_5476,
    0xC3D2_E1F0,
];

fn be_bytes(h: &[u32; 5]) -> [u8; 20] {
    let mut out = [0; 20];
    for (o, w) in out.chunks_exact_mut(4).zip(h) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// A message's 64-byte blocks, the padding and length included: blocks lying whole inside a
/// part are lent as they are; one that spans parts, and the padding, are copied into `buf`.
struct Blocks<'a> {
    parts: &'a [&'a [u8]],
    part: usize,
    off: usize,
    bits: u64,
    buf: [u8; 64],
    end: End,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// Message bytes are left.
    Data,
    /// The last block, zeros and the length, is still to come.
    LengthBlock,
    Done,
}

impl<'a> Blocks<'a> {
    fn new(parts: &'a [&'a [u8]]) -> Blocks<'a> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        Blocks {
            parts,
            part: 0,
            off: 0,
            bits: (len as u64).wrapping_mul(8),
            buf: [0; 64],
            end: End::Data,
        }
    }

    fn next(&mut self) -> Option<&[u8; 64]> {
        match self.end {
            End::Done => return None,
            End::LengthBlock => {
                self.buf = [0; 64];
                self.buf[56..].copy_from_slice(&self.bits.to_be_bytes());
                self.end = End::Done;
                return Some(&self.buf);
            }
            End::Data => {}
        }
        while self.part < self.parts.len() && self.off == self.parts[self.part].len() {
            self.part += 1;
            self.off = 0;
        }
        if let Some(&p) = self.parts.get(self.part) {
            if let Some(whole) = p.get(self.off..self.off + 64) {
                self.off += 64;
                return Some(whole.try_into().expect("invariant: a 64-byte slice"));
            }
        }
        let mut n = 0;
        while n < 64 && self.part < self.parts.len() {
            let p = self.parts[self.part];
            let take = (p.len() - self.off).min(64 - n);
            self.buf[n..n + take].copy_from_slice(&p[self.off..self.off + take]);
            n += take;
            self.off += take;
            if self.off == p.len() {
                self.part += 1;
                self.off = 0;
            }
        }
        if n < 64 {
            // The message ends in this block: a 1 bit, zeros, and the length in bits when it
            // fits, else in one more block.
            self.buf[n] = 0x80;
            self.buf[n + 1..].fill(0);
            if n < 56 {
                self.buf[56..].copy_from_slice(&self.bits.to_be_bytes());
                self.end = End::Done;
            } else {
                self.end = End::LengthBlock;
            }
        }
        Some(&self.buf)
    }
}

#[cfg(target_arch = "x86_64")]
mod ni {
    //! The SHA-NI rounds (Intel's SHA extensions, as the `sha1` crate's x86 backend writes
    //! them), for one block or two blocks of independent streams interleaved.

    use std::arch::x86_64::*;

    use super::Blocks;

    /// Hash `sa` into `ha` and `sb` into `hb`, a block of each at a time while both have
    /// blocks, then the rest of the longer one.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub(super) fn two(
        ha: &mut [u32; 5],
        sa: &mut Blocks<'_>,
        hb: &mut [u32; 5],
        sb: &mut Blocks<'_>,
    ) {
        let (mut a, mut b) = (load(ha), load(hb));
        loop {
            match (sa.next(), sb.next()) {
                (Some(x), Some(y)) => {
                    let (a2, b2) = blocks2(a, x, b, y);
                    (a, b) = (a2, b2);
                }
                (Some(x), None) => {
                    a = block1(a, x);
                    while let Some(x) = sa.next() {
                        a = block1(a, x);
                    }
                    break;
                }
                (None, Some(y)) => {
                    b = block1(b, y);
                    while let Some(y) = sb.next() {
                        b = block1(b, y);
                    }
                    break;
                }
                (None, None) => break,
            }
        }
        store(a, ha);
        store(b, hb);
    }

    /// A state as the SHA instructions take it: ABCD in one register, E in the top lane of
    /// another.
    type State = (__m128i, __m128i);

    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn load(h: &[u32; 5]) -> State {
        (
            _mm_set_epi32(h[0] as i32, h[1] as i32, h[2] as i32, h[3] as i32),
            _mm_set_epi32(h[4] as i32, 0, 0, 0),
        )
    }

    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn store((abcd, e): State, h: &mut [u32; 5]) {
        h[0] = _mm_extract_epi32(abcd, 3) as u32;
        h[1] = _mm_extract_epi32(abcd, 2) as u32;
        h[2] = _mm_extract_epi32(abcd, 1) as u32;
        h[3] = _mm_extract_epi32(abcd, 0) as u32;
        h[4] = _mm_extract_epi32(e, 3) as u32;
    }

    /// Four rounds: `h1` takes the next four rounds' schedule word `wk` into E (all but the
    /// first four rounds) and `h0`'s ABCD.
    macro_rules! r4 {
        ($h0:expr, $h1:expr, $wk:expr, $f:literal) => {
            _mm_sha1rnds4_epu32($h0, _mm_sha1nexte_epu32($h1, $wk), $f)
        };
    }

    /// The next schedule word from the four before.
    macro_rules! sched {
        ($w0:expr, $w1:expr, $w2:expr, $w3:expr) => {
            _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32($w0, $w1), $w2), $w3)
        };
    }

    /// Load a block's words, byte-swapped.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn words(block: &[u8; 64]) -> [__m128i; 4] {
        let mask = _mm_set_epi64x(0x0001_0203_0405_0607, 0x0809_0A0B_0C0D_0E0F);
        let p = block.as_ptr().cast::<__m128i>();
        // SAFETY: four unaligned 16-byte loads within the block's 64 bytes.
        let raw = unsafe {
            [
                _mm_loadu_si128(p),
                _mm_loadu_si128(p.add(1)),
                _mm_loadu_si128(p.add(2)),
                _mm_loadu_si128(p.add(3)),
            ]
        };
        raw.map(|r| _mm_shuffle_epi8(r, mask))
    }

    /// The 19 steps of four rounds after the first four, as the `sha1` crate's x86 backend
    /// orders them: (the register read, the register written, the round function, the word
    /// slot, and the four slots its schedule word is made of, or `no` for the block's own).
    macro_rules! block_steps {
        ($m:ident) => {
            $m!(1, 0, 0, 1, no);
            $m!(0, 1, 0, 2, no);
            $m!(1, 0, 0, 3, no);
            $m!(0, 1, 0, 4, sched 0 1 2 3);
            $m!(1, 0, 1, 0, sched 1 2 3 4);
            $m!(0, 1, 1, 1, sched 2 3 4 0);
            $m!(1, 0, 1, 2, sched 3 4 0 1);
            $m!(0, 1, 1, 3, sched 4 0 1 2);
            $m!(1, 0, 1, 4, sched 0 1 2 3);
            $m!(0, 1, 2, 0, sched 1 2 3 4);
            $m!(1, 0, 2, 1, sched 2 3 4 0);
            $m!(0, 1, 2, 2, sched 3 4 0 1);
            $m!(1, 0, 2, 3, sched 4 0 1 2);
            $m!(0, 1, 2, 4, sched 0 1 2 3);
            $m!(1, 0, 3, 0, sched 1 2 3 4);
            $m!(0, 1, 3, 1, sched 2 3 4 0);
            $m!(1, 0, 3, 2, sched 3 4 0 1);
            $m!(0, 1, 3, 3, sched 4 0 1 2);
            $m!(1, 0, 3, 4, sched 0 1 2 3);
        };
    }

    /// One block on one lane.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn block1((abcd, e): State, block: &[u8; 64]) -> State {
        let w4 = words(block);
        let mut w = [w4[0], w4[1], w4[2], w4[3], _mm_setzero_si128()];
        let mut h = [abcd, _mm_add_epi32(e, w[0])];
        h[1] = _mm_sha1rnds4_epu32(h[0], h[1], 0);
        macro_rules! one {
            ($src:literal, $dst:literal, $f:literal, $wk:literal, no) => {
                h[$dst] = r4!(h[$src], h[$dst], w[$wk], $f);
            };
            ($src:literal, $dst:literal, $f:literal, $wk:literal,
             sched $a:literal $b:literal $c:literal $d:literal) => {
                w[$wk] = sched!(w[$a], w[$b], w[$c], w[$d]);
                h[$dst] = r4!(h[$src], h[$dst], w[$wk], $f);
            };
        }
        block_steps!(one);
        (_mm_add_epi32(abcd, h[0]), _mm_sha1nexte_epu32(h[1], e))
    }

    /// One block on each of two lanes, their steps alternating.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn blocks2(
        (a_abcd, a_e): State,
        x: &[u8; 64],
        (b_abcd, b_e): State,
        y: &[u8; 64],
    ) -> (State, State) {
        let (xa, yb) = (words(x), words(y));
        let mut wa = [xa[0], xa[1], xa[2], xa[3], _mm_setzero_si128()];
        let mut wb = [yb[0], yb[1], yb[2], yb[3], _mm_setzero_si128()];
        let mut ha = [a_abcd, _mm_add_epi32(a_e, wa[0])];
        let mut hb = [b_abcd, _mm_add_epi32(b_e, wb[0])];
        ha[1] = _mm_sha1rnds4_epu32(ha[0], ha[1], 0);
        hb[1] = _mm_sha1rnds4_epu32(hb[0], hb[1], 0);
        macro_rules! two {
            ($src:literal, $dst:literal, $f:literal, $wk:literal, no) => {
                ha[$dst] = r4!(ha[$src], ha[$dst], wa[$wk], $f);
                hb[$dst] = r4!(hb[$src], hb[$dst], wb[$wk], $f);
            };
            ($src:literal, $dst:literal, $f:literal, $wk:literal,
             sched $a:literal $b:literal $c:literal $d:literal) => {
                wa[$wk] = sched!(wa[$a], wa[$b], wa[$c], wa[$d]);
                wb[$wk] = sched!(wb[$a], wb[$b], wb[$c], wb[$d]);
                ha[$dst] = r4!(ha[$src], ha[$dst], wa[$wk], $f);
                hb[$dst] = r4!(hb[$src], hb[$dst], wb[$wk], $f);
            };
        }
        block_steps!(two);
        (
            (
                _mm_add_epi32(a_abcd, ha[0]),
                _mm_sha1nexte_epu32(ha[1], a_e),
            ),
            (
                _mm_add_epi32(b_abcd, hb[0]),
                _mm_sha1nexte_epu32(hb[1], b_e),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_digests_equal_the_sha1_crates_for_every_length_and_split() {
        let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let mut lens: Vec<usize> = (0..200).collect();
        lens.extend([255, 256, 257, 511, 512, 513, 1000, 2999, 3000]);
        for &la in &lens {
            for lb in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 700] {
                let a = &data[..la];
                let split = lb / 3;
                let b: [&[u8]; 3] = [&data[7..7 + split], &[], &data[100..100 + lb - split]];
                let (da, db) = sha1_two(&[a], &b);
                assert_eq!(da, one(&[a]), "a of {la} bytes");
                assert_eq!(db, one(&b), "b of {lb} bytes split at {split}");
                let (db2, da2) = sha1_two(&b, &[a]);
                assert_eq!((da2, db2), (da, db), "the order of the two");
            }
        }
    }

    #[test]
    fn the_known_digest_of_abc() {
        let (d, e) = sha1_two(&[b"abc"], &[b"a", b"bc"]);
        let want = [
            0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e, 0x25, 0x71, 0x78, 0x50,
            0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d,
        ];
        assert_eq!((d, e), (want, want));
    }
}
