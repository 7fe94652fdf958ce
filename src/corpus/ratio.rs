//! `template_ratio`: the share of a page's visible text tokens that are template text.
//!
//! Definition: the page's visible text is cut into the cleaner's blocks
//! (`template::content::blocks`, tokens as the cleaner counts them: a word or a CJK character
//! is one token; form controls excluded); a token is *template* when its text node's DOM path
//! is in the template of the page's cluster, as the site's latest stored clustering records it
//! (`SiteClusters`). The ratio is template tokens / all tokens, rounded to three decimals.
//! A cluster of one page has no template (the cleaner uses none: one page is no evidence of
//! what pages share), so its ratio is 0. It is `None` when the page has no visible text or its
//! cluster is not in the stored clustering.
//!
//! This is what the template step removes before content scoring, so `1 − template_ratio` bounds
//! the share of the page the cleaner could keep; the cleaner may drop more (bylines, link lists).

use std::collections::HashMap;

use crate::dom::Dom;
use crate::store::SiteClusters;
use crate::template::content::blocks::Blocks;
use crate::template::support::PathMap;

/// One site's cluster templates, ready for lookups.
#[derive(Debug, Default)]
pub struct Templates {
    /// Per cluster id, its template paths (empty for a cluster of one page).
    by_cluster: HashMap<u32, PathMap<()>>,
}

impl Templates {
    pub fn new(clusters: &SiteClusters) -> Templates {
        let by_cluster = clusters
            .clusters
            .iter()
            .map(|c| {
                let template = if c.members.len() < 2 {
                    PathMap::default()
                } else {
                    c.template.iter().map(|&p| (p, ())).collect()
                };
                (c.id, template)
            })
            .collect();
        Templates { by_cluster }
    }

    /// The template ratio of `dom`, a page of cluster `cluster` (see the module doc).
    pub fn ratio(&self, cluster: u32, dom: &Dom) -> Option<f64> {
        let template = self.by_cluster.get(&cluster)?;
        let blocks = Blocks::new(dom, |i| (template.contains_key(&dom.nodes[i].path), false));
        let (all, tmpl) = blocks.blocks.iter().fold((0u64, 0u64), |(a, t), b| {
            (a + u64::from(b.tokens), t + u64::from(b.template_tokens))
        });
        (all > 0).then(|| (tmpl as f64 / all as f64 * 1000.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;
    use crate::store::ClusterSummary;

    fn page(body: &str) -> Dom {
        parse_html(&format!(
            "<html><body><nav>Home News Sport About</nav><p>{body}</p></body></html>"
        ))
        .dom
    }

    #[test]
    fn ratio_counts_template_tokens_over_all_tokens() {
        let a = page("one two three four");
        let b = page("five six seven eight nine ten");
        let common: Vec<u64> = {
            let (sa, sb) = (a.path_set(), b.path_set());
            sa.into_iter().filter(|p| sb.contains(p)).collect()
        };
        let clusters = SiteClusters {
            clusters: vec![
                ClusterSummary {
                    id: 7,
                    members: vec![1, 2],
                    template: common.clone(),
                },
                ClusterSummary {
                    id: 8,
                    members: vec![3],
                    template: common,
                },
            ],
            ..SiteClusters::default()
        };
        let t = Templates::new(&clusters);
        // The nav's 4 tokens are template; a has 4 own tokens, b 6.
        assert_eq!(t.ratio(7, &a), Some(0.5));
        assert_eq!(t.ratio(7, &b), Some(0.4));
        assert_eq!(
            t.ratio(8, &a),
            Some(0.0),
            "a one-page cluster has no template"
        );
        assert_eq!(t.ratio(9, &a), None, "unknown cluster");
        assert_eq!(t.ratio(7, &parse_html("<p> </p>").dom), None);
    }
}
