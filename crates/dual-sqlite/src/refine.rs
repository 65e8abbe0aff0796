//! [`SqliteRefiner`]: SQL over a stored result, on a SQLite database of its own made for each
//! refinement (docs/DESIGN.md §4, *Refining a result*).
//!
//! The parent's rows are written to a temporary database file as the table `result` (one
//! transaction, no journal), then the SQL runs on it exactly as the model's SQL runs on a
//! [`SqliteDb`]: parsed by dual-sql's guard, one read-only statement, read-only connections with
//! `query_only`, the time limit, the value cap, interrupted when dropped. Those connections may read
//! `result` and nothing else (SQLite's authorizer refuses every other table, `sqlite_schema`
//! included, every `PRAGMA` and `ATTACH`), and keep a
//! bounded page cache: memory stays within [`RefineOptions::cache_bytes`] per connection, sorts and
//! groups spill to temporary files, the table itself lives on disk. The file is deleted when the
//! refinement's stream ends or is dropped.

mod decode;
mod load;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dual_server::{ExecutorError, QueryExecutor, QueryStart, RefineEngine, RefineInput, RowStream};
use dual_sql::sql_guard::{FunctionPolicy, SqlDialect, read_only_query_with};
use futures_util::{StreamExt, TryStreamExt};

use crate::{SqliteDb, SqliteOptions};

pub use crate::seal::RESULT_TABLE;

/// The page cache of each connection of a refinement ([`RefineOptions::cache_bytes`]).
pub const DEFAULT_REFINE_CACHE_BYTES: usize = 16 << 20;

/// How [`SqliteRefiner`] runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RefineOptions {
    /// Where the temporary databases are written (default: the system's temporary directory). Each
    /// takes about the parent result's stored bytes while its refinement runs.
    pub dir: PathBuf,
    /// The page cache of each connection, in bytes ([`DEFAULT_REFINE_CACHE_BYTES`]): the memory a
    /// refinement may hold for its table and its sorts, beyond which SQLite spills to disk.
    pub cache_bytes: usize,
    /// Time limit of the SQL (of each batch of its rows), as for a [`SqliteDb`]; the server's query
    /// time limit bounds the whole refinement too.
    pub time_limit: Duration,
    /// Largest value or row the SQL may build ([`DEFAULT_MAX_VALUE_BYTES`](crate::DEFAULT_MAX_VALUE_BYTES)).
    pub max_value_bytes: usize,
    /// Functions the SQL may not call, beyond the guard's own list.
    pub policy: FunctionPolicy,
}

impl Default for RefineOptions {
    fn default() -> Self {
        Self {
            dir: std::env::temp_dir(),
            cache_bytes: DEFAULT_REFINE_CACHE_BYTES,
            time_limit: crate::DEFAULT_TIME_LIMIT,
            max_value_bytes: crate::DEFAULT_MAX_VALUE_BYTES,
            policy: FunctionPolicy::new(),
        }
    }
}

impl RefineOptions {
    /// Where the temporary databases are written.
    #[must_use]
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = dir.into();
        self
    }

    /// The page cache of each connection, in bytes (at least 64 KiB).
    #[must_use]
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    /// The SQL's time limit.
    #[must_use]
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// The largest value or row the SQL may build.
    #[must_use]
    pub fn max_value_bytes(mut self, bytes: usize) -> Self {
        self.max_value_bytes = bytes;
        self
    }

    /// The operator's function policy.
    #[must_use]
    pub fn policy(mut self, policy: FunctionPolicy) -> Self {
        self.policy = policy;
        self
    }

    fn cache_kib(&self) -> u32 {
        u32::try_from((self.cache_bytes / 1024).max(64)).unwrap_or(u32::MAX)
    }
}

/// The [`RefineEngine`] of SQLite: give it to
/// [`DualResponseServerBuilder::refine_engine`](dual_server::DualResponseServerBuilder::refine_engine).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use dual_server::{Caller, CreateResponse, DualResponseServer};
/// use dual_sqlite::SqliteRefiner;
/// # use dual_server::{ExecutorError, QueryExecutor, QueryStart, RowBatch, RowStream};
/// # use serde_json::{Value, json};
/// # struct Squares;
/// # impl QueryExecutor for Squares {
/// #     fn stream(self: std::sync::Arc<Self>, _: Value, start: QueryStart) -> RowStream {
/// #         start.started_with_count(100);
/// #         let rows = (0..100u64).map(|i| json!({"i": i, "even": i % 2 == 0}).as_object().cloned().unwrap_or_default());
/// #         Box::pin(futures_util::stream::iter([Ok(rows.collect::<RowBatch>())]))
/// #     }
/// # }
/// let server = DualResponseServer::builder()
///     .base_url("http://localhost/resources")
///     .executor("squares", Squares)
///     .refine_engine(SqliteRefiner::default())
///     .build()?;
/// let caller = Caller::anonymous();
/// let squares = server.create_response(CreateResponse::new("squares", json!({}))).await?;
/// let refined = server
///     .refine(squares.id, "SELECT even, COUNT(*) AS n FROM result GROUP BY even", &caller)
///     .await?;
/// assert_eq!(refined.total_count, 2);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct SqliteRefiner {
    options: RefineOptions,
}

impl SqliteRefiner {
    /// A refiner with `options`.
    #[must_use]
    pub fn new(options: RefineOptions) -> Self {
        Self { options }
    }

    /// The options in force.
    #[must_use]
    pub fn options(&self) -> &RefineOptions {
        &self.options
    }

    /// The read-only database over the loaded file, sealed to `result`.
    fn open(&self, path: &std::path::Path) -> Result<SqliteDb, ExecutorError> {
        let mut options = SqliteOptions::default()
            .pool_size(2)
            .time_limit(self.options.time_limit)
            .max_value_bytes(self.options.max_value_bytes)
            // The count would run the SQL twice: the rows are counted as they stream.
            .count_wait(Duration::ZERO);
        options.sealed = Some(self.options.cache_kib());
        SqliteDb::open_with(path, options).map_err(|error| {
            tracing::warn!(error = %error, "a refinement's database could not be opened");
            ExecutorError::overloaded(
                "the refinement's temporary database could not be opened: try again later",
                Duration::from_secs(1),
            )
        })
    }
}

impl RefineEngine for SqliteRefiner {
    fn check(&self, sql: &str) -> Result<(), ExecutorError> {
        read_only_query_with(sql, SqlDialect::Sqlite, &self.options.policy)
            .map(drop)
            .map_err(|refused| ExecutorError::new(refused.to_string()))
    }

    fn refine(self: Arc<Self>, input: RefineInput, start: QueryStart) -> RowStream {
        let RefineInput {
            sql, columns, rows, ..
        } = input;
        let loading = async move {
            let file = load::TempDb::create(&self.options.dir)?;
            let loaded =
                load::load(file.path().to_path_buf(), columns, rows, self.options.cache_kib()).await?;
            tracing::debug!(rows = loaded, "refinement's table loaded");
            let db = self.open(file.path())?;
            let executor = Arc::new(db.sql_executor_with(self.options.policy.clone()));
            let refined = executor.stream(serde_json::json!({ "sql": sql }), start);
            // The file lives as long as the rows are read from it.
            Ok::<_, ExecutorError>(refined.map(move |batch| {
                let _file = &file;
                batch
            }))
        };
        Box::pin(futures_util::stream::once(loading).try_flatten())
    }
}
