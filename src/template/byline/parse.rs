//! Reading one short line as a byline: the publication date it names (numeric dates, English
//! month names, CJK 年月日) and the author it names (after a cue such as `By` or `作者`). Generic rules only: nothing here knows a site or a CMS.

use std::sync::LazyLock;

use regex::Regex;

/// A date as a line writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Date {
    /// Year, month and day, unambiguous.
    Ymd(u32, u32, u32),
    /// `a/b/yyyy` with both `a` and `b` ≤ 12: day-first or month-first, the line cannot say.
    Ambiguous(u32, u32, u32),
}

impl Date {
    /// `YYYY-MM-DD`; an ambiguous date only with the order its position settled (`day_first`).
    pub fn iso(self, day_first: Option<bool>) -> Option<String> {
        let (y, m, d) = match self {
            Date::Ymd(y, m, d) => (y, m, d),
            Date::Ambiguous(a, b, y) if a == b => (y, a, b),
            Date::Ambiguous(a, b, y) => match day_first? {
                true => (y, b, a),
                false => (y, a, b),
            },
        };
        Some(format!("{y:04}-{m:02}-{d:02}"))
    }
}

/// Years a byline date may have: the web's, with room ahead.
const YEARS: std::ops::RangeInclusive<u32> = 1990..=2099;

/// How far before a date (in bytes) a cue saying it is an update, not the publication, counts.
const UPDATE_CUE_REACH: usize = 24;

/// Words before a date that make it a modification date, not the publication date.
const UPDATE_CUES: &[&str] = &[
    "updated", "update", "modified", "edited", "更新", "修改", "修订",
];

static YMD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^\d])((?:19|20)\d{2})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})(?:[^\d]|$)",
    )
    .expect("invariant: a valid pattern")
});

static DMY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^\d])(\d{1,2})[-/.](\d{1,2})[-/.]((?:19|20)\d{2})(?:[^\d]|$)")
        .expect("invariant: a valid pattern")
});

/// English month names and their usual abbreviations (`Sept`, `Jan.`).
const MONTHS: &str = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";

static MONTH_DAY_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b{MONTHS}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b"
    ))
    .expect("invariant: a valid pattern")
});

static DAY_MONTH_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{MONTHS}\.?,?\s+((?:19|20)\d{{2}})\b"
    ))
    .expect("invariant: a valid pattern")
});

fn month_number(name: &str) -> Option<u32> {
    let key = name.get(..3)?.to_ascii_lowercase();
    let at = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .iter()
    .position(|m| *m == key)?;
    Some(at as u32 + 1)
}

fn valid(y: u32, m: u32, d: u32) -> bool {
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => return false,
    };
    YEARS.contains(&y) && (1..=days).contains(&d)
}

/// Every date in `line`, with its start offset, in no particular order.
fn all_dates(line: &str) -> Vec<(usize, Date)> {
    let num = |m: Option<regex::Match>| m.and_then(|m| m.as_str().parse::<u32>().ok());
    let mut found = Vec::new();
    for c in YMD.captures_iter(line) {
        if let (Some(at), Some(y), Some(m), Some(d)) =
            (c.get(1), num(c.get(1)), num(c.get(2)), num(c.get(3)))
        {
            if valid(y, m, d) {
                found.push((at.start(), Date::Ymd(y, m, d)));
            }
        }
    }
    for c in DMY.captures_iter(line) {
        if let (Some(at), Some(a), Some(b), Some(y)) =
            (c.get(1), num(c.get(1)), num(c.get(2)), num(c.get(3)))
        {
            let date = match (a > 12, b > 12) {
                (true, false) if valid(y, b, a) => Date::Ymd(y, b, a),
                (false, true) if valid(y, a, b) => Date::Ymd(y, a, b),
                (false, false) if valid(y, a, b) => Date::Ambiguous(a, b, y),
                _ => continue,
            };
            found.push((at.start(), date));
        }
    }
    for c in MONTH_DAY_YEAR.captures_iter(line) {
        let m = c.get(1).and_then(|m| month_number(m.as_str()));
        if let (Some(at), Some(m), Some(d), Some(y)) = (c.get(0), m, num(c.get(2)), num(c.get(3))) {
            if valid(y, m, d) {
                found.push((at.start(), Date::Ymd(y, m, d)));
            }
        }
    }
    for c in DAY_MONTH_YEAR.captures_iter(line) {
        let m = c.get(2).and_then(|m| month_number(m.as_str()));
        if let (Some(at), Some(d), Some(m), Some(y)) = (c.get(0), num(c.get(1)), m, num(c.get(3))) {
            if valid(y, m, d) {
                found.push((at.start(), Date::Ymd(y, m, d)));
            }
        }
    }
    found
}

