//! A [`QueryExecutor`] over a SQLite file: kinds `sql` (read-only SQL from the model) and
//! `institutions` (a typed search over the bundled dataset).
//!
//! Every query runs on a blocking thread with a pooled read-only connection, under a time limit; the
//! user's SQL is wrapped, never concatenated into a bigger statement:
//!
//! * the snapshot's stream ([`QueryExecutor::stream`]), with the consistent count: one read
//!   transaction — `BEGIN`, `SELECT COUNT(*) FROM (⟨sql⟩)`, then `SELECT * FROM (⟨sql⟩)` stepped once,
//!   in batches through a bounded channel, then `ROLLBACK` — so the count it announces
//!   ([`QueryStart::started_with_count`]) is exactly the rows it yields, whatever is written meanwhile;
//! * live count ([`LiveQuery::count`]): `SELECT COUNT(*) FROM (⟨sql⟩)`
//! * live page: `SELECT * FROM (⟨sql⟩) ORDER BY "field" DESC LIMIT ? OFFSET ?`
//! * live export ([`QueryExecutor::stream_range`]): `SELECT * FROM (⟨sql⟩) ORDER BY … LIMIT ? OFFSET ?`
//!   (the row range; `LIMIT -1` for all rows), stepped once, in batches through a bounded channel.
//!
//! A slow or stalled reader never blocks anyone else: exports may hold at most
//! [`SqliteOptions::export_slots`] of the pool's connections (pages, counts and tool calls always
//! find the rest), waiting for a connection is bounded by [`SqliteOptions::wait`] (then the retryable
//! `overloaded` error, never a hang), and an export whose reader takes nothing for
//! [`SqliteOptions::stall`] gives its connection back and ends with an error.
//!
//! A count that takes longer than [`SqliteOptions::count_wait`] is not announced: the stream then
//! tells the server it runs without a count (and the server counts the rows it streams), so a tool
//! call can still answer "still running" for a query whose count alone takes long.
//!
//! A query the server drops (its future or export stream: a `DELETE`, the time limit, a client gone)
//! is interrupted at once and its connection goes back to the pool (see `cancel.rs`), never inside a
//! transaction; a tool call is only told "still running" once its query has a connection and its
//! count ([`QueryStart`]).

mod cancel;
mod convert;
mod guard;
mod pool;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::Duration;

use async_trait::async_trait;
use dual_core::{Column, Row, Sort, SortOrder, budget::RowBudget, range::RowRange};
use dual_server::{ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream};
use rusqlite::types::Value as SqlValue;
use serde_json::Value;

use self::cancel::Cancel;
use self::convert::quote_identifier;
use self::guard::{Refused, check_select, sqlite_message};
use self::pool::{Lease, Pool, TakeError, Use};

/// The executor kind for read-only SQL: params `{"sql": "SELECT …"}`.
pub const SQL_KIND: &str = "sql";
/// The executor kind for the institution search: params `{"state"?: "NJ", "control"?: "public"}`.
pub const INSTITUTIONS_KIND: &str = "institutions";
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
/// Most rows per batch of an export stream…
pub const STREAM_BATCH: usize = 1_000;
/// …and about the most bytes (a batch is sent once its rows reach this; a single wider row is a
/// batch of its own), so an export holds at most its buffered batches of about 1 MiB each.
pub const STREAM_BATCH_BYTES: usize = 1 << 20;
/// Batches buffered between the SQLite thread and the HTTP response.
const STREAM_BUFFER: usize = 4;

const INSTITUTIONS_SQL: &str = "SELECT id, name, city, state, control, level, enrollment, founded \
     FROM institutions WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR control = ?2) ORDER BY id";

/// How a [`SqliteDb`] shares its connections.
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
        }
    }
}

