//! The query executor trait: how a registered kind counts, fetches and streams rows.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dual_core::{Column, Row, Sort, range::RowRange};
use futures_core::Stream;
use serde_json::Value;

use crate::QueryStart;

/// A stream of row batches, as [`QueryExecutor::stream`] yields them.
pub type RowStream = Pin<Box<dyn Stream<Item = Result<Vec<Row>, ExecutorError>> + Send>>;

/// Rows per `fetch` call of the default [`QueryExecutor::stream`].
pub const DEFAULT_STREAM_BATCH: u64 = 1_000;

/// An executor failed. The message is meant for the model (e.g. a SQL error it can fix); it is
/// never shown to REST callers.
///
/// Most failures are the query's ([`ExecutorError::new`]); an executor that cannot get capacity in
/// time (no database connection free within its wait limit) returns [`ExecutorError::overloaded`]
/// instead, which the server reports as the retryable `OVERLOADED` and REST as 503 `overloaded` with
/// `Retry-After` — never a hang.
///
/// Its `Display` is the message. [`ExecutorError::from_error`] takes another error's text as the
/// message and, like `std::io::Error::other`, goes on from that error's own
/// [`source`](std::error::Error::source), so no text is shown twice; [`ExecutorError::get_ref`]
/// gives the wrapped error itself.
#[derive(Debug)]
pub struct ExecutorError {
    message: String,
    /// `Some` when the failure is a lack of capacity: when to retry.
    retry_after: Option<Duration>,
    /// The error `from_error` wrapped: its text is `message`.
    wrapped: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl std::fmt::Display for ExecutorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExecutorError {
    /// The wrapped error's source: the wrapped error's own text is already the message.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.wrapped.as_ref()?.source()
    }
}

impl ExecutorError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retry_after: None,
            wrapped: None,
        }
    }

    /// Wraps `error`, keeping its display text as the message; its sources are this error's.
    pub fn from_error(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            message: error.to_string(),
            retry_after: None,
            wrapped: Some(Box::new(error)),
        }
    }

    /// The error [`ExecutorError::from_error`] wrapped (to downcast it), `None` for the others.
    #[must_use]
    pub fn get_ref(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.wrapped.as_deref()
    }

    /// No capacity right now (say, no database connection could be had within the wait limit):
    /// retryable, after about `retry_after`.
    pub fn overloaded(message: impl Into<String>, retry_after: Duration) -> Self {
        Self {
            message: message.into(),
            retry_after: Some(retry_after),
            wrapped: None,
        }
    }

    /// When this is an [`ExecutorError::overloaded`] error: how long to wait before retrying.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Runs the queries of one registered kind.
///
/// A resource stores its query as data (`QuerySpec { kind, params }`); every server instance registers
/// an executor per kind at start-up, and re-executes the spec for every page and export, so results
/// are fresh. Implement `count` and `fetch`; override `stream` when the backend can produce the whole
/// result in one pass (a cursor), which `/data` exports then use, and `stream_range` when it can also
/// start that pass at an offset (SQL `LIMIT … OFFSET …`), which ranged exports then use.
///
/// # Cancellation
///
/// The server cancels a query by dropping the future of `count` or `fetch`, or the [`RowStream`] of
/// `stream`, `stream_range` or `stream_with_start`, and never tells the executor otherwise. It does
/// so when:
///
/// * a pending resource is deleted (`DELETE /{id}`, or MCP `tasks/cancel`, which deletes it) or
///   the server shuts down: the snapshot writer's task is aborted, dropping its stream;
/// * the query time limit passes: the snapshot writer, or a live resource's `count` and sample
///   `fetch` at creation, are dropped;
/// * the caller goes away: a `create_response` whose tool call was cancelled, a page request or an
///   export whose client disconnected (their future or stream is dropped with the request);
/// * a ranged export has its rows: the stream is dropped after `range.limit` rows.
///
/// Work that lives in the future stops there. An executor whose work runs elsewhere — a blocking
/// thread, a statement on a database server — must stop it when the future or stream is dropped,
/// and give its connection back at once (within a second): SQLite's `InterruptHandle::interrupt`,
/// tokio-postgres' `CancelToken::cancel_query`, MySQL's `KILL QUERY`. [`CancelOnDrop`](crate::CancelOnDrop) does this:
/// a guard kept in the future or stream whose action stops the work unless disarmed once it ended.
/// A query still waiting for a connection when it is cancelled must not go on to run.
///
/// ```
/// use std::sync::Arc;
/// use dual_core::{Row, Sort};
/// use dual_server::{ExecutorError, QueryExecutor};
/// use serde_json::Value;
///
/// /// Squares of 0..n.
/// struct Squares;
///
/// #[async_trait::async_trait]
/// impl QueryExecutor for Squares {
///     async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
///         params["n"].as_u64().ok_or_else(|| ExecutorError::new("`n` must be a non-negative integer"))
///     }
///     async fn fetch(&self, params: &Value, offset: u64, limit: u64, _sort: Option<&Sort>)
///         -> Result<Vec<Row>, ExecutorError> {
///         let n = self.count(params).await?;
///         Ok((offset..n.min(offset.saturating_add(limit)))
///             .map(|i| serde_json::json!({"i": i, "square": i * i}).as_object().cloned().unwrap_or_default())
///             .collect())
///     }
/// }
/// ```
#[async_trait]
pub trait QueryExecutor: Send + Sync + 'static {
    /// The number of rows the query matches.
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError>;

    /// Up to `limit` rows starting at `offset`, sorted by `sort` when given.
    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError>;

    /// The rows of one page of a live resource: up to `limit` rows from `offset`, sorted by `sort`,
    /// of which the server keeps those within `max_bytes` (see [`RowBudget`]: each row counts its
    /// compact JSON plus one byte, the first row is always kept, and the first row refused ends the
    /// page).
    ///
    /// The default calls [`QueryExecutor::fetch`], so memory holds all `limit` rows before the server
    /// cuts them. Override it when rows can be read one at a time (a cursor): offer each row to
    /// `RowBudget::new(limit, max_bytes)` and stop right after the first one it refuses (return
    /// that one too: it tells the server that rows follow), so no more than the cap plus one row is
    /// ever read.
    ///
    /// [`RowBudget`]: dual_core::budget::RowBudget
    async fn fetch_page(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
        max_bytes: usize,
    ) -> Result<Vec<Row>, ExecutorError> {
        let _ = max_bytes;
        self.fetch(params, offset, limit, sort).await
    }

    /// The columns of the result, when the executor knows them without looking at rows. `None` (the
    /// default) lets the server infer them from the sample.
    fn columns(&self, _params: &Value) -> Option<Vec<Column>> {
        None
    }

    /// The whole result as batches, in order. The default pages through [`QueryExecutor::fetch`]
    /// [`DEFAULT_STREAM_BATCH`] rows at a time until a short page; override it with a single-pass
    /// cursor when the backend has one.
    fn stream(self: Arc<Self>, params: Value, sort: Option<Sort>) -> RowStream {
        paged_stream(self, params, sort, DEFAULT_STREAM_BATCH)
    }

    /// [`QueryExecutor::stream`] for the one pass that writes a snapshot at creation, telling the
    /// server through `start` when the query actually runs (see [`QueryStart`]): until then it only
    /// waits for capacity, and the tool call does not answer "still running".
    ///
    /// The default signals at once and calls [`QueryExecutor::stream`]. Override it when the query
    /// can wait for a connection (a bounded pool): call [`QueryStart::started`] once it has one, and
    /// answer [`ExecutorError::overloaded`] when none comes within the executor's wait limit.
    fn stream_with_start(self: Arc<Self>, params: Value, sort: Option<Sort>, start: QueryStart) -> RowStream {
        start.started();
        self.stream(params, sort)
    }

    /// The rows of `range`, as batches, in order: the building block of ranged (parallel) exports.
    ///
    /// The default serves a range starting at row 0 from [`QueryExecutor::stream`] (so a cursor
    /// override is used), cut after `range.limit` rows, and any other range by paging through
    /// [`QueryExecutor::fetch`] from `range.offset`, [`DEFAULT_STREAM_BATCH`] rows at a time (see
    /// [`paged_range_stream`]). Override it when the backend can seek (SQL `LIMIT … OFFSET …`). An
    /// override may yield fewer rows than asked when the result is shorter; the server cuts any
    /// surplus after `range.limit` rows.
    fn stream_range(self: Arc<Self>, params: Value, sort: Option<Sort>, range: RowRange) -> RowStream {
        if range.offset == 0 {
            take_rows(self.stream(params, sort), range.limit)
        } else {
            paged_range_stream(self, params, sort, range, DEFAULT_STREAM_BATCH)
        }
    }
}

