//! [`PgExecutor`]: one kind of query over a [`PgDb`](crate::PgDb), dual-sql's [`Pooled`] executor
//! around PostgreSQL's own parts (`db.rs`): the snapshot's stream (`snapshot.rs`) and live paging
//! (`live.rs`).

use std::sync::Arc;

use dual_server::{LiveQuery, QueryExecutor, QueryStart, RowStream};
use dual_sql::Pooled;
use serde_json::Value;

use crate::shared::Shared;

/// Runs one query kind over a [`PgDb`](crate::PgDb); see the crate docs.
#[derive(Clone)]
pub struct PgExecutor(pub(crate) Arc<Pooled<Shared>>);

impl std::fmt::Debug for PgExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgExecutor")
            .field("kind", self.0.kind())
            .finish_non_exhaustive()
    }
}

impl QueryExecutor for PgExecutor {
    /// Every row, with the consistent count: one read-only repeatable-read transaction exports its
    /// snapshot, counts the result in it on a second connection while it reads the rows from a
    /// portal in fetches of about [`PgOptions::batch_bytes`](crate::PgOptions::batch_bytes) (at
    /// most [`PgOptions::fetch_rows`](crate::PgOptions::fetch_rows) rows), one fetch ahead. `start`
    /// is signalled with the count (or without, once counting took
    /// [`PgOptions::count_wait`](crate::PgOptions::count_wait)). Dropping the stream sends
    /// PostgreSQL a cancel request.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        Arc::clone(&self.0).stream(params, start)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        self.0.live()
    }
}
