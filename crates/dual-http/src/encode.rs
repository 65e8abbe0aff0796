//! Row encoders of the export formats: a JSON array, NDJSON, RFC 4180 CSV and, with feature
//! `arrow`, the Arrow IPC stream (its own module, `arrow.rs`), with feature `parquet` a Parquet
//! file (`parquet.rs`).

use dual_core::{Column, Row};

use crate::ExportFormat;
#[cfg(feature = "arrow")]
use crate::arrow::{ArrowEncoder, ArrowExportError};
use crate::csv::{self, CsvFormulas};
#[cfg(feature = "parquet")]
use crate::parquet::ParquetEncoder;

/// Why an export's bytes could not be written; the export body aborts with it (and logs it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum EncodeError {
    /// A row could not be serialised as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A value does not fit its Arrow (or Parquet) column, or the writer failed.
    #[cfg(feature = "arrow")]
    #[error(transparent)]
    Arrow(#[from] ArrowExportError),
}

/// What an encoder needs besides the format and the columns: the handler's options for exports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodeOptions {
    /// Whether CSV cells that read as formulas are neutralised.
    pub(crate) formulas: CsvFormulas,
    /// Rows per Parquet row group.
    #[cfg(feature = "parquet")]
    pub(crate) row_group_rows: usize,
}

impl From<CsvFormulas> for EncodeOptions {
    fn from(formulas: CsvFormulas) -> Self {
        Self {
            formulas,
            #[cfg(feature = "parquet")]
            row_group_rows: crate::parquet::DEFAULT_PARQUET_ROW_GROUP_ROWS,
        }
    }
}

/// The encoder of a binary format built from record batches (boxed: they are large).
#[cfg(feature = "arrow")]
#[derive(Debug)]
enum Columnar {
    Arrow(Box<ArrowEncoder>),
    #[cfg(feature = "parquet")]
    Parquet(Box<ParquetEncoder>),
}

#[cfg(feature = "arrow")]
impl Columnar {
    fn new(format: ExportFormat, columns: &[Column], options: EncodeOptions) -> Option<Self> {
        match format {
            ExportFormat::Arrow => Some(Self::Arrow(Box::new(ArrowEncoder::new(columns)))),
            #[cfg(feature = "parquet")]
            ExportFormat::Parquet => Some(Self::Parquet(Box::new(ParquetEncoder::new(
                columns,
                options.row_group_rows,
            )))),
            _ => {
                let _ = options;
                None
            }
        }
    }

    fn open(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        match self {
            Self::Arrow(arrow) => arrow.open(out),
            #[cfg(feature = "parquet")]
            Self::Parquet(parquet) => parquet.open(out),
        }
    }

    fn row(&mut self, row: &Row, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        match self {
            Self::Arrow(arrow) => arrow.row(row, out),
            #[cfg(feature = "parquet")]
            Self::Parquet(parquet) => parquet.row(row, out),
        }
    }

    fn close(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        match self {
            Self::Arrow(arrow) => arrow.close(out),
            #[cfg(feature = "parquet")]
            Self::Parquet(parquet) => parquet.close(out),
        }
    }
}

/// Writes an export's bytes: [`Encoder::open`] once, [`Encoder::row`] per row, [`Encoder::close`] once.
#[derive(Debug)]
pub(crate) struct Encoder {
    format: ExportFormat,
    /// The CSV header and the order of CSV fields; unused by the JSON formats.
    columns: Vec<Column>,
    /// Whether CSV cells that read as formulas are neutralised.
    formulas: CsvFormulas,
    rows: u64,
    /// The batch-building encoder: `Some` exactly when `format` is Arrow or Parquet.
    #[cfg(feature = "arrow")]
    columnar: Option<Columnar>,
}

impl Encoder {
    pub(crate) fn new(format: ExportFormat, columns: Vec<Column>, options: impl Into<EncodeOptions>) -> Self {
        let options = options.into();
        Self {
            #[cfg(feature = "arrow")]
            columnar: Columnar::new(format, &columns, options),
            format,
            columns,
            formulas: options.formulas,
            rows: 0,
        }
    }

