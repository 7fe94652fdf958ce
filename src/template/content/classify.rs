//! The content classifier: each block of a page described by a fixed vector of features —
//! its own text (tokens, links, punctuation, what kind of line it is), what its markup says
//! around it (`markup::roles`), where it stands (the prose core and region the scoring found,
//! the page's runs of repeated items, its neighbours), what the cluster knows (template and
//! repeated text, the rules' verdict) and what the page says it is (`Dom::info`) — and a
//! gradient-boosted tree ensemble (`model`) that gives the probability that the block is
//! content.
//!
//! Runs of repeated items are found as Liu, Grossman and Zhai's data records are (MDR, KDD
//! 2003), simplified to siblings: children of one element with the same tag and class (digits
//! removed) are the items of one run. A run of items with prose of their own (posts, reviews,
//! products with blurbs) reads differently from a run of bare links (a menu), and the features
//! say which.
//!
//! Pure: no I/O; the features of a block depend only on its page and the cluster's model.

use crate::dom::layout::Kind;
use crate::dom::tree::{flags, Dom, NodeKind};

use super::blocks::{Block, Blocks};
use super::markup::{page_roles, ROLES};

/// What the rules decided for a page, and where: the features the classifier starts from.
pub struct Rules<'a> {
    /// Per block: kept by the rule-based pruning.
    pub kept: &'a [bool],
    /// Per block: inside an element whose markup names furniture.
    pub furniture: &'a [bool],
    /// The prose core and the region (node indices).
    pub core: usize,
    pub region: usize,
    /// Site-mode evidence (0: page mode, 1: site mode, 2: articles).
    pub mode: u8,
    /// Distinct pages in the cluster.
    pub pages: usize,
}

