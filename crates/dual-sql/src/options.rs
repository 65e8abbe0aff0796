//! How a database executor (`dual-postgres`'s `PgDb`, `dual-mysql`'s `MyDb`) shares its
//! connections and writes its values, and the defaults: one options type for every such crate.

use std::time::Duration;

/// Default number of pooled connections.
pub const DEFAULT_POOL_SIZE: usize = 8;
/// Default connections of their own for snapshot streams, beside the pool.
pub const DEFAULT_SNAPSHOT_CONNECTIONS: usize = 16;
/// Default longest wait for a free connection before answering `overloaded`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(2);
/// Default time limit of one statement, counted by the server.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(300);
/// Default time an export waits for its reader to take the next batch before giving up.
pub const DEFAULT_STALL: Duration = Duration::from_secs(30);
/// Default longest count the snapshot's stream announces (the library's default `pending_after`).
pub const DEFAULT_COUNT_WAIT: Duration = Duration::from_secs(2);
/// Default most rows read from the database at a time, and sent to the reader as one batch.
pub const DEFAULT_FETCH_ROWS: u32 = 10_000;
/// Default bytes of JSON after which a batch is sent (fewer rows than `fetch_rows` when rows are
/// wide): with [`DEFAULT_FETCH_ROWS`], the memory a stream holds per batch.
pub const DEFAULT_BATCH_BYTES: usize = 1 << 20;
/// Default largest value, and largest row, of a result the executor keeps (16 MiB): well under the
/// spool's memory budget, and what MariaDB's default `max_allowed_packet` lets through.
pub const DEFAULT_MAX_VALUE_BYTES: usize = 16 << 20;

/// How exact decimal values (PostgreSQL `numeric`, MySQL `DECIMAL`) come out: exact decimal
/// strings, or JSON numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NumericMode {
    /// `"12.50"`: every digit kept (the default).
    #[default]
    String,
    /// `12.5`: an integer when it fits `i64`, else the nearest `f64` (may round); NaN and the
    /// infinities stay strings.
    Number,
}

