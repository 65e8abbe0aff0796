//! The database executor conformance suite: every executor crate (`dual-sqlite`, `dual-postgres`, …)
//! runs it against its real database, so all of them keep one contract (issue 24, item 4).
//!
//! A crate implements [`Database`] (how to set a table up, its SQL for a slow query and a
//! parameter, its typed table, and an executor of the model's SQL under given [`Limits`]) and calls
//! [`run`], which runs every case in its own task and panics naming the first that fails:
//!
//! * writes, DDL, several statements and transaction control are refused before they run, and
//!   nothing is written;
//! * a query error carries the database's message for the model;
//! * parameters are bound, never interpolated;
//! * parenthesized queries and set operations of them run (`(SELECT …) UNION (SELECT …)`);
//! * the count a stream announces is exactly the rows it yields, in order;
//! * the database's types round-trip through a snapshot, a page and the JSON, NDJSON and CSV exports
//!   as the crate documents them;
//! * the time limit stops a slow query with an error that says so;
//! * through a server, a slow query answers `pending` at `pending_after` (not after its count), its
//!   result then fails at the time limit naming it, and a tool call that waits for the end gets that
//!   error instead of hanging;
//! * a value or a row over `max_value_bytes` fails the query (snapshot stream and live page) with an
//!   error naming the cap, and the column when the database lets it be known;
//! * a dropped stream frees its connection for the next query at once (the query is cancelled);
//! * an exhausted pool answers the retryable `overloaded` within its wait;
//! * unread snapshot streams (the server's writers waiting for their background turn) never take
//!   the pool's connections, and have no stall limit;
//! * a burst of ten tool calls through a server over a pool of one is never refused, and every
//!   announced result is written in full;
//! * its tables and views are described with their columns, and a misspelt name gets the closest
//!   one as a suggestion, never applied;
//! * a developer's query and the model's SQL page live: count, sorted windows, their parameters.

mod cases;
mod cut;
mod live;
mod names;
mod pending;
mod round_trip;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dual_core::Row;
use dual_server::{ExecutorError, QueryExecutor, QueryStart, RowStream};
use dual_sql::SchemaCache;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::case::run_isolated;

pub use cases::{
    a_burst_of_tool_calls_is_never_refused, a_dropped_stream_frees_its_connection,
    a_query_error_carries_the_databases_message, a_value_or_row_over_the_cap_fails_naming_it,
    an_exhausted_pool_is_overloaded, params_are_bound_never_interpolated,
    parenthesized_queries_and_set_operations_run, refused_statements, the_count_is_the_rows_streamed,
    the_time_limit_stops_a_slow_query, unread_snapshot_streams_leave_the_pool_to_pages_and_counts,
    writes_are_refused_before_they_run,
};
pub use cut::fails_when_cut;
pub use live::live_pages_count_sort_and_seek;
pub use names::close_names_are_suggested_never_applied;
pub use pending::{
    a_slow_query_answers_pending_then_fails_at_its_time_limit,
    a_tool_call_waiting_for_the_end_gets_the_time_limit_error,
};
pub use round_trip::{export, types_round_trip_through_snapshot_page_and_exports};

/// The bounds of an executor a case asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections in the pool.
    pub pool_size: usize,
    /// Longest wait for a connection before `overloaded`.
    pub wait: Duration,
    /// Time limit of a statement.
    pub time_limit: Duration,
    /// Largest value, and row, of a result (the crate's `max_value_bytes`).
    pub max_value_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            pool_size: 4,
            wait: Duration::from_secs(2),
            time_limit: Duration::from_secs(30),
            max_value_bytes: dual_sql::options::DEFAULT_MAX_VALUE_BYTES,
        }
    }
}