/// A SQLite database served read-only: open it once, then register [`SqliteDb::executor`] for each
/// kind. Clones share the connection pool.
#[derive(Debug, Clone)]
pub struct SqliteDb {
    pool: Arc<Pool>,
    stall: Duration,
    count_wait: Duration,
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
            SqliteOptions {
                pool_size,
                time_limit,
                ..SqliteOptions::default()
            },
        )
    }

    /// Opens `path` read-only with `options`.
    ///
    /// # Errors
    /// SQLite's error when the file cannot be opened as a database.
    pub fn open_with(path: &Path, options: SqliteOptions) -> Result<Self, rusqlite::Error> {
        let pool = Pool::open(
            path,
            options.pool_size,
            options.export_slots,
            options.wait,
            options.time_limit,
        )?;
        Ok(Self {
            pool: Arc::new(pool),
            stall: options.stall,
            count_wait: options.count_wait,
        })
    }

    /// The executor for `kind` ([`SQL_KIND`] or [`INSTITUTIONS_KIND`]); `None` for any other kind.
    #[must_use]
    pub fn executor(&self, kind: &str) -> Option<SqliteExecutor> {
        let kind = match kind {
            SQL_KIND => Kind::Sql,
            INSTITUTIONS_KIND => Kind::Institutions,
            _ => return None,
        };
        Some(SqliteExecutor {
            pool: Arc::clone(&self.pool),
            stall: self.stall,
            count_wait: self.count_wait,
            kind,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sql,
    Institutions,
}

/// Runs one query kind over a [`SqliteDb`]; see the module docs.
#[derive(Debug, Clone)]
pub struct SqliteExecutor {
    pool: Arc<Pool>,
    stall: Duration,
    count_wait: Duration,
    kind: Kind,
}

/// A query ready to be wrapped: its SQL and the values bound to it.
struct Query {
    sql: String,
    binds: Vec<SqlValue>,
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
    /// Called once the query has its connection, before it counts.
    connected: Box<dyn FnOnce() + Send>,
    /// Called with the count, before the first row is read.
    counted: Box<dyn FnOnce(u64) + Send>,
}

impl Counting {
    /// Signals `start` with the count when the count is done within `wait` of the query having its
    /// connection, else without a count once `wait` has passed (counting is running: a tool call can
    /// then answer "still running" however long the count takes). A count that fails signals at once.
    fn signal(start: QueryStart, wait: Duration) -> Self {
        let (count, counted) = tokio::sync::oneshot::channel();
        let runtime = tokio::runtime::Handle::current();
        Self {
            connected: Box::new(move || {
                runtime.spawn(async move {
                    match tokio::time::timeout(wait, counted).await {
                        Ok(Ok(total)) => start.started_with_count(total),
                        _ => start.started(),
                    }
                });
            }),
            counted: Box::new(move |total| {
                // Too late when the signal went without it: nothing to tell.
                let _ = count.send(total);
            }),
        }
    }
}

impl SqliteExecutor {
    /// Builds the query of `params` (validating user SQL on `conn`).
    fn query(&self, conn: &rusqlite::Connection, params: &Value) -> Result<Query, String> {
        match self.kind {
            Kind::Sql => {
                let sql = params
                    .get("sql")
                    .and_then(Value::as_str)
                    .ok_or("the parameter `sql` (a string holding one SELECT statement) is required")?;
                let sql = check_select(conn, sql).map_err(|Refused(message)| message)?;
                Ok(Query {
                    sql,
                    binds: Vec::new(),
                })
            }
            Kind::Institutions => institutions_query(params),
        }
    }

    /// Runs `work` with a pooled connection on a blocking thread. Dropping the future interrupts the
    /// work (or stops it waiting for a connection) and gives the connection back.
    async fn run<T: Send + 'static>(
        &self,
        params: &Value,
        work: impl FnOnce(&Lease, Query) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, ExecutorError> {
        let this = self.clone();
        let params = params.clone();
        let limit = self.pool.time_limit();
        let cancel = Arc::new(Cancel::default());
        let guard = cancel::on_drop(&cancel, &self.pool);
        let ran = tokio::task::spawn_blocking(move || {
            let lease = this.pool.get(Use::Query, &cancel).map_err(take_error)?;
            let query = this.query(lease.conn(), &params).map_err(ExecutorError::new)?;
            lease.restart_clock();
            work(&lease, query).map_err(|e| executor_error(&e, &lease, limit))
        })
        .await;
        // The work ended and gave its connection back: nothing left to cancel.
        guard.disarm();
        ran.map_err(|_| ExecutorError::new("the query was cancelled"))?
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
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Vec<Row>, ExecutorError>>(STREAM_BUFFER);
        let limit = self.pool.time_limit();
        let runtime = tokio::runtime::Handle::current();
        let cancel = Arc::new(Cancel::default());
        let guard = cancel::on_drop(&cancel, &self.pool);
        // Set only when every row was sent: any other end (a stalled reader, a failure whose error
        // could not be queued) reaches the reader as an error, so an export is never cut silently.
        let complete = Arc::new(AtomicBool::new(false));
        let completed = Arc::clone(&complete);
        tokio::task::spawn_blocking(move || {
            let sender = Sender {
                tx,
                runtime,
                stall: self.stall,
            };
            let result = (|| {
                let lease = self.pool.get(Use::Export, &cancel).map_err(take_error)?;
                let counted = match begin {
                    Begin::Started(start) => {
                        start.started();
                        None
                    }
                    Begin::Counted(counting) => {
                        (counting.connected)();
                        Some(counting.counted)
                    }
                };
                let query = self.query(lease.conn(), &params).map_err(ExecutorError::new)?;
                lease.restart_clock();
                match counted {
                    None => stream_rows(&lease, query, sort.as_ref(), range, &sender),
                    Some(announce) => stream_counted(&lease, query, &sender, self.count_wait, announce),
                }
                .map_err(|e| executor_error(&e, &lease, limit))
            })();
            match result {
                Ok(true) => completed.store(true, Ordering::Release),
                Ok(false) => {}
                // The receiver may be gone already (client disconnected): nothing left to tell.
                Err(error) => drop(sender.tx.try_send(Err(error))),
            }
        });
        let mut ended = false;
        let stream: RowStream = Box::pin(futures_util::stream::poll_fn(move |cx| {
            if ended {
                return Poll::Ready(None);
            }
            match rx.poll_recv(cx) {
                Poll::Ready(None) => {
                    ended = true;
                    if complete.load(Ordering::Acquire) {
                        Poll::Ready(None)
                    } else {
                        Poll::Ready(Some(Err(ExecutorError::new(
                            "the export was cut before its end (the reader stalled, or the query failed)",
                        ))))
                    }
                }
                Poll::Ready(Some(Err(error))) => {
                    ended = true;
                    Poll::Ready(Some(Err(error)))
                }
                other => other,
            }
        }));
        guard.guard_stream(stream)
    }
}

impl QueryExecutor for SqliteExecutor {
    /// The whole result with the consistent count, in one read transaction on one connection (see
    /// the module docs). `start` is signalled once the query has its connection and its count (or
    /// has counted for [`SqliteOptions::count_wait`]), so a tool call waiting for a connection is not
    /// told the query runs, and gets the retryable `overloaded` when none comes within the wait limit.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let counting = Counting::signal(start, self.count_wait);
        self.export(params, None, RowRange::ALL, Begin::Counted(counting))
    }

    fn columns(&self, params: &Value) -> Option<Vec<Column>> {
        // Called from async code: only use a connection that is idle right now (preparing is
        // microseconds); when all are busy, the server infers the columns from the sample instead.
        let lease = self.pool.try_get()?;
        let query = self.query(lease.conn(), params).ok()?;
        let stmt = lease.conn().prepare_cached(&query.sql).ok()?;
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

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        self.fetch_page(params, offset, limit, sort, usize::MAX).await
    }

    /// Steps the page's statement row by row and stops right after the first row the page's byte
    /// budget refuses: a page of wide rows reads the cap and one row, not `limit` rows.
    async fn fetch_page(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
        max_bytes: usize,
    ) -> Result<Vec<Row>, ExecutorError> {
        let order = order_by(sort);
        self.run(params, move |lease, mut query| {
            let sql = format!("SELECT * FROM (\n{}\n){order} LIMIT ? OFFSET ?", query.sql);
            let mut stmt = lease.conn().prepare_cached(&sql)?;
            let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
            query
                .binds
                .push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
            query
                .binds
                .push(SqlValue::Integer(i64::try_from(offset).unwrap_or(i64::MAX)));
            let mut rows = stmt.query(rusqlite::params_from_iter(&query.binds))?;
            let mut budget = (max_bytes < usize::MAX).then(|| RowBudget::new(limit, max_bytes));
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let row = convert::row(row, &names)?;
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

/// The rows `query` matches: `SELECT COUNT(*) FROM (⟨sql⟩)`.
fn count(lease: &Lease, query: &Query) -> rusqlite::Result<u64> {
    let sql = format!("SELECT COUNT(*) FROM (\n{}\n)", query.sql);
    let mut stmt = lease.conn().prepare_cached(&sql)?;
    let count: i64 = stmt.query_row(rusqlite::params_from_iter(&query.binds), |row| row.get(0))?;
    Ok(u64::try_from(count).unwrap_or_default())
}

/// The sending half of an export, on its blocking thread: a send waits at most `stall` for the reader.
struct Sender {
    tx: tokio::sync::mpsc::Sender<Result<Vec<Row>, ExecutorError>>,
    runtime: tokio::runtime::Handle,
    stall: Duration,
}

/// Why an export stopped sending.
enum Stop {
    /// The reader went away: nothing left to do.
    Gone,
    /// The reader took nothing for the stall time.
    Stalled,
}

impl Sender {
    /// Sends `batch`, waiting at most the stall time for room.
    fn send(&self, batch: Vec<Row>) -> Result<(), Stop> {
        let sent = self
            .runtime
            .block_on(tokio::time::timeout(self.stall, self.tx.send(Ok(batch))));
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Stop::Gone),
            Err(_) => Err(Stop::Stalled),
        }
    }
}

/// Steps one statement over the whole result, sending batches of [`STREAM_BATCH`] rows or about
/// [`STREAM_BATCH_BYTES`]; stops early when
/// the receiver is dropped or stalls. The time limit applies to each batch. `Ok(true)` when every row
/// was sent.
fn stream_rows(
    lease: &Lease,
    mut query: Query,
    sort: Option<&Sort>,
    range: RowRange,
    sender: &Sender,
) -> rusqlite::Result<bool> {
    let sql = format!(
        "SELECT * FROM (\n{}\n){} LIMIT ? OFFSET ?",
        query.sql,
        order_by(sort)
    );
    // SQLite reads a negative LIMIT as "no limit".
    let limit = range
        .limit
        .map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX));
    query.binds.push(SqlValue::Integer(limit));
    query
        .binds
        .push(SqlValue::Integer(i64::try_from(range.offset).unwrap_or(i64::MAX)));
    let mut stmt = lease.conn().prepare_cached(&sql)?;
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.query(rusqlite::params_from_iter(&query.binds))?;
    let mut batch = Vec::with_capacity(STREAM_BATCH);
    let mut batch_bytes = 0usize;
    while let Some(row) = rows.next()? {
        let row = convert::row(row, &names)?;
        batch_bytes += convert::approx_len(&row);
        batch.push(row);
        if batch.len() == STREAM_BATCH || batch_bytes >= STREAM_BATCH_BYTES {
            batch_bytes = 0;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(STREAM_BATCH));
            match sender.send(full) {
                Ok(()) => lease.restart_clock(),
                Err(stop) => {
                    stopped(&stop, sender.stall);
                    return Ok(false);
                }
            }
        }
    }
    if !batch.is_empty()
        && let Err(stop) = sender.send(batch)
    {
        stopped(&stop, sender.stall);
        return Ok(false);
    }
    Ok(true)
}

