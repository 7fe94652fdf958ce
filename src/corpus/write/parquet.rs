//! Parquet, with the `parquet` crate's column writers (no Arrow: the `arrow` feature would add
//! seven arrow-rs crates to the build for a flat schema of strings and numbers). One schema per
//! file — the chosen fields, in the chosen order (`Field::kind` gives each column's type) —
//! and row groups of at most `ROW_GROUP_ROWS` rows or `ROW_GROUP_BYTES` of buffered values,
//! whichever comes first, so memory stays bounded whatever the export's size. Zstandard
//! (level 3) pages; readable by pyarrow, DuckDB, polars and HF datasets.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{io_error, Sink};
use crate::corpus::record::{Field, Kind, Record, Value};
use crate::corpus::CorpusError;
use crate::output::AtomicFile;

/// Rows per row group at most.
pub const ROW_GROUP_ROWS: usize = 10_000;
/// Buffered value bytes per row group at most (texts dominate).
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// The Parquet schema of an export of `fields`.
pub fn schema(fields: &[Field]) -> Result<Type, ParquetError> {
    let columns = fields
        .iter()
        .map(|&f| {
            let (physical, logical, repetition) = match f.kind() {
                Kind::Str => (
                    Physical::BYTE_ARRAY,
                    Some(LogicalType::String),
                    Repetition::REQUIRED,
                ),
                Kind::OptStr => (
                    Physical::BYTE_ARRAY,
                    Some(LogicalType::String),
                    Repetition::OPTIONAL,
                ),
                Kind::U32 => (
                    Physical::INT32,
                    Some(LogicalType::integer(32, false)),
                    Repetition::REQUIRED,
                ),
                Kind::OptF64 => (Physical::DOUBLE, None, Repetition::OPTIONAL),
            };
            Type::primitive_type_builder(f.name(), physical)
                .with_repetition(repetition)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Type::group_type_builder("thresher_page")
        .with_fields(columns)
        .build()
}

/// One column's values for the row group being filled.
enum Column {
    Bytes {
        values: Vec<ByteArray>,
        defs: Vec<i16>,
    },
    Int {
        values: Vec<i32>,
    },
    Double {
        values: Vec<f64>,
        defs: Vec<i16>,
    },
}

pub struct ParquetSink {
    fields: Vec<Field>,
    columns: Vec<Column>,
    rows: usize,
    bytes: usize,
    writer: SerializedFileWriter<AtomicFile>,
    path: PathBuf,
}

impl ParquetSink {
    pub fn create(path: &Path, fields: &[Field]) -> Result<ParquetSink, CorpusError> {
        let err = |e| parquet_error(path, e);
        let file = AtomicFile::create(path).map_err(io_error(path))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).map_err(err)?))
            .set_created_by(format!("thresher {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = SerializedFileWriter::new(
            file,
            Arc::new(schema(fields).map_err(err)?),
            Arc::new(props),
        )
        .map_err(err)?;
        let columns = fields.iter().map(|&f| empty(f)).collect();
        Ok(ParquetSink {
            fields: fields.to_vec(),
            columns,
            rows: 0,
            bytes: 0,
            writer,
            path: path.to_path_buf(),
        })
    }

    /// Write the buffered rows as one row group.
    fn flush_group(&mut self) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group()?;
        for column in &mut self.columns {
            let mut out = group
                .next_column()?
                .ok_or_else(|| ParquetError::General("fewer columns than fields".into()))?;
            match column {
                Column::Bytes { values, defs } => {
                    let defs = (!defs.is_empty()).then_some(&defs[..]);
                    out.typed::<ByteArrayType>()
                        .write_batch(values, defs, None)?;
                }
                Column::Int { values } => {
                    out.typed::<Int32Type>().write_batch(values, None, None)?;
                }
                Column::Double { values, defs } => {
                    out.typed::<DoubleType>()
                        .write_batch(values, Some(defs), None)?;
                }
            }
            out.close()?;
        }
        group.close()?;
        self.columns = self.fields.iter().map(|&f| empty(f)).collect();
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }
}

fn empty(f: Field) -> Column {
    match f.kind() {
        Kind::Str | Kind::OptStr => Column::Bytes {
            values: Vec::new(),
            defs: Vec::new(),
        },
        Kind::U32 => Column::Int { values: Vec::new() },
        Kind::OptF64 => Column::Double {
            values: Vec::new(),
            defs: Vec::new(),
        },
    }
}

fn parquet_error(path: &Path, source: ParquetError) -> CorpusError {
    CorpusError::Parquet {
        path: path.to_path_buf(),
        source,
    }
}

impl Sink for ParquetSink {
    fn write(&mut self, record: &Record) -> Result<(), CorpusError> {
        for (&f, column) in self.fields.iter().zip(&mut self.columns) {
            let optional = matches!(f.kind(), Kind::OptStr | Kind::OptF64);
            match (column, record.value(f)) {
                (Column::Bytes { values, defs }, Value::Str(s)) => {
                    self.bytes += s.len();
                    values.push(ByteArray::from(s.as_bytes().to_vec()));
                    if optional {
                        defs.push(1);
                    }
                }
                (Column::Bytes { defs, .. }, Value::Null)
                | (Column::Double { defs, .. }, Value::Null) => defs.push(0),
                (Column::Int { values }, Value::U32(n)) => {
                    // The column is annotated unsigned: readers take the bits back as a u32.
                    values.push(n as i32);
                }
                (Column::Double { values, defs }, Value::F64(x)) => {
                    values.push(x);
                    defs.push(1);
                }
                (_, v) => unreachable!("invariant: {f:?} has kind {:?}, got {v:?}", f.kind()),
            }
        }
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS || self.bytes >= ROW_GROUP_BYTES {
            let path = self.path.clone();
            self.flush_group().map_err(|e| parquet_error(&path, e))?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), CorpusError> {
        let path = self.path.clone();
        let err = |e| parquet_error(&path, e);
        self.flush_group().map_err(err)?;
        let file = self.writer.into_inner().map_err(err)?;
        file.commit().map_err(io_error(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field as PqField;

    #[test]
    fn rows_read_back_with_nulls_and_row_groups_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.parquet");
        let fields = [
            Field::Id,
            Field::Cluster,
            Field::Author,
            Field::TemplateRatio,
            Field::Text,
        ];
        let mut sink = Box::new(ParquetSink::create(&path, &fields).unwrap());
        let n = ROW_GROUP_ROWS + 5;
        for i in 0..n {
            sink.write(&Record {
                id: format!("{i:016x}"),
                cluster: u32::MAX - i as u32,
                author: (i % 2 == 0).then(|| format!("A{i}")),
                template_ratio: (i % 3 == 0).then_some(0.5),
                text: format!("text {i}"),
                ..Record::default()
            })
            .unwrap();
        }
        sink.finish().unwrap();

        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 2);
        assert_eq!(reader.metadata().file_metadata().num_rows(), n as i64);
        let row = reader.get_row_iter(None).unwrap().nth(1).unwrap().unwrap();
        let cols: Vec<(String, PqField)> = row
            .get_column_iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("id".into(), PqField::Str("0000000000000001".into())),
                ("cluster".into(), PqField::UInt(u32::MAX - 1)),
                ("author".into(), PqField::Null),
                ("template_ratio".into(), PqField::Null),
                ("text".into(), PqField::Str("text 1".into())),
            ]
        );
    }
}
