//! [`Paged`]: a live executor made of a row function, for tests that need rows of their own.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use dual_core::budget::RowBudget;
use dual_core::{Column, Row};
use dual_server::{
    DEFAULT_STREAM_BATCH, ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow,
    paged_stream,
};
use serde_json::Value;

type RowFn = dyn Fn(&Value, u64) -> Row + Send + Sync;
type CountFn = dyn Fn(&Value) -> Result<u64, ExecutorError> + Send + Sync;
type CheckFn = dyn Fn(&Value, u64, u64) -> Result<(), ExecutorError> + Send + Sync;

/// A live executor of `params.n` rows (none without `n`), row `i` made by a function of the params
/// and `i`, sort ignored: what a test writes when it needs rows of its own shape or a failure of its
/// own, without writing an executor.
///
/// Its [`QueryExecutor::stream`] signals [`QueryStart::started`] at once and pages through
/// [`LiveQuery::fetch`] in batches of [`DEFAULT_STREAM_BATCH`] rows. [`Paged::check`] makes fetches
/// fail, [`Paged::count`] replaces the count, [`Paged::columns`] declares the columns, and
/// [`Paged::cursor`] makes it read the rows of a page one at a time.
///
/// ```
/// use dual_server::{CreateResponse, DualResponseServer};
/// use dual_testkit::executor::{Paged, object};
/// use serde_json::json;
///
/// # fn main() {
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let blobs = Paged::new(|params, i| {
///     object(json!({"i": i, "blob": "x".repeat(params["bytes"].as_u64().unwrap_or(0) as usize)}))
/// });
/// let server = DualResponseServer::builder()
///     .base_url("http://127.0.0.1/resources")
///     .executor("blobs", blobs)
///     .without_sweeper()
///     .build()
///     .unwrap();
/// let created = server
///     .create_response(CreateResponse::new("blobs", json!({"n": 3, "bytes": 2})))
///     .await
///     .unwrap();
/// assert_eq!(created.sample[2]["blob"], "xx");
/// # });
/// # }
/// ```
pub struct Paged {
    row: Box<RowFn>,
    count: Box<CountFn>,
    check: Option<Box<CheckFn>>,
    columns: Option<Vec<Column>>,
    cursor: bool,
}

impl fmt::Debug for Paged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Paged")
            .field("check", &self.check.is_some())
            .field("columns", &self.columns)
            .field("cursor", &self.cursor)
            .finish_non_exhaustive()
    }
}

impl Paged {
    /// Row `i` is `row(params, i)`.
    pub fn new(row: impl Fn(&Value, u64) -> Row + Send + Sync + 'static) -> Self {
        Self {
            row: Box::new(row),
            count: Box::new(|params| Ok(params["n"].as_u64().unwrap_or(0))),
            check: None,
            columns: None,
            cursor: false,
        }
    }

    /// The count is `count(params)` instead of `params.n` (the rows fetched are still bounded by
    /// `params.n`).
    #[must_use]
    pub fn count(
        mut self,
        count: impl Fn(&Value) -> Result<u64, ExecutorError> + Send + Sync + 'static,
    ) -> Self {
        self.count = Box::new(count);
        self
    }

    /// Every fetch first calls `check(params, offset, limit)` and fails with its error.
    #[must_use]
    pub fn check(
        mut self,
        check: impl Fn(&Value, u64, u64) -> Result<(), ExecutorError> + Send + Sync + 'static,
    ) -> Self {
        self.check = Some(Box::new(check));
        self
    }

    /// A cursor: [`LiveQuery::fetch`] makes the rows one at a time, offers each to the page's
    /// [`RowBudget`] and stops after the first one it refuses, as the trait's docs advise, so a page
    /// makes no more rows than the cap and one.
    #[must_use]
    pub fn cursor(mut self) -> Self {
        self.cursor = true;
        self
    }

    /// [`QueryExecutor::columns`] answers `columns`, whatever the params.
    #[must_use]
    pub fn columns(mut self, columns: Vec<Column>) -> Self {
        self.columns = Some(columns);
        self
    }
}

impl QueryExecutor for Paged {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        start.started();
        paged_stream(self, params, DEFAULT_STREAM_BATCH)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }

    fn columns(&self, _: &Value) -> Option<Vec<Column>> {
        self.columns.clone()
    }
}

#[async_trait]
impl LiveQuery for Paged {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        (self.count)(params)
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let RowWindow {
            offset,
            limit,
            max_bytes,
            ..
        } = window;
        if let Some(check) = &self.check {
            check(params, offset, limit)?;
        }
        let rows = rows(params, offset, limit).map(|i| (self.row)(params, i));
        if !self.cursor {
            return Ok(rows.collect());
        }
        let mut budget = RowBudget::new(limit, max_bytes);
        let mut page = Vec::new();
        for row in rows {
            let kept = budget.admit(serde_json::to_vec(&row).map(|v| v.len()).unwrap_or(0));
            page.push(row);
            if !kept {
                break;
            }
        }
        Ok(page)
    }
}

/// The numbers of the rows `offset..offset + limit` of the `params.n` there are.
fn rows(params: &Value, offset: u64, limit: u64) -> std::ops::Range<u64> {
    let n = params["n"].as_u64().unwrap_or(0);
    offset.min(n)..n.min(offset.saturating_add(limit))
}