/// The whole result of `query` with its count, in one read transaction: `BEGIN`, the count (handed
/// to `announce`), then the rows as [`stream_rows`] sends them, then `ROLLBACK` (nothing was
/// written). A count still running after `count_wait` would not be announced (see
/// [`Counting::signal`]): it is stopped there, and the rows are streamed without it, so a query whose
/// count costs as much as the query itself does not run twice. SQLite starts a deferred transaction's snapshot at its first read, the count, and keeps
/// it until the transaction ends, so the rows stepped afterwards are exactly the rows counted, however
/// other connections write meanwhile (in WAL mode they write on; in rollback-journal mode they wait).
/// The transaction ends on every return, an error or a stop included: dropping it rolls back, and a
/// [`Lease`] never goes back to the pool inside a transaction.
fn stream_counted(
    lease: &Lease,
    query: Query,
    sender: &Sender,
    count_wait: Duration,
    announce: impl FnOnce(u64),
) -> rusqlite::Result<bool> {
    let transaction = lease.conn().unchecked_transaction()?;
    lease.restart_clock_within(count_wait);
    match count(lease, &query) {
        Ok(total) => announce(total),
        // Stopped at `count_wait` (not cancelled, not the time limit): stream without a count. The
        // read transaction stays: a SELECT that fails leaves it open.
        Err(rusqlite::Error::SqliteFailure(code, _))
            if code.code == rusqlite::ErrorCode::OperationInterrupted
                && !lease.cancelled()
                && count_wait < lease.time_limit() =>
        {
            tracing::debug!(
                count_wait_ms = u64::try_from(count_wait.as_millis()).unwrap_or(u64::MAX),
                "count slower than the count wait: streaming without it"
            );
        }
        Err(error) => return Err(error),
    }
    lease.restart_clock();
    let sent = stream_rows(lease, query, None, RowRange::ALL, sender)?;
    // Rolls back (nothing was written); the rows are out whatever that answers, and a failed
    // rollback is the lease's to clean up.
    drop(transaction);
    Ok(sent)
}

