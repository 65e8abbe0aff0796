//! One example executor for tests, examples and benches: [`Numbers`], `n` numbered rows computed
//! on the fly, with failure switches, a fetch counter, a gated slow mode and switches for the
//! optional capabilities (live paging, consistent count).
//!
//! [`Paged`] makes a live executor of a test's own row function, [`Stored`] serves a table built
//! once. [`read_to_end`] reads a stream to its end or its first error.
//!
//! It shows nothing about how to write an executor for a real backend; `dual-http`'s
//! `examples/hyper_server.rs` and the [`QueryExecutor`] docs do that.

mod paged;
mod read;
mod rows;
mod stored;
mod stream;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use dual_core::range::RowRange;
use dual_core::{Row, Sort, SortOrder};
use dual_server::{
    DEFAULT_SAMPLE_SIZE, DEFAULT_STREAM_BATCH, ExecutorError, LiveQuery, QueryExecutor, QueryStart,
    RowStream, RowWindow, paged_range_stream, take_rows,
};
use serde_json::Value;
use tokio::sync::Semaphore;

pub use paged::Paged;
pub use read::read_to_end;
pub(crate) use rows::sorted;
pub use rows::{object, row, wide_row};
pub use stored::Stored;

/// What [`Numbers`] says when a failure switch other than `fail_count` is on: text that must never
/// reach a REST client (it names a table and a column, and reads like SQL).
pub const SECRET: &str = "SELECT secret_column FROM internal_table -- syntax error";
/// What [`Numbers`] says when `count` fails (`"fail_count": true`).
pub const COUNT_FAILURE: &str = "no such table: institutionz";
/// What a gated [`Numbers`] says when it fails after its last step ([`Numbers::then_fail`]).
pub const GATED_FAILURE: &str = "no such column: nme";

/// An in-memory executor over `n` numbered rows, computed when asked for (a 100,000-row export costs
/// no memory), by default of the shape of [`row`].
///
/// The query's params choose the result and switch failures on, so one registered executor serves
/// every case of a test:
///
/// | param | effect |
/// |---|---|
/// | `"n": rows` | the number of rows (required, unless [`Numbers::steps`] fixes the result) |
/// | `"fail_count": true` | `count` fails with [`COUNT_FAILURE`] (so does the stream of [`Numbers::counted`]) |
/// | `"fail": true` | `fetch` and the streams fail with [`SECRET`] |
/// | `"fail_fetch_over": k` | `fetch` fails with [`SECRET`] when asked for rows beyond row `k` |
/// | `"fail_stream_at": k` | the export stream yields `k` rows, then fails with [`SECRET`] |
/// | `"batch": b` | the export stream yields `b`-row batches (default [`Numbers::batch`]) |
/// | `"busy_after_sample": true` | every `fetch` but the sample's (a `limit` of the default sample size) and every export stream answer [`ExecutorError::overloaded`] (retry after 1.5 s and 3 s): an executor out of connections once the resource exists |
///
/// [`QueryExecutor::stream`] (what a snapshot is written from) yields the rows in `id` order and
/// signals [`QueryStart::started`] at once ([`QueryStart::started_with_count`] with
/// [`Numbers::counted`]). It has live paging ([`LiveQuery`]; none with [`Numbers::snapshots_only`]),
/// and its [`QueryExecutor::stream_range`] streams a range from row 0 in one pass and pages through
/// `fetch` from any other offset.
///
/// Rows sort by any column: by `id` computed on the fly, by another column by sorting all `n` rows
/// (numbers by value, anything else by its JSON text, ties by id). [`Numbers::fetches`] counts the
/// batches of rows asked for ([`LiveQuery::fetch`] calls and stream batches), and
/// [`Numbers::alive`] the streams not yet dropped.
///
/// With [`Numbers::steps`] the result is fixed and arrives slowly, for long-running-query tests: the
/// stream yields the first step at once and each further one only after the test calls
/// [`Numbers::open`], so a query stays pending for as long as the test wants.
///
/// ```
/// use std::sync::Arc;
/// use dual_server::{CreateResponse, DualResponseServer, QueryExecutor};
/// use dual_testkit::executor::{self, Numbers};
/// use serde_json::json;
///
/// # fn main() {
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let numbers = Arc::new(Numbers::new());
/// let server = DualResponseServer::builder()
///     .base_url("http://127.0.0.1/resources")
///     .shared_executor("numbers", Arc::clone(&numbers) as Arc<dyn QueryExecutor>)
///     .without_sweeper()
///     .build()
///     .unwrap();
/// let created = server.create_response(CreateResponse::new("numbers", json!({"n": 20}))).await.unwrap();
/// assert_eq!((created.total_count, &created.sample[3]), (20, &executor::row(3)));
/// assert!(numbers.fetches() > 0);
///
/// // A query that stays pending until the test lets its second step through.
/// let slow = Arc::new(Numbers::new().steps([5, 15]));
/// slow.open();
/// # });
/// # }
/// ```
#[derive(Debug)]
pub struct Numbers {
    row: fn(u64) -> Row,
    batch: u64,
    steps: Option<Vec<u64>>,
    then_fail: bool,
    counted: bool,
    live: bool,
    gate: Semaphore,
    fetches: AtomicUsize,
    alive: Arc<AtomicU64>,
}

impl Default for Numbers {
    fn default() -> Self {
        Self::new()
    }
}

