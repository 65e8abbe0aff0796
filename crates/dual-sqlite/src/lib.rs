//! A SQLite database behind a dual-response server: a [`QueryExecutor`] for read-only SQL from the
//! model ([`SqliteDb::sql_executor`]) or for queries you write ([`SqliteDb::query_executor`]), over
//! a bounded pool of read-only connections (rusqlite, SQLite bundled).
//!
//! ```no_run
//! use std::path::Path;
//!
//! use dual_server::DualResponseServer;
//! use dual_sqlite::{SqliteDb, SqliteOptions, SqliteQuery};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let db = SqliteDb::open_with(Path::new("reports.sqlite"), SqliteOptions::default().pool_size(8))?;
//! let server = DualResponseServer::builder()
//!     .base_url("https://api.example.com/resources")
//!     // params: {"sql": "SELECT … WHERE year = ?", "params": [2024]}
//!     .executor("sql", db.sql_executor())
//!     // params: {"state": "NJ"}
//!     .executor("by_state", db.query_executor(|params| {
//!         let state = params["state"].as_str().ok_or("`state` (two letters) is required")?;
//!         Ok(SqliteQuery::new("SELECT * FROM institutions WHERE state = :state").bind_named("state", state.to_owned()))
//!     }))
//!     .build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! The model's SQL must be exactly one query that only reads (`SELECT`, `WITH … SELECT`, `VALUES`,
//! parenthesized queries and set operations): it is parsed as SQLite (`dual_sql::sql_guard`) and
//! run as the parsed statement written back, SQLite must compile that to one statement it calls
//! read-only, and the connections are opened read-only with `PRAGMA query_only`. A refusal, or SQLite's own error,
//! is a message for the model. Values are bound (`"params"`: an array for `?1, ?2, …`, an object
//! for `:name`), never interpolated.
//!
//! A value is JSON by its storage class: an integer or real as a number (a NaN or infinity as
//! `null`), text as a string, a blob as `"base64:"` and its bytes in standard base64
//! (`"base64:3q2+7w=="`, as in every executor), NULL as `null`; docs/TYPES.md has the table.
//!
//! Every query runs on a blocking thread with a pooled read-only connection, under a time limit; the
//! user's SQL is wrapped, never concatenated into a bigger statement:
//!
//! * the snapshot's stream ([`QueryExecutor::stream`]), with the consistent count: one read
//!   transaction — `BEGIN`, `SELECT COUNT(*) FROM (⟨sql⟩)`, then `SELECT * FROM (⟨sql⟩)` stepped once,
//!   in batches through a bounded channel, then `ROLLBACK` — so the count it announces
//!   ([`QueryStart::started_with_count`]) is exactly the rows it yields, whatever is written meanwhile;
//! * live count ([`LiveQuery::count`]): `SELECT COUNT(*) FROM (⟨sql⟩)`
//! * live page: `SELECT * FROM (⟨sql⟩) ORDER BY "field" DESC LIMIT ? OFFSET ?`
//! * live export ([`QueryExecutor::stream_range`]): `SELECT * FROM (⟨sql⟩) ORDER BY … LIMIT ? OFFSET ?`
//!   (the row range; `LIMIT -1` for all rows), stepped once, in batches through a bounded channel.
//!
//! A slow or stalled reader never blocks anyone else: exports may hold at most
//! [`SqliteOptions::export_slots`] of the pool's connections (pages and counts always find the
//! rest), waiting for a connection is bounded by [`SqliteOptions::wait`] (then the retryable
//! `overloaded` error, never a hang), and an export whose reader takes nothing for
//! [`SqliteOptions::stall`] gives its connection back and ends with an error.
//!
//! The snapshot's stream never takes the pool's connections: it uses an idle one or opens one beside
//! the pool (closed again when the pool has its size), because the server's writer holds it until
//! the last row is written, waiting for its background turn included; the server's scheduler bounds
//! how many run. While the writer waits for its turn, the statement waits too (its
//! [`Pace`](dual_server::Pace), in SQLite's progress handler), its time limit stopped, so a queued
//! result takes no core from the foreground. A value or row larger than
//! [`SqliteOptions::max_value_bytes`] (16 MiB) fails its query with an error naming the cap.
//!
//! A count that takes longer than [`SqliteOptions::count_wait`] is not announced: the stream then
//! tells the server it runs without a count (and the server counts the rows it streams), so a tool
//! call can still answer "still running" for a query whose count alone takes long.
//!
//! A query the server drops (its future or export stream: a `DELETE`, the time limit, a client gone)
//! is interrupted at once (`sqlite3_interrupt`) and its connection goes back to the pool, never inside a
//! transaction; a tool call is only told "still running" once its query has a connection and its
//! count ([`QueryStart`]).
//!
//! [`QueryExecutor`]: dual_server::QueryExecutor
//! [`QueryExecutor::stream`]: dual_server::QueryExecutor::stream
//! [`QueryExecutor::stream_range`]: dual_server::QueryExecutor::stream_range
//! [`QueryStart`]: dual_server::QueryStart
//! [`QueryStart::started_with_count`]: dual_server::QueryStart::started_with_count
//! [`LiveQuery::count`]: dual_server::LiveQuery::count

mod cancel;
mod convert;
#[cfg(test)]
mod dataset;
mod executor;
mod guard;
mod options;
mod pool;
mod query;
mod refine;
mod schema;
mod seal;
mod stream;

/// Which functions the model's SQL may call ([`SqliteDb::sql_executor_with`]).
pub use dual_sql::sql_guard::FunctionPolicy;
pub use executor::{SqliteDb, SqliteExecutor};
pub use options::{
    DEFAULT_COUNT_WAIT, DEFAULT_EXPORT_SLOTS, DEFAULT_MAX_VALUE_BYTES, DEFAULT_POOL_SIZE, DEFAULT_STALL,
    DEFAULT_TIME_LIMIT, DEFAULT_WAIT, STREAM_BATCH, STREAM_BATCH_BYTES, SqliteOptions,
};
pub use query::SqliteQuery;
pub use refine::{DEFAULT_REFINE_CACHE_BYTES, RESULT_TABLE, RefineOptions, SqliteRefiner};

/// The SQLite bindings this crate uses (for [`SqliteQuery::bind`]'s values and the errors of
/// [`SqliteDb::open`]).
pub use rusqlite;