/// Logs why an export stopped early; the connection goes back to the pool as the lease drops.
fn stopped(stop: &Stop, stall: Duration) {
    match stop {
        Stop::Gone => tracing::debug!("export reader went away; connection released"),
        Stop::Stalled => tracing::warn!(
            stall_ms = u64::try_from(stall.as_millis()).unwrap_or(u64::MAX),
            "export reader took nothing for the stall time; connection released and export cut"
        ),
    }
}

/// A connection that could not be had: `overloaded` when none was free in time.
fn take_error(error: TakeError) -> ExecutorError {
    match error {
        TakeError::Busy { waited } => ExecutorError::overloaded(
            format!(
                "no database connection became free within {} ms",
                waited.as_millis()
            ),
            Duration::from_secs(1),
        ),
        TakeError::Sqlite(error) => ExecutorError::new(sqlite_message(&error)),
        TakeError::Cancelled => ExecutorError::new("the query was cancelled"),
    }
}

fn order_by(sort: Option<&Sort>) -> String {
    sort.map(|sort| {
        let order = match sort.order {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        };
        format!(" ORDER BY {} {order}", quote_identifier(&sort.field))
    })
    .unwrap_or_default()
}

fn executor_error(error: &rusqlite::Error, lease: &Lease, limit: Duration) -> ExecutorError {
    let message = sqlite_message(error);
    if message == "interrupted" && lease.cancelled() {
        ExecutorError::new("the query was cancelled")
    } else if message == "interrupted" {
        ExecutorError::new(format!(
            "the query exceeded the time limit of {} ms: add filters or aggregate",
            limit.as_millis()
        ))
    } else {
        ExecutorError::new(message)
    }
}

