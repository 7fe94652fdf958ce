//! The cleaner's components as switches, so each one's effect can be measured alone (the
//! ablation table in docs/quality.md), and its tuned shares, so leave-one-out figures can be
//! measured. The product always runs `Features::ALL`; only the dev harness
//! (`tools/clean_dev.rs --without NAME --frame PCT`) changes them. The pruning step's two
//! constants live here (`prune` reads them through `Features`), so neither file imports the
//! other both ways.

/// A block repeated on other pages is kept only from this many own tokens on: below it, it is
/// a byline, a source or editor line; above it, shared prose (a story filed twice, a quote).
pub const SHORT_REPEATED: u32 = 20;

/// A cluster reads as articles when page mode, run on each of its pages, keeps at least this
/// share (percent) of the page text site mode keeps: then what site mode alone keeps is the link
/// lists around a story (more stories, related), not the tables, code and contents lists of
/// generated docs, which page mode drops by the half (news clusters 91–100 %, most docs clusters
/// below 90 %; the sweep and leave-one-out figures are in docs/quality.md).
pub const ARTICLES_PERCENT: u64 = 90;

/// Which components of the content model run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Features {
    /// Template text is removed (the cluster's template path set).
    pub template: bool,
    /// Site mode: a cluster of two or more distinct pages is cleaned on cross-page evidence
    /// (`Mode::Site`); off, every cluster is cleaned like a single page (`Mode::Page`).
    pub site_mode: bool,
    /// The content region (prose core, agreed by the cluster's vote); off, the whole page.
    pub region: bool,
    /// The region widens from the prose core to the element holding a share of the page's
    /// eligible text: most of it in site mode (generated docs keep tables, code and lists beside
    /// the prose), a smaller share in page mode (an article split across sibling containers).
    pub frame: bool,
    /// Site mode: the region also widens to the content's own heading (a title beside its body).
    pub title: bool,
    /// Blocks that read as links are dropped (in site mode only when their record reads as
    /// links and they recur on other pages).
    pub links: bool,
    /// Short lines repeated on other pages are dropped (in site mode only outside records).
    pub repeated: bool,
    /// Markup hints (`nav`, `aside`, class words such as `comments`) mark furniture.
    pub furniture: bool,
    /// Site mode: furniture markup embedded in the prose core's prose, around a long text of its
    /// own, is content (a documentation tip box marked `sidebar`).
    pub embedded: bool,
    /// Site mode: template text inside a record of page-specific content is kept (generated
    /// headings such as "Parameters:" or "Method Summary").
    pub template_in_content: bool,
    /// Site mode: a label goes with what it labels — a short repeated line kept inside a record
    /// stays only when the record keeps page text besides labels, and a template heading
    /// between kept blocks only when the next block with text of its own is kept.
    pub labels: bool,
    /// A kept block renders whole: its template text (a label inside a kept paragraph, a line
    /// of generated code shared with sibling pages) goes with it; off, only its own text.
    pub whole_blocks: bool,
    /// Site mode: a cluster whose pages read as articles (`ARTICLES_PERCENT`) is cleaned
    /// in `Mode::Articles` (link lines go as in page mode, with page mode's region share).
    pub articles: bool,
    /// The content classifier (`classify`, `model`) has the last word on each block, reading
    /// the rules' verdict among its features; off, the rules' verdict stands.
    pub classifier: bool,
    /// The share, in percent, of site mode's page text page mode must keep for a cluster to read
    /// as articles (`ARTICLES_PERCENT`).
    pub articles_percent: u64,
    /// Prose tokens that make embedded furniture content (`region::EMBEDDED_PROSE`).
    pub embedded_prose: u32,
    /// Below this many tokens a repeated line is a label (`SHORT_REPEATED`).
    pub short_repeated: u32,
    /// The share of a page's eligible text the site-mode region must hold, in percent
    /// (`region::FRAME_PERCENT`).
    pub frame_percent: u64,
    /// The same share for the page-mode region (`region::PAGE_FRAME_PERCENT`).
    pub page_frame_percent: u64,
}

impl Features {
    /// Every component on: what the product runs.
    pub const ALL: Features = Features {
        template: true,
        site_mode: true,
        region: true,
        frame: true,
        title: true,
        links: true,
        repeated: true,
        furniture: true,
        embedded: true,
        template_in_content: true,
        labels: true,
        whole_blocks: true,
        articles: true,
        classifier: true,
        articles_percent: ARTICLES_PERCENT,
        embedded_prose: super::region::EMBEDDED_PROSE,
        short_repeated: SHORT_REPEATED,
        frame_percent: super::region::FRAME_PERCENT,
        page_frame_percent: super::region::PAGE_FRAME_PERCENT,
    };

    /// The component names, in the order of the ablation table.
    pub const NAMES: &'static [&'static str] = &[
        "template",
        "site-mode",
        "region",
        "frame",
        "title",
        "links",
        "repeated",
        "furniture",
        "embedded",
        "template-in-content",
        "labels",
        "whole-blocks",
        "articles",
        "classifier",
    ];

    /// `self` with the component `name` (one of `NAMES`) turned off; `None` for an unknown name.
    pub fn without(mut self, name: &str) -> Option<Features> {
        let flag = match name {
            "template" => &mut self.template,
            "site-mode" => &mut self.site_mode,
            "region" => &mut self.region,
            "frame" => &mut self.frame,
            "title" => &mut self.title,
            "links" => &mut self.links,
            "repeated" => &mut self.repeated,
            "furniture" => &mut self.furniture,
            "embedded" => &mut self.embedded,
            "template-in-content" => &mut self.template_in_content,
            "labels" => &mut self.labels,
            "whole-blocks" => &mut self.whole_blocks,
            "articles" => &mut self.articles,
            "classifier" => &mut self.classifier,
            _ => return None,
        };
        *flag = false;
        Some(self)
    }
}

impl Default for Features {
    fn default() -> Self {
        Features::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_turns_one_component_off() {
        for name in Features::NAMES {
            let off = Features::ALL.without(name).expect("a known name");
            assert_ne!(off, Features::ALL, "{name}");
        }
        assert!(Features::ALL.without("nonsense").is_none());
    }
}
