//! A refine engine for the tests of `POST /{id}/query` (dual-http does not depend on dual-sqlite):
//! it runs no SQL, it hands the parent's rows back as they are.

use std::sync::Arc;

use dual_server::{ExecutorError, QueryStart, RefineEngine, RefineInput, RowBatch, RowStream};
use futures_util::StreamExt;

/// What [`PassThrough`] answers SQL that does not start with `SELECT`.
pub const REFUSED: &str = "only a SELECT statement can refine a result";

/// What [`PassThrough`] fails SQL naming `FAIL` with, once it runs.
pub const FAILED: &str = "no such column: FAIL";

/// Refuses SQL that does not start with `SELECT` ([`REFUSED`]); answers any other SQL with the
/// parent's rows, in order. SQL naming `FAIL` fails as it runs ([`FAILED`]); SQL naming `FOREVER`
/// yields the parent's rows and then never ends (a refinement still running: `pending`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PassThrough;

impl RefineEngine for PassThrough {
    fn check(&self, sql: &str) -> Result<(), ExecutorError> {
        let select = sql
            .trim_start()
            .get(..6)
            .is_some_and(|word| word.eq_ignore_ascii_case("select"));
        if select {
            Ok(())
        } else {
            Err(ExecutorError::new(REFUSED))
        }
    }

    fn refine(self: Arc<Self>, input: RefineInput, start: QueryStart) -> RowStream {
        start.started();
        if input.sql.contains("FAIL") {
            return Box::pin(futures_util::stream::iter([Err(ExecutorError::new(FAILED))]));
        }
        if input.sql.contains("FOREVER") {
            let never = futures_util::stream::pending::<Result<RowBatch, ExecutorError>>();
            return Box::pin(input.rows.chain(never));
        }
        input.rows
    }
}
