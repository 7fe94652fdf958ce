//! The content classifier's models: two gradient-boosted tree ensembles trained offline on the
//! dev sets (`tools/train/`, docs/quality.md) and shipped in the crate as data (`stage1.txt`,
//! `stage2.txt`: the numeric subset of LightGBM's text format; no download, no network at run
//! time). Stage one scores each block from its features alone; stage two reads the same
//! features plus the context of stage one's probabilities (`classify::context`: the block's
//! item, run, container and neighbours), so the blocks of one run of items, one thread or one
//! section are decided together. A block is content when stage two's raw score (the log-odds) is
//! above `THRESHOLD`.
//!
//! Evaluation is exact: features are `f64` as in training, and a split sends a value to its
//! left child when it is at most the split's threshold, as LightGBM does for numeric features
//! without missing values (the loader refuses anything else: categorical splits, missing-value
//! handling, a feature list that differs from `classify::names`).

use std::sync::LazyLock;

use crate::dom::tree::flags;
use crate::dom::{Dom, NodeKind};

use super::blocks::Blocks;
use super::classify::{self, Rules};

/// The model files shipped with the crate.
const STAGE1: &str = include_str!("stage1.txt");
const STAGE2: &str = include_str!("stage2.txt");

/// The raw score above which a block is content: log-odds 0, probability ½ — the Bayes
/// decision for a model trained with page-normalised token weights, where a wrong block costs
/// what its share of the page's text costs the page's F1.
pub const THRESHOLD: f64 = 0.0;

/// One regression tree.
#[derive(Debug)]
struct Tree {
    feature: Vec<u16>,
    threshold: Vec<f64>,
    /// Child of a split: a split's index, or `!leaf` (negative) for a leaf.
    left: Vec<i32>,
    right: Vec<i32>,
    leaf: Vec<f64>,
}

/// A tree ensemble, its trees' arrays laid end to end (children as indices into the whole,
/// or `!leaf` for an index into `leaf`): no per-tree indirection on the walk, which is a third
/// of cleaning's CPU in the crawl's passes. Each field has an array of its own, as LightGBM
/// lays them out: with a split's two children side by side, the compiler turned the walk's
/// branch into a load that waits on the comparison, 58 % slower (the branch predicts well).
#[derive(Debug)]
pub struct Ensemble {
    names: Vec<String>,
    feature: Vec<u16>,
    threshold: Vec<f64>,
    left: Vec<i32>,
    right: Vec<i32>,
    leaf: Vec<f64>,
    /// Each tree's root: a split's index, or `!leaf` for a tree that is one leaf.
    roots: Vec<i32>,
}

/// Why a model file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model file: {0}")]
    Format(String),
}

fn values<T: std::str::FromStr>(line: &str, key: &str) -> Result<Vec<T>, ModelError> {
    line.split_ascii_whitespace()
        .map(|v| {
            v.parse()
                .map_err(|_| ModelError::Format(format!("bad value {v:?} in {key}")))
        })
        .collect()
}

