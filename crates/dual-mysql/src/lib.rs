//! A MySQL or MariaDB database behind a dual-response server: a [`QueryExecutor`] for read-only
//! SQL from the model ([`MyDb::sql_executor`]) or for queries you write ([`MyDb::query_executor`]),
//! over a bounded pool of connections (mysql_async).
//!
//! ```no_run
//! use dual_mysql::{MyDb, MyOptions, MyQuery};
//! use dual_server::DualResponseServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let db = MyDb::connect("mysql://reporter@localhost/sales", MyOptions::default()).await?;
//! let server = DualResponseServer::builder()
//!     .base_url("https://api.example.com/resources")
//!     // params: {"sql": "SELECT … WHERE region = ?", "params": ["EU"]}
//!     .executor("sql", db.sql_executor())
//!     .executor("orders", db.query_executor(|params| {
//!         let region = params["region"].as_str().ok_or("`region` is required")?;
//!         Ok(MyQuery::new("SELECT * FROM orders WHERE region = ?").bind(region))
//!     }))
//!     .build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! # What a query runs as
//!
//! Every connection is set up `SET SESSION TRANSACTION READ ONLY`, in UTC, with the statement time
//! limit ([`MyOptions::time_limit`]: MariaDB's `max_statement_time`, MySQL's `max_execution_time`),
//! and every query runs in a read-only, repeatable-read transaction with a consistent snapshot. The
//! model's SQL is parsed as MySQL (`dual_sql::sql_guard`; `/*! … */` comments read as MySQL runs
//! them) and must be exactly one query that only reads, with no locking clause and no `INTO`
//! (`OUTFILE`, `DUMPFILE`, variables); what runs is the parsed statement written back, without its
//! comments. DDL is refused before it runs (MySQL would commit the transaction and run it), and so
//! is `SELECT 1; DELETE …`, each with a stable code.
//! Parameters (`?`) are bound, never interpolated. Functions that reach outside the data
//! (`LOAD_FILE`, named locks, replication waits) are refused by name, and so are the database's own
//! functions, found when it connects, unless a [`FunctionPolicy`] given to
//! [`MyDb::sql_executor_with`] allows them; the policy also has an allow-list mode.
//!
//! [`MyDb::connect`] refuses a user that may do more than read ([`MyError::PrivilegedRole`]: `FILE`,
//! `SUPER`, write privileges, reading `mysql.user`), naming what it found, unless
//! [`MyOptions::allow_privileged_role`]. Connect as a user like this one:
//!
//! ```sql
//! CREATE USER 'reporter'@'%' IDENTIFIED BY '…';
//! GRANT SELECT, SHOW VIEW ON sales.* TO 'reporter'@'%';
//! ```
//!
//! The snapshot's [`QueryExecutor::stream`] counts the result (`SELECT COUNT(*) FROM (⟨sql⟩)`) and
//! then reads it unbuffered from the server, [`MyOptions::fetch_rows`] rows or
//! [`MyOptions::batch_bytes`] bytes of JSON per batch (whichever comes first), in the same
//! transaction, so the count it announces is exactly the rows it yields and the memory it holds is a
//! few batches. `MyDb::schema` describes the database (its tables, views and columns, for the
//! `describe_schema` tool), and a query naming an unknown table or column gets the closest names
//! ("Did you mean …"), never applied. A query the server drops (a `DELETE`, a cancelled task, the time limit, a client
//! gone) is stopped with `KILL QUERY` from a connection of its own, and its connection is closed. No
//! free connection within [`MyOptions::wait`] is the retryable `overloaded` error. A result over the
//! server's snapshot cap is served live: counted with `SELECT COUNT(*) FROM (…)` and paged with
//! `SELECT * FROM (…) ORDER BY … LIMIT … OFFSET …`, each on a connection of its own.
//!
//! # Type mapping
//!
//! | MySQL / MariaDB | JSON |
//! |---|---|
//! | `TINYINT` … `BIGINT` (signed or not), `YEAR`, `BIT` | number (integer); `BOOL` is `TINYINT(1)`: 0 or 1 |
//! | `FLOAT`, `DOUBLE` | number |
//! | `DECIMAL` | exact decimal string (`"12.50"`), or a number with [`NumericMode::Number`] |
//! | `CHAR`, `VARCHAR`, `TEXT`, `ENUM`, `SET` | string (MariaDB's `JSON`, a `LONGTEXT`, too) |
//! | `BINARY`, `VARBINARY`, `BLOB` | `"base64:"` and the bytes in standard base64 (`"base64:AP8="`) |
//! | `GEOMETRY`, `POINT`, `POLYGON`, … | well-known text as `ST_AsText` writes it, `SRID=n;` first when not 0 (`"POINT(1 2)"`) |
//! | `DATE` | `"YYYY-MM-DD"` |
//! | `DATETIME` | `"YYYY-MM-DDTHH:MM:SS[.ffffff]"` (no offset: it has none) |
//! | `TIMESTAMP` | RFC 3339 in UTC, `"…Z"` |
//! | `TIME` | `"[-]HH:MM:SS[.ffffff]"` (hours may pass 24) |
//! | `JSON` | the JSON value itself |
//! | NULL | `null` |
//!
//! docs/TYPES.md has every type with examples.
//!
//! [`QueryExecutor`]: dual_server::QueryExecutor
//! [`QueryExecutor::stream`]: dual_server::QueryExecutor::stream

mod db;
mod decode;
mod error;
mod executor;
mod geometry;
mod live;
mod options;
mod privilege;
mod query;
mod schema;
mod session;
mod shared;
mod snapshot;

pub use db::MyDb;
/// Which functions the model's SQL may call ([`MyDb::sql_executor_with`]).
pub use dual_sql::sql_guard::FunctionPolicy;
pub use error::MyError;
pub use executor::MyExecutor;
pub use options::{
    DEFAULT_BATCH_BYTES, DEFAULT_COUNT_WAIT, DEFAULT_FETCH_ROWS, DEFAULT_MAX_VALUE_BYTES, DEFAULT_POOL_SIZE,
    DEFAULT_STALL, DEFAULT_TIME_LIMIT, DEFAULT_WAIT, MyOptions, NumericMode,
};
pub use query::MyQuery;
