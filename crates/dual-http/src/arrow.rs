//! The Arrow IPC stream export (feature `arrow`, `application/vnd.apache.arrow.stream`): rows are
//! buffered into record batches of one schema derived from the resource's columns. The Parquet
//! export (feature `parquet`) writes the same batches ([`Batches`]), so both have this mapping.
//!
//! | column type | Arrow type | holds |
//! |---|---|---|
//! | `integer` | `Int64` | integers in range; a number with an integral value that is exactly an `i64` (`3.0`) |
//! | `number` | `Float64` | any number `f64` holds exactly (integers up to 2^53 in magnitude, any float) |
//! | `boolean` | `Boolean` | `true`, `false` |
//! | `string` | `Utf8` | strings as they are; numbers and booleans as their JSON text |
//! | `date` | `Date32` | `YYYY-MM-DD` strings naming a calendar day |
//! | `datetime` | `Utf8` | strings as they are (offsets and sub-microsecond digits kept) |
//! | `json` | `Utf8` | the JSON text of any value |
//!
//! Every field is nullable: a missing key or a JSON `null` is a null. Keys that are not columns are
//! left out. A value that does not fit its column is never turned into a null or truncated: it is an
//! [`ArrowExportError::Mismatch`] naming the row and the column, and the export aborts. A resource
//! with no columns exports a schema with no fields and batches that carry only their row count.

mod batches;
mod column;

use arrow_ipc::writer::StreamWriter;
use arrow_schema::ArrowError;
use dual_core::{Column, ColumnType, Row};

pub(crate) use self::batches::Batches;

/// A record batch is written once it holds this many rows…
pub(crate) const BATCH_ROWS: usize = 8_192;
/// …or once its values take about this many bytes, whichever comes first, so an export holds one
/// batch in memory whatever its row count.
pub(crate) const BATCH_BYTES: usize = 1024 * 1024;

/// The key of the field metadata that carries the column's type (`"datetime"`, `"json"`, …), so a
/// reader can tell a `Utf8` of datetimes or JSON text from one of plain strings.
pub(crate) const TYPE_METADATA_KEY: &str = "dual_response.type";

/// Why an Arrow (or Parquet) export could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ArrowExportError {
    /// A value does not fit its column's type (a string in an `integer` column, `1.5` in an
    /// `integer` column, …).
    #[error(
        "row {row} of the export (counting from 0), column `{column}` ({column_type}): {misfit} does not fit; an Arrow or Parquet export never turns a value into null or truncates it"
    )]
    Mismatch {
        /// The row's position in the export.
        row: u64,
        /// The column's name.
        column: String,
        /// The column's type.
        column_type: ColumnType,
        /// What the value is.
        misfit: column::Misfit,
    },
    /// Arrow could not build or write a batch; Arrow's error is the source.
    #[error("the Arrow IPC writer failed")]
    Arrow(#[from] ArrowError),
    /// The Parquet writer failed; its error is the source.
    #[cfg(feature = "parquet")]
    #[error("the Parquet writer failed")]
    Parquet(#[from] ::parquet::errors::ParquetError),
}

/// Encodes an export as an Arrow IPC stream: [`open`](Self::open) writes the schema message,
/// [`row`](Self::row) buffers a row and writes a record batch every [`BATCH_ROWS`] rows (or
/// [`BATCH_BYTES`]), [`close`](Self::close) writes the last batch and the end-of-stream marker.
///
/// After an error the encoder is spent: the export is aborted, not continued.
pub(crate) struct ArrowEncoder {
    batches: Batches,
    /// Created by the first write, which is the schema message; drained into `out` after each write.
    writer: Option<StreamWriter<Vec<u8>>>,
}

impl ArrowEncoder {
    /// An encoder for rows of `columns`, one nullable field each.
    pub(crate) fn new(columns: &[Column]) -> Self {
        Self {
            batches: Batches::new(columns),
            writer: None,
        }
    }

    /// Writes the schema message.
    pub(crate) fn open(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        drain(self.writer()?, out);
        Ok(())
    }

    /// Buffers `row`, writing a record batch when the batch is full.
    ///
    /// # Errors
    /// [`ArrowExportError::Mismatch`] when a value does not fit its column (nothing of the row is
    /// buffered then); [`ArrowExportError::Arrow`] when the batch cannot be written.
    pub(crate) fn row(&mut self, row: &Row, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        if let Some(batch) = self.batches.push(row)? {
            let writer = self.writer()?;
            writer.write(&batch)?;
            drain(writer, out);
        }
        Ok(())
    }

    /// Writes the rows still buffered as a last batch, then the end-of-stream marker.
    pub(crate) fn close(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        let last = (self.batches.buffered() > 0)
            .then(|| self.batches.take())
            .transpose()?;
        let writer = self.writer()?;
        if let Some(batch) = last {
            writer.write(&batch)?;
        }
        writer.finish()?;
        drain(writer, out);
        Ok(())
    }

    /// The stream writer, created (writing the schema message) on first use.
    fn writer(&mut self) -> Result<&mut StreamWriter<Vec<u8>>, ArrowError> {
        let writer = match self.writer.take() {
            Some(writer) => writer,
            None => StreamWriter::try_new(Vec::new(), self.batches.schema())?,
        };
        Ok(self.writer.insert(writer))
    }
}

impl std::fmt::Debug for ArrowEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrowEncoder")
            .field("batches", &self.batches)
            .field("opened", &self.writer.is_some())
            .finish_non_exhaustive()
    }
}

/// Moves what the writer wrote into `out` (without copying when `out` is empty).
fn drain(writer: &mut StreamWriter<Vec<u8>>, out: &mut Vec<u8>) {
    append(writer.get_mut(), out);
}

/// Moves the bytes of `written` to the end of `out` (without copying when `out` is empty).
pub(crate) fn append(written: &mut Vec<u8>, out: &mut Vec<u8>) {
    if out.is_empty() {
        std::mem::swap(written, out);
    } else {
        out.append(written);
    }
}

#[cfg(test)]
mod tests;
