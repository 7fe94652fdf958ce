//! Clustering a host's pages by template (TEXT-MDL / TEXT-HASH / TEXT-MAX, DESIGN.md §3).
//! PLACEHOLDER: every page in one cluster, until the algorithms land.

use std::fmt;
use std::str::FromStr;

/// The clustering algorithm (`--algorithm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Exact agglomerative MDL (reference; slow).
    TextMdl,
    /// MinHash-estimated MDL cost.
    TextHash,
    /// TEXT-HASH costing only the maximal-Jaccard partners (the default).
    #[default]
    TextMax,
    /// TEXT-MAX with the Dice coefficient.
    TextMaxDice,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::TextMdl,
        Algorithm::TextHash,
        Algorithm::TextMax,
        Algorithm::TextMaxDice,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::TextMdl => "text-mdl",
            Algorithm::TextHash => "text-hash",
            Algorithm::TextMax => "text-max",
            Algorithm::TextMaxDice => "text-max-dice",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                format!(
                    "unknown algorithm {s:?} (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// A partition of a host's pages (indices into the input) into clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clustering {
    /// Each cluster's member page indices, ascending; every page in exactly one cluster.
    pub clusters: Vec<Vec<u32>>,
}

impl Clustering {
    /// Page index → cluster index.
    pub fn assignment(&self, pages: usize) -> Vec<u32> {
        let mut a = vec![u32::MAX; pages];
        for (c, members) in self.clusters.iter().enumerate() {
            for &m in members {
                a[m as usize] = c as u32;
            }
        }
        a
    }
}

/// Cluster pages given their essential path sets E(d).
pub fn cluster(essential: &[Vec<u64>], _algorithm: Algorithm) -> Clustering {
    if essential.is_empty() {
        return Clustering::default();
    }
    Clustering {
        clusters: vec![(0..essential.len() as u32).collect()],
    }
}