/// The feature names, in vector order (the model file lists them too, and they must agree).
pub fn names() -> Vec<String> {
    let mut n: Vec<String> = [
        "tokens",
        "own_share",
        "link_share",
        "repeated_share",
        "punct_rate",
        "kind",
        "heading_level",
        "chars_per_token",
        "digit_share",
        "upper_share",
        "ends_punct",
        "starts_upper",
        "has_currency",
        "has_copyright",
        "in_noscript",
        "anchor_share",
        "title_overlap",
        "depth",
        "position",
        "tokens_before",
        "in_core",
        "in_region",
        "after_region",
        "rule_kept",
        "furniture",
        "run_items",
        "run_share",
        "run_item_tokens",
        "run_link_share",
        "run_punct_rate",
        "item_first",
        "outer_run_share",
        "outer_run_items",
        "parent_share",
        "parent_link_share",
        "up3_share",
        "up3_link_share",
        "prev_link_share",
        "prev_tokens",
        "prev_heading",
        "prev_kept",
        "next_link_share",
        "next_tokens",
        "next_heading",
        "next_kept",
        "page_tokens",
        "page_blocks",
        "page_link_share",
        "page_kept_share",
        "type_product",
        "type_article",
        "type_forum",
        "type_list",
        "type_faq",
        "mode",
        "cluster_pages",
        "in_list_item",
        "in_table",
        "in_dl",
        "in_blockquote",
        "in_figure",
        "list_items",
        "run_item_blocks",
        "run_depth",
        "url_product",
        "url_forum",
        "url_list",
        "url_article",
        "url_docs",
        "url_service",
        "url_depth",
        "url_slug_words",
        "url_number",
        "url_known",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for r in 0..ROLES {
        n.push(format!("role{r}"));
    }
    n
}

/// The number of features.
pub fn width() -> usize {
    74 + ROLES
}

/// "None" for a distance feature (no such ancestor).
const FAR: f64 = 64.0;

/// Per-node sums over the subtree: own (non-template) tokens, link tokens, punctuation.
struct Sums {
    tokens: Vec<u32>,
    links: Vec<u32>,
    punct: Vec<u32>,
    blocks: Vec<u32>,
}

impl Sums {
    fn new(dom: &Dom, blocks: &Blocks) -> Sums {
        let n = dom.nodes.len();
        let mut s = Sums {
            tokens: vec![0; n],
            links: vec![0; n],
            punct: vec![0; n],
            blocks: vec![0; n],
        };
        for b in &blocks.blocks {
            let at = blocks.first_node(b);
            s.tokens[at] += b.own_tokens();
            s.links[at] += b.link_tokens;
            s.punct[at] += b.punct;
            s.blocks[at] += 1;
        }
        for i in (1..n).rev() {
            let p = dom.nodes[i].parent as usize;
            s.tokens[p] += s.tokens[i];
            s.links[p] += s.links[i];
            s.punct[p] += s.punct[i];
            s.blocks[p] += s.blocks[i];
        }
        s
    }
}

/// Runs of repeated siblings: per element, its run (siblings with its signature) and the
/// run's totals.
struct Runs {
    /// Per node: its run's index, `u32::MAX` when not an element.
    run_of: Vec<u32>,
    /// Per run: items, own tokens, link tokens, punctuation.
    items: Vec<u32>,
    tokens: Vec<u32>,
    links: Vec<u32>,
    punct: Vec<u32>,
    blocks: Vec<u32>,
}

/// An element's identity among its siblings: its tag and class without digits.
fn sibling_signature(dom: &Dom, i: usize) -> u64 {
    let Some(e) = dom.element(i) else { return 0 };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in e
        .tag
        .as_bytes()
        .iter()
        .chain(b"|")
        .chain(e.class.as_deref().unwrap_or("").as_bytes())
    {
        if !b.is_ascii_digit() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

impl Runs {
    fn new(dom: &Dom, sums: &Sums) -> Runs {
        let n = dom.nodes.len();
        let mut runs = Runs {
            run_of: vec![u32::MAX; n],
            items: Vec::new(),
            tokens: Vec::new(),
            links: Vec::new(),
            punct: Vec::new(),
            blocks: Vec::new(),
        };
        let mut groups: std::collections::HashMap<(u32, u64), u32> = Default::default();
        for i in 1..n {
            if dom.element(i).is_none() {
                continue;
            }
            let key = (dom.nodes[i].parent, sibling_signature(dom, i));
            let next = runs.items.len() as u32;
            let r = *groups.entry(key).or_insert(next);
            if r == next {
                runs.items.push(0);
                runs.tokens.push(0);
                runs.links.push(0);
                runs.punct.push(0);
                runs.blocks.push(0);
            }
            let r = r as usize;
            runs.run_of[i] = r as u32;
            runs.items[r] += 1;
            runs.tokens[r] += sums.tokens[i];
            runs.links[r] += sums.links[i];
            runs.punct[r] += sums.punct[i];
            runs.blocks[r] += sums.blocks[i];
        }
        runs
    }
}

/// What the page says it is, from `Dom::info` (JSON-LD types, `og:type`).
fn page_types(dom: &Dom) -> [f64; 5] {
    let mut t = [0.0; 5];
    for ty in &dom.info.types {
        let ty = ty.to_ascii_lowercase();
        let ty = ty.rsplit(['/', ':']).next().unwrap_or("");
        match ty {
            "product" | "offer" | "productgroup" | "individualproduct" | "aggregateoffer" => {
                t[0] = 1.0
            }
            "article"
            | "newsarticle"
            | "blogposting"
            | "techarticle"
            | "report"
            | "scholarlyarticle"
            | "reportagenewsarticle"
            | "analysisnewsarticle"
            | "opinionnewsarticle" => t[1] = 1.0,
            "discussionforumposting" | "qapage" | "question" | "socialmediaposting" | "answer" => {
                t[2] = 1.0
            }
            "itemlist" | "collectionpage" | "searchresultspage" | "offercatalog"
            | "productcollection" => t[3] = 1.0,
            "faqpage" | "howto" | "recipe" => t[4] = 1.0,
            _ => {}
        }
    }
    t
}

/// What the page's own address says (`Dom::info.url`): which kind of page its path and host
/// words name (product, forum, listing, article, documentation, service page), its path depth,
/// the words of its last segment (an article's slug), whether that segment holds a number (an
/// item's id), and whether there is an address at all. Conventions of URLs in general, not of
/// any site.
fn url_features(dom: &Dom) -> [f64; 10] {
    let mut f = [0.0; 10];
    let Some(raw) = dom.info.url.as_deref() else {
        return f;
    };
    f[9] = 1.0;
    let lower = raw.to_ascii_lowercase();
    let (host, path) = match url::Url::parse(&lower) {
        Ok(u) => (u.host_str().unwrap_or("").to_string(), u.path().to_string()),
        Err(_) => (
            String::new(),
            lower.split(['?', '#']).next().unwrap_or("").to_string(),
        ),
    };
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let host_first = host.split('.').next().unwrap_or("");
    let has = |words: &[&str]| segments.iter().any(|s| words.contains(s));
    f[0] = f64::from(u8::from(
        has(&[
            "product", "products", "p", "dp", "item", "itm", "sku", "buy", "gp", "ip",
        ]) || matches!(host_first, "shop" | "store"),
    ));
    f[1] = f64::from(u8::from(
        has(&[
            "forum",
            "forums",
            "t",
            "thread",
            "threads",
            "topic",
            "topics",
            "discussion",
            "discussions",
            "questions",
            "community",
            "board",
            "boards",
            "showthread.php",
            "viewtopic.php",
            "r",
            "comments",
        ]) || matches!(
            host_first,
            "forum" | "forums" | "community" | "discuss" | "discussion" | "answers" | "boards"
        ),
    ));
    f[2] = f64::from(u8::from(has(&[
        "collections",
        "collection",
        "category",
        "categories",
        "c",
        "shop",
        "search",
        "s",
        "list",
        "lists",
        "tag",
        "tags",
        "browse",
        "catalog",
        "catalogue",
        "deals",
        "sale",
    ])));
    f[3] = f64::from(u8::from(
        has(&[
            "blog", "blogs", "news", "article", "articles", "story", "stories", "post", "posts",
        ]) || segments.iter().any(|s| {
            s.len() == 4
                && (s.starts_with("19") || s.starts_with("20"))
                && s.bytes().all(|b| b.is_ascii_digit())
        }),
    ));
    f[4] = f64::from(u8::from(
        has(&[
            "docs",
            "doc",
            "documentation",
            "api",
            "reference",
            "guide",
            "guides",
            "manual",
            "learn",
            "tutorial",
            "tutorials",
            "wiki",
            "kb",
            "help",
        ]) || matches!(
            host_first,
            "docs" | "developer" | "developers" | "wiki" | "help"
        ),
    ));
    f[5] = f64::from(u8::from(has(&[
        "services",
        "service",
        "pricing",
        "solutions",
        "solution",
        "features",
        "about",
        "contact",
        "plans",
        "enterprise",
        "platform",
    ])));
    f[6] = segments.len() as f64;
    let last = segments.last().copied().unwrap_or("");
    f[7] = last.split(['-', '_']).filter(|w| w.len() > 1).count() as f64;
    f[8] = f64::from(u8::from(
        last.bytes().filter(u8::is_ascii_digit).count() >= 4,
    ));
    f
}

fn share(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        f64::from(part) / f64::from(whole)
    }
}

fn log_tokens(t: u32) -> f64 {
    (1.0 + f64::from(t)).log2()
}

/// The lowercase word tokens of `text` (for the title overlap).
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The groups a block's context is read over (`context`): the item of its run, the run, its
/// line's element, that element's parent, and three levels above that (node indices, `NONE`
/// when there is no item or run).
pub const GROUPS: usize = 5;

/// No group.
pub const NONE: u32 = u32::MAX;

/// A page's blocks described: `width()` features a block, row after row, and each block's
/// groups.
pub struct Described {
    pub rows: Vec<f64>,
    pub groups: Vec<[u32; GROUPS]>,
}

/// Each block's feature vector (`names` order) and groups.
pub fn features(dom: &Dom, blocks: &Blocks, rules: &Rules) -> Described {
    let n_blocks = blocks.blocks.len();
    let w = width();
    let mut out = Vec::with_capacity(n_blocks * w);
    let mut groups = Vec::with_capacity(n_blocks);
    if n_blocks == 0 {
        return Described { rows: out, groups };
    }
    let sums = Sums::new(dom, blocks);
    let runs = Runs::new(dom, &sums);
    let role_of = page_roles(dom);
    let page_tokens = sums.tokens[0];
    let page_links = sums.links[0];
    let kept_tokens: u32 = blocks
        .blocks
        .iter()
        .zip(rules.kept)
        .filter(|(_, &k)| k)
        .map(|(b, _)| b.own_tokens())
        .sum();
    let types = page_types(dom);
    let url = url_features(dom);
    let title: std::collections::HashSet<String> = dom
        .title()
        .map(|t| words_of(&t).into_iter().collect())
        .unwrap_or_default();
    let region_end = dom.nodes[rules.region].end as usize;
    let core_end = dom.nodes[rules.core].end as usize;
    let mut before = 0u32;
    for (k, b) in blocks.blocks.iter().enumerate() {
        let first = blocks.first_node(b);
        let own = b.own_tokens();
        let text = block_text(dom, blocks, b);
        let chars = text.chars().filter(|c| !c.is_whitespace()).count() as f64;
        let letters = text.chars().filter(|c| c.is_alphabetic()).count() as f64;
        let digits = text.chars().filter(char::is_ascii_digit).count() as f64;
        let upper = text.chars().filter(|c| c.is_uppercase()).count() as f64;
        let trimmed = text.trim_end();
        let anchor: u32 = blocks
            .nodes_of(b)
            .iter()
            .filter(|&&i| dom.nodes[i as usize].flags & flags::IN_ANCHOR != 0)
            .map(|&i| blocks.node_tokens[i as usize])
            .sum();
        let block_words = words_of(&text);
        let in_title = block_words.iter().filter(|w| title.contains(*w)).count();
        let noscript = dom.nodes[first].flags & flags::IN_NOSCRIPT != 0;

        // Ancestors: depth, the nearest distance of each role, runs, structure.
        let mut role_dist = [FAR; ROLES];
        let mut depth = 0usize;
        let mut item: Option<usize> = None;
        let mut outer: Option<usize> = None;
        let (mut in_li, mut in_table, mut in_dl, mut in_quote, mut in_figure) =
            (false, false, false, false, false);
        let mut up: [usize; 4] = [0; 4];
        for (d, a) in dom.ancestors(first).enumerate() {
            depth += 1;
            if d < 4 {
                up[d] = a;
            }
            let set = role_of[a];
            if set != 0 {
                for (r, dist) in role_dist.iter_mut().enumerate() {
                    if set & (1 << r) != 0 && *dist == FAR {
                        *dist = (d + 1) as f64;
                    }
                }
            }
            match dom.tag(a) {
                Some("li") => in_li = true,
                Some("table") => in_table = true,
                Some("dl") => in_dl = true,
                Some("blockquote") => in_quote = true,
                Some("figure") => in_figure = true,
                _ => {}
            }
            let r = runs.run_of[a];
            if r != u32::MAX && runs.items[r as usize] >= 3 && runs.tokens[r as usize] > 0 {
                if item.is_none() {
                    item = Some(a);
                }
                outer = Some(a);
            }
        }
        let run_stats = |a: Option<usize>| -> (f64, f64, f64, f64, f64) {
            match a {
                None => (0.0, 0.0, 0.0, 0.0, 0.0),
                Some(a) => {
                    let r = runs.run_of[a] as usize;
                    (
                        f64::from(runs.items[r]).log2(),
                        share(runs.tokens[r], page_tokens),
                        log_tokens(runs.tokens[r] / runs.items[r].max(1)),
                        share(runs.links[r], runs.tokens[r]),
                        share(runs.punct[r], runs.tokens[r]),
                    )
                }
            }
        };
        let (run_items, run_share, run_item_tokens, run_link, run_punct) = run_stats(item);
        let (outer_items, outer_share, _, _, _) = run_stats(outer);
        let item_first = item.map_or(0.0, |a| {
            let first_text =
                (a + 1..dom.nodes[a].end as usize).find(|&i| blocks.block_of[i] != u32::MAX);
            f64::from(u8::from(first_text == Some(first)))
        });
        let list_items = dom
            .ancestors(first)
            .find(|&a| matches!(dom.tag(a), Some("ul" | "ol")))
            .map_or(0.0, |l| (dom.children(l).count() as f64).log2());
        let neighbour = |j: Option<usize>| -> [f64; 4] {
            match j.and_then(|j| blocks.blocks.get(j).map(|b| (j, b))) {
                None => [0.0, 0.0, 0.0, 0.0],
                Some((j, nb)) => [
                    share(nb.link_tokens, nb.own_tokens()),
                    log_tokens(nb.own_tokens()),
                    f64::from(u8::from(matches!(nb.kind, Kind::Heading(_)))),
                    f64::from(u8::from(rules.kept[j])),
                ],
            }
        };
        let prev = neighbour(k.checked_sub(1));
        let next = neighbour(Some(k + 1));
        let (kind, level) = match b.kind {
            Kind::Text => (0.0, 0.0),
            Kind::Heading(l) => (1.0, f64::from(l)),
            Kind::Row => (2.0, 0.0),
            Kind::Code => (3.0, 0.0),
            Kind::Formula => (4.0, 0.0),
        };
        let inside = |end: usize, at: usize| first > at && first < end;
        let row_start = out.len();
        out.extend_from_slice(&[
            log_tokens(b.tokens),
            share(own, b.tokens),
            share(b.link_tokens, own),
            share(b.repeated_tokens, own),
            share(b.punct, own.saturating_sub(b.link_tokens).max(1)),
            kind,
            level,
            if own == 0 {
                0.0
            } else {
                chars / f64::from(b.tokens.max(1))
            },
            if chars == 0.0 { 0.0 } else { digits / chars },
            if letters == 0.0 { 0.0 } else { upper / letters },
            f64::from(u8::from(
                trimmed.ends_with(['.', '!', '?', '。', '！', '？', ':', ';']),
            )),
            f64::from(u8::from(
                text.chars().next().is_some_and(char::is_uppercase),
            )),
            f64::from(u8::from(text.contains(['$', '€', '£', '¥', '₹']))),
            f64::from(u8::from(
                text.contains('©') || text.to_ascii_lowercase().contains("copyright"),
            )),
            f64::from(u8::from(noscript)),
            share(anchor, b.tokens),
            if block_words.is_empty() {
                0.0
            } else {
                in_title as f64 / block_words.len() as f64
            },
            depth as f64,
            k as f64 / n_blocks as f64,
            share(before, page_tokens),
            f64::from(u8::from(inside(core_end, rules.core) || rules.core == 0)),
            f64::from(u8::from(
                inside(region_end, rules.region) || rules.region == 0,
            )),
            f64::from(u8::from(first >= region_end)),
            f64::from(u8::from(rules.kept[k])),
            f64::from(u8::from(rules.furniture[k])),
            run_items,
            run_share,
            run_item_tokens,
            run_link,
            run_punct,
            item_first,
            outer_share,
            outer_items,
            share(sums.tokens[up[0]], page_tokens),
            share(sums.links[up[0]], sums.tokens[up[0]]),
            share(sums.tokens[up[3]], page_tokens),
            share(sums.links[up[3]], sums.tokens[up[3]]),
            prev[0],
            prev[1],
            prev[2],
            prev[3],
            next[0],
            next[1],
            next[2],
            next[3],
            log_tokens(page_tokens),
            (1.0 + n_blocks as f64).log2(),
            share(page_links, page_tokens),
            share(kept_tokens, page_tokens),
            types[0],
            types[1],
            types[2],
            types[3],
            types[4],
            f64::from(rules.mode),
            (1.0 + rules.pages as f64).log2(),
            f64::from(u8::from(in_li)),
            f64::from(u8::from(in_table)),
            f64::from(u8::from(in_dl)),
            f64::from(u8::from(in_quote)),
            f64::from(u8::from(in_figure)),
            list_items,
            item.map_or(0.0, |a| {
                let r = runs.run_of[a] as usize;
                f64::from(runs.blocks[r]) / f64::from(runs.items[r].max(1))
            }),
            item.map_or(0.0, |a| dom.ancestors(a).count() as f64),
        ]);
        out.extend_from_slice(&url);
        out.extend_from_slice(&role_dist);
        debug_assert_eq!(out.len() - row_start, w);
        before += own;
        let c = b.container as usize;
        let c1 = dom.nodes[c].parent;
        let c3 = dom.ancestors(c).nth(3).map_or(0, |a| a as u32);
        groups.push([
            item.map_or(NONE, |a| a as u32),
            item.map_or(NONE, |a| runs.run_of[a]),
            c as u32,
            if c1 == crate::dom::tree::NO_PARENT {
                0
            } else {
                c1
            },
            c3,
        ]);
    }
    Described { rows: out, groups }
}

/// The stage-two context features, in order: the block's own stage-one probability, then the
/// token-weighted mean probability over each of its groups (`GROUPS`, a missing group reads as
/// the block's own), over the two blocks before and the two after it, and over the page, and
/// the share of the page's tokens above ½.
pub fn context_names() -> Vec<String> {
    [
        "p",
        "p_item",
        "p_run",
        "p_container",
        "p_up1",
        "p_up3",
        "p_prev",
        "p_next",
        "p_prev2",
        "p_next2",
        "p_page",
        "p_page_share",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The width of `context`'s rows.
pub const CONTEXT: usize = 12;

/// Each block's context features (`context_names`) from its stage-one probabilities `p`.
pub fn context(blocks: &Blocks, groups: &[[u32; GROUPS]], p: &[f64]) -> Vec<f64> {
    let n = blocks.blocks.len();
    let weight: Vec<f64> = blocks
        .blocks
        .iter()
        .map(|b| f64::from(b.tokens.max(1)))
        .collect();
    // Token-weighted sums per group value, one map per group kind.
    let mut sums: Vec<std::collections::HashMap<u32, (f64, f64)>> =
        vec![Default::default(); GROUPS];
    for k in 0..n {
        for (g, map) in sums.iter_mut().enumerate() {
            let key = groups[k][g];
            if key != NONE {
                let e = map.entry(key).or_insert((0.0, 0.0));
                e.0 += weight[k] * p[k];
                e.1 += weight[k];
            }
        }
    }
    let total: f64 = weight.iter().sum();
    let page = weight.iter().zip(p).map(|(w, p)| w * p).sum::<f64>() / total;
    let above = weight
        .iter()
        .zip(p)
        .filter(|(_, &p)| p > 0.5)
        .map(|(w, _)| w)
        .sum::<f64>()
        / total;
    let mut out = Vec::with_capacity(n * CONTEXT);
    for k in 0..n {
        out.push(p[k]);
        for (g, map) in sums.iter().enumerate() {
            let key = groups[k][g];
            out.push(match map.get(&key) {
                Some(&(s, w)) if key != NONE => s / w,
                _ => p[k],
            });
        }
        let window = |lo: usize, hi: usize| -> f64 {
            let (mut s, mut w) = (0.0, 0.0);
            for j in lo..hi {
                s += weight[j] * p[j];
                w += weight[j];
            }
            if w == 0.0 {
                p[k]
            } else {
                s / w
            }
        };
        out.push(window(k.saturating_sub(1), k));
        out.push(window((k + 1).min(n), (k + 2).min(n)));
        out.push(window(k.saturating_sub(2), k));
        out.push(window((k + 1).min(n), (k + 3).min(n)));
        out.push(page);
        out.push(above);
    }
    out
}

/// A block's text, its nodes joined with spaces (what the text features read).
pub(super) fn block_text(dom: &Dom, blocks: &Blocks, b: &Block) -> String {
    let mut s = String::new();
    for &i in blocks.nodes_of(b) {
        if let NodeKind::Text(t) = &dom.nodes[i as usize].kind {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&t.text);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    #[test]
    fn every_block_gets_a_full_row_and_names_match_the_width() {
        assert_eq!(names().len(), width());
        let dom = parse_html(
            "<html><head><title>Shoes</title></head><body><nav><a href=/>Home</a></nav>\
             <ul class=grid><li class=card><h3>Red shoe</h3><p>Soft, light. $40</p></li>\
             <li class=card><h3>Blue shoe</h3><p>Warm. $50</p></li>\
             <li class=card><h3>Shoes for kids</h3><p>Small. $30</p></li></ul></body></html>",
        )
        .dom;
        let blocks = Blocks::new(&dom, |_| (false, false));
        let kept = vec![true; blocks.blocks.len()];
        let furniture = vec![false; blocks.blocks.len()];
        let rules = Rules {
            kept: &kept,
            furniture: &furniture,
            core: 0,
            region: 0,
            mode: 0,
            pages: 1,
        };
        let f = features(&dom, &blocks, &rules).rows;
        assert_eq!(f.len(), blocks.blocks.len() * width());
        let names = names();
        let col = |name: &str| names.iter().position(|n| n == name).unwrap();
        // The card's heading: the first block of an item of a run of three.
        let row = 1;
        assert_eq!(f[row * width() + col("run_items")], 3f64.log2());
        assert_eq!(f[row * width() + col("item_first")], 1.0);
        assert_eq!(f[row * width() + col("heading_level")], 3.0);
        assert!(f[(row + 1) * width() + col("has_currency")] > 0.0);
    }
}
