//! Deduplication at export, across hosts, in one pass: the first page of a group of duplicates
//! (in export order: hosts by name, pages by id) is the original; a later page is an *exact*
//! duplicate when its cleaned text is byte-identical to an original's (xxh3-64 of the text), a
//! *near* duplicate when the estimated Jaccard similarity of their sets of word 5-shingles is at
//! least `NEAR_JACCARD`. Pages with no text are never duplicates (nothing to compare).
//!
//! Near duplicates reuse the template engine's MinHash and LSH (`template::minhash`,
//! `template::lsh`): a text's shingles are its `SHINGLE` consecutive tokens (a word, or one CJK
//! character, lower-cased: the cleaner's tokens), hashed to u64; its signature is the
//! one-permutation MinHash of that set (`Sketch::of_set`, 128 slots); candidates come from LSH
//! banding (`BANDS` bands of `ROWS` slots) and each is confirmed on the whole signature. Why
//! these numbers:
//!
//! - 5-word shingles and J ≥ 0.8 are what web-corpus pipelines settled on (Lee et al. 2022,
//!   "Deduplicating Training Data Makes Language Models Better"; datatrove's defaults): shorter
//!   shingles make unrelated pages on one topic look alike, and below 0.8 pages that share a
//!   long quotation start to match.
//! - 20 bands of 6 rows: a pair at J = 0.8 becomes a candidate with probability
//!   1 − (1 − 0.8⁶)²⁰ = 0.998, at J = 0.7 with 0.94, at J = 0.5 with 0.27 (those are then
//!   refused on the whole signature), so the banding itself loses almost nothing above the
//!   threshold. The estimate from 128 slots has a standard error of about 0.035 at J = 0.8.
//!
//! Memory: originals only, never texts — per original its 128 slot minima (512 bytes), its id,
//! its LSH entries (20 bands' bucket entries: most of the ~2 KB per original measured at 100k
//! pages, docs/export.md) and 16 bytes in the exact-hash table.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::CorpusError;
use crate::template::content::tokens::is_cjk;
use crate::template::lsh::Lsh;
use crate::template::minhash::{Sketch, EMPTY, SLOTS};

/// Tokens per shingle.
pub const SHINGLE: usize = 5;
/// Estimated Jaccard similarity at or above which two texts are near duplicates.
pub const NEAR_JACCARD: f64 = 0.8;
/// LSH bands and rows per band (`BANDS × ROWS ≤ SLOTS`).
pub const BANDS: usize = 20;
pub const ROWS: usize = 6;
/// Bucket members read per band on a query.
const BUCKET_CAP: usize = 16;

/// `--dedup`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Export every page.
    #[default]
    None,
    /// Drop exact duplicates.
    Exact,
    /// Drop exact and near duplicates.
    Near,
    /// Keep every page; a duplicate (exact or near) gets `dup_of`.
    Mark,
}

impl Mode {
    /// `--dedup`'s choices, as `parse` reads them.
    pub const NAMES: [&'static str; 4] = ["none", "exact", "near", "mark"];

    pub fn parse(name: &str) -> Result<Mode, CorpusError> {
        match name {
            "none" => Ok(Mode::None),
            "exact" => Ok(Mode::Exact),
            "near" => Ok(Mode::Near),
            "mark" => Ok(Mode::Mark),
            other => Err(CorpusError::Dedup(other.to_string())),
        }
    }

    /// Whether near duplicates are looked for.
    pub fn near(self) -> bool {
        matches!(self, Mode::Near | Mode::Mark)
    }
}

/// Why a page is a duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Exact,
    Near,
}

/// What dedup needs of one page's text (computed on the worker threads).
#[derive(Clone, Debug)]
pub struct Fingerprint {
    hash: u64,
    sketch: Option<Sketch>,
}

/// The fingerprint of `text` (with a MinHash signature when `near`); `None` for a text with no
/// tokens.
pub fn fingerprint(text: &str, near: bool) -> Option<Fingerprint> {
    if !text.chars().any(|c| c.is_alphanumeric()) {
        return None;
    }
    Some(Fingerprint {
        hash: xxh3_64(text.as_bytes()),
        sketch: near.then(|| Sketch::of_set(&shingles(text))),
    })
}

/// The hashes of `text`'s `SHINGLE`-token shingles (one shingle of all tokens when there are
/// fewer), in text order, repeats included.
pub fn shingles(text: &str) -> Vec<u64> {
    let tokens = token_hashes(text);
    if tokens.len() < SHINGLE {
        return vec![combine(&tokens)];
    }
    tokens.windows(SHINGLE).map(combine).collect()
}

fn combine(window: &[u64]) -> u64 {
    window.iter().fold(0x51_7cc1_b727_220a, |h, &t| {
        (h.rotate_left(17) ^ t).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    })
}

/// Per token (a run of letters and digits, or one CJK character), the xxh3 of its lower case.
fn token_hashes(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<u64>| {
        if !word.is_empty() {
            out.push(xxh3_64(word.as_bytes()));
            word.clear();
        }
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut word, &mut out);
            let mut buf = [0u8; 4];
            out.push(xxh3_64(c.encode_utf8(&mut buf).as_bytes()));
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The estimated Jaccard similarity of two signatures' sets: equal minima over slots non-empty
/// in either.
fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    let (mut matches, mut either) = (0u32, 0u32);
    for (&x, &y) in a.iter().zip(b) {
        if x != EMPTY || y != EMPTY {
            either += 1;
            matches += u32::from(x == y);
        }
    }
    if either == 0 {
        return 0.0;
    }
    f64::from(matches) / f64::from(either)
}

