//! The executor both benches time the server around.

use dual_core::{Row, Sort};
use dual_server::{ExecutorError, QueryExecutor};
use serde_json::{Value, json};

/// Returns clones of a slice of precomputed five-column rows: the cheapest possible "query".
pub(crate) struct Precomputed {
    rows: Vec<Row>,
}

impl Precomputed {
    /// `total` rows, `{"id": i, "name": "College {i}", "state": "NJ", "enrollment": i × 100, "public": true}`.
    pub(crate) fn new(total: u64) -> Self {
        let rows = (0..total)
            .map(|i| {
                json!({"id": i, "name": format!("College {i}"), "state": "NJ", "enrollment": i * 100, "public": true})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        Self { rows }
    }
}

#[async_trait::async_trait]
impl QueryExecutor for Precomputed {
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