impl Numbers {
    /// Rows of the shape of [`row`], `params.n` of them, exported in batches of
    /// [`DEFAULT_STREAM_BATCH`].
    #[must_use]
    pub fn new() -> Self {
        Self {
            row,
            batch: DEFAULT_STREAM_BATCH,
            steps: None,
            then_fail: false,
            counted: false,
            live: true,
            gate: Semaphore::new(0),
            fetches: AtomicUsize::new(0),
            alive: Arc::default(),
        }
    }

    /// Row `i` is `row(i)` (its `id` must be `i`), say [`wide_row`] or a test's own shape.
    #[must_use]
    pub fn row(mut self, row: fn(u64) -> Row) -> Self {
        self.row = row;
        self
    }

    /// Rows per export batch when the params say nothing (`"batch"`); at least 1.
    #[must_use]
    pub fn batch(mut self, rows: u64) -> Self {
        self.batch = rows.max(1);
        self
    }

    /// The gated slow mode: the result is `steps.sum()` rows whatever the params; the export stream
    /// yields `steps[0]` rows at once and each further step after one [`Numbers::open`].
    #[must_use]
    pub fn steps(mut self, steps: impl Into<Vec<u64>>) -> Self {
        self.steps = Some(steps.into());
        self
    }

    /// With [`Numbers::steps`]: one more [`Numbers::open`] after the last step makes the export
    /// stream fail with [`GATED_FAILURE`] instead of ending.
    #[must_use]
    pub fn then_fail(mut self) -> Self {
        self.then_fail = true;
        self
    }

    /// The consistent count: [`QueryExecutor::stream`] signals
    /// [`QueryStart::started_with_count`] with the total before its first row (and fails with
    /// [`COUNT_FAILURE`] under `"fail_count"`).
    #[must_use]
    pub fn counted(mut self) -> Self {
        self.counted = true;
        self
    }

    /// No live paging: [`QueryExecutor::live`] is `None`, as for an executor that serves snapshots
    /// only.
    #[must_use]
    pub fn snapshots_only(mut self) -> Self {
        self.live = false;
        self
    }

    /// Lets the next step of a gated export through (a permit is kept if no export waits yet).
    pub fn open(&self) {
        self.gate.add_permits(1);
    }

    /// Calls [`Numbers::open`] `times` times, `every` apart, from a task of its own.
    pub fn open_later(self: &Arc<Self>, every: Duration, times: usize) {
        let me = Arc::clone(self);
        tokio::spawn(async move {
            for _ in 0..times {
                tokio::time::sleep(every).await;
                me.open();
            }
        });
    }

    /// How many batches of rows were asked for: `fetch` calls and export batches.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// How many export streams are alive (not yet dropped).
    pub fn alive(&self) -> u64 {
        self.alive.load(Ordering::SeqCst)
    }

    /// The number of rows: the steps' sum, or `params.n`.
    fn total(&self, params: &Value) -> Result<u64, ExecutorError> {
        match &self.steps {
            Some(steps) => Ok(steps.iter().sum()),
            None => params["n"]
                .as_u64()
                .ok_or_else(|| ExecutorError::new("`n` must be a non-negative integer")),
        }
    }

    /// Rows `range` of the `n`-row result in the order of `sort`.
    fn rows(&self, n: u64, start: u64, end: u64, sort: Option<&Sort>) -> Vec<Row> {
        let (start, end) = (start.min(n), end.min(n));
        match sort {
            Some(sort) if sort.field != "id" => {
                let all = rows::sorted(n, self.row, sort);
                let range =
                    usize::try_from(start).unwrap_or(usize::MAX)..usize::try_from(end).unwrap_or(usize::MAX);
                all.get(range).unwrap_or_default().to_vec()
            }
            _ => {
                let desc = sort.is_some_and(|s| s.order == SortOrder::Desc);
                (start..end)
                    .map(|i| (self.row)(rows::id_at(i, n, desc)))
                    .collect()
            }
        }
    }
}

fn flag(params: &Value, name: &str) -> bool {
    params[name].as_bool() == Some(true)
}

/// The `busy_after_sample` answer of a `fetch` past the sample.
fn busy_fetch() -> ExecutorError {
    ExecutorError::overloaded(
        "no database connection within 2000 ms",
        Duration::from_millis(1500),
    )
}

/// The `busy_after_sample` answer of an export.
pub(crate) fn busy_export() -> ExecutorError {
    ExecutorError::overloaded("no export slot within 2000 ms", Duration::from_secs(3))
}

impl QueryExecutor for Numbers {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        stream::stream(self, params, None, start)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        self.live.then_some(self as &dyn LiveQuery)
    }

    fn stream_range(self: Arc<Self>, params: Value, sort: Option<Sort>, range: RowRange) -> RowStream {
        if range.offset == 0 {
            take_rows(
                stream::stream(self, params, sort, QueryStart::detached()),
                range.limit,
            )
        } else {
            paged_range_stream(self, params, sort, range, DEFAULT_STREAM_BATCH)
        }
    }
}

#[async_trait]
impl LiveQuery for Numbers {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        if flag(params, "fail_count") {
            return Err(ExecutorError::new(COUNT_FAILURE));
        }
        self.total(params)
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let RowWindow {
            offset, limit, sort, ..
        } = window;
        self.fetches.fetch_add(1, Ordering::SeqCst);
        if flag(params, "busy_after_sample") && limit != DEFAULT_SAMPLE_SIZE {
            return Err(busy_fetch());
        }
        let end = offset.saturating_add(limit);
        if flag(params, "fail") || params["fail_fetch_over"].as_u64().is_some_and(|k| end > k) {
            return Err(ExecutorError::new(SECRET));
        }
        let n = self.total(params)?;
        Ok(self.rows(n, offset, end, sort))
    }
}