impl Ensemble {
    /// Read the numeric subset of LightGBM's text format.
    pub fn parse(text: &str) -> Result<Ensemble, ModelError> {
        let mut names = Vec::new();
        let mut trees = Vec::new();
        let mut current: Option<Tree> = None;
        let mut leaves = 0usize;
        let finish =
            |t: Option<Tree>, leaves: usize, trees: &mut Vec<Tree>| -> Result<(), ModelError> {
                if let Some(t) = t {
                    let splits = leaves.saturating_sub(1);
                    let ok = t.leaf.len() == leaves
                        && t.feature.len() == splits
                        && t.threshold.len() == splits
                        && t.left.len() == splits
                        && t.right.len() == splits;
                    if !ok {
                        return Err(ModelError::Format(format!(
                            "tree {} is incomplete",
                            trees.len()
                        )));
                    }
                    trees.push(t);
                }
                Ok(())
            };
        for line in text.lines() {
            let line = line.trim();
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            match key {
                "feature_names" => {
                    names = value.split_ascii_whitespace().map(str::to_string).collect()
                }
                "Tree" => {
                    finish(current.take(), leaves, &mut trees)?;
                    current = Some(Tree {
                        feature: Vec::new(),
                        threshold: Vec::new(),
                        left: Vec::new(),
                        right: Vec::new(),
                        leaf: Vec::new(),
                    });
                }
                "num_leaves" => {
                    leaves = value
                        .trim()
                        .parse()
                        .map_err(|_| ModelError::Format("bad num_leaves".into()))?
                }
                "num_cat" if value.trim() != "0" => {
                    return Err(ModelError::Format(
                        "categorical splits are not supported".into(),
                    ))
                }
                "decision_type" => {
                    // Bit 0: categorical; bits 2-3: missing-value type (0: none).
                    for d in values::<u32>(value, key)? {
                        if d & 1 != 0 || (d >> 2) & 3 != 0 {
                            return Err(ModelError::Format(format!(
                                "unsupported decision type {d}"
                            )));
                        }
                    }
                }
                _ => {
                    let Some(t) = current.as_mut() else { continue };
                    match key {
                        "split_feature" => t.feature = values(value, key)?,
                        "threshold" => t.threshold = values(value, key)?,
                        "left_child" => t.left = values(value, key)?,
                        "right_child" => t.right = values(value, key)?,
                        "leaf_value" => t.leaf = values(value, key)?,
                        _ => {}
                    }
                }
            }
        }
        finish(current.take(), leaves, &mut trees)?;
        if trees.is_empty() {
            return Err(ModelError::Format("no trees".into()));
        }
        let width = names.len();
        for t in &trees {
            let bad_feature = t.feature.iter().any(|&f| usize::from(f) >= width);
            let splits = t.feature.len() as i32;
            let bad_child = t
                .left
                .iter()
                .chain(&t.right)
                .any(|&c| c >= splits || (c < 0 && (!c) as usize >= t.leaf.len()));
            if bad_feature || bad_child {
                return Err(ModelError::Format(
                    "a split names a feature or child that is not there".into(),
                ));
            }
        }
        Ok(Ensemble::concatenate(names, trees))
    }

    /// The parsed trees end to end, in order (so sums add up in the same order).
    fn concatenate(names: Vec<String>, trees: Vec<Tree>) -> Ensemble {
        let mut e = Ensemble {
            names,
            feature: Vec::new(),
            threshold: Vec::new(),
            left: Vec::new(),
            right: Vec::new(),
            leaf: Vec::new(),
            roots: Vec::new(),
        };
        let index = |n: usize| i32::try_from(n).expect("invariant: a model has < 2^31 nodes");
        for t in trees {
            let (base, leaf_base) = (index(e.feature.len()), index(e.leaf.len()));
            let child = |c: i32| if c < 0 { !(leaf_base + !c) } else { base + c };
            e.roots.push(if t.feature.is_empty() {
                !leaf_base
            } else {
                base
            });
            e.left.extend(t.left.iter().map(|&c| child(c)));
            e.right.extend(t.right.iter().map(|&c| child(c)));
            e.feature.extend(t.feature);
            e.threshold.extend(t.threshold);
            e.leaf.extend(t.leaf);
        }
        e
    }

    /// The value of the tree whose root is `root` for one feature vector.
    fn tree(&self, root: i32, x: &[f64]) -> f64 {
        let mut n = root;
        while n >= 0 {
            let i = n as usize;
            n = if x[usize::from(self.feature[i])] <= self.threshold[i] {
                self.left[i]
            } else {
                self.right[i]
            };
        }
        self.leaf[!n as usize]
    }

    /// The feature names the model was trained on.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The raw score (log-odds) of one feature vector.
    pub fn score(&self, x: &[f64]) -> f64 {
        self.roots.iter().map(|&r| self.tree(r, x)).sum()
    }
}

