//! The Parquet export (feature `parquet`, `application/vnd.apache.parquet`): the Arrow export's
//! record batches ([`Batches`]: the same schema, type mapping and mismatch errors) written by
//! arrow-rs's `ArrowWriter`, zstd-compressed, one row group at a time.
//!
//! The writer's sink is a `Vec` the export drains after every write: the bytes of a row group reach
//! it when the row group is complete, so an export holds one row group (and one record batch) in
//! memory whatever its row count. The footer follows the last row group.

use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::{Compression, ZstdLevel};
use ::parquet::file::properties::WriterProperties;
use arrow_array::RecordBatch;
use dual_core::{Column, Row};

use crate::arrow::{ArrowExportError, Batches, append};

/// Rows per row group unless [`DualHttpBuilder::parquet_row_group_rows`](crate::DualHttpBuilder::parquet_row_group_rows)
/// says otherwise: 65,536.
pub const DEFAULT_PARQUET_ROW_GROUP_ROWS: usize = 64 * 1024;

/// A row group is also closed once its encoded size reaches about this many bytes (32 MiB), which
/// bounds the memory of an export of wide rows.
pub(crate) const ROW_GROUP_BYTES: usize = 32 * 1024 * 1024;

/// Encodes an export as a Parquet file: [`open`](Self::open) writes the magic bytes,
/// [`row`](Self::row) buffers a row (a row group's bytes come out once it is full),
/// [`close`](Self::close) writes the last row group and the footer.
///
/// After an error the encoder is spent: the export is aborted, not continued.
pub(crate) struct ParquetEncoder {
    batches: Batches,
    row_group_rows: usize,
    /// Created by [`open`](Self::open).
    writer: Option<ArrowWriter<Vec<u8>>>,
}

impl ParquetEncoder {
    /// An encoder for rows of `columns`, with row groups of `row_group_rows` rows (at least 1).
    pub(crate) fn new(columns: &[Column], row_group_rows: usize) -> Self {
        Self {
            batches: Batches::new(columns),
            row_group_rows: row_group_rows.max(1),
            writer: None,
        }
    }

    /// Writes the file's leading magic bytes.
    pub(crate) fn open(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(self.row_group_rows))
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
            .build();
        let writer = ArrowWriter::try_new(
            Vec::new(),
            std::sync::Arc::clone(self.batches.schema()),
            Some(properties),
        )?;
        drain(self.writer.insert(writer), out)
    }

    /// Buffers `row`; the bytes of a row group go to `out` once one is complete.
    ///
    /// # Errors
    /// [`ArrowExportError::Mismatch`] when a value does not fit its column (nothing of the row is
    /// buffered then); [`ArrowExportError::Parquet`] when the writer fails.
    pub(crate) fn row(&mut self, row: &Row, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        match self.batches.push(row)? {
            Some(batch) => self.write(&batch, out),
            None => Ok(()),
        }
    }

    /// Writes the rows still buffered, the last row group and the footer.
    pub(crate) fn close(&mut self, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        if self.batches.buffered() > 0 {
            let batch = self.batches.take()?;
            self.write(&batch, out)?;
        }
        let writer = self.writer()?;
        writer.finish()?;
        drain(writer, out)
    }

    /// Hands `batch` to the writer, which closes a row group when it is full.
    fn write(&mut self, batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
        let writer = self.writer()?;
        writer.write(batch)?;
        drain(writer, out)
    }

    fn writer(&mut self) -> Result<&mut ArrowWriter<Vec<u8>>, ArrowExportError> {
        self.writer.as_mut().ok_or_else(|| {
            ::parquet::errors::ParquetError::General("the Parquet export was not opened".to_owned()).into()
        })
    }
}

impl std::fmt::Debug for ParquetEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetEncoder")
            .field("batches", &self.batches)
            .field("row_group_rows", &self.row_group_rows)
            .field("opened", &self.writer.is_some())
            .finish_non_exhaustive()
    }
}

/// Moves what the writer has written so far into `out`. The writer counts the bytes it wrote
/// itself (the footer's offsets), so emptying its sink does not disturb it.
fn drain(writer: &mut ArrowWriter<Vec<u8>>, out: &mut Vec<u8>) -> Result<(), ArrowExportError> {
    writer
        .sync()
        .map_err(|error| ::parquet::errors::ParquetError::External(Box::new(error)))?;
    append(writer.inner_mut(), out);
    Ok(())
}

#[cfg(test)]
mod tests;
