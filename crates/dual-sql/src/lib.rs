//! What the SQL executor crates of dual-response share — dual-sqlite, dual-postgres and dual-mysql,
//! and a database crate of your own — and the server itself does not need.
//!
//! `dual-server` is the server: it runs any [`QueryExecutor`](dual_server::QueryExecutor) and knows
//! nothing of SQL. This crate sits on top of it and holds the parts every SQL executor would
//! otherwise write again:
//!
//! | item | holds |
//! |---|---|
//! | [`DatabaseOptions`], [`NumericMode`] ([`options`]) | one options type for a database executor: pool, waits, time limit, batches, decimals, value cap |
//! | [`SqlKind`], [`model_sql`] | what a registered kind runs: the model's SQL (`{"sql", "params"}`) or a query the developer builds |
//! | [`BoundQuery`] | one statement's SQL and the values bound to its parameters, in order |
//! | `Pooled`, `PooledDatabase`, `LivePaging` (feature `sql-guard`) | the executor of a database driven through pooled async connections, around the transaction, count and fetch the database crate writes |
//! | `sql_guard` (feature `sql-guard`) | the model's SQL parsed in the database's dialect and refused unless it is exactly one read-only query |
//! | [`ValueCap`] | the largest value and row a result may hold |
//! | [`CancelSlot`], [`SlotLease`] | cancelling a statement on a pooled connection, and discarding that connection |
//! | [`row_channel`] | the stream of rows produced elsewhere (a blocking thread, a connection's task), bounded, never cut short silently |
//! | [`SchemaSource`], [`SchemaCache`] | a database describing its tables, kept for a TTL, and the "did you mean …" of an unknown name |
//! | [`schema`] | that description ([`schema::TableSchema`], [`schema::ColumnSchema`]), what the model's `describe_schema` tool reads, and the close-name suggestions |
//!
//! ```
//! use std::sync::Arc;
//!
//! use dual_server::ExecutorError;
//! use dual_sql::schema::{ColumnSchema, TableKind, TableSchema};
//! use dual_sql::{DatabaseOptions, NumericMode, SchemaCache, SchemaSource, SqlKind, Unknown};
//! use serde_json::json;
//!
//! /// A database of one table.
//! struct Catalog;
//!
//! #[async_trait::async_trait]
//! impl SchemaSource for Catalog {
//!     async fn describe(&self) -> Result<Vec<TableSchema>, ExecutorError> {
//!         let columns = vec![ColumnSchema::new("enrollment", "integer", false)];
//!         Ok(vec![TableSchema::new("institutions", TableKind::Table, columns)])
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // One options type for every database executor.
//! let options = DatabaseOptions::default().pool_size(4).numeric(NumericMode::Number);
//! assert_eq!((options.pool_size, options.numeric), (4, NumericMode::Number));
//!
//! // A kind that runs the model's SQL: the database crate checks it and binds the values.
//! let kind: SqlKind<String> = SqlKind::Sql;
//! let params = json!({"sql": "SELECT enrolment FROM institutions", "params": []});
//! let query = kind.query(&params, |sql, _values| Ok(sql.to_owned()));
//! assert_eq!(query.as_deref(), Ok("SELECT enrolment FROM institutions"));
//!
//! // The database calls a name unknown: the model is told the closest one, never corrected silently.
//! fn unknown(message: &str) -> Option<Unknown<'_>> {
//!     message.strip_prefix("no such column: ").map(Unknown::Column)
//! }
//! let schema = SchemaCache::new(Arc::new(Catalog), options.schema_ttl);
//! let error = ExecutorError::new("no such column: enrolment");
//! let explained = schema.explain(error, dual_sql::model_sql(&params), unknown).await;
//! assert_eq!(explained.message(), "no such column: enrolment. Did you mean `enrollment`?");
//! # }
//! ```

mod bound_query;
mod cancel_slot;
mod kind;
pub mod options;
#[cfg(feature = "sql-guard")]
mod pooled;
mod row_channel;
pub mod schema;
mod schema_cache;
#[cfg(feature = "sql-guard")]
pub mod sql_guard;
mod value_cap;

pub use bound_query::BoundQuery;
pub use cancel_slot::{CancelSlot, SlotLease};
pub use kind::{BuildQuery, SQL_PARAM_REQUIRED, SqlKind, model_sql};
pub use options::{DatabaseOptions, NumericMode};
#[cfg(feature = "sql-guard")]
pub use pooled::{LivePaging, Pooled, PooledDatabase};
pub use row_channel::{RowSender, SendStop, row_channel};
pub use schema_cache::{DEFAULT_SCHEMA_MAX_TABLES, DEFAULT_SCHEMA_TTL, SchemaCache, SchemaSource, Unknown};
pub use value_cap::ValueCap;
