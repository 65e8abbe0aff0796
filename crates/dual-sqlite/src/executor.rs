//! The database and its executors: a pool of read-only connections, and the [`QueryExecutor`]
//! that runs one kind of query on it (docs in the crate root).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use dual_core::{Column, Row, Sort, budget::RowBudget, range::RowRange};
use dual_server::{ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow};
use dual_sql::{SchemaCache, SqlKind, ValueCap, model_sql, row_channel};
use futures_util::StreamExt;
use serde_json::Value;

use crate::cancel::Cancel;
use crate::convert;
use crate::guard::{Refused, check_select};
use crate::options::{STREAM_BUFFER, SqliteOptions};
use crate::pool::{Lease, Pool, Use};
use crate::query::SqliteQuery;
use crate::schema::{Describer, unknown};
use crate::stream::{Sender, count, executor_error, order_by, stream_counted, stream_rows, take_error};
use dual_sql::sql_guard::FunctionPolicy;

/// A SQLite database served read-only: open it once, then register [`SqliteDb::sql_executor`] or
/// [`SqliteDb::query_executor`] for each kind. Clones share the connection pool.
#[derive(Debug, Clone)]
pub struct SqliteDb {
    pool: Arc<Pool>,
    stall: Duration,
    count_wait: Duration,
    schema: SchemaCache,
}

impl SqliteDb {
    /// Opens `path` read-only with a pool of `pool_size` connections and a per-query `time_limit`
    /// (the other [`SqliteOptions`] at their defaults).
    ///
    /// # Errors
    /// SQLite's error when the file cannot be opened as a database.
    pub fn open(path: &Path, pool_size: usize, time_limit: Duration) -> Result<Self, rusqlite::Error> {
        Self::open_with(
            path,
            SqliteOptions::default()
                .pool_size(pool_size)
                .time_limit(time_limit),
        )
    }

    /// Opens `path` read-only with `options`.
    ///
    /// # Errors
    /// SQLite's error when the file cannot be opened as a database.
    pub fn open_with(path: &Path, options: SqliteOptions) -> Result<Self, rusqlite::Error> {
        let pool = Pool::open(path, &options)?;
        let pool = Arc::new(pool);
        let schema = SchemaCache::new(Arc::new(Describer(Arc::clone(&pool))), options.schema_ttl);
        Ok(Self {
            pool,
            stall: options.stall,
            count_wait: options.count_wait,
            schema,
        })
    }

    /// The executor of the model's SQL: params `{"sql": "SELECT …", "params"?: [..] | {..}}`, one
    /// read-only `SELECT` (or `WITH … SELECT`) statement, checked before it runs (see the crate
    /// docs), with its parameters bound by position (an array: `?1`, `?2`, …) or by name (an object:
    /// `:name`, `@name`, `$name`).
    #[must_use]
    pub fn sql_executor(&self) -> SqliteExecutor {
        self.executor_of(SqlKind::Sql)
    }

    /// [`SqliteDb::sql_executor`] under the operator's function policy: the built-in list of
    /// functions the model's SQL may not call and what `policy` adds — the functions you registered
    /// on the connections ([`FunctionPolicy::user_defined`]) refused unless allowed, more refusals,
    /// an allow list.
    #[must_use]
    pub fn sql_executor_with(&self, policy: FunctionPolicy) -> SqliteExecutor {
        SqliteExecutor {
            policy: Arc::new(policy),
            ..self.executor_of(SqlKind::Sql)
        }
    }

    /// The executor of a query you write: `build` turns a tool call's params into the statement and
    /// its values ([`SqliteQuery`]), or into a message for the model when they are wrong. Your SQL
    /// runs on the same read-only connections, wrapped the same way.
    ///
    /// ```
    /// use dual_sqlite::{SqliteDb, SqliteQuery};
    ///
    /// # fn demo(db: &SqliteDb) {
    /// let by_state = db.query_executor(|params| {
    ///     let state = params.get("state").and_then(|s| s.as_str()).ok_or("`state` is required")?;
    ///     Ok(SqliteQuery::new("SELECT * FROM institutions WHERE state = ?").bind(state.to_owned()))
    /// });
    /// # let _ = by_state;
    /// # }
    /// ```
    #[must_use]
    pub fn query_executor(
        &self,
        build: impl Fn(&Value) -> Result<SqliteQuery, String> + Send + Sync + 'static,
    ) -> SqliteExecutor {
        self.executor_of(SqlKind::fixed(build))
    }

    fn executor_of(&self, kind: SqlKind<SqliteQuery>) -> SqliteExecutor {
        SqliteExecutor {
            pool: Arc::clone(&self.pool),
            stall: self.stall,
            count_wait: self.count_wait,
            schema: self.schema.clone(),
            kind,
            policy: Arc::new(FunctionPolicy::new()),
        }
    }

    /// The database's tables and views with their columns (SQLite's own left out), described at
    /// most once per [`SqliteOptions::schema_ttl`]: what the `describe_schema` tool shows, and where
    /// the "did you mean …" of an unknown table or column comes from.
    #[must_use]
    pub fn schema(&self) -> &SchemaCache {
        &self.schema
    }
}

