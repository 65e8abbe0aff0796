//! The query executor trait: how a registered kind streams its result, and the optional capability
//! of live paging ([`LiveQuery`]) that only live resources need.

use std::sync::Arc;

use async_trait::async_trait;
use dual_core::{Column, Row, Sort, range::RowRange};
use serde_json::Value;

use crate::{ExecutorError, QueryStart, RowBatch, RowStream, RowWindow};

/// Rows per [`LiveQuery::fetch`] call of the default [`QueryExecutor::stream_range`].
pub const DEFAULT_STREAM_BATCH: u64 = 1_000;

/// Runs the queries of one registered kind.
///
/// A resource stores its query as data (`QuerySpec { kind, params }`); every server instance registers
/// an executor per kind at start-up.
///
/// **Implement [`QueryExecutor::stream`]**: the whole result, once, in the query's own order. With
/// snapshots (the default), `create_response` runs it once and writes every row to the spool; the
/// sample and the count come from that pass, and pages, ranges and exports are served from the
/// snapshot and never run the query again, so the count the model saw is exactly the rows anyone
/// downloads.
///
/// The rest is optional:
///
/// * **consistent count**: an executor that can count the result in the same database snapshot its
///   stream reads (one read transaction) says so with [`QueryStart::started_with_count`], so the
///   server knows the total before the last row;
/// * **columns** ([`QueryExecutor::columns`]): the columns without looking at rows;
/// * **live paging with sort** ([`QueryExecutor::live`], a [`LiveQuery`]): needed only for *live*
///   resources — a result larger than the snapshot cap, or every resource of a server built
///   `without_snapshots()`. They are served by re-executing the query for every page and export (so
///   they follow the data). Without it, such a resource fails with `QUERY_EXECUTION_FAILED` saying
///   that the executor has no live paging;
/// * **seek for ranges** ([`QueryExecutor::stream_range`]): live ranged and sorted exports start at
///   an offset (SQL `LIMIT … OFFSET …`) instead of paging through [`LiveQuery::fetch`].
///
/// # Cancellation
///
/// The server cancels a query by dropping the [`RowStream`] of `stream` or `stream_range`, or the
/// future of a [`LiveQuery`] method, and never tells the executor otherwise. It does so when:
///
/// * a pending resource is deleted (`DELETE /{id}`, or MCP `tasks/cancel`, which deletes it) or
///   the server shuts down: the snapshot writer's task is aborted, dropping its stream;
/// * the query time limit passes: the snapshot writer, or a live resource's `count` and sample
///   `fetch` at creation, are dropped;
/// * the caller goes away: a `create_response` whose tool call was cancelled, a live page request or
///   an export whose client disconnected (their future or stream is dropped with the request);
/// * a ranged export has its rows: the stream is dropped after `range.limit` rows.
///
/// Work that lives in the future stops there. An executor whose work runs elsewhere — a blocking
/// thread, a statement on a database server — must stop it when the future or stream is dropped,
/// and give its connection back at once (within a second): SQLite's `InterruptHandle::interrupt`,
/// tokio-postgres' `CancelToken::cancel_query`, MySQL's `KILL QUERY`. [`CancelOnDrop`](crate::CancelOnDrop) does this:
/// a guard kept in the future or stream whose action stops the work unless disarmed once it ended.
/// A query still waiting for a connection when it is cancelled must not go on to run; over a
/// connection pool, dual-sql's `CancelSlot` keeps both rules and discards a connection a
/// cancel was sent to.
///
/// ```
/// use std::sync::Arc;
/// use dual_core::Row;
/// use dual_server::{ExecutorError, QueryExecutor, QueryStart, RowBatch, RowStream};
/// use serde_json::{Value, json};
///
/// /// Squares of 0..n, 1,000 rows a batch.
/// struct Squares;
///
/// impl QueryExecutor for Squares {
///     fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
///         let Some(n) = params["n"].as_u64() else {
///             let error = ExecutorError::new("`n` must be a non-negative integer");
///             return Box::pin(futures_util::stream::iter([Err(error)]));
///         };
///         // Nothing to wait for, and the total is known before the first row.
///         start.started_with_count(n);
///         let row = |i: u64| json!({"i": i, "square": i * i}).as_object().cloned().unwrap_or_default();
///         let batches = (0..n).step_by(1_000).map(move |first| {
///             Ok((first..n.min(first + 1_000)).map(row).collect::<RowBatch>())
///         });
///         Box::pin(futures_util::stream::iter(batches))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = dual_server::DualResponseServer::builder()
///     .base_url("http://localhost/resources")
///     .executor("squares", Squares)
///     .build()?;
/// let created = server.create_response(dual_server::CreateResponse::new("squares", json!({"n": 2500}))).await?;
/// assert_eq!(created.total_count, 2500);
/// # Ok(()) }
/// ```
pub trait QueryExecutor: Send + Sync + 'static {
    /// The whole result as batches, once, in the query's own order: what a snapshot is written from.
    ///
    /// Signal `start` when the query actually runs (it holds its connection; until then it only waits
    /// for capacity, and the tool call does not answer "still running"): [`QueryStart::started`], or
    /// [`QueryStart::started_with_count`] when the executor counted the result in the same database
    /// snapshot this stream reads. Dropping `start` counts as started. An executor with a bounded pool
    /// answers [`ExecutorError::overloaded`] when no connection comes within its wait limit.
    ///
    /// An executor with [live paging](QueryExecutor::live) may implement it with [`paged_stream`].
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream;

    /// The columns of the result, when the executor knows them without looking at rows. `None` (the
    /// default) lets the server infer them from the sample.
    fn columns(&self, _params: &Value) -> Option<Vec<Column>> {
        None
    }

    /// The capability "live paging with sort", needed only for live resources (a result larger than
    /// the snapshot cap, or any resource of a server without snapshots). `None` (the default): such a
    /// resource fails with `QUERY_EXECUTION_FAILED`, saying that the executor has no live paging.
    /// An executor that implements [`LiveQuery`] itself returns `Some(self)`.
    fn live(&self) -> Option<&dyn LiveQuery> {
        None
    }

    /// The rows of `range`, sorted by `sort`, as batches, in order: a live resource's ranged (parallel)
    /// and sorted exports.
    ///
    /// The default pages through [`LiveQuery::fetch`] of [`QueryExecutor::live`] from `range.offset`,
    /// [`DEFAULT_STREAM_BATCH`] rows at a time (see [`paged_range_stream`]), and is one error item when
    /// the executor has no live paging. Override it when the backend can seek (SQL `LIMIT … OFFSET …`)
    /// in one pass. An override may yield fewer rows than asked when the result is shorter; the server
    /// cuts any surplus after `range.limit` rows.
    fn stream_range(self: Arc<Self>, params: Value, sort: Option<Sort>, range: RowRange) -> RowStream {
        paged_range_stream(self, params, sort, range, DEFAULT_STREAM_BATCH)
    }
}