/// The publication date `line` names: its first date that no update cue just before marks as
/// a modification date.
pub fn date_in(line: &str) -> Option<Date> {
    let mut found = all_dates(line);
    found.sort_by_key(|&(at, _)| at);
    found
        .into_iter()
        .find(|&(at, _)| {
            let mut from = at.saturating_sub(UPDATE_CUE_REACH);
            while !line.is_char_boundary(from) {
                from -= 1;
            }
            let before = line[from..at].to_lowercase();
            !UPDATE_CUES.iter().any(|c| before.contains(c))
        })
        .map(|(_, d)| d)
}

/// Whether a numeric date shows the day first (`Some(true)`), the month first (`Some(false)`),
/// or cannot say: what a byline position learns its order from.
pub fn order_of(line: &str) -> Option<bool> {
    let c = DMY.captures(line)?;
    let a: u32 = c.get(1)?.as_str().parse().ok()?;
    let b: u32 = c.get(2)?.as_str().parse().ok()?;
    match (a > 12, b > 12) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// Cues before an author's name, matched at a word start, case-insensitive. Latin cues other
/// than `by` need their colon: `Author` alone is a word of prose.
const LATIN_CUES: &[&str] = &[
    "by", "author:", "authors:", "autor:", "autores:", "auteur:", "auteurs:",
];

/// Cues before an author's name in CJK bylines (writer, reporter, "text /").
const CJK_CUES: &[&str] = &[
    "作者", "文/", "文／", "记者", "記者", "撰文", "撰稿", "著者", "筆者", "执笔",
];

/// Words that may stand right before `by` in an author cue (`Posted by`, `Written by`). Any
/// other word before it (`Photo by`, `Edited by`, `Powered by`) makes it something else.
const BY_LEADS: &[&str] = &[
    "written",
    "posted",
    "published",
    "story",
    "words",
    "reported",
    "text",
    "article",
];

/// Where a name ends: list and field separators, brackets, and the words that start the next
/// field of a byline (a date, a place, the outlet, an editor or source field).
const NAME_STOPS: &[char] = &[
    '|', '·', '•', ',', ';', '(', ')', '（', '）', '[', ']', '【', '】', '<', '>', '«', '»', '—',
    '–', '/', '／', '　', '，', '、', '；', '：', ':', '\u{a0}',
];

/// Words after which a Latin name has ended (`By Ann Lee on March 3`, `… for The Times`).
const NAME_END_WORDS: &[&str] = &[
    "on",
    "at",
    "in",
    "for",
    "from",
    "via",
    "updated",
    "published",
    "posted",
    "last",
    "and",
    "with",
];

/// CJK words that start the next field of a byline (source, editor, time).
const CJK_FIELD_WORDS: &[&str] = &[
    "来源",
    "來源",
    "编辑",
    "編輯",
    "责任编辑",
    "时间",
    "時間",
    "发布",
    "發布",
    "日期",
    "出处",
];

/// Longest name kept, in characters.
const MAX_NAME_CHARS: usize = 60;

/// Most words a Latin name has (`Maria de la Cruz Santos`).
const MAX_NAME_WORDS: usize = 5;

/// The author `line` names after a cue (`By Ann Lee`, `Posted by ann`, `作者：张三`), or `None`.
pub fn cued_name(line: &str) -> Option<String> {
    latin_cued(line).or_else(|| cjk_cued(line))
}

fn latin_cued(line: &str) -> Option<String> {
    let lower = line.to_lowercase();
    // Lower-casing may change byte lengths outside ASCII: work on the original only when it
    // does not.
    if lower.len() != line.len() {
        return None;
    }
    for cue in LATIN_CUES {
        let mut from = 0;
        while let Some(rel) = lower[from..].find(cue) {
            let at = from + rel;
            from = at + cue.len();
            let starts_word = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let after = &line[from..];
            let ends_word =
                cue.ends_with(':') || after.starts_with(|c: char| c.is_whitespace() || c == ':');
            if !starts_word || !ends_word {
                continue;
            }
            if *cue == "by" && !by_allowed(&lower[..at]) {
                continue;
            }
            if let Some(name) = latin_name(after) {
                return Some(name);
            }
        }
    }
    None
}

/// `by` starts an author cue at the line's start, after a separator, or after a lead word.
fn by_allowed(before: &str) -> bool {
    let before = before.trim_end();
    match before.chars().next_back() {
        None => true,
        Some(c) if !c.is_alphanumeric() => true,
        Some(_) => {
            let word = before
                .rsplit(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("");
            BY_LEADS.contains(&word)
        }
    }
}

/// The name at the start of `s`: capitalised words up to a stop.
fn latin_name(s: &str) -> Option<String> {
    let s = s.trim_start_matches(|c: char| c.is_whitespace() || c == ':');
    let head = s.split(NAME_STOPS).next().unwrap_or("");
    let mut words = Vec::new();
    for w in head.split_whitespace() {
        let lw = w.to_lowercase();
        if NAME_END_WORDS.contains(&lw.as_str()) || w.chars().any(|c| c.is_ascii_digit()) {
            break;
        }
        let first = w.chars().next()?;
        let connector = matches!(
            lw.as_str(),
            "de" | "van"
                | "von"
                | "der"
                | "da"
                | "di"
                | "du"
                | "la"
                | "le"
                | "del"
                | "bin"
                | "al"
                | "el"
        );
        if !(first.is_uppercase() || connector)
            || !w
                .chars()
                .all(|c| c.is_alphabetic() || matches!(c, '.' | '-' | '\'' | '’'))
        {
            break;
        }
        words.push(w);
        if words.len() > MAX_NAME_WORDS {
            return None;
        }
    }
    // A name ends on a name, not on a connector.
    while words
        .last()
        .is_some_and(|w| !w.chars().next().is_some_and(char::is_uppercase))
    {
        words.pop();
    }
    let name = words.join(" ");
    (!name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.chars().any(char::is_alphabetic))
    .then_some(name)
}

fn cjk_cued(line: &str) -> Option<String> {
    for cue in CJK_CUES {
        let Some(at) = line.find(cue) else { continue };
        let after = line[at + cue.len()..].trim_start_matches(|c: char| {
            c.is_whitespace() || matches!(c, ':' | '：' | '/' | '／' | '|')
        });
        let mut end = after
            .find(|c: char| NAME_STOPS.contains(&c) || c.is_whitespace() || c.is_ascii_digit())
            .unwrap_or(after.len());
        for w in CJK_FIELD_WORDS {
            if let Some(p) = after[..end].find(w) {
                end = end.min(p);
            }
        }
        let name = after[..end].trim();
        let chars = name.chars().count();
        if (1..=MAX_NAME_CHARS).contains(&chars) && name.chars().all(char::is_alphabetic) {
            return Some(name.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(line: &str) -> Option<String> {
        date_in(line).and_then(|d| d.iso(None))
    }

    #[test]
    fn dates_in_many_forms() {
        assert_eq!(iso("By Ann · June 3, 2024").as_deref(), Some("2024-06-03"));
        assert_eq!(iso("3 Sept. 2019 10:00 BST").as_deref(), Some("2019-09-03"));
        assert_eq!(
            iso("Posted on Jan 15th, 2012 by bo").as_deref(),
            Some("2012-01-15")
        );
        assert_eq!(
            iso("2019-05-10 08:30:12 来源：新华网").as_deref(),
            Some("2019-05-10")
        );
        assert_eq!(iso("2019年5月10日 08:30").as_deref(), Some("2019-05-10"));
        assert_eq!(iso("2019/05/10").as_deref(), Some("2019-05-10"));
        assert_eq!(iso("25.12.2018").as_deref(), Some("2018-12-25"));
        assert_eq!(iso("12/25/2018").as_deref(), Some("2018-12-25"));
        assert_eq!(
            iso("03/04/2018"),
            None,
            "day or month first: the line cannot say"
        );
        assert_eq!(
            date_in("03/04/2018")
                .and_then(|d| d.iso(Some(true)))
                .as_deref(),
            Some("2018-04-03")
        );
        assert_eq!(
            iso("Updated March 5, 2024; published March 3, 2024").as_deref(),
            Some("2024-03-03")
        );
        for none in [
            "February 30, 2024",
            "Call 555-1234",
            "1 2 2024",
            "in 2024",
            "20240301",
            "1899-01-01",
        ] {
            assert_eq!(iso(none), None, "{none}");
        }
    }

    #[test]
    fn names_after_a_cue() {
        assert_eq!(
            cued_name("By Ann Lee · June 3, 2024").as_deref(),
            Some("Ann Lee")
        );
        assert_eq!(cued_name("By ANN LEE, CNN").as_deref(), Some("ANN LEE"));
        assert_eq!(
            cued_name("Posted by Bo van Ek on March 3").as_deref(),
            Some("Bo van Ek")
        );
        assert_eq!(
            cued_name("Author: Maria de la Cruz | Staff").as_deref(),
            Some("Maria de la Cruz")
        );
        assert_eq!(
            cued_name("2019-05-10 来源：新华网 作者：张三 责任编辑：李四").as_deref(),
            Some("张三")
        );
        assert_eq!(cued_name("（记者 王五）").as_deref(), Some("王五"));
        assert_eq!(cued_name("文/赵六"), Some("赵六".to_string()));
        for none in [
            "Photo by Getty Images",
            "Powered by WordPress",
            "by the river",
            "Edited by Ann Lee",
            "Standby Ann",
        ] {
            assert_eq!(cued_name(none), None, "{none}");
        }
    }
}