/// The two stages' feature names, in the order their models read them.
fn stage_names() -> (Vec<String>, Vec<String>) {
    let one = classify::names();
    let mut two = one.clone();
    two.extend(classify::context_names());
    (one, two)
}

/// The shipped models (parsed once).
pub fn shipped() -> &'static (Ensemble, Ensemble) {
    static SHIPPED: LazyLock<(Ensemble, Ensemble)> = LazyLock::new(|| {
        let one =
            Ensemble::parse(STAGE1).expect("invariant: the shipped stage one parses (tested)");
        let two =
            Ensemble::parse(STAGE2).expect("invariant: the shipped stage two parses (tested)");
        let (n1, n2) = stage_names();
        assert!(
            one.names() == n1.as_slice() && two.names() == n2.as_slice(),
            "invariant: the shipped models read the features classify writes (tested)"
        );
        (one, two)
    });
    &SHIPPED
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Per block of the page: content, by the shipped models.
pub fn content(dom: &Dom, blocks: &Blocks, rules: &Rules) -> Vec<bool> {
    let described = classify::features(dom, blocks, rules);
    let (one, two) = shipped();
    let w = classify::width();
    let p: Vec<f64> = described
        .rows
        .chunks_exact(w)
        .map(|x| sigmoid(one.score(x)))
        .collect();
    let context = classify::context(blocks, &described.groups, &p);
    let mut x = Vec::with_capacity(w + classify::CONTEXT);
    let mut kept: Vec<bool> = described
        .rows
        .chunks_exact(w)
        .zip(context.chunks_exact(classify::CONTEXT))
        .map(|(row, ctx)| {
            x.clear();
            x.extend_from_slice(row);
            x.extend_from_slice(ctx);
            two.score(&x) > THRESHOLD
        })
        .collect();
    link_lines_in_asides(dom, blocks, rules.kept, &mut kept);
    template_link_lines(dom, blocks, &mut kept);
    described_product(dom, blocks, &mut kept);
    kept
}

/// The fewest tokens a line found in the product's description needs to vouch for its run
/// (`described_product`): a shorter line found in a description (a size, a colour, "Free
/// shipping") says nothing of where it stands.
const DESCRIBED_MIN_TOKENS: u32 = 8;

/// The fewest tokens of any line in such a run: a bullet of the description ("- Crew neck")
/// has two, a lone word ("Sale", "Details") could be in any description.
const DESCRIBED_RUN_TOKENS: u32 = 2;

/// Keeps the lines the page's JSON-LD `Product` gives as its description
/// (`PageInfo::product_description`): the page says in so many words that they are its
/// content, where the model, reading a shop's page of buttons, swatches and short specs, can
/// take a paragraph or the bullets of it for a promotion. A run of consecutive lines each
/// found whole in the description (`DESCRIBED_RUN_TOKENS` tokens or more, no template text)
/// is kept when one of them holds `DESCRIBED_MIN_TOKENS`.
fn described_product(dom: &Dom, blocks: &Blocks, kept: &mut [bool]) {
    let Some(description) = dom.info.product_description.as_deref() else {
        return;
    };
    let description = description.to_lowercase();
    let found: Vec<bool> = blocks
        .blocks
        .iter()
        .map(|b| {
            if b.tokens < DESCRIBED_RUN_TOKENS || b.template_tokens > 0 {
                return false;
            }
            let text = classify::block_text(dom, blocks, b);
            let words: Vec<&str> = text.split_whitespace().collect();
            description.contains(&words.join(" ").to_lowercase())
        })
        .collect();
    let mut start = 0;
    while start < found.len() {
        let end = start + found[start..].iter().take_while(|&&f| f).count();
        if blocks.blocks[start..end]
            .iter()
            .any(|b| b.tokens >= DESCRIBED_MIN_TOKENS)
        {
            kept[start..end].iter_mut().for_each(|k| *k = true);
        }
        start = end + 1;
    }
}

