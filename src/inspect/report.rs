//! The HTML report of `thresher inspect` ([`render`]): one self-contained file (inline CSS, no
//! script, no external resource; a Content-Security-Policy forbids both) with the host's
//! clusters, one page with each text block marked template / dropped / kept (`data-state`), and
//! each cluster's template. Every string from a crawled page goes through `escape`, so a page
//! cannot inject markup into the report.

use std::fmt::Write;

use super::marks::{MarkedBlock, State, TemplateLine};

/// Everything the report shows.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub host: String,
    pub detector: String,
    /// `None` while the clustering is an interim (incremental) one.
    pub final_pages: Option<u64>,
    pub site_pages: u64,
    /// Stored pages the clustering does not hold yet.
    pub unclustered: u64,
    /// Largest first.
    pub clusters: Vec<ClusterView>,
    /// Redesigns recrawls found, oldest first: era 1 is the first crawl, each record starts
    /// the next.
    pub redesigns: Vec<crate::store::RedesignRecord>,
    pub page: PageView,
    /// RFC 3339, when the report was made.
    pub generated: String,
}

#[derive(Clone, Debug, Default)]
pub struct ClusterView {
    pub id: u32,
    pub pages: usize,
    pub template_paths: usize,
    /// A few member pages.
    pub samples: Vec<Sample>,
    pub template: TemplateView,
}

/// A cluster's template as the report shows it.
#[derive(Clone, Debug, Default)]
pub enum TemplateView {
    /// Not shown: the report shows the templates of the largest clusters only.
    #[default]
    Omitted,
    /// No member page could be read.
    Unreadable,
    /// The template text nodes of one member page.
    Lines {
        /// That page's URL.
        from: String,
        /// Capped.
        lines: Vec<TemplateLine>,
        /// Distinct template text paths on that page.
        text_paths: usize,
    },
}

#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub url: String,
    pub title: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct PageView {
    pub url: String,
    pub title: Option<String>,
    pub cluster: u32,
    pub blocks: Vec<MarkedBlock>,
    /// Blocks of the page in all (`blocks` may be capped).
    pub blocks_total: usize,
    pub check: Check,
    /// A caveat shown above the page (e.g. marks from a baseline detector are approximate).
    pub note: Option<String>,
}

/// Do the marks reproduce the cleaned text the crawl stored for the page?
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Check {
    #[default]
    Matches,
    /// The crawl stored no cleaned text for the page.
    NoCleanedText,
    Differs {
        /// The stored record's cluster, when it is not the page's cluster in this clustering.
        stored_cluster: Option<u32>,
        stored_lines: usize,
        marked_lines: usize,
        /// 1-based line number, stored line, marked line (empty past the end).
        first_difference: Option<(usize, String, String)>,
    },
}