/// The institution search: optional `state` (two letters) and `control` (`public` or `private`).
fn institutions_query(params: &Value) -> Result<Query, String> {
    let empty = serde_json::Map::new();
    let params = match params {
        Value::Object(map) => map,
        Value::Null => &empty,
        _ => return Err("the parameters must be an object: {\"state\"?, \"control\"?}".to_owned()),
    };
    let mut state = SqlValue::Null;
    let mut control = SqlValue::Null;
    for (key, value) in params {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            ("state", Value::String(s)) if s.len() == 2 && s.chars().all(|c| c.is_ascii_alphabetic()) => {
                state = SqlValue::Text(s.to_ascii_uppercase());
            }
            ("state", _) => return Err("`state` must be a two-letter US state code, e.g. \"NJ\"".to_owned()),
            ("control", Value::String(c)) if c == "public" || c == "private" => {
                control = SqlValue::Text(c.clone());
            }
            ("control", _) => return Err("`control` must be \"public\" or \"private\"".to_owned()),
            (other, _) => return Err(format!("unknown parameter `{other}`: use `state` and `control`")),
        }
    }
    Ok(Query {
        sql: INSTITUTIONS_SQL.to_owned(),
        binds: vec![state, control],
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bounds;
#[cfg(test)]
mod tests_cancel;
#[cfg(test)]
mod tests_count;
