//! [`Pooled`]: the executor of a database whose statements run on the pooled connections of an async
//! driver (dual-postgres, dual-mysql), written once around what the database crate writes itself
//! ([`PooledDatabase`], [`LivePaging`]).
//!
//! What is the same for every such database lives here: what a kind runs and its function policy,
//! the query of a tool call's params read once, the snapshot's stream written by a task of its own
//! into a [`row_channel`] (a cancel guard on the stream), and every error the database words
//! explained by its [`SchemaCache`] ("did you mean …"). What differs — a transaction, a count, a
//! fetch, a cancel — is the database crate's.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use dual_core::Row;
use dual_server::{CancelOnDrop, ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow};
use serde_json::Value;

use crate::sql_guard::FunctionPolicy;
use crate::{RowSender, SchemaCache, SqlKind, Unknown, model_sql, row_channel};

/// Batches buffered between the task writing a snapshot's rows and the stream's reader.
const STREAM_BUFFER: usize = 4;

/// What a database crate writes for [`Pooled`]: its query type, how the model's SQL becomes one, and
/// the snapshot's stream. [`LivePaging`] adds live paging.
#[async_trait]
pub trait PooledDatabase: Send + Sync + 'static {
    /// One statement and the values bound to it.
    type Query: Send + Sync + 'static;
    /// What a snapshot's stream shares with the guard that cancels its statement when the stream
    /// is dropped (the crate's cancel slot).
    type Cancel: Send + 'static;

    /// The model's `sql` checked under `policy` (exactly one read-only query, in the database's
    /// dialect), with `values`, the tool call's `params` (`null` when absent), bound.
    ///
    /// # Errors
    /// A message for the model: the refusal, or values that cannot be bound.
    fn model_query(sql: &str, values: &Value, policy: &FunctionPolicy) -> Result<Self::Query, String>;

    /// The table or column a message of the database's errors calls unknown.
    const UNKNOWN: fn(&str) -> Option<Unknown<'_>>;

    /// The description of the database, which explains an error naming an unknown table or column.
    fn schema(&self) -> &SchemaCache;

    /// A cancel slot for one snapshot's stream, and the guard that cancels the statement running in
    /// it when dropped.
    fn cancel(&self) -> (Self::Cancel, CancelOnDrop);

    /// Writes every row of `query` into `rows` (its connection taken through `cancel`, `start`
    /// signalled once it runs, with the count when the database counted it in the same snapshot).
    /// `Ok(true)` when every row was sent, `Ok(false)` when the reader went away first.
    ///
    /// # Errors
    /// The database's error, worded for the model.
    async fn write(
        self: Arc<Self>,
        query: Self::Query,
        start: QueryStart,
        cancel: Self::Cancel,
        rows: &RowSender,
    ) -> Result<bool, ExecutorError>;
}

/// Live paging of a [`PooledDatabase`]: the query re-run for its count and for each window.
#[async_trait]
pub trait LivePaging: PooledDatabase {
    /// The rows `query` matches now.
    ///
    /// # Errors
    /// The database's error, worded for the model.
    async fn count(&self, query: &Self::Query) -> Result<u64, ExecutorError>;

    /// The rows of `window` of `query`'s result.
    ///
    /// # Errors
    /// The database's error, worded for the model.
    async fn fetch(&self, query: &Self::Query, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError>;
}

/// The executor of one kind over a database `D`: a [`QueryExecutor`] with live paging.
///
/// The snapshot's stream is written on a task of its own into a channel of a few batches; dropping
/// the stream drops the guard of [`PooledDatabase::cancel`], which stops the running statement. An
/// error of the stream, the count or a page is explained by [`PooledDatabase::schema`] when it names
/// an unknown table or column of the model's SQL.
pub struct Pooled<D: PooledDatabase> {
    db: Arc<D>,
    kind: SqlKind<D::Query>,
    policy: Arc<FunctionPolicy>,
}

impl<D: PooledDatabase> Pooled<D> {
    /// The executor of the model's SQL (params `{"sql": "SELECT …", "params"?: [..]}`) on `db`,
    /// under `policy` (give it the database's own functions: [`FunctionPolicy::user_defined`]).
    #[must_use]
    pub fn sql(db: Arc<D>, policy: FunctionPolicy) -> Self {
        Self {
            db,
            kind: SqlKind::Sql,
            policy: Arc::new(policy),
        }
    }

    /// The executor of a query the developer writes on `db`: `build` turns a tool call's params into
    /// the query, or into a message for the model.
    #[must_use]
    pub fn fixed(
        db: Arc<D>,
        build: impl Fn(&Value) -> Result<D::Query, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            db,
            kind: SqlKind::fixed(build),
            policy: Arc::new(FunctionPolicy::new()),
        }
    }

    /// What this executor runs.
    #[must_use]
    pub fn kind(&self) -> &SqlKind<D::Query> {
        &self.kind
    }

    /// The query of `params`: the model's SQL checked, or the developer's built.
    fn query(&self, params: &Value) -> Result<D::Query, ExecutorError> {
        self.kind
            .query(params, |sql, values| D::model_query(sql, values, &self.policy))
            .map_err(ExecutorError::new)
    }

    /// `result`, its error explained by the schema against the model's SQL in `params`.
    async fn explained<T>(
        &self,
        params: &Value,
        result: Result<T, ExecutorError>,
    ) -> Result<T, ExecutorError> {
        self.db
            .schema()
            .explained(result, model_sql(params), D::UNKNOWN)
            .await
    }
}

impl<D: PooledDatabase> Clone for Pooled<D> {
    fn clone(&self) -> Self {
        Self {
            db: Arc::clone(&self.db),
            kind: self.kind.clone(),
            policy: Arc::clone(&self.policy),
        }
    }
}

impl<D: PooledDatabase> fmt::Debug for Pooled<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl<D: LivePaging> QueryExecutor for Pooled<D> {
    /// Every row, written by [`PooledDatabase::write`] on a task of its own; dropping the stream
    /// cancels the statement.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let (rows, stream) = row_channel(STREAM_BUFFER, "result");
        let (cancel, guard) = self.db.cancel();
        tokio::spawn(async move {
            let written = match self.query(&params) {
                Ok(query) => Arc::clone(&self.db).write(query, start, cancel, &rows).await,
                Err(error) => Err(error),
            };
            match written {
                Ok(true) => rows.finish(),
                Ok(false) => {}
                Err(error) => {
                    let explained = self.db.schema().explain(error, model_sql(&params), D::UNKNOWN);
                    rows.fail(explained.await).await;
                }
            }
        });
        guard.guard_stream(stream)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

#[async_trait]
impl<D: LivePaging> LiveQuery for Pooled<D> {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        let counted = match self.query(params) {
            Ok(query) => self.db.count(&query).await,
            Err(error) => Err(error),
        };
        self.explained(params, counted).await
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let fetched = match self.query(params) {
            Ok(query) => self.db.fetch(&query, window).await,
            Err(error) => Err(error),
        };
        self.explained(params, fetched).await
    }
}