/// A [`RowStream`] that pages through `executor.fetch` `batch` rows at a time until a short page.
pub fn paged_stream<E>(executor: Arc<E>, params: Value, sort: Option<Sort>, batch: u64) -> RowStream
where
    E: QueryExecutor + ?Sized,
{
    paged_range_stream(executor, params, sort, RowRange::ALL, batch)
}

/// A [`RowStream`] of the rows of `range`: pages through `executor.fetch` from `range.offset`, `batch`
/// rows at a time (fewer for the last page of a limited range), until a short page or the range's end.
pub fn paged_range_stream<E>(
    executor: Arc<E>,
    params: Value,
    sort: Option<Sort>,
    range: RowRange,
    batch: u64,
) -> RowStream
where
    E: QueryExecutor + ?Sized,
{
    let batch = batch.max(1);
    let end = range.end();
    let state = Some((executor, params, sort, range.offset));
    Box::pin(futures_util::stream::unfold(state, move |state| async move {
        let (executor, params, sort, offset) = state?;
        let want = end.map_or(batch, |end| batch.min(end.saturating_sub(offset)));
        if want == 0 {
            return None;
        }
        match executor.fetch(&params, offset, want, sort.as_ref()).await {
            Ok(rows) if rows.is_empty() => None,
            Ok(mut rows) => {
                rows.truncate(usize::try_from(want).unwrap_or(usize::MAX));
                let full = rows.len() as u64 >= want;
                let next = full.then(|| (executor, params, sort, offset.saturating_add(rows.len() as u64)));
                Some((Ok(rows), next))
            }
            Err(error) => Some((Err(error), None)),
        }
    }))
}

/// `stream` cut after `limit` rows (unchanged when `None`). The inner stream is dropped as soon as
/// the last row is out, so an executor behind it stops working; errors pass through.
pub fn take_rows(stream: RowStream, limit: Option<u64>) -> RowStream {
    let Some(limit) = limit else {
        return stream;
    };
    let state = (Some(stream), limit);
    Box::pin(futures_util::stream::unfold(state, |(stream, left)| async move {
        use futures_util::StreamExt;
        let mut stream = stream.filter(|_| left > 0)?;
        loop {
            match stream.next().await? {
                Ok(batch) if batch.is_empty() => {}
                Ok(mut batch) => {
                    let keep = usize::try_from(left).unwrap_or(usize::MAX).min(batch.len());
                    batch.truncate(keep);
                    let left = left - keep as u64;
                    // Drop the inner stream right away once the range is complete.
                    let rest = (left > 0).then_some(stream);
                    return Some((Ok(batch), (rest, left)));
                }
                Err(error) => return Some((Err(error), (None, 0))),
            }
        }
    }))
}
