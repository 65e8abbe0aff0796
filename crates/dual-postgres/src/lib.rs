//! A PostgreSQL database behind a dual-response server: a [`QueryExecutor`] for read-only SQL from
//! the model ([`PgDb::sql_executor`]) or for queries you write ([`PgDb::query_executor`]), over a
//! bounded pool of connections (tokio-postgres and deadpool-postgres).
//!
//! ```no_run
//! use dual_postgres::{PgDb, PgOptions, PgQuery};
//! use dual_server::DualResponseServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let db = PgDb::connect("postgres://reporter@localhost/sales", PgOptions::default()).await?;
//! let server = DualResponseServer::builder()
//!     .base_url("https://api.example.com/resources")
//!     // params: {"sql": "SELECT … WHERE region = $1", "params": ["EU"]}
//!     .executor("sql", db.sql_executor())
//!     // params: {"region": "EU"}
//!     .executor("orders", db.query_executor(|params| {
//!         let region = params["region"].as_str().ok_or("`region` is required")?;
//!         Ok(PgQuery::new("SELECT * FROM orders WHERE region = $1").bind(region))
//!     }))
//!     .build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! # What a query runs as
//!
//! Every query runs in its own `READ ONLY`, `REPEATABLE READ` transaction with `SET LOCAL
//! statement_timeout` ([`PgOptions::time_limit`]); a write, DDL or `nextval` is refused by
//! PostgreSQL before it takes effect. Before that, the model's SQL is parsed as PostgreSQL
//! (`dual_server::sql_guard`, nested comments included) and must be exactly one query that only
//! reads — `SELECT`, `WITH … SELECT`, `VALUES`, `TABLE`, parenthesized queries and set operations —
//! with no data-modifying `WITH`, locking clause or `INTO`; what runs is the parsed statement
//! written back, without its comments. Transaction control, `SET`, `COPY`, `CALL`, `DO` and
//! `SELECT 1; DELETE …` are refused before anything runs, each with a stable code. Parameters (`$1`, `$2`, …) are bound,
//! each sent as text for PostgreSQL to parse as the parameter's type, never interpolated. Functions
//! with side effects outside the transaction (advisory locks, `set_config`, `dblink`) are not
//! refused: connect as a role that may only read.
//!
//! The snapshot's [`QueryExecutor::stream`] counts the result (`SELECT count(*) FROM (⟨sql⟩)`) and
//! then reads it from a portal in the same transaction, so the count it announces
//! ([`QueryStart::started_with_count`]) is exactly the rows it yields. Each fetch asks for as many
//! rows as fill about [`PgOptions::batch_bytes`] of JSON at the width seen so far (at most
//! [`PgOptions::fetch_rows`]; 16 for the first two, then growing at most fourfold a fetch), one fetch ahead of the rows being written, and
//! each value is written as JSON as it is decoded ([`dual_server::JsonRowWriter`], no map per row):
//! the memory it holds is a few batches, however large the result. Live paging (for results over the
//! server's snapshot cap) wraps the query: `SELECT * FROM (⟨sql⟩) ORDER BY "field" LIMIT $n OFFSET $m`.
//!
//! A query the server drops (a `DELETE`, a cancelled task, the time limit, a client gone) is
//! cancelled on the server with PostgreSQL's cancel request, and its connection leaves the pool. No
//! free connection within [`PgOptions::wait`] is the retryable `overloaded` error. A query's error
//! carries PostgreSQL's message (and hint) for the model.
//!
//! # Type mapping
//!
//! | PostgreSQL | JSON |
//! |---|---|
//! | `int2`, `int4`, `int8`, `oid` | number (integer) |
//! | `float4`, `float8` | number; `NaN`, `Infinity`, `-Infinity` as those strings |
//! | `numeric` | exact decimal string (`"12.50"`), or a number with [`NumericMode::Number`] |
//! | `bool` | `true` / `false` |
//! | `text`, `varchar`, `char`, `name`, enums, `citext`, other text types | string |
//! | `date` | `"YYYY-MM-DD"` (`"infinity"`, `"-infinity"`) |
//! | `time`, `timetz` | `"HH:MM:SS[.ffffff]"`, `timetz` with its `±HH:MM` |
//! | `timestamp` | `"YYYY-MM-DDTHH:MM:SS[.ffffff]"` (no offset: it has none) |
//! | `timestamptz` | RFC 3339 in UTC, `"…Z"` |
//! | `interval` | ISO 8601 duration (`"P1Y2M3DT4H5M6.5S"`, `"PT0S"`) |
//! | `uuid` | hyphenated lower-case string |
//! | `json`, `jsonb` | the JSON value itself |
//! | `bytea` | base64 string |
//! | arrays (any dimensions) | nested arrays of the element mapping |
//! | NULL | `null` |
//! | any other type | its bytes as text when UTF-8, else base64 |
//!
//! The CSV and Arrow exports write these JSON values as they write every row.
//!
//! [`QueryExecutor`]: dual_server::QueryExecutor
//! [`QueryExecutor::stream`]: dual_server::QueryExecutor::stream
//! [`QueryStart::started_with_count`]: dual_server::QueryStart::started_with_count

mod decode;
mod error;
mod executor;
mod options;
mod query;
mod schema;
mod session;

pub use error::PgError;
pub use executor::{PgDb, PgExecutor};
pub use options::{
    CONNECT_TIMEOUT, DEFAULT_BATCH_BYTES, DEFAULT_COUNT_WAIT, DEFAULT_FETCH_ROWS, DEFAULT_MAX_VALUE_BYTES,
    DEFAULT_POOL_SIZE, DEFAULT_STALL, DEFAULT_TIME_LIMIT, DEFAULT_WAIT, NumericMode, PgOptions,
};
pub use query::PgQuery;
