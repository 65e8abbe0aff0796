//! How a [`PgDb`](crate::PgDb) shares its connections and writes its values: dual-sql's
//! [`DatabaseOptions`](dual_sql::DatabaseOptions), and what only PostgreSQL needs.

use std::time::Duration;

pub use dual_sql::options::{
    DEFAULT_BATCH_BYTES, DEFAULT_COUNT_WAIT, DEFAULT_FETCH_ROWS, DEFAULT_MAX_VALUE_BYTES, DEFAULT_POOL_SIZE,
    DEFAULT_STALL, DEFAULT_TIME_LIMIT, DEFAULT_WAIT, NumericMode,
};

/// How a [`PgDb`](crate::PgDb) runs queries ([`dual_sql::DatabaseOptions`]: the time limit is
/// `statement_timeout`, `fetch_rows` and `batch_bytes` bound each portal fetch, `numeric` how `numeric` values come
/// out). Build it from `PgOptions::default()` with the setters.
pub type PgOptions = dual_sql::DatabaseOptions;

/// Longest wait to open a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
