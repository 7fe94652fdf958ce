//! `thresher changes`: the recrawls' change log (docs/recrawl.md) — by default the pages whose
//! cleaned text changed (`content-changed`) and the pages gone, with old and new text hashes,
//! as aligned text or JSON Lines. Reads the store; never writes it.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{ChangesArgs, ChangesFormat};
use crate::store::{now_ms, ChangeKind, ChangeRecord, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    #[error("{0} does not exist (no crawl has used it)")]
    Missing(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "--since {0:?}: not a date (2024-03-01), a time (2024-03-01T09:30:00Z) or a duration \
         ago (2h, 7days)"
    )]
    Since(String),
}

pub fn run(args: &ChangesArgs) -> Result<(), ChangesError> {
    if !args.data.exists() {
        return Err(ChangesError::Missing(args.data.clone()));
    }
    let since = match &args.since {
        Some(t) => parse_since(t, now_ms()).ok_or_else(|| ChangesError::Since(t.clone()))?,
        None => 0,
    };
    let store = Store::open_existing(&args.data, 16 << 20)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut rows = Vec::new();
    for rec in store.changes(since) {
        let rec = rec?;
        if !args.all && !matches!(rec.kind, ChangeKind::ContentChanged | ChangeKind::Gone) {
            continue;
        }
        match args.format {
            // `changes | head`: a closed pipe is the reader's choice, not an error.
            ChangesFormat::Jsonl => {
                if writeln!(out, "{}", jsonl(&rec)).is_err() {
                    return Ok(());
                }
            }
            ChangesFormat::Text => rows.push(rec),
        }
    }
    if args.format == ChangesFormat::Text {
        let _ = out.write_all(text(&rows).as_bytes());
    }
    let _ = out.flush();
    Ok(())
}

/// `--since`: an RFC 3339 date or time (UTC when no offset), or a duration before `now_ms`.
pub fn parse_since(t: &str, now_ms: u64) -> Option<u64> {
    if let Some(ms) = crate::crawl::sitemap::lastmod_ms(t) {
        return Some(ms);
    }
    let d = humantime::parse_duration(t.trim()).ok()?;
    Some(now_ms.saturating_sub(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
}

fn hash(h: Option<u64>) -> String {
    h.map_or_else(|| "-".to_string(), |h| format!("{h:016x}"))
}

fn at(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// One JSON object: url, kind, at (RFC 3339, UTC), old_hash, new_hash (16 hex digits of xxh3
/// of the cleaned text, or null), page_id.
fn jsonl(rec: &ChangeRecord) -> String {
    let hex = |h: Option<u64>| h.map(|h| format!("{h:016x}"));
    serde_json::json!({
        "url": rec.url,
        "kind": rec.kind.name(),
        "at": at(rec.at_ms),
        "old_hash": hex(rec.old_hash),
        "new_hash": hex(rec.new_hash),
        "page_id": format!("{:016x}", rec.page_id),
    })
    .to_string()
}

/// Aligned columns: at, kind, old hash, new hash, URL.
fn text(rows: &[ChangeRecord]) -> String {
    let mut s = String::new();
    let width = ChangeKind::ALL
        .iter()
        .map(|k| k.name().len())
        .max()
        .unwrap_or(0);
    s.push_str(&format!(
        "{:<20}  {:<width$}  {:<16}  {:<16}  url\n",
        "at", "kind", "old_hash", "new_hash"
    ));
    for r in rows {
        s.push_str(&format!(
            "{:<20}  {:<width$}  {:<16}  {:<16}  {}\n",
            at(r.at_ms),
            r.kind.name(),
            hash(r.old_hash),
            hash(r.new_hash),
            r.url
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_times_and_durations_ago() {
        let now = 1_700_000_000_000;
        assert_eq!(parse_since("1970-01-02", now), Some(86_400_000));
        assert_eq!(
            parse_since("1970-01-01T01:00:00+01:00", now),
            Some(0),
            "offsets count"
        );
        assert_eq!(parse_since("2h", now), Some(now - 7_200_000));
        assert_eq!(parse_since("yesterday-ish", now), None);
    }

    #[test]
    fn text_columns_line_up() {
        let rec = |kind, url: &str| ChangeRecord {
            url: url.into(),
            page_id: 1,
            kind,
            at_ms: 0,
            old_hash: Some(0xab),
            new_hash: None,
        };
        let out = text(&[
            rec(ChangeKind::Gone, "http://a/x"),
            rec(ChangeKind::ContentChanged, "http://a/y"),
        ]);
        let cols: Vec<usize> = out.lines().map(|l| l.find("http").unwrap_or(0)).collect();
        assert_eq!(cols[1], cols[2], "{out}");
        assert!(out.contains("00000000000000ab"), "{out}");
    }
}
