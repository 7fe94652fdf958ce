//! Writing a page's kept text in two formats from one walk over its `Layout`: plain text (one
//! block per line; a code block's lines verbatim, a table row's cells joined by ` | `, nested
//! list items indented) and Markdown (ATX headings, nested lists, GFM pipe tables, fenced code
//! with its language, block quotes, emphasis, inline code, links, images, `$…$` formulas).
//!
//! Both formats write the same text: which nodes show is decided once, by the caller's `keep`,
//! and a line shows when any of its nodes does. Markdown only adds markup and escapes, so the
//! text a CommonMark reader renders from it carries the plain text's tokens (tested with
//! pulldown-cmark).

use std::collections::{HashMap, HashSet};

use url::Url;

use super::escape::{escape_line_start, fence_for, Escapes};
use super::layout::{Kind, Layout, Line, NONE};
use super::tree::{flags, is_block, Dom, NodeKind};

/// Where Markdown's links and images point: every page's Markdown carries both (a written file
/// may leave them out, `output::parts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Markdown {
    /// The page's address (its `<base href>` resolved, when it has one): links and images are
    /// made absolute against it; without it they are written as the page has them.
    pub base: Option<Url>,
}

impl Markdown {
    /// Links and images against the page's own address (`PageInfo::url`: its canonical or
    /// `og:url`, resolved against where it was fetched) when it states one, else against where
    /// it was fetched (`Dom::address`), when that is known.
    pub fn for_page(dom: &Dom) -> Markdown {
        let fetched = dom.address.as_deref().and_then(|u| Url::parse(u).ok());
        let stated = dom.info.url.as_deref().and_then(|u| match &fetched {
            Some(f) => f.join(u).ok(),
            None => Url::parse(u).ok(),
        });
        Markdown::with_base(stated.or(fetched))
    }

    /// Links and images against `base`.
    pub fn with_base(base: Option<Url>) -> Markdown {
        Markdown { base }
    }
}

/// An output format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown(Markdown),
}

/// The kept text of `dom` in `format`: line `l` of `layout` shows its nodes for which `keep`
/// holds, and is written when any of them does.
pub fn render(dom: &Dom, layout: &Layout, keep: impl Fn(usize) -> bool, format: &Format) -> String {
    match format {
        Format::Text => plain(dom, layout, &keep),
        Format::Markdown(md) => Writer::new(dom, layout, &keep, md).write(),
    }
}

/// All visible text as plain text.
pub fn text_of(dom: &Dom) -> String {
    plain(dom, &Layout::new(dom), &|_| true)
}

/// The block elements (and `<br>`s) between nodes `a < b` of one line: those that start after
/// `a`, and those around `a` that end before `b` (inside an atomic line: a heading's inner
/// boxes, a table cell's paragraphs and line breaks).
fn crossed(dom: &Dom, a: usize, b: usize) -> impl Iterator<Item = usize> + '_ {
    (a + 1..b)
        .filter(|&i| dom.tag(i).is_some_and(is_block))
        .chain(
            dom.ancestors(a)
                .take_while(move |&p| (dom.nodes[p].end as usize) <= b)
                .filter(|&p| dom.tag(p).is_some_and(is_block)),
        )
}

/// Whether a block boundary lies between nodes `a < b` of one line.
fn broken(dom: &Dom, a: usize, b: usize) -> bool {
    crossed(dom, a, b).next().is_some()
}

/// Whether what lies between nodes `a < b` of a row is a line break of a cell's own (a `<br>`,
/// a paragraph), not just the cells and rows of a small table inside the cell.
fn cell_break(dom: &Dom, a: usize, b: usize) -> bool {
    crossed(dom, a, b).any(|i| {
        !matches!(
            dom.tag(i),
            Some("table" | "thead" | "tbody" | "tfoot" | "tr" | "td" | "th")
        )
    })
}

/// Whether an inline image stands between nodes `a < b` of one line: it parts their words, as
/// the Markdown's `![alt](src)` between them does.
fn image_between(layout: &Layout, a: usize, b: usize) -> bool {
    let k = layout.images.partition_point(|img| img.node as usize <= a);
    layout
        .images
        .get(k)
        .is_some_and(|img| (img.node as usize) < b && img.line != NONE)
}

/// The table cell of node `i` in the row `row`.
fn cell_of(dom: &Dom, i: usize, row: usize) -> usize {
    let mut cell = i;
    for a in dom.ancestors(i) {
        if a == row {
            break;
        }
        if matches!(dom.tag(a), Some("td" | "th")) {
            cell = a;
        }
    }
    cell
}

/// The block quotes and the `li` elements that render as list items (not
/// `Layout::sections`) around node `i`, itself included, outermost first: what a Markdown line
/// inside them is prefixed with, in this order.
fn containers(dom: &Dom, layout: &Layout, i: usize) -> Vec<usize> {
    let mut around: Vec<usize> = std::iter::once(i)
        .chain(dom.ancestors(i))
        .filter(|&a| match dom.tag(a) {
            Some("blockquote") => true,
            Some("li") => !layout.is_section(a),
            _ => false,
        })
        .collect();
    around.reverse();
    around
}

/// The kept text of one line, plain: nodes joined with a space where the page has whitespace or
/// a block boundary between them; a row's cells joined by ` | `; code verbatim.
fn plain_line(dom: &Dom, layout: &Layout, line: &Line, keep: &dyn Fn(usize) -> bool) -> String {
    let mut out = String::new();
    // The previous shown node and whether whitespace followed it.
    let mut last: Option<(usize, bool)> = None;
    let mut cell = usize::MAX;
    for &n in layout.nodes_of(line) {
        let i = n as usize;
        if !keep(i) {
            continue;
        }
        let Some(t) = dom.text(i) else { continue };
        if line.kind == Kind::Code {
            out.push_str(&t.text);
            continue;
        }
        if line.kind == Kind::Row {
            let c = cell_of(dom, i, line.element as usize);
            if c != cell {
                if !out.is_empty() {
                    out.push_str(" | ");
                }
                cell = c;
                out.push_str(&t.text);
                last = Some((i, t.space_after));
                continue;
            }
        }
        if let Some((prev, space_after)) = last {
            if space_after
                || t.space_before
                || broken(dom, prev, i)
                || image_between(layout, prev, i)
            {
                out.push(' ');
            }
        }
        out.push_str(&t.text);
        last = Some((i, t.space_after));
    }
    out
}

