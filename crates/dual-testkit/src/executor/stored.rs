//! [`Stored`]: rows built once, pages cloned out of them.

use async_trait::async_trait;
use dual_core::{Row, Sort};
use dual_server::{ExecutorError, QueryExecutor};
use serde_json::Value;

/// An in-memory table: rows built once, every page cloned out of them, whatever the params (sort
/// ignored). The cheapest "query" there is, for benchmarks that time what is around the executor.
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

#[async_trait]
impl QueryExecutor for Stored {
    async fn count(&self, _: &Value) -> Result<u64, ExecutorError> {
        Ok(self.rows.len() as u64)
    }

    async fn fetch(
        &self,
        _: &Value,
        offset: u64,
        limit: u64,
        _: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.rows.len());
        let end = usize::try_from(offset.saturating_add(limit))
            .unwrap_or(usize::MAX)
            .min(self.rows.len());
        Ok(self.rows[start..end].to_vec())
    }
}
