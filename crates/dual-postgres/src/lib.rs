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
//! (`dual_sql::sql_guard`, nested comments included) and must be exactly one query that only
//! reads — `SELECT`, `WITH … SELECT`, `VALUES`, `TABLE`, parenthesized queries and set operations —
//! with no data-modifying `WITH`, locking clause or `INTO`; what runs is the parsed statement
//! written back, without its comments. Transaction control, `SET`, `COPY`, `CALL`, `DO` and
//! `SELECT 1; DELETE …` are refused before anything runs, each with a stable code. Parameters (`$1`, `$2`, …) are bound,
//! each sent as text for PostgreSQL to parse as the parameter's type, never interpolated. Functions
//! that reach outside the data (files, settings, other sessions, WAL, large objects, `dblink`,
//! advisory locks) are refused by name, and so are the database's own functions, found when it
//! connects, unless a [`FunctionPolicy`] given to [`PgDb::sql_executor_with`] allows them; the
//! policy also has an allow-list mode.
//!
//! [`PgDb::connect`] refuses a role that may do more than read ([`PgError::PrivilegedRole`]:
//! superuser, `pg_read_server_files` and the like, writes in its `search_path`), naming what it
//! found, unless [`PgOptions::allow_privileged_role`]. Connect as a role like this one:
//!
//! ```sql
//! CREATE ROLE reporter LOGIN PASSWORD '…';
//! GRANT CONNECT ON DATABASE sales TO reporter;
//! GRANT USAGE ON SCHEMA public TO reporter;
//! GRANT SELECT ON ALL TABLES IN SCHEMA public TO reporter;
//! ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO reporter;
//! ```
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
//! | `text`, `varchar`, `char`, `name`, enums, `citext`, `"char"` | string |
//! | `date` | `"YYYY-MM-DD"` (`"infinity"`, `"-infinity"`) |
//! | `time`, `timetz` | `"HH:MM:SS[.ffffff]"`, `timetz` with its `±HH:MM` |
//! | `timestamp` | `"YYYY-MM-DDTHH:MM:SS[.ffffff]"` (no offset: it has none) |
//! | `timestamptz` | RFC 3339 in UTC, `"…Z"` |
//! | `interval` | ISO 8601 duration (`"P1Y2M3DT4H5M6.5S"`, `"PT0S"`) |
//! | `uuid` | hyphenated lower-case string |
//! | `json`, `jsonb` | the JSON value itself |
//! | `bytea` | `"base64:"` and the bytes in standard base64 (`"base64:3q2+7w=="`) |
//! | `void` (`pg_sleep(0)`) | `null` |
//! | arrays (any dimensions) | nested arrays of the element mapping |
//! | NULL | `null` |
//! | any other type: `pg_lsn`, records, ranges, `money`, `inet`, `bit`, `xml`, `tsvector`, geometric types, `reg*`, extension types | PostgreSQL's own text (`"16/B374D848"`, `"(1,a)"`, `"[1,5)"`, `"(1,2)"`); arrays of them as arrays of those strings |
//!
//! A statement with a column of a type the executor does not decode from the binary format is
//! prepared again inside a projection casting that column to `text` (`text[]` for an array), after
//! any `ORDER BY`; the common types cost nothing more. docs/TYPES.md has every type with examples.
//! The CSV and Arrow exports write these JSON values as they write every row.
//!
//! [`QueryExecutor`]: dual_server::QueryExecutor
//! [`QueryExecutor::stream`]: dual_server::QueryExecutor::stream
//! [`QueryStart::started_with_count`]: dual_server::QueryStart::started_with_count

mod as_text;
mod db;
mod decode;
mod error;
mod executor;
mod fetch_sizer;
mod live;
mod options;
mod privilege;
mod query;
mod schema;
mod session;
mod shared;
mod snapshot;
mod text;

pub use db::PgDb;
/// Which functions the model's SQL may call ([`PgDb::sql_executor_with`]).
pub use dual_sql::sql_guard::FunctionPolicy;
pub use error::PgError;
pub use executor::PgExecutor;
pub use options::{
    CONNECT_TIMEOUT, DEFAULT_BATCH_BYTES, DEFAULT_COUNT_WAIT, DEFAULT_FETCH_ROWS, DEFAULT_MAX_VALUE_BYTES,
    DEFAULT_POOL_SIZE, DEFAULT_STALL, DEFAULT_TIME_LIMIT, DEFAULT_WAIT, NumericMode, PgOptions,
};
pub use query::PgQuery;
