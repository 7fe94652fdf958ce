//! Markdown escapes: a backslash before what a CommonMark (GFM, with math) reader would take as
//! markup, and before nothing else, so identifiers, signatures, versions and prices read as the
//! page wrote them (`snake_case`, `O(n)*`, `$5 and $10`, `Vec<T, A>`).
//!
//! Inline delimiters (`*`, `_`, `~`, `` ` ``, `$`) only make markup in pairs: an inline run (a
//! paragraph, a heading, a table cell) escapes them only when it holds two that could pair (for
//! `*`, `_` and `~`: a run that may open, by CommonMark's flanking rules, before one that may
//! close), or when its own markup uses the same character. `<` is escaped only before what reads as an
//! HTML tag or autolink, `[`/`]` only where a link could form. At a text node's end the next
//! character is unknown: `\`, `<` and delimiters count as escaped there; a `]` or `!` that the
//! next node turns into a link is the writer's to escape (`dom::render`).

/// Which delimiters of one inline run need escaping (`Escapes::of`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Escapes {
    star: bool,
    underscore: bool,
    tilde: bool,
    backtick: bool,
    dollar: bool,
    /// In a GFM table cell, where `|` ends the cell.
    pipe: bool,
}

/// What a character beside a delimiter run counts as in CommonMark's flanking rules.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Space,
    Punct,
    Other,
}

/// What `c` may count as (`None`: a node boundary, anything). A non-ASCII character that is
/// not alphanumeric may be any of the three: readers' Unicode whitespace and punctuation tables
/// differ.
fn sides(c: Option<char>) -> &'static [Side] {
    const ANY: &[Side] = &[Side::Space, Side::Punct, Side::Other];
    match c {
        None => ANY,
        Some(' ' | '\t' | '\n' | '\r' | '\x0c') => &[Side::Space],
        Some(c) if c.is_ascii_punctuation() => &[Side::Punct],
        Some(c) if c.is_ascii() || c.is_alphanumeric() => &[Side::Other],
        Some(_) => ANY,
    }
}

/// Whether a run of the delimiter `c` between `prev` and `next` may open and whether it may
/// close emphasis (or strikethrough): CommonMark's left- and right-flanking rules, with `_`'s
/// stricter ones inside words.
fn may_open_close(c: char, prev: Option<char>, next: Option<char>) -> (bool, bool) {
    let (mut open, mut close) = (false, false);
    for &p in sides(prev) {
        for &n in sides(next) {
            let left = n != Side::Space && (n != Side::Punct || p != Side::Other);
            let right = p != Side::Space && (p != Side::Punct || n != Side::Other);
            if c == '_' {
                open |= left && (!right || p == Side::Punct);
                close |= right && (!left || n == Side::Punct);
            } else {
                open |= left;
                close |= right;
            }
        }
    }
    (open, close)
}

/// One delimiter's runs so far in an inline run: whether one may open, and whether a later
/// one may close it (then the delimiter is escaped throughout).
#[derive(Clone, Copy, Default)]
struct Pairing {
    opened: bool,
    pairs: bool,
}

impl Pairing {
    fn see(&mut self, (open, close): (bool, bool)) {
        self.pairs |= close && self.opened;
        self.opened |= open;
    }
}

impl Escapes {
    /// Every delimiter escaped: text whose context is unknown (an image's alt text).
    pub const ALL: Escapes = Escapes {
        star: true,
        underscore: true,
        tilde: true,
        backtick: true,
        dollar: true,
        pipe: true,
    };