/// A database under test, as the suite drives it.
#[async_trait]
pub trait Database: Send + Sync + 'static {
    /// An executor of the model's SQL (params `{"sql": …, "params"?: […]}`) under `limits`.
    async fn executor(&self, limits: Limits) -> Arc<dyn QueryExecutor>;

    /// Runs `sql` (DDL and inserts, several statements) directly, outside any executor.
    async fn execute(&self, sql: &str);

    /// The name to use in SQL for the test's table `name` (qualified with the test's schema, say).
    fn table(&self, name: &str) -> String;

    /// A query that returns one row after running for about `seconds`.
    fn slow_query(&self, seconds: u32) -> String;

    /// Parameter `n` (from 1) in the database's SQL: `$1`, `?1`, `?` (the cases bind them in order).
    fn param(&self, n: usize) -> String;

    /// The statements that make `table` with one row of every type the crate maps (and one of
    /// NULLs, ordered after it by its first column), and those two rows as the executor writes them.
    fn typed_table(&self, table: &str) -> (String, Vec<Value>);

    /// What the crate's `describe_schema` tool reads: its schema cache, over a connection that
    /// sees the tables [`table`](Self::table) names.
    async fn schema(&self) -> SchemaCache;

    /// An executor of a query the developer writes (the crate's `query_executor`): `select`, whose
    /// one parameter is bound to the tool call's `n` (an unsigned integer); a call without `n` is
    /// refused with the message `` `n` is required ``.
    async fn query_executor(&self, select: String) -> Arc<dyn QueryExecutor>;

    /// `name` quoted as an identifier in the database's SQL; by default in double quotes.
    fn quote(&self, name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Runs every case against `database`, each in its own task; panics naming the first that fails.
/// Call it from a multi-thread tokio runtime.
pub async fn run(database: Arc<dyn Database>) {
    macro_rules! cases {
        ($($case:ident),* $(,)?) => {$(
            run_isolated("executor", stringify!($case), $case(Arc::clone(&database))).await;
        )*};
    }
    cases![
        writes_are_refused_before_they_run,
        a_query_error_carries_the_databases_message,
        params_are_bound_never_interpolated,
        parenthesized_queries_and_set_operations_run,
        the_count_is_the_rows_streamed,
        types_round_trip_through_snapshot_page_and_exports,
        the_time_limit_stops_a_slow_query,
        a_slow_query_answers_pending_then_fails_at_its_time_limit,
        a_tool_call_waiting_for_the_end_gets_the_time_limit_error,
        a_value_or_row_over_the_cap_fails_naming_it,
        a_dropped_stream_frees_its_connection,
        an_exhausted_pool_is_overloaded,
        unread_snapshot_streams_leave_the_pool_to_pages_and_counts,
        a_burst_of_tool_calls_is_never_refused,
        close_names_are_suggested_never_applied,
        live_pages_count_sort_and_seek,
    ];
}

/// The model's `sql` with `params`.
pub(crate) fn sql(sql: &str, params: Value) -> Value {
    json!({"sql": sql, "params": params})
}

/// Every row of `stream`, or its first error.
pub(crate) async fn collect(mut stream: RowStream) -> Result<Vec<Row>, ExecutorError> {
    let mut rows = Vec::new();
    while let Some(batch) = stream.next().await {
        rows.extend(batch?.into_rows()?);
    }
    Ok(rows)
}

/// The rows of the model's `query` through a snapshot stream of `executor`, and the count it announced.
pub(crate) async fn stream(
    executor: &Arc<dyn QueryExecutor>,
    query: Value,
) -> (Result<Vec<Row>, ExecutorError>, Option<u64>) {
    let (start, announced) = QueryStart::channel();
    let rows = collect(Arc::clone(executor).stream(query, start)).await;
    (rows, announced.await.ok().and_then(|s| s.total))
}

/// Asserts that `error` refuses the model's SQL for calling one of the database's own functions,
/// which the function policy refuses as of unknown effect unless it allows them.
///
/// # Panics
/// When it is another error, naming it.
pub fn assert_user_function_refused(error: &ExecutorError) {
    assert!(
        error
            .message()
            .contains("user-defined function of unknown effect"),
        "{}",
        error.message()
    );
}