/// The originals seen so far.
pub struct Index {
    exact: HashMap<u64, u64>,
    near: Option<Near>,
}

struct Near {
    lsh: Lsh,
    /// Originals' slot minima, `SLOTS` per original.
    mins: Vec<u32>,
    /// Originals' page ids, by LSH id.
    ids: Vec<u64>,
    candidates: Vec<u32>,
}

impl Index {
    pub fn new(mode: Mode) -> Index {
        Index {
            exact: HashMap::new(),
            near: mode.near().then(|| Near {
                lsh: Lsh::new(BANDS, ROWS, BUCKET_CAP),
                mins: Vec::new(),
                ids: Vec::new(),
                candidates: Vec::new(),
            }),
        }
    }

    /// The original that page `id` duplicates, and how; or `None`, and `id` becomes an original.
    pub fn check(&mut self, id: u64, fp: &Fingerprint) -> Option<(u64, Kind)> {
        if let Some(&of) = self.exact.get(&fp.hash) {
            return Some((of, Kind::Exact));
        }
        if let (Some(near), Some(sketch)) = (&mut self.near, &fp.sketch) {
            if let Some(of) = near.find(sketch) {
                return Some((of, Kind::Near));
            }
            near.add(id, sketch);
        }
        self.exact.insert(fp.hash, id);
        None
    }
}

impl Near {
    fn find(&mut self, sketch: &Sketch) -> Option<u64> {
        self.candidates.clear();
        self.lsh.candidates(u32::MAX, sketch, &mut self.candidates);
        self.candidates.sort_unstable();
        self.candidates.dedup();
        // The most similar original; the earliest on a tie.
        let mut best: Option<(f64, u32)> = None;
        for &c in &self.candidates {
            let at = c as usize * SLOTS;
            let j = jaccard(sketch.min(), &self.mins[at..at + SLOTS]);
            if j >= NEAR_JACCARD && best.is_none_or(|(bj, _)| j > bj) {
                best = Some((j, c));
            }
        }
        best.map(|(_, c)| self.ids[c as usize])
    }

    fn add(&mut self, id: u64, sketch: &Sketch) {
        let lsh_id = u32::try_from(self.ids.len()).expect("invariant: under 2^32 originals");
        self.lsh.insert(lsh_id, sketch);
        self.mins.extend_from_slice(sketch.min());
        self.ids.push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(seed: u64, n: usize) -> Vec<String> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("w{}", (x >> 33) % 5000)
            })
            .collect()
    }

    fn check(index: &mut Index, id: u64, text: &str, near: bool) -> Option<(u64, Kind)> {
        index.check(id, &fingerprint(text, near).unwrap())
    }

    #[test]
    fn exact_mode_finds_identical_texts_only() {
        let a = words(1, 300).join(" ");
        let mut b = words(1, 300);
        b[150] = "changed".into();
        let b = b.join(" ");
        let mut index = Index::new(Mode::Exact);
        assert_eq!(check(&mut index, 1, &a, false), None);
        assert_eq!(check(&mut index, 2, &a, false), Some((1, Kind::Exact)));
        assert_eq!(check(&mut index, 3, &b, false), None);
    }

    #[test]
    fn near_mode_finds_small_edits_and_refuses_different_texts() {
        let base = words(2, 400);
        let mut index = Index::new(Mode::Near);
        assert_eq!(check(&mut index, 10, &base.join(" "), true), None);
        // Three words changed and a line appended: J ≈ 0.94.
        let mut edited = base.clone();
        for at in [50, 200, 350] {
            edited[at] = "edit".into();
        }
        edited.push("Originally published elsewhere".into());
        assert_eq!(
            check(&mut index, 11, &edited.join(" "), true),
            Some((10, Kind::Near))
        );
        // Case and punctuation do not make a text new.
        assert_eq!(
            check(&mut index, 12, &base.join(", ").to_uppercase(), true),
            Some((10, Kind::Near))
        );
        // Half the text replaced: J ≈ 1/3.
        let mut half = base[..200].to_vec();
        half.extend(words(3, 200));
        assert_eq!(check(&mut index, 13, &half.join(" "), true), None);
        assert_eq!(check(&mut index, 14, &words(4, 400).join(" "), true), None);
    }

    #[test]
    fn a_duplicate_points_at_the_original_never_at_another_duplicate() {
        let base = words(5, 300);
        let mut index = Index::new(Mode::Mark);
        check(&mut index, 1, &base.join(" "), true);
        let mut b = base.clone();
        b[10] = "x".into();
        assert_eq!(
            check(&mut index, 2, &b.join(" "), true),
            Some((1, Kind::Near))
        );
        assert_eq!(
            check(&mut index, 3, &b.join(" "), true),
            Some((1, Kind::Near))
        );
    }

    #[test]
    fn empty_texts_have_no_fingerprint() {
        assert!(fingerprint("", true).is_none());
        assert!(fingerprint(" \n— ", true).is_none());
    }

    #[test]
    fn shingles_are_five_tokens_and_cjk_characters_are_tokens() {
        assert_eq!(shingles("a b c d e f g").len(), 3);
        assert_eq!(shingles("a b").len(), 1);
        assert_eq!(shingles("委员会星期二开会").len(), 4);
        assert_eq!(shingles("Hello, World"), shingles("hello world"));
    }

    #[test]
    fn modes_parse_by_name() {
        assert_eq!(Mode::parse("mark").unwrap(), Mode::Mark);
        assert!(Mode::parse("fuzzy").is_err());
        assert!(Mode::Near.near() && Mode::Mark.near() && !Mode::Exact.near());
    }
}
