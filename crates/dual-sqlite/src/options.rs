//! How a [`SqliteDb`](crate::SqliteDb) shares its connections, and the defaults.

use std::time::Duration;

/// Default time limit of one query (of one batch, for exports).
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(300);
/// Default number of pooled connections.
pub const DEFAULT_POOL_SIZE: usize = 4;
/// Default number of the pool's connections exports may hold at once.
pub const DEFAULT_EXPORT_SLOTS: usize = 2;
/// Default longest wait for a free connection before answering `overloaded`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(2);
/// Default time an export waits for its reader to take the next batch before giving up.
pub const DEFAULT_STALL: Duration = Duration::from_secs(30);
/// Default longest count the snapshot's stream announces (the library's default `pending_after`).
pub const DEFAULT_COUNT_WAIT: Duration = Duration::from_secs(2);
/// Default largest value or row SQLite builds for a result: 16 MiB. A query that needs a larger one
/// (`randomblob(1000000000)`, a huge `printf`, a stored value over it) fails with an error naming the
/// cap, instead of taking the server's memory.
pub const DEFAULT_MAX_VALUE_BYTES: usize = dual_sql::options::DEFAULT_MAX_VALUE_BYTES;
/// Most rows per batch of an export stream…
pub const STREAM_BATCH: usize = 1_000;
/// …and about the most bytes (a batch is sent once its rows reach this; a single wider row is a
/// batch of its own), so an export holds at most its buffered batches of about 1 MiB each.
pub const STREAM_BATCH_BYTES: usize = 1 << 20;
/// Batches buffered between the SQLite thread and the HTTP response.
pub(crate) const STREAM_BUFFER: usize = 4;

/// How a [`SqliteDb`](crate::SqliteDb) shares its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqliteOptions {
    /// Pooled connections ([`DEFAULT_POOL_SIZE`]).
    pub pool_size: usize,
    /// How many of them exports may hold at once ([`DEFAULT_EXPORT_SLOTS`]; at most `pool_size - 1`).
    pub export_slots: usize,
    /// Longest wait for a free connection ([`DEFAULT_WAIT`]); then the query fails with the
    /// retryable `overloaded` error.
    pub wait: Duration,
    /// Time limit of one query, or of one export batch ([`DEFAULT_TIME_LIMIT`]).
    pub time_limit: Duration,
    /// How long an export waits for its reader to take a batch ([`DEFAULT_STALL`]) before it gives
    /// the connection back and ends with an error.
    pub stall: Duration,
    /// How long the snapshot's stream may count before it tells the server that its query runs
    /// without a count ([`DEFAULT_COUNT_WAIT`]); a count done later is not announced. Give it the
    /// server's `pending_after`.
    pub count_wait: Duration,
    /// How long the database's description is kept ([`DEFAULT_SCHEMA_TTL`](dual_sql::DEFAULT_SCHEMA_TTL)).
    pub schema_ttl: Duration,
    /// Largest string, blob or row SQLite builds for a query ([`DEFAULT_MAX_VALUE_BYTES`]; SQLite's
    /// `SQLITE_LIMIT_LENGTH` on every connection, at least 1 KiB and at most about 2 GiB): a query
    /// that needs a larger one fails with an error naming this cap.
    pub max_value_bytes: usize,
    /// Set by [`SqliteRefiner`](crate::SqliteRefiner) only: every connection may read the table
    /// `result` and nothing else (SQLite's authorizer), and keeps a page cache of at most this many
    /// KiB.
    pub(crate) sealed: Option<u32>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            pool_size: DEFAULT_POOL_SIZE,
            export_slots: DEFAULT_EXPORT_SLOTS,
            wait: DEFAULT_WAIT,
            time_limit: DEFAULT_TIME_LIMIT,
            stall: DEFAULT_STALL,
            count_wait: DEFAULT_COUNT_WAIT,
            schema_ttl: dual_sql::DEFAULT_SCHEMA_TTL,
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
            sealed: None,
        }
    }
}

dual_sql::option_setters!(SqliteOptions {
    pool_size: usize,
    export_slots: usize,
    wait: Duration,
    time_limit: Duration,
    stall: Duration,
    schema_ttl: Duration,
    max_value_bytes: usize,
    count_wait: Duration,
});
