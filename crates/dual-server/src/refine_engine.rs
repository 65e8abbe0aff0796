//! What runs SQL over a stored result: the [`RefineEngine`] trait, its input and the kind of a
//! refined result (docs/DESIGN.md §4, *Refining a result*). A leaf of the crate's module graph: the
//! operation that uses it is `refine.rs`.

use std::sync::Arc;

use dual_core::Column;

use crate::{ExecutorError, QueryStart, RowStream};

/// The query kind of a refined result (its record's `query.kind`); a server with a
/// [`RefineEngine`] refuses to register an executor of its own under it.
pub const REFINE_KIND: &str = "refine";

/// The longest SQL text a refinement accepts, in bytes.
pub const MAX_REFINE_SQL_BYTES: usize = 64 * 1024;

/// Runs SQL over a stored result's rows: what [`DualResponseServer::refine`] needs, and what
/// dual-sqlite's `SqliteRefiner` is.
///
/// [`DualResponseServer::refine`]: crate::DualResponseServer::refine
pub trait RefineEngine: std::fmt::Debug + Send + Sync + 'static {
    /// Refuses SQL the engine will not run, before any row is read: the error's message is for the
    /// model (what was refused and what to send instead).
    ///
    /// # Errors
    /// The refusal.
    fn check(&self, sql: &str) -> Result<(), ExecutorError>;

    /// The rows of `input.sql` over the table `result` holding `input.rows`, in the SQL's own order,
    /// as a [`QueryExecutor::stream`](crate::QueryExecutor::stream) would yield them (signal `start` when the SQL runs, with its
    /// count if known). The server drops the stream to cancel it (the time limit, a delete, a
    /// shutdown): the engine stops its work then, as an executor does.
    fn refine(self: Arc<Self>, input: RefineInput, start: QueryStart) -> RowStream;
}

/// What a [`RefineEngine`] refines.
#[non_exhaustive]
pub struct RefineInput {
    /// The SQL, reading the table `result`.
    pub sql: String,
    /// The parent result's columns, in order: the columns of `result`.
    pub columns: Vec<Column>,
    /// The parent's row count.
    pub total_rows: u64,
    /// The parent's rows, in its own order, as stored (JSON batches).
    pub rows: RowStream,
}

impl std::fmt::Debug for RefineInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefineInput")
            .field("columns", &self.columns.len())
            .field("total_rows", &self.total_rows)
            .finish_non_exhaustive()
    }
}