/// Runs one query kind over a [`SqliteDb`]; see the module docs.
#[derive(Debug, Clone)]
pub struct SqliteExecutor {
    pool: Arc<Pool>,
    stall: Duration,
    count_wait: Duration,
    schema: SchemaCache,
    kind: SqlKind<SqliteQuery>,
    policy: Arc<FunctionPolicy>,
}

/// How an export starts once it has its connection.
enum Begin {
    /// Signal the start at once, then stream the rows (live exports: ranges and sorts).
    Started(QueryStart),
    /// In one read transaction: count the rows, then stream them (the snapshot's stream, with the
    /// consistent count; see [`stream_counted`]).
    Counted(Counting),
}

/// What a counted export does around its count.
struct Counting {
    /// The query's pace: its statement waits while the server's writer waits for its turn.
    pace: dual_server::Pace,
    /// Called once the query has its connection, before it counts.
    connected: Box<dyn FnOnce() + Send>,
    /// Called with the count, before the first row is read.
    counted: Box<dyn FnOnce(u64) + Send>,
}

impl Counting {
    /// Signals `start` with the count when the count is done within `wait` of the query having its
    /// connection, else without a count once `wait` has passed (counting is running: a tool call can
    /// then answer "still running" however long the count takes). A count that fails ends the stream
    /// with its error, which the server reads as the query's end.
    fn signal(start: QueryStart, wait: Duration) -> Self {
        let pace = start.pace();
        // The count's thread signals itself, before its first row is read (no hop through a task:
        // the writer has the count when the first batch comes); a timer signals without a count
        // `wait` after the connection. Whichever comes first takes the signal.
        let slot = Arc::new(Mutex::new(Some(start)));
        let (timer, counter) = (Arc::clone(&slot), Arc::clone(&slot));
        let runtime = tokio::runtime::Handle::current();
        Self {
            pace,
            connected: Box::new(move || {
                if let Some(start) = lock(&slot).as_mut() {
                    // The query runs: `pending_after` counts from here, not from the count's end.
                    start.running();
                }
                runtime.spawn(async move {
                    tokio::time::sleep(wait).await;
                    if let Some(start) = lock(&timer).take() {
                        start.started();
                    }
                });
            }),
            counted: Box::new(move |total| {
                // Too late when the timer signalled without it: nothing to tell.
                if let Some(start) = lock(&counter).take() {
                    start.started_with_count(total);
                }
            }),
        }
    }
}

/// The start signal's slot, locked (a panic while it was held cannot leave it inconsistent).
fn lock(slot: &Mutex<Option<QueryStart>>) -> std::sync::MutexGuard<'_, Option<QueryStart>> {
    slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SqliteExecutor {
    /// Builds the query of `params` (validating user SQL on `conn`).
    fn query(&self, conn: &rusqlite::Connection, params: &Value) -> Result<SqliteQuery, String> {
        self.kind.query(params, |sql, values| {
            let sql = check_select(conn, sql, &self.policy).map_err(|Refused(message)| message)?;
            SqliteQuery::new(sql).bind_json(values)
        })
    }

    /// Runs `work` with a pooled connection on a blocking thread. Dropping the future interrupts the
    /// work (or stops it waiting for a connection) and gives the connection back.
    async fn run<T: Send + 'static>(
        &self,
        params: &Value,
        work: impl FnOnce(&Lease, SqliteQuery) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, ExecutorError> {
        let this = self.clone();
        let original = params;
        let params = params.clone();
        let limit = self.pool.time_limit();
        let cancel = Arc::new(Cancel::default());
        let guard = self.pool.cancel_on_drop(&cancel);
        let ran = tokio::task::spawn_blocking(move || {
            let lease = this.pool.get(Use::Query, &cancel).map_err(take_error)?;
            let query = this.query(lease.conn(), &params).map_err(ExecutorError::new)?;
            lease.restart_clock();
            work(&lease, query).map_err(|e| executor_error(&e, &lease, limit))
        })
        .await;
        // The work ended and gave its connection back: nothing left to cancel.
        guard.disarm();
        let ran = ran.map_err(|_| ExecutorError::new("the query was cancelled"))?;
        self.schema.explained(ran, model_sql(original), unknown).await
    }

    /// The export stream of `range`, started as `begin` says once the query has its connection.
    /// Dropping the stream before its end interrupts the statement and gives the connection back.
    fn export(
        self: Arc<Self>,
        params: Value,
        sort: Option<Sort>,
        range: RowRange,
        begin: Begin,
    ) -> RowStream {
        let sql: Arc<str> = Arc::from(model_sql(&params));
        let schema = self.schema.clone();
        // The stream ends cleanly only once every row was sent: any other end (a stalled reader, a
        // failure whose error could not be queued) reaches the reader as an error.
        let (rows, stream) = row_channel(STREAM_BUFFER, "export");
        let limit = self.pool.time_limit();
        let runtime = tokio::runtime::Handle::current();
        let cancel = Arc::new(Cancel::default());
        let guard = self.pool.cancel_on_drop(&cancel);
        // The snapshot's stream is read by the server's writer, which stops reading while it waits
        // for its background turn: no stall limit there (the server's time limit and its drop of
        // the stream bound it), and a connection outside the pool's size (see `Use::Snapshot`).
        let (purpose, stall) = match &begin {
            Begin::Started(_) => (Use::Export, self.stall),
            Begin::Counted(_) => (Use::Snapshot, Duration::MAX),
        };
        tokio::task::spawn_blocking(move || {
            let sender = Sender { rows, runtime, stall };
            let result = (|| {
                let lease = self.pool.get(purpose, &cancel).map_err(take_error)?;
                let counted = match begin {
                    Begin::Started(start) => {
                        start.started();
                        None
                    }
                    Begin::Counted(counting) => {
                        lease.follow_pace(counting.pace);
                        (counting.connected)();
                        Some(counting.counted)
                    }
                };
                let query = self.query(lease.conn(), &params).map_err(ExecutorError::new)?;
                lease.restart_clock();
                match counted {
                    None => stream_rows(&lease, &query, sort.as_ref(), range, &sender),
                    Some(announce) => stream_counted(&lease, &query, &sender, self.count_wait, announce),
                }
                .map_err(|e| executor_error(&e, &lease, limit))
            })();
            match result {
                Ok(true) => sender.rows.finish(),
                Ok(false) => {}
                // The receiver may be gone already (client disconnected): nothing left to tell.
                Err(error) => sender.rows.try_fail(error),
            }
        });
        let stream: RowStream = Box::pin(stream.then(move |item| {
            let (schema, sql) = (schema.clone(), Arc::clone(&sql));
            async move { schema.explained(item, &sql, unknown).await }
        }));
        guard.guard_stream(stream)
    }
}

