//! Text mass in tokens, counted the way the evaluation counts them: every CJK character (kana,
//! hanzi/kanji, hangul) is one token, every other run of letters or digits is one token. Counting
//! tokens instead of bytes or chars keeps every threshold language-neutral (a Chinese sentence
//! and an English sentence of the same length in words weigh the same).

/// True for characters that are one token each.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{f900}'..='\u{faff}'
        | '\u{ac00}'..='\u{d7af}')
}

/// Token count of `text`. ASCII (most text) is told apart first: it is neither CJK nor
/// alphanumeric beyond its own letters and digits, so the Unicode tables are not consulted.
pub fn count(text: &str) -> u32 {
    let (mut n, mut in_word) = (0, false);
    for c in text.chars() {
        let (token, word) = if c.is_ascii() {
            (false, c.is_ascii_alphanumeric())
        } else if is_cjk(c) {
            (true, false)
        } else {
            (false, c.is_alphanumeric())
        };
        n += u32::from(token || (word && !in_word));
        in_word = word;
    }
    n
}

/// Sentence-ending or clause punctuation (Latin and CJK): prose has it, menus and lists of
/// headlines mostly do not.
pub fn is_prose_punct(c: char) -> bool {
    matches!(
        c,
        '.' | ',' | ';' | ':' | '!' | '?' | '。' | '，' | '、' | '；' | '：' | '！' | '？'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_cjk_characters_are_tokens() {
        assert_eq!(count("Hello, world 42!"), 3);
        assert_eq!(count("共享单车"), 4);
        assert_eq!(count("ofo与摩拜"), 4);
        assert_eq!(count("don't"), 2);
        assert_eq!(count(" — … "), 0);
        assert_eq!(count("snake_case"), 2);
    }

    /// The ASCII fast path counts what a char-by-char reading does.
    #[test]
    fn the_ascii_path_counts_as_chars_do() {
        let by_char = |text: &str| {
            let (mut n, mut in_word) = (0, false);
            for c in text.chars() {
                if is_cjk(c) {
                    n += 1;
                    in_word = false;
                } else if c.is_alphanumeric() {
                    n += u32::from(!in_word);
                    in_word = true;
                } else {
                    in_word = false;
                }
            }
            n
        };
        for text in [
            "",
            "a",
            "Café au lait, naïve 3½ x",
            "été42 ofo与摩拜 abc",
            "déjà-vu\u{00A0}Ωmega αβγ δ 1",
            "共享单车 and bikes",
            " — … ",
            "über",
        ] {
            assert_eq!(count(text), by_char(text), "{text}");
        }
    }
}