    /// The escapes of an inline run of `texts` (its text nodes in order) whose own markup
    /// writes `*` (`stars`: emphasis), `~` (`tildes`: strikethrough) or `` ` `` (`ticks`: code
    /// spans); `cell`: in a table.
    pub fn of<'t>(
        texts: impl IntoIterator<Item = &'t str>,
        stars: bool,
        tildes: bool,
        ticks: bool,
        cell: bool,
    ) -> Escapes {
        // Emphasis and strikethrough runs that could pair; `$`: whether an opener came before.
        let (mut star, mut underscore, mut tilde) = Default::default();
        let mut backtick = 0;
        let mut opener = false;
        let mut dollar = false;
        for text in texts {
            let chars: Vec<char> = text.chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                let mut end = k + 1;
                while end < chars.len() && chars[end] == c {
                    end += 1;
                }
                let prev = k.checked_sub(1).map(|p| chars[p]);
                let next = chars.get(end).copied();
                match c {
                    '*' => Pairing::see(&mut star, may_open_close(c, prev, next)),
                    '_' => Pairing::see(&mut underscore, may_open_close(c, prev, next)),
                    '~' => Pairing::see(&mut tilde, may_open_close(c, prev, next)),
                    '`' => backtick += 1,
                    '$' => {
                        // A `$` opens before non-whitespace and closes after it (pulldown-cmark).
                        for d in k..end {
                            let before = d.checked_sub(1).map(|p| chars[p]);
                            let after = chars.get(d + 1).copied();
                            if opener && !before.is_some_and(char::is_whitespace) {
                                dollar = true;
                            }
                            opener |= !after.is_some_and(char::is_whitespace);
                        }
                    }
                    _ => {}
                }
                k = end;
            }
        }
        Escapes {
            star: stars || star.pairs,
            underscore: underscore.pairs,
            tilde: tildes || tilde.pairs,
            backtick: ticks || backtick > 1,
            dollar,
            pipe: cell,
        }
    }

    /// `text` escaped onto `out`; `in_link`: inside a link's or image's brackets, where any
    /// bracket would end or nest them; `following`: the text written right after it, when
    /// known (`"\n"` at the end of the run, `" "` after a space).
    pub fn write(&self, text: &str, in_link: bool, following: Option<&str>, out: &mut String) {
        let mut chars: Vec<char> = text.chars().collect();
        let len = chars.len();
        let known = following.is_some();
        chars.extend(following.unwrap_or("").chars());
        for (k, &c) in chars[..len].iter().enumerate() {
            let prev = k.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(k + 1).copied();
            let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
            let escape = match c {
                '\\' => next.is_none_or(|n| n.is_ascii_punctuation()),
                '*' => self.star,
                '_' => self.underscore && !(alnum(prev) && alnum(next)),
                '~' => self.tilde,
                '`' => self.backtick,
                '$' => self.dollar,
                '|' => self.pipe,
                '[' => in_link || next == Some('^'),
                ']' => in_link || matches!(next, Some('(' | '[' | ':')),
                '!' => next == Some('['),
                '<' => html_may_open(&chars[k + 1..], known),
                '&' => {
                    let rest: String = chars[k + 1..].iter().take(33).collect();
                    rest.find(';').is_some_and(|end| {
                        end > 0
                            && rest[..end]
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '#')
                    })
                }
                _ => false,
            };
            if escape {
                out.push('\\');
            }
            out.push(c);
        }
    }
}

/// Whether `<` followed by `rest` could open inline HTML (a tag, a closing tag, a comment, a
/// declaration, a processing instruction) or an autolink, as CommonMark reads them; `true`
/// when the text ends before that is decided, unless `known`: nothing follows.
fn html_may_open(rest: &[char], known: bool) -> bool {
    let Some(&first) = rest.first() else {
        return !known;
    };
    match first {
        '!' | '?' => true,
        '/' if rest.len() == 1 => true,
        '/' => {
            let name = rest[1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '-')
                .count();
            if name == 0 || !rest[1].is_ascii_alphabetic() {
                return false;
            }
            let after = rest[1 + name..].iter().find(|c| !c.is_whitespace());
            after.is_none_or(|&c| c == '>')
        }
        c if c.is_ascii_alphabetic() => {
            // An autolink: `<scheme:…>` or `<user@host>`, no whitespace before its `>`.
            let token: Vec<char> = rest
                .iter()
                .copied()
                .take_while(|c| !c.is_whitespace() && *c != '<' && *c != '>')
                .collect();
            let closed = rest.get(token.len()).is_none_or(|&c| c == '>');
            if closed && (token.contains(&':') || token.contains(&'@')) {
                return true;
            }
            open_tag(rest)
        }
        _ => false,
    }
}

