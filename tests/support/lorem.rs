//! Deterministic text for fixtures: a tiny seeded RNG (SplitMix64, so output never changes with a
//! crate upgrade) and sentence/title/name generators over a fixed word list.

/// SplitMix64: small, fast, and stable across versions and platforms.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// A child generator for `key` that does not disturb this one's sequence.
    pub fn fork(&self, key: u64) -> Rng {
        let mut r = Rng(self.0 ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Words for body text. A few non-ASCII words make every page exercise UTF-8 decoding.
#[rustfmt::skip]
pub const WORDS: &[&str] = &[
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "on",
    "by", "at", "from", "which", "but", "not", "this", "are", "be", "were", "their", "has",
    "council", "river", "market", "harbour", "school", "budget", "report", "station", "bridge",
    "village", "museum", "festival", "weather", "election", "hospital", "library", "factory",
    "garden", "railway", "stadium", "orchard", "ferry", "tunnel", "valley", "coast", "island",
    "committee", "minister", "teacher", "farmer", "engineer", "driver", "artist", "doctor",
    "resident", "volunteer", "student", "captain", "mayor", "neighbour", "officer", "pilot",
    "announced", "approved", "rejected", "opened", "closed", "delayed", "expanded", "reported",
    "described", "suggested", "confirmed", "warned", "welcomed", "questioned", "repaired",
    "measured", "planted", "painted", "collected", "counted", "visited", "recorded", "shared",
    "new", "old", "early", "late", "quiet", "busy", "narrow", "wide", "local", "regional",
    "annual", "seasonal", "northern", "southern", "eastern", "western", "small", "large",
    "careful", "sudden", "gradual", "public", "private", "wooden", "stone", "green", "grey",
    "morning", "evening", "winter", "summer", "autumn", "spring", "week", "month", "year", "plan",
    "vote", "road", "roof", "wall", "field", "boat", "train", "bus", "lamp", "clock", "bread",
    "cheese", "apple", "salmon", "timber", "copper", "glass", "paper", "water", "stone", "after",
    "before", "during", "despite", "because", "although", "while", "until", "since", "many",
    "several", "few", "most", "some", "every", "each", "both", "either", "neither", "café",
    "naïve", "Zürich", "façade", "Øresund", "São", "Kraków", "東京", "北京", "新闻",
];

/// Proper names for bylines and commenters.
#[rustfmt::skip]
pub const NAMES: &[&str] = &[
    "Ada Moreno", "Ben Okafor", "Chloé Martin", "Dev Patel", "Elif Yilmaz", "Finn Larsen",
    "Grace Liu", "Hugo Schmidt", "Ines Duarte", "Jonas Berg", "Keiko Tanaka", "Liam O'Brien",
    "Maya Cohen", "Nils Eriksen", "Olga Petrova", "Pablo Ruiz", "Quinn Harper", "Rosa Bianchi",
];

/// One sentence of `lo..=hi` words, capitalised, ending with a full stop.
pub fn sentence(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let n = rng.range(lo, hi);
    let mut s = String::with_capacity(n * 8);
    for i in 0..n {
        let w = *rng.pick(WORDS);
        if i == 0 {
            capitalise_into(w, &mut s);
        } else {
            s.push(' ');
            s.push_str(w);
        }
    }
    s.push('.');
    s
}

/// A paragraph of `sentences` sentences.
pub fn paragraph(rng: &mut Rng, sentences: usize) -> String {
    let mut p = String::new();
    for i in 0..sentences {
        if i > 0 {
            p.push(' ');
        }
        p.push_str(&sentence(rng, 8, 18));
    }
    p
}

/// A headline: `lo..=hi` capitalised words, no full stop.
pub fn title(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let n = rng.range(lo, hi);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        capitalise_into(WORDS[rng.below(WORDS.len())], &mut s);
    }
    s
}

fn capitalise_into(w: &str, out: &mut String) {
    let mut chars = w.chars();
    if let Some(c) = chars.next() {
        out.extend(c.to_uppercase());
        out.push_str(chars.as_str());
    }
}

/// Escape text for HTML element content and double-quoted attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_text_and_forks_differ() {
        let a = paragraph(&mut Rng::new(7), 3);
        let b = paragraph(&mut Rng::new(7), 3);
        assert_eq!(a, b);
        let base = Rng::new(7);
        assert_ne!(
            sentence(&mut base.fork(1), 5, 5),
            sentence(&mut base.fork(2), 5, 5)
        );
    }
}