/// How a database executor runs queries. Build it from [`DatabaseOptions::default`] with the
/// setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DatabaseOptions {
    /// Pooled connections ([`DEFAULT_POOL_SIZE`]), for pages, counts and exports.
    pub pool_size: usize,
    /// Connections of their own for snapshot streams ([`DEFAULT_SNAPSHOT_CONNECTIONS`]), beside the
    /// pool: a snapshot's stream holds one from its start until its last row is written, waiting
    /// for its background turn included, so the background work of answers already given never
    /// takes the connections of pages, counts and exports. A snapshot's stream that finds them all
    /// taken waits for one without a limit (it is not reported running meanwhile): the server's
    /// scheduler and query time limit bound it (docs/DESIGN.md §8, "Scheduling"). Keep
    /// `pool_size + snapshot_connections` within the database's connection limit.
    pub snapshot_connections: usize,
    /// Longest wait for a free connection ([`DEFAULT_WAIT`]); then the query fails with the
    /// retryable `overloaded` error.
    pub wait: Duration,
    /// Time limit of every statement, counted by the server ([`DEFAULT_TIME_LIMIT`]): PostgreSQL's
    /// `statement_timeout`, MariaDB's `max_statement_time`, MySQL's `max_execution_time`.
    pub time_limit: Duration,
    /// How long an export stream of the executor's own waits for its reader to take a batch
    /// ([`DEFAULT_STALL`]) before it gives the connection back and ends with an error. The
    /// snapshot's stream has no stall limit (the server's writer stops reading while it waits for
    /// its background turn; its time limit and its drop of the stream bound it), so the PostgreSQL
    /// and MySQL executors, whose live exports page through short queries, do not use it today.
    pub stall: Duration,
    /// How long the snapshot's stream may count before it tells the server that its query runs
    /// without a count ([`DEFAULT_COUNT_WAIT`]). Give it the server's `pending_after`.
    pub count_wait: Duration,
    /// Most rows per database fetch and per batch ([`DEFAULT_FETCH_ROWS`]).
    pub fetch_rows: u32,
    /// About how many bytes of JSON a batch holds before it is sent ([`DEFAULT_BATCH_BYTES`]); with
    /// `fetch_rows`, the memory a stream holds. MySQL ends a batch at whichever comes first;
    /// PostgreSQL cannot cut a portal fetch, so it sizes each fetch from the rows' width seen so far:
    /// an estimate, which rows that turn wide mid-result pass for one fetch.
    pub batch_bytes: usize,
    /// How exact decimal values come out ([`NumericMode::String`]).
    pub numeric: NumericMode,
    /// How long the database's description is kept ([`DEFAULT_SCHEMA_TTL`](crate::DEFAULT_SCHEMA_TTL)).
    pub schema_ttl: Duration,
    /// Largest value, and largest row, of a result ([`DEFAULT_MAX_VALUE_BYTES`]), in bytes as the
    /// database sends them: a query with a larger one fails with an error naming this cap and the
    /// column ([`ValueCap`](crate::ValueCap)). The database sends a row whole, so one row up to the
    /// database's own limit (PostgreSQL: 1 GB a value; MySQL: `max_allowed_packet`) is received
    /// before it is refused; the cap bounds everything kept and written after it.
    pub max_value_bytes: usize,
    /// Whether the PostgreSQL and MySQL executors start when the role they connect as may do more
    /// than read (`false`): a superuser, a member of `pg_read_server_files`, a user with `FILE` or
    /// write privileges, …. By default they refuse to connect, naming what they found and how to
    /// create a read-only role; `true` connects anyway with a logged warning, and the function
    /// policy of the model's SQL still applies (docs/SECURITY.md, "Least privilege").
    pub allow_privileged_role: bool,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        Self {
            pool_size: DEFAULT_POOL_SIZE,
            snapshot_connections: DEFAULT_SNAPSHOT_CONNECTIONS,
            wait: DEFAULT_WAIT,
            time_limit: DEFAULT_TIME_LIMIT,
            stall: DEFAULT_STALL,
            count_wait: DEFAULT_COUNT_WAIT,
            fetch_rows: DEFAULT_FETCH_ROWS,
            batch_bytes: DEFAULT_BATCH_BYTES,
            numeric: NumericMode::String,
            schema_ttl: crate::DEFAULT_SCHEMA_TTL,
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
            allow_privileged_role: false,
        }
    }
}

crate::option_setters!(DatabaseOptions {
    pool_size: usize,
    snapshot_connections: usize,
    wait: Duration,
    time_limit: Duration,
    stall: Duration,
    count_wait: Duration,
    fetch_rows: u32,
    batch_bytes: usize,
    schema_ttl: Duration,
    max_value_bytes: usize,
    allow_privileged_role: bool,
    numeric: NumericMode,
});

impl DatabaseOptions {
    /// A [`ValueCap`](crate::ValueCap) of [`DatabaseOptions::max_value_bytes`], for one stream.
    #[must_use]
    pub fn value_cap(&self) -> crate::ValueCap {
        crate::ValueCap::new(self.max_value_bytes)
    }
}

/// Writes the builder setters of an options struct: for each `field: Type` listed, a method
/// `field(self, value: Type) -> Self` that sets that field, documented as doing so. The options of
/// the database crates ([`DatabaseOptions`], dual-sqlite's `SqliteOptions`) are built with them.
///
/// ```
/// use std::time::Duration;
///
/// #[derive(Debug, Default)]
/// pub struct Options {
///     pub pool_size: usize,
///     pub wait: Duration,
/// }
///
/// dual_sql::option_setters!(Options { pool_size: usize, wait: Duration });
///
/// let options = Options::default().pool_size(3).wait(Duration::from_secs(1));
/// assert_eq!((options.pool_size, options.wait), (3, Duration::from_secs(1)));
/// ```
#[macro_export]
macro_rules! option_setters {
    ($options:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        impl $options {
            $(
                #[doc = concat!("Sets [`", stringify!($options), "::", stringify!($field), "`].")]
                #[must_use]
                pub fn $field(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}
