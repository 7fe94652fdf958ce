//! The manual says what thresher does now: README.md, docs/ and src/ name no work session
//! ("session 12") and no issue number ("issue 10", "Issue #4"). History lives in git and in
//! CHANGELOG.md; a comment says what the code does and why, not when it was written.

use std::path::{Path, PathBuf};

/// The files checked: README.md, and every file under docs/ and src/.
fn checked() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs"), root.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a checked directory is readable") {
            let path = entry.expect("a checked directory is readable").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Where `text` names a session or an issue by number: `session 12`, `Sessions 14–16`,
/// `issue 10`, `Issue #4`, `issue-11` (any case), as (line, the words found).
fn numbered_mentions(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        for word in ["session", "issue"] {
            for (at, _) in lower.match_indices(word) {
                let before = lower[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let word_end = at + word.len();
                let rest = &lower[word_end..];
                let plural = usize::from(rest.starts_with('s'));
                let rest = &rest[plural..];
                let gap = rest.len() - rest.trim_start_matches([' ', '-', '#', '\u{a0}']).len();
                let after = &rest[gap..];
                if gap > 0 && after.starts_with(|c: char| c.is_ascii_digit()) {
                    let digits = after.chars().take_while(char::is_ascii_digit).count();
                    let end = word_end + plural + gap + digits;
                    found.push((n + 1, line[at..end].to_string()));
                }
            }
        }
    }
    found
}

#[test]
fn readme_docs_and_src_name_no_session_or_issue_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = checked();
    assert!(files.len() > 100, "read {} files", files.len());
    let mut places = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (line, words) in numbered_mentions(&text) {
            let shown = file.strip_prefix(root).unwrap_or(file);
            places.push(format!("{}:{line}: {words}", shown.display()));
        }
    }
    assert!(
        places.is_empty(),
        "README.md, docs/ and src/ say what thresher does now; history goes to CHANGELOG.md or \
         git (docs/design.md, \"Docs\"). {} mention(s):\n{}",
        places.len(),
        places.join("\n")
    );
}

/// The reader finds what it should, so the check above cannot pass by reading nothing.
#[test]
fn the_mention_reader_sees_sessions_and_issues_in_every_form() {
    let text = "a (session 12) b\nSessions 14–16 and Issue #4\nissue-11; an issue with 3 pages\n\
                tissue 5, sessionless 3, the session's 2 figures";
    let got: Vec<String> = numbered_mentions(text)
        .into_iter()
        .map(|(_, w)| w)
        .collect();
    assert_eq!(got, ["session 12", "Sessions 14", "Issue #4", "issue-11"]);
}
