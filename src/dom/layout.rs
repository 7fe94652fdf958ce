//! A page's layout: which visible text nodes share an output line, and what kind of line each
//! is — a paragraph's run of text, a heading, a data table's row (its cells on one line), a code
//! block (its lines verbatim), a display formula. The one segmentation that the cleaner's blocks
//! (`template::content::blocks`) and both renderers (`dom::render`: plain text and Markdown)
//! share, so a decision per line is a decision per rendered block in either format.
//!
//! Lines start and end at block elements (`text::is_block`), except inside an *atomic* element —
//! a heading, a `<pre>`, a data table's row — which is one line whatever it holds. A row of two
//! or more cells is a data row unless its table is a layout grid (`role="presentation"`) or the
//! row is a page's columns or holds code (`layout_tables`).
//!
//! Images are no text: each `<img>` is attached to the line it sits in, or stands between two
//! lines (`Image::line` is `NONE`, `Image::next` the line after it).

use super::tree::{flags, is_block, is_visible, Dom, NodeKind};

/// No line (`Layout::line_of` of a node that is not visible text).
pub const NONE: u32 = u32::MAX;

/// A table cell of more words than this makes its table a layout grid, not data: a data
/// table's cells hold values, names and short descriptions.
pub const LAYOUT_CELL_WORDS: usize = 120;

/// A table cell holding more block elements than this (paragraphs, list items, boxes) makes
/// its table a layout grid: a data cell is a value or a short description, not a column of a
/// page (a cell of link lists beside another).
pub const LAYOUT_CELL_BLOCKS: usize = 6;

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A run of text between block boundaries: a paragraph, a list item's text, a cell of a
    /// layout table.
    Text,
    /// `h1`–`h6` (the level), whole even when it holds links or inner blocks.
    Heading(u8),
    /// A data table's row: its cells in order on one line.
    Row,
    /// A `<pre>` block: its text verbatim, several output lines.
    Code,
    /// A display formula (TeX source).
    Formula,
}

/// One line of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    /// Range into `Layout::nodes`: the line's text nodes, in document order.
    pub start: u32,
    pub end: u32,
    /// The element the line belongs to: the atomic element of a heading, row or code line,
    /// else the innermost block element around its text (0, the document, when none).
    pub element: u32,
    pub kind: Kind,
}

/// An `<img>` and where it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image {
    /// The `img` element's node index.
    pub node: u32,
    /// The line it is inline in, or `NONE` when it stands between lines.
    pub line: u32,
    /// The first line after it (`lines.len()` at the end of the page).
    pub next: u32,
}

/// A page's lines.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub lines: Vec<Line>,
    /// Visible text node indices grouped by line (see `Line::start`).
    pub nodes: Vec<u32>,
    /// Per DOM node: the line of a visible text node, `NONE` otherwise.
    pub line_of: Vec<u32>,
    /// Every visible `<img>` with an address, in document order.
    pub images: Vec<Image>,
    /// The `li` elements holding a heading line, sorted: a list that lays out sections (a
    /// reference page's member summaries, a grid of titled cards). They render as sections, not
    /// list items — no marker, no indent — so a heading stays a heading line (`## Methods`, not
    /// `- ## Methods`) and a code block in it keeps its lines as written.
    pub sections: Vec<u32>,
}

/// Form controls: their text (a textarea's default value, a select's options, a button's label)
/// is user-interface text, never content, so it gets no line. Some sites park whole HTML
/// fragments in hidden textareas.
const CONTROLS: &[&str] = &[
    "textarea", "select", "option", "optgroup", "button", "datalist",
];

