//! The token metric of `../shared/eval/score.py`, reproduced exactly: text is NFKC-normalised and
//! lower-cased; tokens are single CJK characters or runs of Unicode letters/digits (Python's
//! `[^\W_]`, i.e. `\p{L}`/`\p{N}`: no underscore, no combining marks); a page's precision and
//! recall compare bags of tokens; sites average their pages, and a dataset averages its sites
//! ("macro") and its pages.
//!
//! Invariant: for the same texts every figure is bit-identical to score.py's (same formulas,
//! same summation order), so the two print the same digits.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use unicode_normalization::UnicodeNormalization;

/// score.py's `CJK` ranges: kana, CJK ideographs (and extension A, compatibility), Hangul.
const CJK: &str =
    r"\x{3040}-\x{30ff}\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}\x{ac00}-\x{d7af}";

fn token_regex() -> &'static Regex {
    static TOKEN: OnceLock<Regex> = OnceLock::new();
    TOKEN.get_or_init(|| {
        Regex::new(&format!(r"[{CJK}]|[[\p{{L}}\p{{N}}]--[{CJK}]]+"))
            .expect("invariant: the token pattern is valid")
    })
}

/// A bag of tokens (score.py's `Counter`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bag {
    counts: HashMap<String, u32>,
    total: u64,
}

impl Bag {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Number of tokens, repeats included.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn count(&self, token: &str) -> u32 {
        self.counts.get(token).copied().unwrap_or(0)
    }

    /// Tokens repeated as often as in both bags (the size of the multiset intersection).
    pub fn overlap(&self, other: &Bag) -> u64 {
        let (small, large) = if self.counts.len() <= other.counts.len() {
            (self, other)
        } else {
            (other, self)
        };
        small
            .counts
            .iter()
            .map(|(t, &c)| u64::from(c.min(large.count(t))))
            .sum()
    }
}

/// The tokens of `text`, as score.py's `tokens()`.
pub fn tokens(text: &str) -> Bag {
    let norm: String = text.nfkc().collect::<String>().to_lowercase();
    let mut bag = Bag::default();
    for m in token_regex().find_iter(&norm) {
        *bag.counts.entry(m.as_str().to_string()).or_insert(0) += 1;
        bag.total += 1;
    }
    bag
}

/// The tokens of `text` in order (score.py's tokens, as a sequence rather than a bag).
pub fn token_list(text: &str) -> Vec<String> {
    let norm: String = text.nfkc().collect::<String>().to_lowercase();
    token_regex()
        .find_iter(&norm)
        .map(|m| m.as_str().to_string())
        .collect()
}

/// Precision, recall and F1 of one page (or a mean of them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prf {
    pub p: f64,
    pub r: f64,
    pub f1: f64,
}

/// score.py's `prf`: both empty scores 1; an empty side scores 0.
pub fn prf(pred: &Bag, gold: &Bag) -> Prf {
    if gold.is_empty() && pred.is_empty() {
        return Prf {
            p: 1.0,
            r: 1.0,
            f1: 1.0,
        };
    }
    let tp = pred.overlap(gold) as f64;
    let p = if pred.is_empty() {
        0.0
    } else {
        tp / pred.len() as f64
    };
    let r = if gold.is_empty() {
        0.0
    } else {
        tp / gold.len() as f64
    };
    let f1 = if p + r != 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    Prf { p, r, f1 }
}

/// Mean of `scores` component-wise, summed left to right as Python's `sum` (zero when empty).
pub fn mean(scores: &[Prf]) -> Prf {
    if scores.is_empty() {
        return Prf::default();
    }
    let n = scores.len() as f64;
    let sum = |get: fn(&Prf) -> f64| scores.iter().map(get).fold(0.0, |a, b| a + b) / n;
    Prf {
        p: sum(|s| s.p),
        r: sum(|s| s.r),
        f1: sum(|s| s.f1),
    }
}

/// One site's page scores, in score.py's page order (gold ids sorted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SiteScores {
    pub site: String,
    pub pages: Vec<Prf>,
}

/// A dataset's figures as score.py prints them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Pages scored (with a gold file).
    pub pages: usize,
    /// Mean over sites of each site's mean over its pages.
    pub macro_: Prf,
    /// Mean over all pages.
    pub pages_mean: Prf,
}