/// Whether `rest` (after `<`, starting with a letter) reads as an open tag: a name, attributes
/// and `>` or `/>`; `true` when it ends first.
fn open_tag(rest: &[char]) -> bool {
    let mut k = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '-')
        .count();
    loop {
        let spaced = rest[k..].iter().take_while(|c| c.is_whitespace()).count();
        k += spaced;
        match rest.get(k) {
            None | Some('>') => return true,
            Some('/') => return rest.get(k + 1).is_none_or(|&c| c == '>'),
            Some(&c) if spaced > 0 && (c.is_ascii_alphabetic() || c == '_' || c == ':') => {
                k += rest[k..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
                    .count();
                let before_eq = rest[k..].iter().take_while(|c| c.is_whitespace()).count();
                if rest.get(k + before_eq) != Some(&'=') {
                    continue;
                }
                k += before_eq + 1;
                k += rest[k..].iter().take_while(|c| c.is_whitespace()).count();
                match rest.get(k) {
                    None => return true,
                    Some(&q) if q == '"' || q == '\'' => {
                        match rest[k + 1..].iter().position(|&c| c == q) {
                            None => return true,
                            Some(end) => k += end + 2,
                        }
                    }
                    Some(_) => {
                        let value = rest[k..]
                            .iter()
                            .take_while(|c| {
                                !c.is_whitespace()
                                    && !matches!(c, '"' | '\'' | '=' | '<' | '>' | '`')
                            })
                            .count();
                        if value == 0 {
                            return false;
                        }
                        k += value;
                    }
                }
            }
            Some(_) => return false,
        }
    }
}