/// The capability "live paging with sort" of a [`QueryExecutor`] (see [`QueryExecutor::live`]): what
/// a *live* resource — a result larger than the snapshot cap, or any resource of a server built
/// `without_snapshots()` — is counted, sampled and paged with, re-executing the query every time.
/// An executor for snapshots only does not need it.
///
/// `P` is the parameters' type: [`Value`] for a [`QueryExecutor`], the typed parameters for a
/// [`TypedExecutor`](crate::TypedExecutor).
///
/// ```
/// use std::sync::Arc;
/// use dual_core::Row;
/// use dual_server::{
///     DEFAULT_STREAM_BATCH, ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow,
///     paged_stream,
/// };
/// use serde_json::{Value, json};
///
/// /// `n` numbered rows, served live too.
/// struct Numbers;
///
/// impl QueryExecutor for Numbers {
///     fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
///         start.started();
///         paged_stream(self, params, DEFAULT_STREAM_BATCH)
///     }
///     fn live(&self) -> Option<&dyn LiveQuery> {
///         Some(self)
///     }
/// }
///
/// #[async_trait::async_trait]
/// impl LiveQuery for Numbers {
///     async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
///         params["n"].as_u64().ok_or_else(|| ExecutorError::new("`n` must be a non-negative integer"))
///     }
///     async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
///         let n = self.count(params).await?;
///         Ok((window.offset..n.min(window.end()))
///             .map(|i| json!({"id": i}).as_object().cloned().unwrap_or_default())
///             .collect())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = dual_server::DualResponseServer::builder()
///     .base_url("http://localhost/resources")
///     .executor("numbers", Numbers)
///     .without_snapshots()
///     .build()?;
/// let created = server.create_response(dual_server::CreateResponse::new("numbers", json!({"n": 42}))).await?;
/// assert_eq!(created.total_count, 42);
/// # Ok(()) }
/// ```
#[async_trait]
pub trait LiveQuery<P: ?Sized + Sync = Value>: Send + Sync {
    /// The number of rows the query matches now.
    async fn count(&self, params: &P) -> Result<u64, ExecutorError>;