/// `h1`–`h6` as its level.
pub fn heading_level(tag: &str) -> Option<u8> {
    match tag {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Table structure that `LAYOUT_CELL_BLOCKS` does not count: a nested table's rows count, its
/// cells and row groups do not.
fn table_part(tag: &str) -> bool {
    matches!(tag, "table" | "thead" | "tbody" | "tfoot" | "td" | "th")
}

/// Per node: the tables that are layout grids (`role="presentation"`) and the rows that are
/// not data (`true`): a row with a cell of more than `LAYOUT_CELL_WORDS` words or
/// `LAYOUT_CELL_BLOCKS` blocks (a column of a page, not a value), or holding a `<pre>` (code
/// keeps its lines). The other rows of such a table are data: a header row over code examples,
/// a member's signature beside its labels (a small table inside a cell joins its row's line).
pub fn layout_tables(dom: &Dom) -> Vec<bool> {
    let n = dom.nodes.len();
    // Bottom-up: whether a subtree holds a pre, its words and its blocks.
    let mut code = vec![false; n];
    let mut words = vec![0usize; n];
    let mut blocks = vec![0usize; n];
    let mut grid = vec![false; n];
    for i in (1..n).rev() {
        let node = &dom.nodes[i];
        match &node.kind {
            NodeKind::Text(t) => {
                words[i] = t.text.split_whitespace().count().max(t.text.len() / 6);
            }
            NodeKind::Element(e) => match &*e.tag {
                "table" => {
                    grid[i] |= e
                        .role
                        .as_deref()
                        .is_some_and(|r| r.eq_ignore_ascii_case("presentation"));
                }
                "td" | "th" if words[i] > LAYOUT_CELL_WORDS || blocks[i] > LAYOUT_CELL_BLOCKS => {
                    grid[node.parent as usize] = true;
                }
                "tr" if code[i] => grid[i] = true,
                _ => {}
            },
            NodeKind::Document => {}
        }
        let parent = node.parent as usize;
        code[parent] |= code[i] || dom.tag(i) == Some("pre");
        words[parent] += words[i];
        blocks[parent] +=
            blocks[i] + usize::from(dom.tag(i).is_some_and(|t| is_block(t) && !table_part(t)));
    }
    grid
}

/// A data row: a `tr` with at least two cells, not marked by `layout_tables`, in a table that
/// is no layout grid (a row of one cell is a box like any other).
fn is_data_row(dom: &Dom, i: usize, grid: &[bool]) -> bool {
    !grid[i]
        && dom
            .children(i)
            .filter(|&c| matches!(dom.tag(c), Some("td" | "th")))
            .nth(1)
            .is_some()
        && dom
            .ancestors(i)
            .find(|&a| dom.tag(a) == Some("table"))
            .is_some_and(|t| !grid[t])
}

impl Layout {
    /// Cut `dom` into lines.
    pub fn new(dom: &Dom) -> Layout {
        let n = dom.nodes.len();
        let grid = layout_tables(dom);
        let mut out = Layout {
            lines: Vec::new(),
            nodes: Vec::new(),
            line_of: vec![NONE; n],
            images: Vec::new(),
            sections: Vec::new(),
        };
        // (index, end) of the block elements we are inside, innermost last.
        let mut open: Vec<(usize, usize)> = Vec::new();
        // The atomic element we are inside: (index, end, kind).
        let mut atom: Option<(usize, usize, Kind)> = None;
        let mut current: Option<Line> = None;
        // End of the form control we are inside (0: none).
        let mut control_end = 0usize;
        for (i, node) in dom.nodes.iter().enumerate() {
            while open.last().is_some_and(|&(_, end)| end <= i) {
                let (at, _) = open.pop().expect("invariant: checked non-empty");
                match atom {
                    Some((a, _, _)) if a == at => {
                        atom = None;
                        out.close(&mut current);
                    }
                    Some(_) => {}
                    None => out.close(&mut current),
                }
            }
            match &node.kind {
                NodeKind::Element(e) => {
                    if i >= control_end && CONTROLS.contains(&&*e.tag) {
                        control_end = node.end as usize;
                    }
                    if e.tag == "img" && node.flags & flags::HIDDEN == 0 && e.src().is_some() {
                        let line = if current.is_some() {
                            out.lines.len() as u32
                        } else {
                            NONE
                        };
                        out.images.push(Image {
                            node: i as u32,
                            line,
                            next: out.lines.len() as u32 + u32::from(line != NONE),
                        });
                    }
                    if !is_block(&e.tag) {
                        continue;
                    }
                    open.push((i, node.end as usize));
                    if atom.is_some() {
                        continue;
                    }
                    out.close(&mut current);
                    let kind = if let Some(level) = heading_level(&e.tag) {
                        Some(Kind::Heading(level))
                    } else if e.tag == "pre" {
                        Some(Kind::Code)
                    } else if e.tag == "tr" && is_data_row(dom, i, &grid) {
                        Some(Kind::Row)
                    } else {
                        None
                    };
                    if let Some(kind) = kind {
                        atom = Some((i, node.end as usize, kind));
                    }
                }
                NodeKind::Text(_) if i >= control_end && is_visible(dom, i) => {
                    let display =
                        node.flags & (flags::MATH | flags::DISPLAY) == flags::MATH | flags::DISPLAY;
                    if display && atom.is_none() {
                        out.close(&mut current);
                    }
                    let (element, kind) = match atom {
                        Some((a, _, kind)) => (a as u32, kind),
                        None => (
                            open.last().map_or(0, |&(at, _)| at as u32),
                            if display { Kind::Formula } else { Kind::Text },
                        ),
                    };
                    let at = out.nodes.len() as u32;
                    let line = current.get_or_insert(Line {
                        start: at,
                        end: at,
                        element,
                        kind,
                    });
                    line.end += 1;
                    out.nodes.push(i as u32);
                    out.line_of[i] = out.lines.len() as u32;
                    if display && atom.is_none() {
                        out.close(&mut current);
                    }
                }
                _ => {}
            }
        }
        out.close(&mut current);
        out.sections = section_items(dom, &out.lines);
        // An image seen while a line was open belongs to it only if the line went on to hold
        // it (it always does: the line was open); standalone ones already name the next line.
        out
    }

    /// Whether `li` element `i` holds a heading line (`sections`).
    pub fn is_section(&self, i: usize) -> bool {
        u32::try_from(i).is_ok_and(|i| self.sections.binary_search(&i).is_ok())
    }

    fn close(&mut self, current: &mut Option<Line>) {
        if let Some(line) = current.take() {
            self.lines.push(line);
        }
    }

    /// The text node indices of line `l`.
    pub fn nodes_of(&self, l: &Line) -> &[u32] {
        &self.nodes[l.start as usize..l.end as usize]
    }

    /// The first text node of line `l`.
    pub fn first_node(&self, l: &Line) -> usize {
        self.nodes[l.start as usize] as usize
    }
}

/// The `li` elements around the heading lines of `lines`, sorted.
fn section_items(dom: &Dom, lines: &[Line]) -> Vec<u32> {
    let mut items: Vec<u32> = lines
        .iter()
        .filter(|l| matches!(l.kind, Kind::Heading(_)))
        .flat_map(|l| dom.ancestors(l.element as usize))
        .filter(|&a| dom.tag(a) == Some("li"))
        .map(|a| a as u32)
        .collect();
    items.sort_unstable();
    items.dedup();
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse_html;

    fn kinds(html: &str) -> Vec<(Kind, String)> {
        let dom = parse_html(html).dom;
        let layout = Layout::new(&dom);
        layout
            .lines
            .iter()
            .map(|l| {
                let text: Vec<&str> = layout
                    .nodes_of(l)
                    .iter()
                    .filter_map(|&i| dom.text(i as usize).map(|t| t.text.as_str()))
                    .collect();
                (l.kind, text.join("+"))
            })
            .collect()
    }

    #[test]
    fn a_heading_is_one_line_whatever_it_holds() {
        assert_eq!(
            kinds("<h2><a href='#install'>Install</a><div>now</div></h2><p>text</p>"),
            vec![
                (Kind::Heading(2), "Install+now".to_string()),
                (Kind::Text, "text".to_string())
            ]
        );
    }

    #[test]
    fn a_data_row_is_one_line_a_layout_grid_is_not() {
        assert_eq!(
            kinds(
                "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td><p>2</p></td></tr></table>"
            ),
            vec![
                (Kind::Row, "a+b".to_string()),
                (Kind::Row, "1+2".to_string())
            ]
        );
        let long = "word ".repeat(LAYOUT_CELL_WORDS + 1);
        let html =
            format!("<table><tr><td>menu</td><td><p>{long}</p><p>more</p></td></tr></table>");
        let k = kinds(&html);
        assert_eq!(k.len(), 3, "{k:?}");
        assert!(k.iter().all(|(kind, _)| *kind == Kind::Text));
        let nested = kinds("<table><tr><td>x</td><td><table><tr><td>a</td><td>b</td></tr></table></td></tr></table>");
        assert_eq!(nested, vec![(Kind::Row, "x+a+b".to_string())]);
    }

    #[test]
    fn a_row_of_code_or_columns_is_not_data_but_its_neighbours_are() {
        // Regression: one cell of code examples (or of a page's column) made the whole table a
        // layout grid, so its header row "Example: | Output:" came out one cell per line.
        let k = kinds(
            "<table><tr><th>Example:</th><th>Output:</th></tr>\
             <tr><td><pre>a = 1\nprint(a)</pre></td><td><pre>1</pre></td></tr></table>",
        );
        assert_eq!(k[0], (Kind::Row, "Example:+Output:".to_string()));
        assert_eq!(k[1], (Kind::Code, "a = 1\nprint(a)".to_string()));
        let long = "word ".repeat(LAYOUT_CELL_WORDS + 1);
        let k = kinds(&format!(
            "<table><tr><th>a</th><th>b</th></tr><tr><td>menu</td><td>{long}</td></tr></table>"
        ));
        assert_eq!(k[0], (Kind::Row, "a+b".to_string()));
        assert_eq!(k[1].0, Kind::Text);
        let k = kinds("<table role=presentation><tr><td>a</td><td>b</td></tr></table>");
        assert_eq!(
            k,
            vec![(Kind::Text, "a".to_string()), (Kind::Text, "b".to_string())]
        );
    }

    #[test]
    fn code_keeps_its_whitespace_nodes() {
        let k = kinds("<pre><span>def</span> <span>f</span>():\n    <b>return</b> 1</pre>");
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].0, Kind::Code);
        assert_eq!(k[0].1, "def+ +f+():\n    +return+ 1");
    }

    #[test]
    fn a_display_formula_is_a_line_of_its_own() {
        let k = kinds(
            "<p>Euler: <math alttext='e^{i\\pi}+1=0'><mi>e</mi></math> and \
             <math display='block' alttext='x^2'><mi>x</mi></math> done</p>",
        );
        assert_eq!(
            k,
            vec![
                (Kind::Text, "Euler:+e^{i\\pi}+1=0+and".to_string()),
                (Kind::Formula, "x^2".to_string()),
                (Kind::Text, "done".to_string())
            ]
        );
    }

    #[test]
    fn images_attach_to_their_line_or_stand_between_lines() {
        let dom = parse_html(
            "<p>a <img src=/i.png alt=icon> b</p><figure><img src=/f.png></figure><p>c</p>\
             <img alt=no-src>",
        )
        .dom;
        let layout = Layout::new(&dom);
        assert_eq!(layout.lines.len(), 2);
        let at: Vec<(u32, u32)> = layout.images.iter().map(|i| (i.line, i.next)).collect();
        assert_eq!(at, vec![(0, 1), (NONE, 1)]);
    }
}
