//! How a [`MyDb`](crate::MyDb) shares its connections and writes its values: dual-sql's
//! [`DatabaseOptions`](dual_sql::DatabaseOptions).

pub use dual_sql::options::{
    DEFAULT_BATCH_BYTES, DEFAULT_COUNT_WAIT, DEFAULT_FETCH_ROWS, DEFAULT_MAX_VALUE_BYTES, DEFAULT_POOL_SIZE,
    DEFAULT_STALL, DEFAULT_TIME_LIMIT, DEFAULT_WAIT, NumericMode,
};

/// How a [`MyDb`](crate::MyDb) runs queries ([`dual_sql::DatabaseOptions`]: the time limit is
/// MariaDB's `max_statement_time` or MySQL's `max_execution_time`, `numeric` how `DECIMAL` values
/// come out). Build it from `MyOptions::default()` with the setters.
pub type MyOptions = dual_sql::DatabaseOptions;