/// `s` (a block's first line) with a backslash before what would start another block at its
/// beginning: an ATX heading (`#` then a space), a list item (`-`, `+`, `*` or `1.` / `1)` then
/// a space), a block quote (`>`), a thematic break or setext underline (a line of `-`, `=`,
/// `_` or `*` alone), a code fence (three backticks or tildes), HTML (`<` before a letter,
/// `/`, `!` or `?`), a task list's box (`[ ]`, `[x]`).
pub fn escape_line_start(s: &str) -> String {
    let lead = s.len() - s.trim_start().len();
    let rest = &s[lead..];
    let spaced = |after: &str| after.is_empty() || after.starts_with([' ', '\t']);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rule = rest.len() > 1
        && ['-', '=', '_', '*']
            .iter()
            .any(|&m| rest.chars().all(|c| c == m || c == ' '));
    // A backtick fence's info string holds no backtick: ```` ```a``` b ```` is a code span.
    let fence = (rest.starts_with("```") && !rest.trim_start_matches('`').contains('`'))
        || rest.starts_with("~~~");
    let html = rest.starts_with('<')
        && rest[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'));
    let task = ["[ ]", "[x]", "[X]"]
        .iter()
        .any(|b| rest.starts_with(b) && spaced(&rest[3..]));
    let marker = rest.starts_with('>')
        || (rest.starts_with(['#', '-', '+', '*']) && spaced(&rest[1..]))
        || rule
        || fence
        || html
        || task;
    if marker && !rest.starts_with('\\') {
        format!("{}\\{}", &s[..lead], rest)
    } else if digits > 0 && rest[digits..].starts_with(['.', ')']) && spaced(&rest[digits + 1..]) {
        format!("{}{}\\{}", &s[..lead], &rest[..digits], &rest[digits..])
    } else {
        s.to_string()
    }
}

/// The shortest run of backticks longer than any run in `text`, at least `min`.
pub fn fence_for(text: &str, min: usize) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(min))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(text: &str) -> String {
        let mut out = String::new();
        Escapes::of([text], false, false, false, false).write(text, false, Some("\n"), &mut out);
        out
    }

    #[test]
    fn a_lone_delimiter_is_written_as_is() {
        assert_eq!(esc("O(n-i)* amortized"), "O(n-i)* amortized");
        assert_eq!(
            esc("fn fmt(&self, f: &mut Formatter<'_>)"),
            "fn fmt(&self, f: &mut Formatter<'_>)"
        );
        assert_eq!(esc("costs $5 and $10"), "costs $5 and $10");
        assert_eq!(
            esc("snake_case and more_snake"),
            "snake_case and more_snake"
        );
        assert_eq!(esc("\\color[rgb]{r g b}"), "\\color[rgb]{r g b}");
        assert_eq!(esc("impl<T, U> Into<U>"), "impl<T, U> Into\\<U>");
    }

    #[test]
    fn delimiters_that_could_pair_are_escaped() {
        assert_eq!(esc("a *b* c"), "a \\*b\\* c");
        assert_eq!(esc("_a_ b"), "\\_a\\_ b");
        assert_eq!(esc("x `y` z"), "x \\`y\\` z");
        assert_eq!(esc("$x$ and $y$"), "\\$x\\$ and \\$y\\$");
        assert_eq!(esc("[link](x)"), "[link\\](x)");
        assert_eq!(esc("see <b>bold</b>"), "see \\<b>bold\\</b>");
        assert_eq!(
            esc("mail <a@b.c> or <https://x.y>"),
            "mail \\<a@b.c> or \\<https://x.y>"
        );
        assert_eq!(esc("Vec<u8>"), "Vec\\<u8>");
        assert_eq!(esc("a < b and c > d"), "a < b and c > d");
        assert_eq!(esc("Hello! See [1]"), "Hello! See [1]");
    }

    /// Regression: two runs that could not pair (`*args, **kw`: both only open) were escaped,
    /// so signatures in Markdown read `\\*args, \\*\\*kw`.
    #[test]
    fn runs_that_only_open_or_only_close_are_not_escaped() {
        assert_eq!(
            esc("listen(target, fn, *args, **kw)"),
            "listen(target, fn, *args, **kw)"
        );
        assert_eq!(
            esc("m1.adjoint()*b; m2.lu()*b;"),
            "m1.adjoint()*b; m2.lu()*b;"
        );
        assert_eq!(
            esc("AlignedBox< _Scalar, _AmbientDim >"),
            "AlignedBox< _Scalar, _AmbientDim >"
        );
        assert_eq!(esc("2 * 3 * 4 and a_b_c"), "2 * 3 * 4 and a_b_c");
        assert_eq!(esc("2*3*4"), "2\\*3\\*4");
        assert_eq!(esc("**bold** text"), "\\*\\*bold\\*\\* text");
        assert_eq!(esc("x (_a_)"), "x (\\_a\\_)");
        assert_eq!(esc("fn *a, b* c"), "fn \\*a, b\\* c");
        assert_eq!(esc("~~gone~~ here"), "\\~\\~gone\\~\\~ here");
    }

    #[test]
    fn own_markup_escapes_its_delimiter() {
        let mut out = String::new();
        Escapes::of(["a*b"], true, false, false, true).write("a*b|c", false, None, &mut out);
        assert_eq!(out, "a\\*b\\|c");
    }

    #[test]
    fn line_starts_that_open_blocks_are_escaped() {
        assert_eq!(escape_line_start("# not a heading"), "\\# not a heading");
        assert_eq!(escape_line_start("#6 2024"), "#6 2024");
        assert_eq!(escape_line_start("* item"), "\\* item");
        assert_eq!(escape_line_start("```rust"), "\\```rust");
        assert_eq!(escape_line_start("<div> x"), "\\<div> x");
        assert_eq!(escape_line_start("[ ] todo"), "\\[ ] todo");
        assert_eq!(escape_line_start("12. twelve"), "12\\. twelve");
        assert_eq!(escape_line_start("***"), "\\***");
        // A backtick in the info string: a code span, not a fence.
        assert_eq!(escape_line_start("```a``` b"), "```a``` b");
    }
}
