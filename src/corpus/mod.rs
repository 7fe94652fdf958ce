//! The corpus a crawl leaves: cleaned pages read from the store as records with metadata,
//! deduplicated, written as JSON Lines, Parquet or text files — what `thresher export` runs
//! (`cmd::export` only parses flags, shows progress and prints the summary).
//!
//! Owns: the export's columns (`record`), what a page states about itself (`meta`, over
//! `dom::meta`), its language (`lang`), its template ratio (`ratio`), deduplication (`dedup`,
//! over `template::minhash` and `template::lsh`), the writers (`write`) and the pass that ties
//! them together (`export`). Imports `crawl` (page ids and URL display only), `dom`, `output`,
//! `pool`, `store` and `template`; nothing above it (docs/design.md, "Layers").

pub mod dedup;
pub mod export;
pub mod lang;
pub mod meta;
pub mod ratio;
pub mod record;
pub mod write;

use std::path::PathBuf;

pub use dedup::Mode as Dedup;
pub use export::{export, Options, Summary};
pub use record::{Field, Record};
pub use write::{Format, Sink};

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("unknown format {0:?} (expected jsonl, parquet, text or markdown)")]
    Format(String),
    #[error("unknown --dedup {0:?} (expected none, exact, near or mark)")]
    Dedup(String),
    #[error("unknown field {0:?} in --fields (known: {known})", known = known_fields())]
    UnknownField(String),
    #[error("field {0:?} is named twice in --fields")]
    RepeatedField(String),
    #[error("--fields names no field")]
    NoFields,
    #[error("--format text and markdown write one file per page: --fields needs jsonl or parquet")]
    TextHasNoFields,
    #[error("--dedup mark adds a dup_of field: it needs --format jsonl or parquet")]
    TextCannotMark,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Parquet {
        path: PathBuf,
        source: parquet::errors::ParquetError,
    },
}

fn known_fields() -> String {
    Field::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}