/// Aggregate per-site page scores; sites without pages are skipped, as score.py skips them.
pub fn summarise(sites: &[SiteScores]) -> Summary {
    let rows: Vec<Prf> = sites
        .iter()
        .filter(|s| !s.pages.is_empty())
        .map(|s| mean(&s.pages))
        .collect();
    let all: Vec<Prf> = sites.iter().flat_map(|s| s.pages.iter().copied()).collect();
    Summary {
        pages: all.len(),
        macro_: mean(&rows),
        pages_mean: mean(&all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sorted(tokens(text).items())` as printed by score.py (Python 3.11, Unicode 14).
    fn sorted(text: &str) -> Vec<(String, u32)> {
        let mut v: Vec<(String, u32)> = tokens(text).counts.into_iter().collect();
        v.sort();
        v
    }

    fn bag(items: &[(&str, u32)]) -> Vec<(String, u32)> {
        items.iter().map(|&(t, c)| (t.to_string(), c)).collect()
    }

    // Expected values below were printed by score.py's own `tokens`/`prf` (docs/detectors.md).
    #[test]
    fn cjk_characters_are_single_tokens_between_latin_runs() {
        assert_eq!(
            sorted("中文English混合123测试"),
            bag(&[
                ("123", 1),
                ("english", 1),
                ("中", 1),
                ("合", 1),
                ("文", 1),
                ("测", 1),
                ("混", 1),
                ("试", 1)
            ])
        );
        assert_eq!(
            sorted("한국어 テスト ひらがな 漢字"),
            bag(&[
                ("が", 1),
                ("な", 1),
                ("ひ", 1),
                ("ら", 1),
                ("ス", 1),
                ("テ", 1),
                ("ト", 1),
                ("字", 1),
                ("漢", 1),
                ("국", 1),
                ("어", 1),
                ("한", 1)
            ])
        );
    }

    #[test]
    fn nfkc_folds_full_and_half_width_and_compatibility_characters() {
        assert_eq!(
            sorted("ＦＵＬＬ－ｗｉｄｔｈ\u{3000}ＡＢＣ１２３ ﾃｽﾄ"),
            bag(&[
                ("abc123", 1),
                ("full", 1),
                ("width", 1),
                ("ス", 1),
                ("テ", 1),
                ("ト", 1)
            ])
        );
        assert_eq!(
            sorted("x² ½ ① Ⅻ ﬁne"),
            bag(&[("1", 2), ("2", 1), ("fine", 1), ("x2", 1), ("xii", 1)])
        );
    }

    #[test]
    fn underscores_split_and_never_count() {
        assert_eq!(
            sorted("snake_case __init__ a_b_c"),
            bag(&[
                ("a", 1),
                ("b", 1),
                ("c", 1),
                ("case", 1),
                ("init", 1),
                ("snake", 1)
            ])
        );
        assert!(tokens("___").is_empty());
    }

    #[test]
    fn accents_case_and_combining_marks_follow_python() {
        assert_eq!(
            sorted("Café naïve RÉSUMÉ façade"),
            bag(&[("café", 1), ("façade", 1), ("naïve", 1), ("résumé", 1)])
        );
        // Final sigma lower-cases to ς; İ lower-cases to i + U+0307, a mark that splits.
        assert_eq!(
            sorted("Straße ΣΟΦΟΣ İstanbul"),
            bag(&[("i", 1), ("stanbul", 1), ("straße", 1), ("σοφος", 1)])
        );
        // Devanagari vowel signs are marks, not letters, in Python's \w.
        assert_eq!(
            sorted("हिन्दी ไทย"),
            bag(&[("द", 1), ("न", 1), ("ह", 1), ("ไทย", 1)])
        );
        assert_eq!(
            sorted("it's 3.14 e-mail U.S.A."),
            bag(&[
                ("14", 1),
                ("3", 1),
                ("a", 1),
                ("e", 1),
                ("it", 1),
                ("mail", 1),
                ("s", 2),
                ("u", 1)
            ])
        );
        assert!(tokens("   \n\t ").is_empty());
    }

    #[test]
    fn prf_matches_score_py() {
        let cases: [(&str, &str, (f64, f64, f64)); 7] = [
            (
                "中文 English 测试 测试",
                "中文 english 测试",
                (0.7142857142857143, 1.0, 0.8333333333333333),
            ),
            ("ＡＢＣ abc", "abc abc abc", (1.0, 0.6666666666666666, 0.8)),
            ("", "", (1.0, 1.0, 1.0)),
            ("", "gold", (0.0, 0.0, 0.0)),
            ("pred", "", (0.0, 0.0, 0.0)),
            ("___", "", (1.0, 1.0, 1.0)),
            ("a a b c", "a b b d e", (0.5, 0.4, 0.4444444444444445)),
        ];
        for (pred, gold, (p, r, f1)) in cases {
            let got = prf(&tokens(pred), &tokens(gold));
            assert_eq!(got, Prf { p, r, f1 }, "{pred:?} vs {gold:?}");
        }
    }

    #[test]
    fn summaries_average_sites_then_pages() {
        let s = |f1: f64| Prf { p: f1, r: f1, f1 };
        let sites = [
            SiteScores {
                site: "a".into(),
                pages: vec![s(1.0), s(0.0)],
            },
            SiteScores {
                site: "b".into(),
                pages: vec![s(1.0)],
            },
            SiteScores {
                site: "empty".into(),
                pages: vec![],
            },
        ];
        let sum = summarise(&sites);
        assert_eq!(sum.pages, 3);
        assert_eq!(sum.macro_.f1, 0.75);
        assert_eq!(sum.pages_mean.f1, 2.0 / 3.0);
    }
}
