//! [`RowBatch`]: the unit every row stream carries — an executor's batches, a snapshot's export
//! batches — either decoded rows or rows already encoded as compact JSON objects.

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use dual_core::Row;
use dual_spool::RowRun;
use futures_core::Stream;

use crate::ExecutorError;

/// A stream of row batches: what [`QueryExecutor::stream`](crate::QueryExecutor::stream) and
/// [`QueryExecutor::stream_range`](crate::QueryExecutor::stream_range) return, and what
/// [`DualResponseServer::export_range`](crate::DualResponseServer::export_range) yields.
pub type RowStream = Pin<Box<dyn Stream<Item = Result<RowBatch, ExecutorError>> + Send>>;

/// A batch of rows, in order.
///
/// An executor yields decoded rows ([`RowBatch::Rows`], or any `Vec<Row>` through `into()`), or
/// rows it wrote as JSON itself with a [`JsonRowWriter`](crate::JsonRowWriter) — no map per row,
/// which is what makes a snapshot of millions of rows cheap. A snapshot's exports come as stored
/// ([`RowBatch::Json`]), so JSON and NDJSON exports copy them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RowBatch {
    /// Decoded rows.
    Rows(Vec<Row>),
    /// Rows as compact JSON objects: write them as they are.
    Json(JsonRows),
}

impl From<Vec<Row>> for RowBatch {
    fn from(rows: Vec<Row>) -> Self {
        Self::Rows(rows)
    }
}

impl FromIterator<Row> for RowBatch {
    fn from_iter<I: IntoIterator<Item = Row>>(rows: I) -> Self {
        Self::Rows(rows.into_iter().collect())
    }
}

impl From<JsonRows> for RowBatch {
    fn from(rows: JsonRows) -> Self {
        Self::Json(rows)
    }
}

impl RowBatch {
    /// Rows in the batch.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Rows(rows) => rows.len(),
            Self::Json(rows) => rows.len(),
        }
    }

    /// Whether the batch has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the first `len` rows (all of them when there are fewer).
    pub fn truncate(&mut self, len: usize) {
        match self {
            Self::Rows(rows) => rows.truncate(len),
            Self::Json(rows) if rows.len() > len => {
                *rows = JsonRows::list(rows.iter().take(len).collect());
            }
            Self::Json(_) => {}
        }
    }

    /// The rows, decoded.
    ///
    /// # Errors
    ///
    /// A JSON row that is not a JSON object (a corrupt snapshot).
    pub fn into_rows(self) -> Result<Vec<Row>, ExecutorError> {
        match self {
            Self::Rows(rows) => Ok(rows),
            Self::Json(rows) => rows.iter().map(|row| decode_row(&row)).collect(),
        }
    }
}

/// One row's compact JSON, decoded.
pub(crate) fn decode_row(bytes: &[u8]) -> Result<Row, ExecutorError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ExecutorError::new(format!("a stored row cannot be read back as a JSON object: {e}")))
}

/// Consecutive rows, each the compact JSON of one row object (the bytes `serde_json::to_vec` writes
/// for the [`Row`]); cloning shares the bytes.
#[derive(Debug, Clone)]
pub struct JsonRows(JsonRowsInner);

#[derive(Debug, Clone)]
enum JsonRowsInner {
    /// A run of one segment (unsorted exports).
    Run(RowRun),
    /// Rows gathered from several segments (sorted exports).
    List(Vec<Bytes>),
    /// Rows an executor wrote one after another: row `i` ends at `ends[i]`.
    Packed { bytes: Bytes, ends: Arc<[usize]> },
}

impl JsonRows {
    pub(crate) fn run(run: RowRun) -> Self {
        Self(JsonRowsInner::Run(run))
    }

    pub(crate) fn list(rows: Vec<Bytes>) -> Self {
        Self(JsonRowsInner::List(rows))
    }

    /// Rows packed in `bytes`, row `i` ending at `ends[i]` (each checked by the writer).
    pub(crate) fn packed(bytes: Bytes, ends: Vec<usize>) -> Self {
        Self(JsonRowsInner::Packed {
            bytes,
            ends: ends.into(),
        })
    }

    /// Rows in the batch.
    #[must_use]
    pub fn len(&self) -> usize {
        match &self.0 {
            JsonRowsInner::Run(run) => run.len(),
            JsonRowsInner::List(rows) => rows.len(),
            JsonRowsInner::Packed { ends, .. } => ends.len(),
        }
    }

    /// Whether the batch has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`, `None` past the end.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<Bytes> {
        match &self.0 {
            JsonRowsInner::Run(run) => run.row(i),
            JsonRowsInner::List(rows) => rows.get(i).cloned(),
            JsonRowsInner::Packed { bytes, ends } => {
                let end = *ends.get(i)?;
                let start = i
                    .checked_sub(1)
                    .map_or(Some(0), |before| ends.get(before).copied())?;
                (start <= end && end <= bytes.len()).then(|| bytes.slice(start..end))
            }
        }
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl Iterator<Item = Bytes> + '_ {
        (0..self.len()).map_while(|i| self.get(i))
    }
}

/// `stream` with every batch decoded ([`RowBatch::Rows`]).
pub(crate) fn decoded(stream: RowStream) -> RowStream {
    use futures_util::StreamExt;
    Box::pin(stream.map(|batch| batch.and_then(RowBatch::into_rows).map(RowBatch::Rows)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_that_is_not_an_object_is_refused() {
        let batch = RowBatch::Json(JsonRows::list(vec![Bytes::from_static(b"nope")]));
        assert!(batch.into_rows().is_err());
    }

    #[test]
    fn truncating_keeps_the_first_rows_of_either_kind() {
        let packed = JsonRows::packed(
            Bytes::from_static(b"{\"a\":1}{\"a\":2}{\"a\":3}"),
            vec![7, 14, 21],
        );
        let mut batch = RowBatch::Json(packed);
        batch.truncate(2);
        let rows = batch.into_rows().unwrap_or_default();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].get("a"), Some(&serde_json::json!(2)));
        let mut rows = RowBatch::from(vec![Row::new(), Row::new()]);
        rows.truncate(5);
        assert_eq!(rows.len(), 2);
    }
}
