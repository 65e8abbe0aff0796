//! Rows into record batches of the export schema: what the Arrow and Parquet exports share.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, Schema, SchemaRef};
use dual_core::{Column, ColumnType, Row};

use super::column::{ColumnBuilder, Misfit};
use super::{ArrowExportError, BATCH_BYTES, BATCH_ROWS, TYPE_METADATA_KEY};

/// The schema of an export and the batch being built: one nullable field per column, values
/// checked against their column before any is appended.
pub(crate) struct Batches {
    schema: SchemaRef,
    /// The name and builder of every field, in schema order.
    columns: Vec<(String, ColumnType, ColumnBuilder)>,
    /// Rows in the batch being built.
    buffered: usize,
    /// Rows seen, the position a mismatch names.
    rows: u64,
}

impl Batches {
    /// Batches of rows of `columns`.
    pub(crate) fn new(columns: &[Column]) -> Self {
        let fields: Vec<Field> = columns
            .iter()
            .map(|column| {
                let data_type = ColumnBuilder::data_type(column.column_type);
                let metadata = HashMap::from([(
                    TYPE_METADATA_KEY.to_owned(),
                    column.column_type.as_str().to_owned(),
                )]);
                Field::new(column.name.as_str(), data_type, true).with_metadata(metadata)
            })
            .collect();
        Self {
            schema: Arc::new(Schema::new(fields)),
            columns: columns
                .iter()
                .map(|c| (c.name.clone(), c.column_type, ColumnBuilder::new(c.column_type)))
                .collect(),
            buffered: 0,
            rows: 0,
        }
    }

    /// The schema every batch has.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows in the batch being built.
    pub(crate) fn buffered(&self) -> usize {
        self.buffered
    }

    /// The bytes of the values in the batch being built.
    #[cfg(test)]
    pub(crate) fn value_bytes(&self) -> usize {
        self.columns.iter().map(|(_, _, b)| b.bytes()).sum()
    }

    /// Appends `row`; the batch once it is full ([`BATCH_ROWS`] rows or about [`BATCH_BYTES`]).
    ///
    /// # Errors
    /// [`ArrowExportError::Mismatch`] when a value does not fit its column (nothing of the row is
    /// appended then); [`ArrowExportError::Arrow`] when the batch cannot be built.
    pub(crate) fn push(&mut self, row: &Row) -> Result<Option<RecordBatch>, ArrowExportError> {
        // Every value is checked before any is appended, so the columns stay the same length.
        for (name, column_type, builder) in &self.columns {
            builder
                .check(row.get(name))
                .map_err(|misfit| mismatch(self.rows, name, *column_type, misfit))?;
        }
        for (name, column_type, builder) in &mut self.columns {
            builder
                .append(row.get(name))
                .map_err(|misfit| mismatch(self.rows, name, *column_type, misfit))?;
        }
        self.buffered += 1;
        self.rows += 1;
        let bytes: usize = self.columns.iter().map(|(_, _, b)| b.bytes()).sum();
        if self.buffered >= BATCH_ROWS || bytes >= BATCH_BYTES {
            return self.take().map(Some);
        }
        Ok(None)
    }

    /// The rows appended since the last batch, as one batch (which may have no rows).
    pub(crate) fn take(&mut self) -> Result<RecordBatch, ArrowExportError> {
        let arrays = self.columns.iter_mut().map(|(_, _, b)| b.finish()).collect();
        // The row count makes a batch of a schema without fields say how many rows it has.
        let options = RecordBatchOptions::new().with_row_count(Some(self.buffered));
        let batch = RecordBatch::try_new_with_options(Arc::clone(&self.schema), arrays, &options)?;
        self.buffered = 0;
        Ok(batch)
    }
}

impl std::fmt::Debug for Batches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("fields", &self.schema.fields().len())
            .field("buffered", &self.buffered)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

fn mismatch(row: u64, column: &str, column_type: ColumnType, misfit: Misfit) -> ArrowExportError {
    ArrowExportError::Mismatch {
        row,
        column: column.to_owned(),
        column_type,
        misfit,
    }
}