/// Drops the lines the model keeps that are the cluster's template text and links alone: the "Reply Like Report" bar under every post, the "Share Tweet" row
/// under every item, which no page's content owns.
fn template_link_lines(dom: &Dom, blocks: &Blocks, kept: &mut [bool]) {
    for (b, k) in blocks.blocks.iter().zip(kept.iter_mut()) {
        if *k
            && b.tokens > 0
            && b.own_tokens() == 0
            && blocks
                .nodes_of(b)
                .iter()
                .all(|&n| dom.nodes[n as usize].flags & flags::IN_LINK != 0)
        {
            *k = false;
        }
    }
}

/// Drops the bare-link lines the model keeps inside an `<aside>` (or `role=complementary`)
/// that the rules dropped: the headlines of a "most read" box beside the content, which the
/// model, trained mostly on pages whose lists are the same on every page, can take for a
/// listing when the headlines change from page to page. The dev sets' figures do not move
/// (docs/quality.md); a planted "most read" box beside syndicated copies is what it fixes.
fn link_lines_in_asides(dom: &Dom, blocks: &Blocks, rules: &[bool], kept: &mut [bool]) {
    let in_aside = |mut i: usize| loop {
        if let NodeKind::Element(e) = &dom.nodes[i].kind {
            if e.tag == "aside" || e.role.as_deref() == Some("complementary") {
                return true;
            }
        }
        if i == 0 {
            return false;
        }
        i = dom.nodes[i].parent as usize;
    };
    for ((b, k), &r) in blocks.blocks.iter().zip(kept.iter_mut()).zip(rules) {
        let own = b.own_tokens();
        if *k && !r && own > 0 && 10 * b.link_tokens >= 9 * own && in_aside(b.container as usize) {
            *k = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    /// A shop's page whose description the model took for a promotion (WCXB dev: gymshark's
    /// paragraph and bullets): the run of lines found in the JSON-LD description is kept, its
    /// two-token bullets with it; a lone word of it, a short line of it standing apart and a
    /// line not in it are not.
    #[test]
    fn the_lines_of_the_json_ld_product_description_are_kept() {
        let description = "REDEFINING YOUR POTENTIAL\\nThe Arrival shirt is your admission to a \
            new, purposeful approach to training with sweat-wicking fabric.\\n- Slim fit\\n- Crew \
            neck Sale";
        let html = format!(
            r#"<html><head><script type="application/ld+json">{{"@type": "Product",
            "description": "{description}"}}</script></head><body><p>Slim fit</p>
            <p>Free delivery over 75 dollars</p><p>Redefining your potential</p><p>The Arrival
            shirt is your admission to a new, purposeful approach to training with sweat-wicking
            fabric.</p><p>- Slim fit</p><p>- Crew neck</p><p>Sale</p></body></html>"#
        );
        let dom = parse_html(&html).dom;
        let blocks = Blocks::new(&dom, |_| (false, false));
        let mut kept = vec![false; blocks.blocks.len()];
        described_product(&dom, &blocks, &mut kept);
        let text = |k: usize| classify::block_text(&dom, &blocks, &blocks.blocks[k]);
        let shown: Vec<(String, bool)> = (0..kept.len()).map(|k| (text(k), kept[k])).collect();
        let expect = [
            ("Slim fit", false),
            ("Free delivery over 75 dollars", false),
            ("Redefining your potential", true),
            ("The Arrival shirt", true),
            ("- Slim fit", true),
            ("- Crew neck", true),
            ("Sale", false),
        ];
        assert_eq!(shown.len(), expect.len(), "{shown:?}");
        for ((t, k), (want, keep)) in shown.iter().zip(expect) {
            assert!(t.starts_with(want) && *k == keep, "{shown:?}");
        }
    }

    #[test]
    fn the_shipped_models_parse_and_read_classify_features() {
        let (n1, n2) = stage_names();
        let one = Ensemble::parse(STAGE1).unwrap();
        let two = Ensemble::parse(STAGE2).unwrap();
        assert_eq!(one.names(), n1.as_slice());
        assert_eq!(two.names(), n2.as_slice());
        assert!(!one.roots.is_empty() && !two.roots.is_empty());
    }

    /// The model file's trees walked one by one as LightGBM lays them out (each tree's
    /// lines from `split_feature` to `leaf_value`), summed in order.
    fn reference(text: &str, x: &[f64]) -> f64 {
        let nums = |v: &str| -> Vec<f64> {
            v.split_ascii_whitespace()
                .map(|n| n.parse().unwrap())
                .collect()
        };
        let (mut feature, mut threshold, mut left, mut right) = (vec![], vec![], vec![], vec![]);
        let mut sum = 0.0;
        for line in text.lines() {
            let Some((key, value)) = line.trim().split_once('=') else {
                continue;
            };
            match key {
                "split_feature" => feature = nums(value),
                "threshold" => threshold = nums(value),
                "left_child" => left = nums(value),
                "right_child" => right = nums(value),
                "leaf_value" => {
                    let leaf = nums(value);
                    let mut n = 0i64;
                    sum += loop {
                        if feature.is_empty() {
                            break leaf[0];
                        }
                        let i = n as usize;
                        n = if x[feature[i] as usize] <= threshold[i] {
                            left[i]
                        } else {
                            right[i]
                        } as i64;
                        if n < 0 {
                            break leaf[!n as usize];
                        }
                    };
                    feature.clear();
                }
                _ => {}
            }
        }
        sum
    }

    /// The trees laid end to end score every vector as the model file's trees walked one by
    /// one: values at, just below and just above the split thresholds, so every branch is
    /// taken somewhere, and equal to the last bit (the same additions in the same order).
    #[test]
    fn trees_laid_end_to_end_score_as_the_model_file_reads() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for text in [STAGE1, STAGE2] {
            let e = Ensemble::parse(text).unwrap();
            let width = e.names().len();
            let mut by_feature = vec![vec![0.0]; width];
            for (&f, &t) in e.feature.iter().zip(&e.threshold) {
                by_feature[usize::from(f)].push(t);
            }
            for _ in 0..300 {
                let x: Vec<f64> = by_feature
                    .iter()
                    .map(|ts| {
                        let t = ts[next() as usize % ts.len()];
                        match next() % 3 {
                            0 => t,
                            1 => t - t.abs().max(1e-9) * 1e-6,
                            _ => t + t.abs().max(1e-9) * 1e-6,
                        }
                    })
                    .collect();
                assert_eq!(e.score(&x).to_bits(), reference(text, &x).to_bits());
            }
        }
    }

    #[test]
    fn a_tree_sends_values_at_the_threshold_left() {
        let text = "feature_names=a b\nTree=0\nnum_leaves=3\nsplit_feature=0 1\n\
                    threshold=0.5 2\ndecision_type=2 2\nleft_child=-1 -2\nright_child=1 -3\n\
                    leaf_value=-1 0.25 1\n";
        let e = Ensemble::parse(text).unwrap();
        assert_eq!(e.score(&[0.5, 9.0]), -1.0);
        assert_eq!(e.score(&[0.6, 2.0]), 0.25);
        assert_eq!(e.score(&[0.6, 2.5]), 1.0);
    }

    #[test]
    fn unsupported_models_are_refused() {
        let categorical = "feature_names=a\nTree=0\nnum_leaves=2\nnum_cat=1\n";
        assert!(Ensemble::parse(categorical).is_err());
        let missing = "feature_names=a\nTree=0\nnum_leaves=2\nsplit_feature=0\nthreshold=1\n\
                       decision_type=10\nleft_child=-1\nright_child=-2\nleaf_value=0 1\n";
        assert!(Ensemble::parse(missing).is_err());
        let dangling = "feature_names=a\nTree=0\nnum_leaves=2\nsplit_feature=3\nthreshold=1\n\
                        decision_type=2\nleft_child=-1\nright_child=-2\nleaf_value=0 1\n";
        assert!(Ensemble::parse(dangling).is_err());
    }
}
