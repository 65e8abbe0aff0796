//! [`Stored`]: rows built once, pages cloned out of them.

use std::sync::Arc;

use async_trait::async_trait;
use dual_core::Row;
use dual_server::{
    DEFAULT_STREAM_BATCH, ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow,
};
use serde_json::Value;

/// An in-memory table: rows built once, every page cloned out of them, whatever the params (sort
/// ignored). The cheapest "query" there is, for benchmarks that time what is around the executor: its
/// stream is the table in batches of [`DEFAULT_STREAM_BATCH`] rows, with the consistent count, and it pages live.
#[derive(Debug, Clone)]
pub struct Stored {
    rows: Vec<Row>,
}

impl Stored {
    /// A table of `rows`.
    #[must_use]
    pub fn new(rows: Vec<Row>) -> Self {
        Self { rows }
    }
}

impl QueryExecutor for Stored {
    fn stream(self: Arc<Self>, _: Value, start: QueryStart) -> RowStream {
        let len = self.rows.len();
        start.started_with_count(len as u64);
        let batch = usize::try_from(DEFAULT_STREAM_BATCH).unwrap_or(usize::MAX);
        let batches = (0..len)
            .step_by(batch)
            .map(move |first| Ok(self.rows[first..len.min(first + batch)].to_vec().into()));
        Box::pin(futures_util::stream::iter(batches))
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

#[async_trait]
impl LiveQuery for Stored {
    async fn count(&self, _: &Value) -> Result<u64, ExecutorError> {
        Ok(self.rows.len() as u64)
    }

    async fn fetch(&self, _: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let start = usize::try_from(window.offset)
            .unwrap_or(usize::MAX)
            .min(self.rows.len());
        let end = usize::try_from(window.end())
            .unwrap_or(usize::MAX)
            .min(self.rows.len());
        Ok(self.rows[start..end].to_vec())
    }
}
