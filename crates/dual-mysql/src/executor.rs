//! [`MyExecutor`]: one kind of query over a [`MyDb`](crate::MyDb), dual-sql's [`Pooled`] executor
//! around MySQL's own parts (`db.rs`): the snapshot's stream (`snapshot.rs`) and live paging
//! (`live.rs`).

use std::sync::Arc;

use dual_server::{LiveQuery, QueryExecutor, QueryStart, RowStream};
use dual_sql::Pooled;
use serde_json::Value;

use crate::shared::Shared;

/// Runs one query kind over a [`MyDb`](crate::MyDb); see the crate docs.
#[derive(Clone)]
pub struct MyExecutor(pub(crate) Arc<Pooled<Shared>>);

impl std::fmt::Debug for MyExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyExecutor")
            .field("kind", self.0.kind())
            .finish_non_exhaustive()
    }
}

impl QueryExecutor for MyExecutor {
    /// Every row, with the consistent count: one read-only transaction with a consistent snapshot
    /// counts the result, then reads it unbuffered, `fetch_rows` rows or `batch_bytes` per batch.
    /// Dropping the stream sends `KILL QUERY` for it and closes its connection.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        Arc::clone(&self.0).stream(params, start)
    }

    /// Live paging: a result over the snapshot cap is re-run per page (`live.rs`).
    fn live(&self) -> Option<&dyn LiveQuery> {
        self.0.live()
    }
}
