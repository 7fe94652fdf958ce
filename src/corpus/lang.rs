//! The language of a page's cleaned text, with `whatlang` (trigram profiles of 69 languages,
//! no dependencies, a second to compile). Chosen over `lingua`, which is more accurate on short
//! strings but compiles a model crate per language (tens of MB of sources, minutes on CI's two
//! cores) and holds its models in memory; on whole pages of cleaned text whatlang is reliable and
//! costs microseconds per page.
//!
//! The code is ISO 639-3 (`eng`, `deu`, `cmn`), as whatlang names languages; the confidence is
//! whatlang's, in [0, 1], rounded to three decimals. Only the first `SAMPLE_BYTES` of the text
//! are read: more changes nothing on a page in one language and costs linear time.

/// Bytes of text read for detection.
pub const SAMPLE_BYTES: usize = 16 * 1024;

/// A detected language.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detected {
    /// ISO 639-3 code.
    pub code: &'static str,
    pub confidence: f64,
}

/// The language of `text`, or `None` when there is too little text to tell (no letters).
pub fn detect(text: &str) -> Option<Detected> {
    let mut end = text.len().min(SAMPLE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let info = whatlang::detect(&text[..end])?;
    Some(Detected {
        code: info.lang().code(),
        confidence: (info.confidence() * 1000.0).round() / 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_common_languages_apart() {
        let cases = [
            ("eng", "The committee met on Tuesday to discuss the new budget for the city's schools and libraries, which had been delayed for months."),
            ("deu", "Der Ausschuss traf sich am Dienstag, um über den neuen Haushalt für die Schulen und Bibliotheken der Stadt zu beraten."),
            ("fra", "Le comité s'est réuni mardi pour discuter du nouveau budget des écoles et des bibliothèques de la ville, retardé depuis des mois."),
            ("spa", "El comité se reunió el martes para discutir el nuevo presupuesto de las escuelas y bibliotecas de la ciudad, retrasado durante meses."),
            ("rus", "Комитет собрался во вторник, чтобы обсудить новый бюджет городских школ и библиотек, который откладывался несколько месяцев."),
            ("cmn", "委员会星期二开会讨论了城市学校和图书馆的新预算，这项预算已经推迟了好几个月。"),
            ("jpn", "委員会は火曜日に集まり、何か月も遅れていた市の学校と図書館の新しい予算について話し合いました。"),
        ];
        for (code, text) in cases {
            let d = detect(text).expect(code);
            assert_eq!(d.code, code, "{text}");
            assert!((0.0..=1.0).contains(&d.confidence));
        }
        assert_eq!(detect("  123 --- 456 "), None);
    }

    #[test]
    fn a_long_text_is_sampled_at_a_char_boundary() {
        let text = "ä".repeat(SAMPLE_BYTES);
        // Must not panic on the cut; the result itself does not matter.
        let _ = detect(&text);
    }
}