    /// Rows encoded so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes what comes before the first row (`[`, the CSV header, the Arrow schema message, the
    /// Parquet magic bytes).
    pub(crate) fn open(&mut self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self.format {
            ExportFormat::Json => out.push(b'['),
            ExportFormat::Ndjson => {}
            ExportFormat::Csv => {
                if !self.columns.is_empty() {
                    for (i, column) in self.columns.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        csv::text(&column.name, self.formulas, out);
                    }
                    out.extend_from_slice(b"\r\n");
                }
            }
            #[cfg(feature = "arrow")]
            ExportFormat::Arrow => self.columnar_open(out)?,
            #[cfg(feature = "parquet")]
            ExportFormat::Parquet => self.columnar_open(out)?,
        }
        Ok(())
    }

    /// Appends one row (Arrow, Parquet: buffers it, writing a record batch or row group when one is
    /// full). The JSON formats fail only if a row cannot be serialised, which a JSON map cannot;
    /// Arrow and Parquet fail on a value that does not fit its column.
    pub(crate) fn row(&mut self, row: &Row, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self.format {
            ExportFormat::Json => {
                if self.rows > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, row)?;
            }
            ExportFormat::Ndjson => {
                serde_json::to_writer(&mut *out, row)?;
                out.push(b'\n');
            }
            ExportFormat::Csv => {
                if !self.columns.is_empty() {
                    for (i, column) in self.columns.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        csv::value(row.get(&column.name), self.formulas, out)?;
                    }
                    out.extend_from_slice(b"\r\n");
                }
            }
            #[cfg(feature = "arrow")]
            ExportFormat::Arrow => self.columnar_row(row, out)?,
            #[cfg(feature = "parquet")]
            ExportFormat::Parquet => self.columnar_row(row, out)?,
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends one row given as the compact JSON of a row object (a snapshot's stored form): the
    /// JSON formats copy it; CSV, Arrow and Parquet decode it first.
    pub(crate) fn json_row(&mut self, row: &[u8], out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self.format {
            ExportFormat::Json => {
                if self.rows > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(row);
            }
            ExportFormat::Ndjson => {
                out.extend_from_slice(row);
                out.push(b'\n');
            }
            _ => {
                let decoded: dual_core::Row = serde_json::from_slice(row)?;
                return self.row(&decoded, out);
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Writes what comes after the last row (`]`; Arrow: the last batch and the end-of-stream
    /// marker; Parquet: the last row group and the footer).
    pub(crate) fn close(&mut self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self.format {
            ExportFormat::Json => out.push(b']'),
            ExportFormat::Ndjson | ExportFormat::Csv => {}
            #[cfg(feature = "arrow")]
            ExportFormat::Arrow => self.columnar_close(out)?,
            #[cfg(feature = "parquet")]
            ExportFormat::Parquet => self.columnar_close(out)?,
        }
        Ok(())
    }

    #[cfg(feature = "arrow")]
    fn columnar_open(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        self.columnar.as_mut().map_or(Ok(()), |c| c.open(out))
    }

    #[cfg(feature = "arrow")]
    fn columnar_row(&mut self, row: &Row, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        self.columnar.as_mut().map_or(Ok(()), |c| c.row(row, out))
    }

    #[cfg(feature = "arrow")]
    fn columnar_close(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        self.columnar.as_mut().map_or(Ok(()), |c| c.close(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dual_core::ColumnType;
    use serde_json::{Value, json};

    fn encoder(format: ExportFormat) -> Encoder {
        let columns = vec![
            Column::new("id", ColumnType::Integer),
            Column::new("name", ColumnType::String),
            Column::new("tags", ColumnType::Json),
        ];
        Encoder::new(format, columns, CsvFormulas::Verbatim)
    }

    fn encode(format: ExportFormat, rows: &[Value]) -> String {
        let mut encoder = encoder(format);
        let mut out = Vec::new();
        assert!(encoder.open(&mut out).is_ok());
        for row in rows {
            let row = row.as_object().cloned().unwrap_or_default();
            assert!(encoder.row(&row, &mut out).is_ok());
        }
        assert!(encoder.close(&mut out).is_ok());
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn json_array_and_ndjson() {
        let rows = [json!({"id": 1, "name": "a"}), json!({"id": 2, "name": "b"})];
        assert_eq!(encode(ExportFormat::Json, &[]), "[]");
        assert_eq!(
            encode(ExportFormat::Json, &rows),
            r#"[{"id":1,"name":"a"},{"id":2,"name":"b"}]"#
        );
        assert_eq!(
            encode(ExportFormat::Ndjson, &rows),
            "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n"
        );
        assert_eq!(encode(ExportFormat::Ndjson, &[]), "");
    }

    #[test]
    fn stored_json_rows_encode_like_decoded_rows() {
        let rows = [
            json!({"id": 1, "name": "a,\"b\"", "tags": [1, {"k": null}]}),
            json!({"id": 2, "name": "Zoë\nline"}),
        ];
        for format in [ExportFormat::Json, ExportFormat::Ndjson, ExportFormat::Csv] {
            let mut encoder = encoder(format);
            let mut out = Vec::new();
            assert!(encoder.open(&mut out).is_ok());
            for row in &rows {
                let stored = serde_json::to_vec(row).unwrap_or_default();
                assert!(encoder.json_row(&stored, &mut out).is_ok());
            }
            assert!(encoder.close(&mut out).is_ok());
            assert_eq!(
                String::from_utf8(out).ok(),
                Some(encode(format, &rows)),
                "{format:?}"
            );
        }
        let mut csv = Encoder::new(
            ExportFormat::Csv,
            vec![Column::new("id", ColumnType::Integer)],
            CsvFormulas::default(),
        );
        assert!(csv.json_row(b"not json", &mut Vec::new()).is_err());
    }

    #[test]
    fn csv_quotes_per_rfc_4180() {
        let rows = [
            json!({"id": 1, "name": "plain", "tags": ["a", "b"]}),
            json!({"id": 2, "name": "say \"hi\", twice", "tags": null}),
            json!({"id": 3, "name": "line\r\nbreak", "tags": {"k": "v,w"}}),
            json!({"id": 4, "name": ""}),
            json!({"id": 5.5, "name": true, "extra": 1}),
        ];
        assert_eq!(
            encode(ExportFormat::Csv, &rows),
            "id,name,tags\r\n\
             1,plain,\"[\"\"a\"\",\"\"b\"\"]\"\r\n\
             2,\"say \"\"hi\"\", twice\",\r\n\
             3,\"line\r\nbreak\",\"{\"\"k\"\":\"\"v,w\"\"}\"\r\n\
             4,\"\",\r\n\
             5.5,true,\r\n"
        );
        assert_eq!(encode(ExportFormat::Csv, &[]), "id,name,tags\r\n");
    }

    #[test]
    fn csv_neutralises_formulas_in_values_and_headers_by_default() {
        let columns = vec![
            Column::new("=cmd", ColumnType::String),
            Column::new("n", ColumnType::Integer),
        ];
        let mut encoder = Encoder::new(ExportFormat::Csv, columns, CsvFormulas::default());
        let mut out = Vec::new();
        assert!(encoder.open(&mut out).is_ok());
        let row = json!({"=cmd": "@SUM(1+1)*cmd|' /C calc'!A0", "n": -5});
        let row = row.as_object().cloned().unwrap_or_default();
        assert!(encoder.row(&row, &mut out).is_ok());
        assert_eq!(
            String::from_utf8(out).ok().as_deref(),
            Some("'=cmd,n\r\n'@SUM(1+1)*cmd|' /C calc'!A0,-5\r\n")
        );
    }
}