/// `text` of a code block without its leading and trailing blank lines and trailing whitespace
/// at the end.
fn trim_code(text: &str) -> &str {
    let start = text
        .char_indices()
        .take_while(|&(_, c)| c.is_whitespace())
        .filter(|&(_, c)| c == '\n')
        .last()
        .map_or(0, |(at, _)| at + 1);
    text[start..].trim_end()
}

fn plain(dom: &Dom, layout: &Layout, keep: &dyn Fn(usize) -> bool) -> String {
    let mut out = String::new();
    for line in &layout.lines {
        let text = plain_line(dom, layout, line, keep);
        match line.kind {
            Kind::Code => {
                let code = trim_code(&text);
                if !code.trim().is_empty() {
                    out.push_str(code);
                    out.push('\n');
                }
            }
            _ if text.is_empty() => {}
            Kind::Text => {
                let depth = containers(dom, layout, line.element as usize)
                    .into_iter()
                    .filter(|&c| dom.tag(c) == Some("li"))
                    .count();
                for _ in 1..depth {
                    out.push_str("  ");
                }
                out.push_str(&text);
                out.push('\n');
            }
            _ => {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}

/// One Markdown block and how it joins the next.
struct Block {
    text: String,
    /// Consecutive blocks of the same group join with one newline (a list's items, a table's
    /// rows); others with a blank line.
    group: Option<Group>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    List,
    Table(usize),
}

/// An inline element that writes markup around its text.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mark {
    Strong,
    Emphasis,
    Strike,
    Code(String),
    Link(String),
}

impl Mark {
    fn open(&self) -> &str {
        match self {
            Mark::Strong => "**",
            Mark::Emphasis => "*",
            Mark::Strike => "~~",
            Mark::Code(fence) => fence,
            Mark::Link(_) => "[",
        }
    }

    fn close(&self, out: &mut String) {
        match self {
            Mark::Link(url) => {
                out.push_str("](");
                out.push_str(url);
                out.push(')');
            }
            other => out.push_str(other.open()),
        }
    }
}

struct Writer<'a> {
    dom: &'a Dom,
    layout: &'a Layout,
    keep: &'a dyn Fn(usize) -> bool,
    base: Option<Url>,
    /// Per line: any of its nodes kept.
    shown: Vec<bool>,
    /// List items whose marker is written.
    marked: HashSet<usize>,
    /// Lists written with the other marker (`*` for `-`, `)` for `.`): a list that follows
    /// another at its depth with no block between would read as the same list.
    other_marker: HashMap<usize, bool>,
    /// Per list depth, the list whose item was marked last there.
    last_list: Vec<usize>,
    blocks: Vec<Block>,
    /// Writing a heading or a table cell: its text alone, without emphasis, code spans, links
    /// or images (a heading's link is its own permalink or a breadcrumb, and a heading reads as
    /// one title; a cell reads as one value, on the row's one line).
    plain: bool,
    /// A code block or table inside a list item was written at the line's start (code lines
    /// verbatim), which ends the list for a reader: the list's lines after it are parted by
    /// blank lines, so that an item numbered past 1 starts a list again instead of reading as
    /// text of the paragraph before it. Cleared by a line outside any list.
    broken_list: bool,
}

/// A strikethrough that starts or ends inside a word (`<s>over</s>charged`) cannot be written:
/// a `~~` between two letters neither opens nor closes for a reader (tildes flank as `_`
/// does), so its text is written without it.
fn drop_strikes_inside_words(dom: &Dom, items: &[usize], marks: &mut [Vec<(usize, Mark)>]) {
    let glued = |a: usize, b: usize| match (dom.text(a), dom.text(b)) {
        (Some(x), Some(y)) => {
            !x.space_after
                && !y.space_before
                && x.text.chars().last().is_some_and(char::is_alphanumeric)
                && y.text.chars().next().is_some_and(char::is_alphanumeric)
                && !broken(dom, a, b)
        }
        _ => false,
    };
    let has = |k: usize, a: usize, marks: &[Vec<(usize, Mark)>]| marks[k].iter().any(|m| m.0 == a);
    let mut inside_words = Vec::new();
    for k in 0..items.len() {
        for &(a, ref m) in &marks[k] {
            if *m != Mark::Strike {
                continue;
            }
            let starts_glued = k > 0 && !has(k - 1, a, marks) && glued(items[k - 1], items[k]);
            let ends_glued =
                k + 1 < items.len() && !has(k + 1, a, marks) && glued(items[k], items[k + 1]);
            if starts_glued || ends_glued {
                inside_words.push(a);
            }
        }
    }
    for m in marks.iter_mut() {
        m.retain(|(a, _)| !inside_words.contains(a));
    }
}

/// Close `m` onto `out`, before `next`. A closing `*`, `**` or `~~` after punctuation and
/// right before a letter does not close (CommonMark's right-flanking rule): Chinese text puts
/// `，` or `。` at the end of a bold run and the next word right after it
/// (`**上涨，**部分`). The punctuation that ends the run is then written after the closer
/// (`**上涨**，部分`): the same text, and the run closes. Only non-ASCII punctuation moves,
/// never a link's `)` or an escape.
fn close_before_punctuation(m: &Mark, next: Option<char>, out: &mut String) {
    let moves = matches!(m, Mark::Strong | Mark::Emphasis | Mark::Strike)
        && next.is_some_and(char::is_alphanumeric);
    let punctuation = |c: char| !c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace();
    let body = out.trim_end_matches(punctuation);
    if !moves || body.len() == out.len() || !body.ends_with(char::is_alphanumeric) {
        m.close(out);
        return;
    }
    let tail = out.split_off(body.len());
    m.close(out);
    out.push_str(&tail);
}

/// Escape `out`'s last character when `next`, written right after it, would turn it into markup:
/// `]` before `(`, `[` or `:` (a link), `!` before `[` (an image).
fn guard(out: &mut String, next: Option<char>) {
    let turns = match out.chars().next_back() {
        Some(']') => matches!(next, Some('(' | '[' | ':')),
        Some('!') => next == Some('['),
        _ => false,
    };
    let at = out.len().saturating_sub(1);
    if turns && !out[..at].ends_with('\\') {
        out.insert(at, '\\');
    }
}

/// The language a code block's markup names (`language-rust`, `lang-go`, `highlight-python`,
/// `brush: js`), from the `pre` or a `code` inside it.
fn code_language(dom: &Dom, pre: usize) -> Option<String> {
    let end = dom.nodes[pre].end as usize;
    for i in std::iter::once(pre).chain(pre + 1..end) {
        let Some(e) = dom.element(i) else { continue };
        if i != pre && e.tag != "code" {
            continue;
        }
        let class = e.class.as_deref().unwrap_or("");
        for word in class.split(|c: char| c.is_whitespace() || c == ';') {
            for prefix in [
                "language-",
                "lang-",
                "highlight-source-",
                "highlight-",
                "brush:",
            ] {
                if let Some(lang) = word.strip_prefix(prefix) {
                    let lang = lang.trim();
                    if !lang.is_empty()
                        && lang.len() <= 32
                        && lang.chars().all(|c| {
                            c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_' | '.')
                        })
                    {
                        return Some(lang.to_ascii_lowercase());
                    }
                }
            }
        }
    }
    None
}

/// `href` made absolute against `base` (as written when it cannot be), `None` for addresses a
/// reader cannot follow (`javascript:`, empty, same-page anchors).
fn absolute(base: Option<&Url>, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    if lower.starts_with("javascript:") || lower.starts_with("data:") {
        return None;
    }
    let url = match base {
        Some(b) => b
            .join(href)
            .map(String::from)
            .unwrap_or_else(|_| href.to_string()),
        None => Url::parse(href)
            .map(String::from)
            .unwrap_or_else(|_| href.to_string()),
    };
    // Link destinations end at whitespace and must balance parentheses: encode them. A
    // backtick or a `$` in one could pair with one in the text after it into a code span or a
    // formula, which bind before links: escaped.
    Some(
        url.replace(' ', "%20")
            .replace('(', "%28")
            .replace(')', "%29")
            .replace('<', "%3C")
            .replace('>', "%3E")
            .replace('`', "\\`")
            .replace('$', "\\$"),
    )
}

impl<'a> Writer<'a> {
    fn new(
        dom: &'a Dom,
        layout: &'a Layout,
        keep: &'a dyn Fn(usize) -> bool,
        md: &'a Markdown,
    ) -> Writer<'a> {
        let shown = layout
            .lines
            .iter()
            .map(|l| layout.nodes_of(l).iter().any(|&n| keep(n as usize)))
            .collect();
        let base = md.base.clone();
        Writer {
            dom,
            layout,
            keep,
            base,
            shown,
            marked: HashSet::new(),
            other_marker: HashMap::new(),
            last_list: Vec::new(),
            blocks: Vec::new(),
            plain: false,
            broken_list: false,
        }
    }

    fn write(mut self) -> String {
        let lines = &self.layout.lines;
        let mut images = self.layout.images.iter().peekable();
        let mut l = 0;
        while l < lines.len() {
            // Images standing before this line, between two shown lines.
            while let Some(img) = images.next_if(|img| img.next as usize <= l) {
                if img.line == NONE
                    && l > 0
                    && self.shown[l - 1]
                    && self.shown.get(l).copied().unwrap_or(false)
                {
                    let mut s = self.continuation(img.node as usize);
                    let indent = s.len();
                    self.image(img.node as usize, &mut s);
                    if s.len() > indent {
                        self.blocks.push(Block {
                            text: s,
                            group: None,
                        });
                    }
                }
            }
            if !self.shown[l] {
                l += 1;
                continue;
            }
            let line = lines[l];
            if line.kind == Kind::Row {
                l = self.table(l);
                continue;
            }
            self.line(&line, l);
            l += 1;
        }
        let mut out = String::new();
        let mut prev: Option<Group> = None;
        for (k, b) in self.blocks.iter().enumerate() {
            if k > 0 {
                let tight = matches!((prev, b.group), (Some(a), Some(c)) if a == c);
                out.push_str(if tight { "\n" } else { "\n\n" });
            }
            out.push_str(&b.text);
            prev = b.group;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out
    }

    /// `![alt](src)` of image node `i`.
    fn image(&self, i: usize, out: &mut String) {
        let Some(e) = self.dom.element(i) else { return };
        let Some(src) = e.src().and_then(|s| absolute(self.base.as_ref(), s)) else {
            return;
        };
        out.push_str("![");
        // Alt text on one line: a blank line in it would end the paragraph, and the image.
        let alt = e.alt().unwrap_or("").split_whitespace().collect::<Vec<_>>();
        Escapes::ALL.write(&alt.join(" "), true, Some("]"), out);
        out.push_str("](");
        out.push_str(&src);
        out.push(')');
    }

    /// The marks of the inline elements around node `i`, up to its line's element, outermost
    /// first.
    fn marks(
        &self,
        i: usize,
        line_element: usize,
        code_text: &dyn Fn(usize) -> String,
    ) -> Vec<(usize, Mark)> {
        let mut marks = Vec::new();
        for a in self.dom.ancestors(i) {
            if a <= line_element {
                break;
            }
            let Some(e) = self.dom.element(a) else {
                continue;
            };
            if self.plain {
                continue;
            }
            let mark = match &*e.tag {
                "strong" | "b" => Some(Mark::Strong),
                "em" | "i" => Some(Mark::Emphasis),
                "del" | "s" | "strike" => Some(Mark::Strike),
                "code" | "kbd" | "samp" | "tt" if self.dom.nodes[a].flags & flags::IN_PRE == 0 => {
                    Some(Mark::Code(fence_for(&code_text(a), 1)))
                }
                "a" => e
                    .href()
                    .and_then(|h| absolute(self.base.as_ref(), h))
                    .map(Mark::Link),
                _ => None,
            };
            if let Some(m) = mark {
                marks.push((a, m));
            }
        }
        marks.reverse();
        // Emphasis inside emphasis (`<em><em>`, `<b><strong>`) adds nothing a reader sees; the
        // outermost is written (`*******10****` would read as neither).
        let mut seen: Vec<Mark> = Vec::new();
        marks.retain(|(_, m)| {
            let again =
                matches!(m, Mark::Strong | Mark::Emphasis | Mark::Strike) && seen.contains(m);
            seen.push(m.clone());
            !again
        });
        // Inside inline code, no other markup.
        if let Some(k) = marks.iter().position(|(_, m)| matches!(m, Mark::Code(_))) {
            marks.truncate(k + 1);
        }
        marks
    }

    /// The kept text of element `a`'s subtree (what an inline code span holds).
    fn kept_text(&self, a: usize) -> String {
        let end = self.dom.nodes[a].end as usize;
        let mut s = String::new();
        for i in a + 1..end {
            if let Some(t) = self.dom.text(i) {
                if (self.keep)(i) {
                    if !s.is_empty() && t.space_before {
                        s.push(' ');
                    }
                    s.push_str(&t.text);
                }
            }
        }
        s
    }

    /// The inline Markdown of a line's kept nodes (and images), cell `within` only when given.
    fn inline(&self, line: &Line, line_no: usize, within: Option<usize>, breaks: &str) -> String {
        let dom = self.dom;
        let element = line.element as usize;
        // Items: the line's kept text nodes and its inline images, in document order.
        let mut items: Vec<usize> = self
            .layout
            .nodes_of(line)
            .iter()
            .map(|&n| n as usize)
            .filter(|&i| (self.keep)(i))
            .collect();
        items.extend(
            self.layout
                .images
                .iter()
                .filter(|img| img.line as usize == line_no)
                .map(|img| img.node as usize),
        );
        items.sort_unstable();
        if let Some(cell) = within {
            let end = dom.nodes[cell].end as usize;
            items.retain(|&i| i > cell && i < end);
        }
        let code_text = |a: usize| self.kept_text(a);
        let mut all_marks: Vec<Vec<(usize, Mark)>> = items
            .iter()
            .map(|&i| self.marks(i, within.unwrap_or(element), &code_text))
            .collect();
        drop_strikes_inside_words(dom, &items, &mut all_marks);
        let uses = |f: fn(&Mark) -> bool| all_marks.iter().flatten().any(|(_, m)| f(m));
        let same_marks = |a: usize, b: usize| {
            all_marks[a]
                .iter()
                .map(|m| m.0)
                .eq(all_marks[b].iter().map(|m| m.0))
        };
        let escapes = Escapes::of(
            items
                .iter()
                .filter(|&&i| dom.nodes[i].flags & flags::MATH == 0)
                .filter_map(|&i| dom.text(i).map(|t| t.text.as_str())),
            uses(|m| matches!(m, Mark::Strong | Mark::Emphasis)),
            uses(|m| matches!(m, Mark::Strike)),
            uses(|m| matches!(m, Mark::Code(_))),
            line.kind == Kind::Row,
        );
        let mut out = String::new();
        let mut open: Vec<(usize, Mark)> = Vec::new();
        let mut last: Option<(usize, bool)> = None;
        for (k, (&i, marks)) in items.iter().zip(&all_marks).enumerate() {
            let (space_before, space_after) = match dom.text(i) {
                Some(t) => (t.space_before, t.space_after),
                None => (true, true),
            };
            let crossed_block = last.is_some_and(|(prev, _)| broken(dom, prev, i));
            let separated = last.is_some_and(|(_, after)| after || space_before) || crossed_block;
            let mut common = open
                .iter()
                .zip(marks)
                .take_while(|(a, b)| a.0 == b.0)
                .count();
            // An element that ends where an equal one begins continues it (`<b>B</b><b>ook</b>`
            // is `**Book**`: `**B****ook**` reads as neither). Two code spans with nothing
            // between are one (`` `U+00DF``0x C3` `` would read as one span holding the fences)
            // when one fence fits both texts.
            while common < open.len().min(marks.len())
                && open[common].1 == marks[common].1
                && match &marks[common].1 {
                    Mark::Code(fence) => {
                        !separated
                            && fence_for(
                                &(code_text(open[common].0) + &code_text(marks[common].0)),
                                1,
                            ) == *fence
                    }
                    _ => true,
                }
            {
                open[common].0 = marks[common].0;
                common += 1;
            }
            let next = match (marks.get(common), dom.text(i)) {
                (Some((_, m)), _) => m.open().chars().next(),
                (None, Some(t)) => t.text.chars().next(),
                (None, None) => Some('!'),
            };
            while open.len() > common {
                let (_, m) = open.pop().expect("invariant: longer than common");
                if separated {
                    m.close(&mut out);
                } else {
                    close_before_punctuation(&m, next, &mut out);
                }
            }
            let cell_broken = crossed_block
                && !breaks.is_empty()
                && line.kind == Kind::Row
                && last.is_some_and(|(prev, _)| cell_break(dom, prev, i));
            if cell_broken {
                out.push_str(breaks);
            } else if separated {
                out.push(' ');
            } else {
                guard(&mut out, next);
            }
            for m in &marks[common..] {
                out.push_str(m.1.open());
            }
            open.extend(marks[common..].iter().cloned());
            let in_code = open.iter().any(|(_, m)| matches!(m, Mark::Code(_)));
            let in_link = open.iter().any(|(_, m)| matches!(m, Mark::Link(_)));
            match &dom.nodes[i].kind {
                NodeKind::Text(t) if dom.nodes[i].flags & flags::MATH != 0 => {
                    out.push('$');
                    out.push_str(t.text.trim());
                    out.push('$');
                }
                NodeKind::Text(t) if in_code => out.push_str(&t.text),
                NodeKind::Text(t) => {
                    // What follows: the next node's text when nothing comes between.
                    let following = match items.get(k + 1) {
                        None => Some("\n"),
                        Some(_) if t.space_after => Some(" "),
                        Some(&n) => match (dom.text(n), same_marks(k, k + 1)) {
                            (Some(next), true) if !next.space_before && !broken(dom, i, n) => {
                                Some(next.text.as_str())
                            }
                            _ => None,
                        },
                    };
                    escapes.write(&t.text, in_link, following, &mut out)
                }
                NodeKind::Element(_) if !self.plain => self.image(i, &mut out),
                NodeKind::Element(_) => {}
                NodeKind::Document => {}
            }
            last = Some((i, space_after));
        }
        while let Some((_, m)) = open.pop() {
            m.close(&mut out);
        }
        out
    }

    /// Prefix of line content inside lists and quotes: (first line of a list item: its marker
    /// and indent; else the continuation indent), and the block quote marks; whether the line
    /// is in a list, and whether it starts an item.
    fn prefix(&mut self, line: &Line) -> (String, bool, bool) {
        let dom = self.dom;
        let containers = containers(dom, self.layout, line.element as usize);
        let innermost = containers.iter().rposition(|&c| dom.tag(c) == Some("li"));
        let mut p = String::new();
        let mut depth = 0;
        let mut new_item = false;
        for (k, &c) in containers.iter().enumerate() {
            if dom.tag(c) == Some("blockquote") {
                p.push_str("> ");
                continue;
            }
            let marker = self.marker(c);
            if Some(k) == innermost && self.marked.insert(c) {
                p.push_str(&self.first_marker(c, depth, marker));
                new_item = true;
            } else if self.marked.contains(&c) {
                // An item whose marker was never written (its first line is not kept) indents
                // nothing: four spaces under no marker would read as a code block.
                p.push_str(&" ".repeat(marker.len()));
            }
            depth += 1;
        }
        (p, innermost.is_some(), new_item)
    }

    /// The indent and quote marks that continue the list items and quotes around node `i`
    /// (an image standing between their lines).
    fn continuation(&self, i: usize) -> String {
        let mut p = String::new();
        for c in containers(self.dom, self.layout, i) {
            if self.dom.tag(c) == Some("blockquote") {
                p.push_str("> ");
            } else if self.marked.contains(&c) {
                p.push_str(&" ".repeat(self.marker(c).len()));
            }
        }
        p
    }

    /// `marker`, the marker of item `li` at list depth `depth` (0: outermost), as written on
    /// its first line: with the other character when its list follows another list at that
    /// depth right after it (CommonMark reads a change of bullet or delimiter as a new list).
    fn first_marker(&mut self, li: usize, depth: usize, marker: String) -> String {
        let list = self.dom.nodes[li].parent as usize;
        let after_list = matches!(self.blocks.last(), Some(b) if b.group == Some(Group::List));
        let previous = self.last_list.get(depth).copied();
        let other = match self.other_marker.get(&list) {
            Some(&o) => o,
            None => {
                let o = match previous {
                    Some(p) if p != list && after_list => {
                        !self.other_marker.get(&p).copied().unwrap_or(false)
                    }
                    _ => false,
                };
                self.other_marker.insert(list, o);
                o
            }
        };
        self.last_list.resize(depth, usize::MAX);
        self.last_list.push(list);
        if !other {
            return marker;
        }
        match marker.strip_suffix(". ") {
            Some(n) => format!("{n}) "),
            None => "* ".to_string(),
        }
    }

    /// `- ` or `N. ` for list item `li`: `N` counts the items written, as a reader numbers
    /// them (from the first's number on); an item after dropped ones keeps no gap number, which
    /// could not start a list inside an item (only `1.` may interrupt a paragraph).
    fn marker(&self, li: usize) -> String {
        let dom = self.dom;
        let list = dom.nodes[li].parent as usize;
        if dom.tag(list) == Some("ol") {
            let n = dom
                .children(list)
                .take_while(|&c| c != li)
                .filter(|&c| dom.tag(c) == Some("li") && self.marked.contains(&c))
                .count()
                + 1;
            format!("{n}. ")
        } else {
            "- ".to_string()
        }
    }

    /// The group of a line's block: a list's for a line that starts an item, while the list
    /// reads as one (`broken_list`). An item's later line stands apart, after a blank line: a
    /// line joined to the one before is the same paragraph to a reader, and a delimiter each
    /// holds alone could pair across them (`**Us$14.99** per month` over `**Us$77.99**`).
    fn list_group(&mut self, in_list: bool, new_item: bool) -> Option<Group> {
        self.broken_list &= in_list;
        (new_item && !self.broken_list).then_some(Group::List)
    }

    /// Whether node `i` lies inside a list item written as one.
    fn in_item(&self, i: usize) -> bool {
        containers(self.dom, self.layout, i)
            .iter()
            .any(|&c| self.dom.tag(c) == Some("li"))
    }

    fn line(&mut self, line: &Line, l: usize) {
        let dom = self.dom;
        match line.kind {
            Kind::Code => {
                let text = plain_line(dom, self.layout, line, self.keep);
                let code = trim_code(&text);
                if code.trim().is_empty() {
                    return;
                }
                let fence = fence_for(code, 3);
                let lang = code_language(dom, line.element as usize).unwrap_or_default();
                self.broken_list |= self.in_item(line.element as usize);
                self.blocks.push(Block {
                    text: format!("{fence}{lang}\n{code}\n{fence}"),
                    group: None,
                });
            }
            Kind::Formula => {
                let text = plain_line(dom, self.layout, line, self.keep);
                let (prefix, _, _) = self.prefix(line);
                self.blocks.push(Block {
                    text: format!("{prefix}$${}$$", text.trim()),
                    group: None,
                });
            }
            Kind::Heading(level) => {
                self.plain = true;
                let body = self.inline(line, l, None, "");
                self.plain = false;
                if body.is_empty() {
                    return;
                }
                let (prefix, in_list, new_item) = self.prefix(line);
                let hashes = "#".repeat(usize::from(level));
                let group = self.list_group(in_list, new_item);
                self.blocks.push(Block {
                    text: format!("{prefix}{hashes} {body}"),
                    group,
                });
            }
            Kind::Text | Kind::Row => {
                let body = self.inline(line, l, None, "");
                if body.is_empty() {
                    return;
                }
                let (prefix, in_list, new_item) = self.prefix(line);
                let group = self.list_group(in_list, new_item);
                self.blocks.push(Block {
                    text: format!("{prefix}{}", escape_line_start(&body)),
                    group,
                });
            }
        }
    }

    /// The shown rows of the table whose row line `l` starts, as a GFM table; the line after.
    fn table(&mut self, l: usize) -> usize {
        let dom = self.dom;
        let lines = &self.layout.lines;
        let table_of = |line: &Line| {
            dom.ancestors(line.element as usize)
                .find(|&a| dom.tag(a) == Some("table"))
                .unwrap_or(0)
        };
        let table = table_of(&lines[l]);
        let mut rows: Vec<(Vec<String>, bool)> = Vec::new();
        let mut k = l;
        while k < lines.len()
            && (!self.shown[k] || (lines[k].kind == Kind::Row && table_of(&lines[k]) == table))
        {
            if self.shown[k] {
                let line = lines[k];
                let row = line.element as usize;
                let cells: Vec<usize> = dom
                    .children(row)
                    .filter(|&c| matches!(dom.tag(c), Some("td" | "th")))
                    .collect();
                let header = !cells.is_empty()
                    && (cells.iter().all(|&c| dom.tag(c) == Some("th"))
                        || dom.ancestors(row).any(|a| dom.tag(a) == Some("thead")));
                self.plain = true;
                let texts: Vec<String> = if cells.is_empty() {
                    vec![self.inline(&line, k, None, "<br>")]
                } else {
                    cells
                        .iter()
                        .map(|&c| self.inline(&line, k, Some(c), "<br>"))
                        .collect()
                };
                self.plain = false;
                if texts.iter().any(|t| !t.is_empty()) {
                    rows.push((texts, header));
                }
            }
            k += 1;
        }
        let columns = rows.iter().map(|(r, _)| r.len()).max().unwrap_or(0);
        if columns == 0 {
            return k.max(l + 1);
        }
        self.broken_list |= self.in_item(table);
        let fmt = |cells: &[String]| {
            let mut s = String::from("|");
            for c in 0..columns {
                s.push(' ');
                s.push_str(cells.get(c).map_or("", String::as_str));
                s.push_str(" |");
            }
            s
        };
        let mut text = Vec::new();
        let (head, body) = if rows[0].1 {
            (rows[0].0.clone(), &rows[1..])
        } else {
            (vec![String::new(); columns], &rows[..])
        };
        text.push(fmt(&head));
        text.push(format!("|{}", " --- |".repeat(columns)));
        for (r, _) in body {
            text.push(fmt(r));
        }
        self.blocks.push(Block {
            text: text.join("\n"),
            group: Some(Group::Table(table)),
        });
        k.max(l + 1)
    }
}

// The Markdown tests' CommonMark reading, for the unit tests below.
#[cfg(test)]
#[path = "../../tests/support/commonmark.rs"]
mod commonmark;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;
    use commonmark::{rendered_words, words};

    fn md(html: &str) -> String {
        let dom = parse_html(html).dom;
        let layout = Layout::new(&dom);
        let base = Url::parse("https://example.com/docs/page.html").ok();
        render(
            &dom,
            &layout,
            |_| true,
            &Format::Markdown(Markdown::with_base(base)),
        )
    }

    fn text(html: &str) -> String {
        text_of(&parse_html(html).dom)
    }

    /// The Markdown of `html` without the text nodes reading `dropped` (as if the cleaner had
    /// dropped them), having checked that a reader renders it to the plain text's words.
    fn md_without(html: &str, dropped: &str) -> String {
        let dom = parse_html(html).dom;
        let layout = Layout::new(&dom);
        let keep = |i: usize| dom.text(i).is_none_or(|t| t.text != dropped);
        let base = Url::parse("https://example.com/docs/page.html").ok();
        let out = render(
            &dom,
            &layout,
            keep,
            &Format::Markdown(Markdown::with_base(base)),
        );
        let plain = render(&dom, &layout, keep, &Format::Text);
        assert_eq!(rendered_words(&out), words(&plain), "{out}");
        out
    }

    #[test]
    fn plain_text_keeps_code_lines_and_table_rows() {
        let html = "<h2><a href='#install'>Install</a></h2>\
            <pre><code class='language-python'>def f(x):\n\tif x:\n        return [1, 2]\n    return []\n</code></pre>\
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>x | y</td></tr></table>\
            <ul><li>one<ul><li>inner</li></ul></li><li>two</li></ul>";
        assert_eq!(
            text(html),
            "Install\ndef f(x):\n\tif x:\n        return [1, 2]\n    return []\na | b\n1 | x | y\none\n  inner\ntwo\n"
        );
    }

    #[test]
    fn markdown_writes_structure() {
        let html = "<h2><a href='#install'>Install</a></h2>\
            <p>Use <code>pip</code> or <a href='/x'>the <em>other</em> way</a>.</p>\
            <pre class='highlight-python'>def f():\n    return 1</pre>\
            <table><thead><tr><th>a</th><th>b</th></tr></thead><tr><td>1</td><td>x | y<br>z</td></tr></table>\
            <ol><li>one<ul><li>inner</li></ul></li><li>two</li></ol>\
            <blockquote><p>quoted</p></blockquote>";
        assert_eq!(
            md(html),
            "## Install\n\nUse `pip` or [the *other* way](https://example.com/x).\n\n\
             ```python\ndef f():\n    return 1\n```\n\n\
             | a | b |\n| --- | --- |\n| 1 | x \\| y<br>z |\n\n\
             1. one\n   - inner\n2. two\n\n> quoted\n"
        );
    }

    #[test]
    fn list_items_holding_headings_render_as_sections() {
        // A reference page's member summaries: each a list item holding a heading, a paragraph
        // and code. The plain list after them stays a list.
        let html = "<ul><li><section><h2>Field Summary</h2><p>Fields.</p>\
            <pre>int x;\n  int y;</pre></section></li>\
            <li><section><h2>Methods</h2><ul><li>run</li><li>stop</li></ul></section></li></ul>\
            <p>After.</p><ul><li>one<ul><li>inner</li></ul></li></ul>";
        assert_eq!(
            md(html),
            "## Field Summary\n\nFields.\n\n```\nint x;\n  int y;\n```\n\n## Methods\n\n\
             - run\n- stop\n\nAfter.\n\n- one\n  - inner\n"
        );
        assert_eq!(
            text(html),
            "Field Summary\nFields.\nint x;\n  int y;\nMethods\nrun\nstop\nAfter.\none\n  inner\n"
        );
    }

    /// Regression: two lists one after the other (as sibling `<ul>`s, or in sibling `<div>`s)
    /// were written with the same marker and no block between, so a reader took them as one
    /// list; the second now takes the other marker.
    #[test]
    fn adjacent_lists_stay_two_lists_in_markdown() {
        let html =
            "<ul><li>a</li><li>b<ul><li>b1</li></ul></li></ul><div><ul><li>c</li></ul></div>\
            <ol><li>one</li></ol><ol><li>uno</li><li>dos</li></ol><p>After.</p><ul><li>d</li></ul>";
        let out = md(html);
        assert_eq!(
            out,
            "- a\n- b\n  - b1\n* c\n1. one\n1) uno\n2) dos\n\nAfter.\n\n- d\n"
        );
        let lists = pulldown_cmark::Parser::new(&out)
            .filter(|e| {
                matches!(
                    e,
                    pulldown_cmark::Event::Start(pulldown_cmark::Tag::List(_))
                )
            })
            .count();
        assert_eq!(lists, 6, "{out}");
    }

    #[test]
    fn markdown_escapes_what_would_be_markup() {
        assert_eq!(
            md("<p># not a heading *or* [link]</p>"),
            "\\# not a heading \\*or\\* [link]\n"
        );
        assert_eq!(md("<p>1. not a list</p>"), "1\\. not a list\n");
        assert_eq!(md("<p><code>a`b</code></p>"), "``a`b``\n");
    }

    /// Regression: list items nested under an item whose own line was not kept were indented
    /// four spaces under no marker, which a reader takes as a code block (links read as their
    /// source).
    #[test]
    fn items_under_an_item_not_written_are_not_indented_into_a_code_block() {
        let html = "<ul><li><span>parent</span><ul><li><ul><li><a href='/a'>deep</a></li>\
                    <li>deeper</li></ul></li></ul></li></ul>";
        assert_eq!(
            md_without(html, "parent"),
            "- [deep](https://example.com/a)\n- deeper\n"
        );
    }

    /// Regression: a nested ordered list whose first items were dropped was written from its
    /// item's place (`9.`), and a list that starts at 9 cannot interrupt a paragraph, so it
    /// read as text of the item above.
    #[test]
    fn an_ordered_list_is_numbered_by_the_items_written() {
        let html = "<ol><li>Top<ol><li><span>skip</span></li><li>Ninth</li><li>Tenth</li></ol>\
                    </li></ol>";
        assert_eq!(
            md_without(html, "skip"),
            "1. Top\n   1. Ninth\n   2. Tenth\n"
        );
    }

    /// Regression: after a code block inside a list item (written at the line's start, its
    /// lines verbatim) the item's next paragraph and the next item were joined line to line,
    /// and `3.` cannot interrupt a paragraph: the step read as text of the paragraph.
    #[test]
    fn items_after_a_code_block_inside_a_list_start_a_list_again() {
        let html = "<ol><li>Set it:<pre>export A=1\nexport B=2</pre><p>Then run it.</p></li>\
                    <li>Check</li><li>Replace</li></ol><p>After.</p><ul><li>x</li></ul>";
        assert_eq!(
            md_without(html, ""),
            "1. Set it:\n\n```\nexport A=1\nexport B=2\n```\n\n   Then run it.\n\n\
             2. Check\n\n3. Replace\n\nAfter.\n\n- x\n"
        );
    }

    /// Regression: `<b>上涨，</b>部分` was written `**上涨，**部分`, whose closer follows
    /// punctuation and precedes a letter, so it does not close and the page reads `**` as text
    /// up to the paragraph's end.
    #[test]
    fn bold_ending_in_cjk_punctuation_closes_before_it() {
        let html = "<p>的<b>行业上涨，</b>部分股价<em>创新高。</em>工程师</p>";
        assert_eq!(
            md_without(html, ""),
            "的**行业上涨**，部分股价*创新高*。工程师\n"
        );
    }

    /// Regression: an item's second line was joined to its first, one paragraph to a reader,
    /// so a `$` of each paired into a formula (`**Us$14.99** per month` over `**Us$77.99**`).
    #[test]
    fn an_items_later_line_is_a_paragraph_of_its_own() {
        let html = "<ul><li>Monthly: <b>Us$14.99</b> per month<br>Annual: <b>Us$77.99</b></li>\
                    <li>Family: <b>Us$119.99</b></li></ul>";
        assert_eq!(
            md_without(html, ""),
            "- Monthly: **Us$14.99** per month\n\n  Annual: **Us$77.99**\n\n\
             - Family: **Us$119.99**\n"
        );
    }

    /// Regression: a quote inside a list item was written with its `>` before the item's
    /// indent (`>       text`), which reads as code inside a quote outside the list.
    #[test]
    fn a_quote_inside_a_list_item_is_marked_inside_the_item() {
        let html = "<ol><li>one<blockquote><p>quoted</p></blockquote></li><li>two</li></ol>\
                    <blockquote><ul><li>in a quote</li></ul></blockquote>";
        assert_eq!(
            md_without(html, ""),
            "1. one\n\n   > quoted\n\n2. two\n> * in a quote\n"
        );
    }

    /// Regression: an image between two lines of a list item was written at the line's start,
    /// which ended the list; the next item's `2.` then read as text inside a paragraph.
    #[test]
    fn an_image_inside_a_list_item_stays_in_the_item() {
        let html = "<ol><li><p>one</p><img src='a.png'><p>more</p></li><li>two</li></ol>";
        assert_eq!(
            md_without(html, ""),
            "1. one\n\n   ![](https://example.com/docs/a.png)\n\n   more\n\n2. two\n"
        );
    }

    /// Regression: `<b>B</b><b>ook</b>` (a drop capital) was written `**B****ook**`, which
    /// reads as neither strong text nor one word.
    #[test]
    fn adjacent_equal_marks_are_written_as_one() {
        let html = "<p><b>B</b><b>ook</b> club, <a href='/x'>a</a><a href='/x'>b</a></p>";
        assert_eq!(
            md_without(html, ""),
            "**Book** club, [ab](https://example.com/x)\n"
        );
    }

    /// Regression: emphasis nested in emphasis (`<em><em><strong><em><strong>10`) was written
    /// mark by mark (`*******10********LUOA`), which a reader reads as neither emphasis nor
    /// one word.
    #[test]
    fn emphasis_inside_emphasis_is_written_once() {
        let html = "<p><em><em><strong><em><strong><sup>10</sup></strong></em></strong></em>\
                    <strong>LUOA Discount</strong> only here</em></p>";
        assert_eq!(md_without(html, ""), "***10LUOA Discount** only here*\n");
    }

    /// Regression: two code spans with nothing between (`<code>U+00DF</code><code>0x C3
    /// 9F</code>`) were written `` `U+00DF``0x C3 9F` ``, one span holding both fences.
    #[test]
    fn adjacent_code_spans_are_written_as_one() {
        let html = "<p>'ß'<code>U+00DF</code><code>0x C3 9F</code> and <code>a</code> \
                    <code>b</code></p>";
        assert_eq!(md_without(html, ""), "'ß'`U+00DF0x C3 9F` and `a` `b`\n");
    }

    /// Regression: a strikethrough ending inside a word (`<s>over</s>charged`) was written
    /// `~~over~~charged`, which a reader does not close.
    #[test]
    fn a_strikethrough_inside_a_word_is_written_as_text() {
        let html = "<p>get <s>over</s>charged, <s>struck</s> out, pre<del>fix</del></p>";
        assert_eq!(
            md_without(html, ""),
            "get overcharged, ~~struck~~ out, prefix\n"
        );
    }

    /// Regression: a `$` in a link's URL paired with a price's `$` in the text before it into
    /// a formula, which swallowed the link (`[Decor from $15](…decor-from-$15…)`).
    #[test]
    fn a_dollar_or_backtick_in_a_url_is_escaped() {
        let html =
            "<p><a href='/sale/decor-from-$15'>Decor from $15</a><a href='/a`b'>Lighting</a> \
                    `x</p>";
        let md = md_without(html, "");
        assert!(
            md.contains("(https://example.com/sale/decor-from-\\$15)"),
            "{md}"
        );
        assert!(!md.contains("a`b"), "{md}");
    }

    /// Regression: a lone backtick in text was written as is beside a code span, and paired
    /// with the span's fence (`` `grub_calloc' … `/boot/grub` `` read as one span).
    #[test]
    fn a_backtick_in_text_beside_a_code_span_is_escaped() {
        let html = "<p>symbol `grub_calloc' not found in <code>/boot/grub</code> to be</p>";
        assert_eq!(
            md_without(html, ""),
            "symbol \\`grub_calloc' not found in `/boot/grub` to be\n"
        );
    }

    /// Regression: the plain text joined the words on either side of an inline image
    /// (`2024<img>If` as `2024If`) where the Markdown parts them.
    #[test]
    fn an_inline_image_parts_words_in_plain_text() {
        let html = "<p>Updated 2024<img src='a.png'>If you</p>";
        assert_eq!(text(html), "Updated 2024 If you\n");
        md_without(html, "");
    }

    #[test]
    fn markdown_images_and_formulas() {
        let html = "<p>before</p><figure><img src='i.png' alt='A\n\n[cat]'></figure><p>after \
                    <math alttext='x^2'><mi>x</mi></math></p>\
                    <math display='block'><semantics><mi>y</mi><annotation encoding='application/x-tex'>y=1</annotation></semantics></math>";
        assert_eq!(
            md(html),
            "before\n\n![A \\[cat\\]](https://example.com/docs/i.png)\n\nafter $x^2$\n\n$$y=1$$\n"
        );
    }
}