/// Escape text for HTML element content and double- or single-quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Controls other than tab and newlines are not allowed in HTML text.
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em 2em;color:#222;background:#fff}
h1{font-size:1.5em;margin:.3em 0}h2{border-bottom:2px solid #ddd;margin-top:1.6em}
h3{margin:1.2em 0 .3em}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.url{font-family:ui-monospace,monospace;font-size:.85em;word-break:break-all}
.muted{color:#666}.note{background:#fff6d6;border-left:4px solid #e0b000;padding:.4em .8em}
.ok{background:#e6f6e6;border-left:4px solid #2a8a2a;padding:.4em .8em}
.warn{background:#fde8e8;border-left:4px solid #c03030;padding:.4em .8em}
.legend span{display:inline-block;margin-right:1em;padding:0 .5em}
.page{border:1px solid #ccc;padding:.5em 1em}
.b{margin:.15em 0;padding:.1em .5em;border-left:4px solid transparent;white-space:pre-wrap}
.b::before{content:attr(data-tag);display:inline-block;min-width:4em;margin-right:.4em;font:11px ui-monospace,monospace;color:#888}
.template,.legend-template{color:#999;text-decoration:line-through;background:#f2f2f2;border-left-color:#bbb}
.dropped,.legend-dropped{background:#fff1cc;border-left-color:#e0a000;color:#6b4a00}
.kept,.legend-kept{background:#e3f5e3;border-left-color:#2a8a2a}
.tpl,.legend-tpl{color:#999;text-decoration:line-through}
ol.tl{font-size:.9em;padding-left:2.5em}ol.tl li{margin:.1em 0}
.path{font-family:ui-monospace,monospace;font-size:.85em;color:#555}
.count{color:#888;font-size:.85em}
";

/// Render `r` as a complete HTML document.
pub fn render(r: &Report) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let host = escape(&r.host);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>thresher inspect: {host}</title>\n<style>{STYLE}</style></head>\n<body>\n\
         <h1>thresher inspect: {host}</h1>\n"
    );
    summary(&mut s, r);
    clusters_table(&mut s, r);
    page(&mut s, r);
    templates(&mut s, r);
    s.push_str("</body></html>\n");
    s
}

fn summary(s: &mut String, r: &Report) {
    let clustered: usize = r.clusters.iter().map(|c| c.pages).sum();
    let kind = match r.final_pages {
        Some(n) => format!("final clustering of {n} pages"),
        None => "interim clustering (the crawl has not finished)".to_string(),
    };
    let _ = writeln!(
        s,
        "<p>{} pages stored; {clustered} in {} ({kind}); detector <b>{}</b>. \
         Generated {}.</p>",
        r.site_pages,
        plural(r.clusters.len(), "cluster"),
        escape(&r.detector),
        escape(&r.generated)
    );
    for line in era_lines(r) {
        let _ = writeln!(s, "<p>{}</p>", escape(&line));
    }
    if r.unclustered > 0 {
        let _ = writeln!(
            s,
            "<p class=\"note\">{} stored pages are not in this clustering yet: finish the crawl \
             (run <code>thresher crawl</code> again) for the final one.</p>",
            r.unclustered
        );
    }
}

fn clusters_table(s: &mut String, r: &Report) {
    s.push_str(
        "<h2 id=\"clusters\">Clusters</h2>\n<table class=\"clusters\">\n<thead><tr><th>cluster</th>\
         <th>pages</th><th>template paths</th><th>sample pages</th></tr></thead>\n<tbody>\n",
    );
    for c in &r.clusters {
        let _ = write!(
            s,
            "<tr data-cluster=\"{id}\"><td><a href=\"#cluster-{id}\">{id}</a></td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td>",
            c.pages,
            c.template_paths,
            id = c.id
        );
        for (k, p) in c.samples.iter().enumerate() {
            if k > 0 {
                s.push_str("<br>");
            }
            sample(s, p);
        }
        s.push_str("</td></tr>\n");
    }
    s.push_str("</tbody></table>\n");
}

fn sample(s: &mut String, p: &Sample) {
    let _ = write!(s, "<span class=\"url\">{}</span>", escape(&p.url));
    if let Some(t) = &p.title {
        let _ = write!(s, " <span class=\"muted\">{}</span>", escape(t));
    }
}

fn page(s: &mut String, r: &Report) {
    let p = &r.page;
    let count = |st: State| p.blocks.iter().filter(|b| b.state == st).count();
    let _ = write!(
        s,
        "<h2 id=\"page\">Page</h2>\n<p><span class=\"url\">{}</span>{} — cluster \
         <a href=\"#cluster-{c}\">{c}</a>: {} template, {} dropped, {} kept blocks.</p>\n",
        escape(&p.url),
        p.title
            .as_deref()
            .map(|t| format!(" <b>{}</b>", escape(t)))
            .unwrap_or_default(),
        count(State::Template),
        count(State::Dropped),
        count(State::Kept),
        c = p.cluster
    );
    if let Some(note) = &p.note {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(note));
    }
    check(s, &p.check);
    s.push_str(
        "<p class=\"legend\">Legend: <span class=\"legend-template\">template (removed with the \
         cluster's template)</span><span class=\"legend-dropped\">dropped (chaff: removed by the content \
         model)</span><span class=\"legend-kept\">kept (the page's content)</span> \
         <span class=\"legend-tpl\">template text</span> inside a line is removed too.</p>\n\
         <div class=\"page\">\n",
    );
    for b in &p.blocks {
        block(s, b);
    }
    if p.blocks_total > p.blocks.len() {
        let _ = writeln!(
            s,
            "<p class=\"muted\">… and {} more blocks not shown.</p>",
            p.blocks_total - p.blocks.len()
        );
    }
    s.push_str("</div>\n");
}

fn check(s: &mut String, c: &Check) {
    match c {
        Check::Matches => s.push_str(
            "<p class=\"ok\" id=\"check\">The kept blocks are exactly the cleaned text the \
             crawl stored for this page.</p>\n",
        ),
        Check::NoCleanedText => s.push_str(
            "<p class=\"warn\" id=\"check\">The crawl has stored no cleaned text for this page \
             yet; the marks show what cleaning it with this clustering would keep.</p>\n",
        ),
        Check::Differs {
            stored_cluster,
            stored_lines,
            marked_lines,
            first_difference,
        } => {
            let _ = write!(
                s,
                "<p class=\"warn\" id=\"check\">The marks differ from the cleaned text the crawl \
                 stored for this page{} ({stored_lines} stored lines, {marked_lines} kept \
                 blocks). A page's stored text comes from the learning step that last cleaned \
                 it, which during a crawl can be an older model than this clustering's; finish \
                 the crawl for text and marks that agree.",
                stored_cluster
                    .map(|c| format!(" under cluster {c}"))
                    .unwrap_or_default()
            );
            if let Some((n, stored, marked)) = first_difference {
                let _ = write!(
                    s,
                    "<br>First difference, line {n}: stored “{}”, marked “{}”.",
                    escape(stored),
                    escape(marked)
                );
            }
            s.push_str("</p>\n");
        }
    }
}

fn block(s: &mut String, b: &MarkedBlock) {
    let state = b.state.name();
    let _ = write!(
        s,
        "<div class=\"b {state}\" data-state=\"{state}\" data-tag=\"{}\">",
        escape(&b.tag)
    );
    // In a template block every segment is template: no inner marks needed.
    let inner = b.state != State::Template;
    for (seg, space) in b.segments.iter().zip(b.spaces(|_| true)) {
        if space {
            s.push(' ');
        }
        if inner && seg.template {
            let _ = write!(
                s,
                "<span class=\"tpl\" data-part=\"template\">{}</span>",
                escape(&seg.text)
            );
        } else {
            s.push_str(&escape(&seg.text));
        }
    }
    s.push_str("</div>\n");
}

fn templates(s: &mut String, r: &Report) {
    s.push_str("<h2 id=\"templates\">Templates</h2>\n");
    for c in &r.clusters {
        let _ = write!(
            s,
            "<section class=\"cluster\" data-cluster=\"{id}\">\n<h3 id=\"cluster-{id}\">Cluster \
             {id}: {} pages, {} template paths</h3>\n",
            c.pages,
            c.template_paths,
            id = c.id
        );
        match &c.template {
            TemplateView::Omitted => s.push_str(
                "<p class=\"muted\">Not shown: the report shows the templates of the largest \
                 clusters only.</p>\n",
            ),
            TemplateView::Unreadable => {
                s.push_str("<p class=\"muted\">No member page could be read.</p>\n");
            }
            TemplateView::Lines { text_paths: 0, .. } => s.push_str(
                "<p class=\"muted\">No template text (the template is markup only, or the \
                 cluster has one page).</p>\n",
            ),
            TemplateView::Lines {
                from,
                lines,
                text_paths,
            } => {
                let _ = write!(
                    s,
                    "<p class=\"muted\">{text_paths} template text paths, as found on \
                     <span class=\"url\">{}</span>:</p>\n<ol class=\"tl\">\n",
                    escape(from)
                );
                for l in lines {
                    let _ = write!(
                        s,
                        "<li><span class=\"path\">{}</span> {}",
                        escape(&l.path),
                        escape(&l.text)
                    );
                    if l.count > 1 {
                        let _ = write!(s, " <span class=\"count\">×{}</span>", l.count);
                    }
                    s.push_str("</li>\n");
                }
                s.push_str("</ol>\n");
                if *text_paths > lines.len() {
                    let _ = writeln!(
                        s,
                        "<p class=\"muted\">… and {} more.</p>",
                        text_paths - lines.len()
                    );
                }
            }
        }
        s.push_str("</section>\n");
    }
}

/// The host's template eras, when a recrawl found a redesign: one line for the count, one per
/// redesign.
pub(super) fn era_lines(r: &Report) -> Vec<String> {
    if r.redesigns.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "Template eras: {} (the first crawl, then a redesign found by each recrawl below)",
        r.redesigns.len() + 1
    )];
    for (k, d) in r.redesigns.iter().enumerate() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(d.at_ms);
        lines.push(format!(
            "  era {} from {}: {} of {} replaced pages with a new structure; clusters {:?} -> {:?}",
            k + 2,
            humantime::format_rfc3339_seconds(at),
            d.pages,
            d.replaced,
            d.old_clusters,
            d.new_clusters
        ));
    }
    lines
}

/// `n thing` or `n things`.
pub(super) fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;
    use crate::inspect::marks;
    use crate::template::ClusterModel;

    const EVIL: &str = "</textarea><script>alert(1)</script><img src=x onerror=alert(2)> \"' &amp;";

    fn report_with(text: &str) -> Report {
        let p = parse_html(&format!(
            "<p>{}</p><p>plain</p>",
            escape(text) // the page's source had it escaped: the DOM text is `text` itself
        ));
        let mut blocks = marks::mark(&p.dom, &ClusterModel::default());
        // The states as a model might give them; what is tested here is their rendering.
        blocks[0].state = State::Kept;
        blocks[1].state = State::Dropped;
        Report {
            host: text.into(),
            detector: "text-max".into(),
            final_pages: Some(2),
            site_pages: 2,
            unclustered: 0,
            redesigns: vec![],
            clusters: vec![ClusterView {
                id: 7,
                pages: 2,
                template_paths: 1,
                samples: vec![Sample {
                    url: format!("http://h/{text}"),
                    title: Some(text.into()),
                }],
                template: TemplateView::Lines {
                    from: "http://h/".into(),
                    lines: vec![TemplateLine {
                        path: text.into(),
                        text: text.into(),
                        count: 2,
                    }],
                    text_paths: 3,
                },
            }],
            page: PageView {
                url: text.into(),
                title: Some(text.into()),
                cluster: 7,
                blocks_total: blocks.len(),
                blocks,
                check: Check::Differs {
                    stored_cluster: Some(1),
                    stored_lines: 1,
                    marked_lines: 2,
                    first_difference: Some((1, text.into(), text.into())),
                },
                note: Some(text.into()),
            },
            generated: "now".into(),
        }
    }

    #[test]
    fn page_text_cannot_inject_markup() {
        let html = render(&report_with(EVIL));
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"));
        assert!(!html.contains("</textarea"));
        assert!(html.contains("&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("&quot;&#39; &amp;amp;"));
        // Parsing the report back gives the page text as text, in the kept block.
        let back = parse_html(&html);
        let texts: Vec<&str> = (0..back.dom.len())
            .filter_map(|i| back.dom.text(i).map(|t| t.text.as_str()))
            .collect();
        assert!(texts.contains(&EVIL.trim()), "{texts:?}");
        assert!(!(0..back.dom.len()).any(|i| back.dom.tag(i) == Some("script")));
    }

    #[test]
    fn blocks_carry_their_state_and_the_document_is_self_contained() {
        let html = render(&report_with("hello"));
        assert_eq!(html.matches("data-state=\"kept\"").count(), 1);
        assert_eq!(html.matches("data-state=\"dropped\"").count(), 1);
        assert!(html.contains("1 dropped, 1 kept blocks"));
        assert!(html.contains("Content-Security-Policy"));
        for external in ["src=", "<link", "url(", "@import", "http-equiv=\"refresh\""] {
            assert!(!html.contains(external), "{external} in the report");
        }
        assert!(html.contains("id=\"cluster-7\""));
        assert!(html.contains("… and 2 more."));
    }

    #[test]
    fn escape_replaces_controls() {
        assert_eq!(escape("a\u{0}b\nc"), "a\u{fffd}b\nc");
    }
}