    /// The rows of `window`: up to `window.limit` rows from `window.offset`, sorted by `window.sort`
    /// when given. Of these the server keeps the rows within `window.max_bytes` (see [`RowBudget`]:
    /// each row counts its compact JSON plus one byte, the first row is always kept, and the first row
    /// refused ends the page).
    ///
    /// Returning all `window.limit` rows is always correct. When rows can be read one at a time (a
    /// cursor), offer each to `RowBudget::new(window.limit, window.max_bytes)` and stop right after the
    /// first one it refuses (return that one too: it tells the server that rows follow), so that a
    /// page of wide rows reads no more than the cap plus one row.
    ///
    /// [`RowBudget`]: dual_core::budget::RowBudget
    async fn fetch(&self, params: &P, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError>;
}

/// What a live operation on an executor without [live paging](QueryExecutor::live) fails with.
pub(crate) fn no_live_paging() -> ExecutorError {
    ExecutorError::new(
        "this query kind's executor serves snapshots only (it has no live paging), and this result \
         must be served live (the server keeps no snapshots, or the result is larger than the snapshot \
         cap): narrow the query",
    )
}

/// A [`RowStream`] of one error.
pub(crate) fn error_stream(error: ExecutorError) -> RowStream {
    Box::pin(futures_util::stream::iter([Err(error)]))
}

/// A [`RowStream`] of the whole result in the query's own order, paging through the
/// [`LiveQuery::fetch`] of `executor`'s [live paging](QueryExecutor::live) `batch` rows at a time
/// until a short page: how an executor with live paging may implement [`QueryExecutor::stream`].
/// One error item when the executor has no live paging.
pub fn paged_stream<E>(executor: Arc<E>, params: Value, batch: u64) -> RowStream
where
    E: QueryExecutor + ?Sized,
{
    paged_range_stream(executor, params, None, RowRange::ALL, batch)
}

/// A [`RowStream`] of the rows of `range`, sorted by `sort`: pages through the [`LiveQuery::fetch`]
/// of `executor`'s [live paging](QueryExecutor::live) from `range.offset`, `batch` rows at a time
/// (fewer for the last page of a limited range), until a short page or the range's end. One error
/// item when the executor has no live paging.
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
    if executor.live().is_none() {
        return error_stream(no_live_paging());
    }
    let batch = batch.max(1);
    let end = range.end();
    let state = Some((executor, params, sort, range.offset));
    Box::pin(futures_util::stream::unfold(state, move |state| async move {
        let (executor, params, sort, offset) = state?;
        let want = end.map_or(batch, |end| batch.min(end.saturating_sub(offset)));
        if want == 0 {
            return None;
        }
        let fetched = match executor.live() {
            Some(live) => {
                live.fetch(&params, RowWindow::new(offset, want).sorted(sort.as_ref()))
                    .await
            }
            None => Err(no_live_paging()),
        };
        match fetched {
            Ok(rows) if rows.is_empty() => None,
            Ok(mut rows) => {
                rows.truncate(usize::try_from(want).unwrap_or(usize::MAX));
                let full = rows.len() as u64 >= want;
                let next = full.then(|| (executor, params, sort, offset.saturating_add(rows.len() as u64)));
                Some((Ok(RowBatch::Rows(rows)), next))
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