impl QueryExecutor for SqliteExecutor {
    /// The whole result with the consistent count, in one read transaction on one connection (see
    /// the module docs). `start` is signalled once the query has its connection and its count (or
    /// has counted for [`SqliteOptions::count_wait`]). The connection is one of its own, outside the
    /// pool's size and export slots (the server's scheduler bounds how many snapshots are written
    /// at once), and the stream waits for its reader without a stall limit: the server's writer
    /// pauses while it waits for its background turn.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let counting = Counting::signal(start, self.count_wait);
        self.export(params, None, RowRange::ALL, Begin::Counted(counting))
    }

    fn columns(&self, params: &Value) -> Option<Vec<Column>> {
        // Called from async code: only use a connection that is idle right now (preparing is
        // microseconds); when all are busy, the server infers the columns from the sample instead.
        let lease = self.pool.try_get()?;
        let query = self.query(lease.conn(), params).ok()?;
        let stmt = lease.conn().prepare_cached(query.sql()).ok()?;
        convert::columns(&stmt)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }

    /// One statement seeks to the range (`LIMIT … OFFSET …`), so a range late in the result costs
    /// SQLite's skipping, not the rows before it crossing the channel.
    fn stream_range(self: Arc<Self>, params: Value, sort: Option<Sort>, range: RowRange) -> RowStream {
        self.export(params, sort, range, Begin::Started(QueryStart::detached()))
    }
}

#[async_trait]
impl LiveQuery for SqliteExecutor {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        self.run(params, |lease, query| count(lease, &query)).await
    }

    /// Steps the page's statement row by row and stops right after the first row the page's byte
    /// budget refuses: a page of wide rows reads the cap and one row, not `limit` rows.
    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let RowWindow {
            offset,
            limit,
            sort,
            max_bytes,
            ..
        } = window;
        let order = order_by(sort);
        self.run(params, move |lease, query| {
            let sql = format!("SELECT * FROM (\n{}\n){order} LIMIT ? OFFSET ?", query.sql());
            let mut stmt = lease.conn().prepare_cached(&sql)?;
            let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
            let limit_bind = i64::try_from(limit).unwrap_or(i64::MAX);
            let offset_bind = i64::try_from(offset).unwrap_or(i64::MAX);
            query.bind_to(&mut stmt, &[limit_bind, offset_bind])?;
            let mut rows = stmt.raw_query();
            let mut budget = (max_bytes < usize::MAX).then(|| RowBudget::new(limit, max_bytes));
            let mut out = Vec::new();
            let mut cap = ValueCap::new(lease.max_value_bytes());
            while let Some(row) = rows.next()? {
                let row = convert::row(row, &names, &mut cap)?;
                let kept = budget
                    .as_mut()
                    .is_none_or(|budget| budget.admit(dual_core::budget::row_json_len(&row)));
                out.push(row);
                if !kept {
                    break;
                }
            }
            Ok(out)
        })
        .await
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bounds;
#[cfg(test)]
mod tests_cancel;
#[cfg(test)]
mod tests_count;
