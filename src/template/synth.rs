//! Synthetic hosts with planted templates, for tests, benchmarks and the scale harness.
//!
//! A host has site-wide paths (in every page); per template a core and optional widgets, both
//! made of blocks of `BLOCK` paths that a page has or lacks as a whole (a core block with
//! probability `core_presence`, a widget with probability ½), as real templates do; and per page
//! its own content paths, four times more on a `long_share` of pages (whose mode threshold then
//! drops to 1, so their essential set is the whole page, as on real hosts). Every page is a pure
//! function of (spec, seed, index), so a generator can stream a 100k-page host twice (support,
//! then essential sets) without holding the raw path sets.

use super::support::Support;

/// A tiny deterministic PRNG (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn path_id(seed: u64, kind: u64, a: u64, b: u64) -> u64 {
    mix(mix(mix(seed ^ 0x5eed) ^ kind.wrapping_mul(0x1000_0000_01b3) ^ a) ^ b.rotate_left(17))
}

/// Paths per template block.
pub const BLOCK: usize = 10;

/// The shape of a synthetic host.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteSpec {
    pub pages: usize,
    pub templates: usize,
    /// Paths in every page of the host.
    pub shared: usize,
    /// Core paths per template (in blocks of `BLOCK`).
    pub core: usize,
    /// Probability that a page has a given core block of its template.
    pub core_presence: f64,
    /// Optional widget paths per template (blocks of `BLOCK`, each with probability ½).
    pub optional: usize,
    /// Own content paths per page: uniform in `content / 2 ..= content * 3 / 2`.
    pub content: usize,
    /// Share of long pages, with four times the content.
    pub long_share: f64,
}

impl SiteSpec {
    /// A host shaped like the dev data's news sites (a few hundred paths per page).
    pub fn news(pages: usize, templates: usize) -> SiteSpec {
        SiteSpec {
            pages,
            templates,
            shared: 40,
            core: 220,
            core_presence: 1.0,
            optional: 60,
            content: 60,
            long_share: 0.15,
        }
    }

    /// The template of page `i`: skewed, template t drawn with weight (templates − t).
    pub fn template_of(&self, seed: u64, i: usize) -> usize {
        let t = self.templates as u64;
        let total = t * (t + 1) / 2;
        let mut x = mix(seed ^ mix(i as u64 ^ 0x7e47)) % total;
        for k in 0..t {
            let w = t - k;
            if x < w {
                return k as usize;
            }
            x -= w;
        }
        0
    }

    /// Page `i`'s path set (sorted, unique).
    pub fn page(&self, seed: u64, i: usize) -> Vec<u64> {
        let t = self.template_of(seed, i) as u64;
        let mut rng = Rng::new(mix(seed ^ 0xabcd) ^ mix(i as u64));
        let mut set =
            Vec::with_capacity(self.shared + self.core + self.optional + self.content * 2);
        set.extend((0..self.shared as u64).map(|j| path_id(seed, 0, 0, j)));
        for (kind, paths, p) in [(1, self.core, self.core_presence), (2, self.optional, 0.5)] {
            for block in (0..paths as u64).step_by(BLOCK) {
                if rng.unit() < p {
                    let end = (block + BLOCK as u64).min(paths as u64);
                    set.extend((block..end).map(|j| path_id(seed, kind, t, j)));
                }
            }
        }
        let mut content = self.content as u64;
        if rng.unit() < self.long_share {
            content *= 4;
        }
        let n = content / 2 + rng.below(content + 1);
        set.extend((0..n).map(|j| path_id(seed, 3, i as u64, j)));
        set.sort_unstable();
        set.dedup();
        set
    }

    /// Every page's template label and essential set E(d), streaming the pages twice.
    pub fn essential_sets(&self, seed: u64) -> (Vec<usize>, Vec<Vec<u64>>) {
        let mut support = Support::default();
        for i in 0..self.pages {
            support.add(&self.page(seed, i));
        }
        let labels = (0..self.pages).map(|i| self.template_of(seed, i)).collect();
        let sets = (0..self.pages)
            .map(|i| support.essential(&self.page(seed, i)))
            .collect();
        (labels, sets)
    }
}

/// The partition a labelling induces, as clusters of page indices (canonical order).
pub fn partition_of(labels: &[usize]) -> Vec<Vec<u32>> {
    let mut by: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for (i, &l) in labels.iter().enumerate() {
        by.entry(l).or_default().push(i as u32);
    }
    let mut out: Vec<Vec<u32>> = by.into_values().collect();
    out.sort_unstable_by_key(|c| c[0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_deterministic_and_templates_skewed() {
        let spec = SiteSpec::news(300, 3);
        assert_eq!(spec.page(7, 12), spec.page(7, 12));
        assert_ne!(spec.page(7, 12), spec.page(8, 12));
        let mut n = [0usize; 3];
        for i in 0..300 {
            n[spec.template_of(1, i)] += 1;
        }
        assert!(n[0] > n[1] && n[1] > n[2] && n[2] > 0, "{n:?}");
    }
}
