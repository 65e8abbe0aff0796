//! Refining a stored result: SQL over a snapshot's rows, without the database (docs/DESIGN.md §4,
//! *Refining a result*).
//!
//! [`DualResponseServer::refine`](crate::DualResponseServer::refine) authorizes the caller on the
//! parent result as a page would, checks the SQL with the engine, and creates a new dual response
//! through `create_response` (the same limits, quotas, scheduler, snapshot and profile) whose query
//! is `{"kind": "refine", "params": {"parent": id, "sql": …}}`, whose owner is the parent's and whose
//! expiry is no later than the parent's. The executor of that kind ([`RefineExecutor`], registered
//! when the builder is given a [`RefineEngine`]) hands the engine the parent's stored rows; the
//! engine runs the SQL over them as the table `result`. No executor of the parent runs.

use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use dual_core::{Column, DualResponse, ResourceId, Row, consistency::Consistency, range::RowRange};
use futures_util::TryStreamExt;
use serde_json::{Value, json};

use crate::access::{accessed, readable, refuse_grant};
use crate::executor::error_stream;
use crate::inner::Inner;
use crate::refine_engine::{MAX_REFINE_SQL_BYTES, REFINE_KIND, RefineEngine, RefineInput};
use crate::source::Source;
use crate::{
    Caller, CreateResponse, ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow,
    ServerError, creation,
};

/// The executor of [`REFINE_KIND`]: the parent's stored rows, handed to the engine.
pub(crate) struct RefineExecutor {
    pub(crate) engine: Arc<dyn RefineEngine>,
    pub(crate) inner: Weak<Inner>,
}

impl RefineExecutor {
    /// The parent's rows and columns, read from its snapshot (never its executor).
    async fn parent(
        inner: &Inner,
        parent: ResourceId,
    ) -> Result<(Vec<Column>, u64, RowStream), ExecutorError> {
        let lookup = inner
            .store
            .get(parent, inner.clock.now())
            .await
            .map_err(|error| unreadable(&ServerError::from(error)))?;
        let record = crate::access::found(lookup).map_err(|error| unreadable(&error))?;
        readable(&record).map_err(|error| unreadable(&error))?;
        if record.consistency != Consistency::Snapshot || inner.spool.is_none() {
            return Err(unreadable(&not_stored()));
        }
        let rows = Source::of(inner, &record)
            .export(None, RowRange::ALL)
            .await
            .map_err(|error| unreadable(&error))?;
        Ok((record.columns, record.total_count, rows))
    }
}

/// The parent's rows could not be read (deleted meanwhile, or the store or spool failing): no fault
/// of the SQL, so a retryable failure (`OVERLOADED`, REST 503) whose message names no internals; the
/// cause goes to the log.
fn unreadable(error: &ServerError) -> ExecutorError {
    tracing::warn!(
        error = %dual_core::escape::log_error(error),
        "the result being refined could not be read"
    );
    ExecutorError::overloaded(
        "the result being refined could not be read (it was deleted meanwhile, or its storage is \
         failing): try again",
        Duration::from_secs(1),
    )
}

impl QueryExecutor for RefineExecutor {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let (parent, sql) = match parse_params(&params) {
            Ok(parsed) => parsed,
            Err(error) => return error_stream(error),
        };
        let Some(inner) = self.inner.upgrade() else {
            return error_stream(ExecutorError::new("the server is shutting down"));
        };
        let engine = Arc::clone(&self.engine);
        let rows = async move {
            let (columns, total_rows, rows) = Self::parent(&inner, parent).await?;
            drop(inner);
            let input = RefineInput {
                sql,
                columns,
                total_rows,
                rows,
            };
            Ok::<_, ExecutorError>(engine.refine(input, start))
        };
        Box::pin(futures_util::stream::once(rows).try_flatten())
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

/// A refined result is always stored: one past the snapshot cap fails here, saying which limit.
#[async_trait]
impl LiveQuery for RefineExecutor {
    async fn count(&self, _: &Value) -> Result<u64, ExecutorError> {
        Err(self.too_large())
    }

    async fn fetch(&self, _: &Value, _: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        Err(self.too_large())
    }
}

impl RefineExecutor {
    fn too_large(&self) -> ExecutorError {
        let cap = self
            .inner
            .upgrade()
            .and_then(|inner| inner.config.snapshot_max_bytes);
        ExecutorError::new(match cap {
            Some(cap) => format!(
                "the refined result is larger than the snapshot cap of {cap} bytes (snapshot_max_bytes): \
                 filter, aggregate or add a LIMIT"
            ),
            None => "this server keeps no snapshots, and a refined result must be stored".to_owned(),
        })
    }
}

/// The parent id and SQL of a refinement's params.
fn parse_params(params: &Value) -> Result<(ResourceId, String), ExecutorError> {
    let parent = params["parent"]
        .as_str()
        .and_then(|id| id.parse::<ResourceId>().ok())
        .ok_or_else(|| ExecutorError::new("`parent` must be the id of the result to refine"))?;
    let sql = params["sql"]
        .as_str()
        .ok_or_else(|| ExecutorError::new("`sql` must be a string"))?;
    Ok((parent, sql.to_owned()))
}

fn not_stored() -> ServerError {
    ServerError::NotRefinable {
        reason: "the result is served live (it is larger than the snapshot cap, or the server keeps no \
                 snapshots): its rows are not stored, so refine the original query instead",
    }
}

/// [`DualResponseServer::refine`](crate::DualResponseServer::refine), inside its span.
pub(crate) async fn refine(
    inner: &Arc<Inner>,
    parent: ResourceId,
    sql: &str,
    caller: &Caller,
) -> Result<DualResponse, ServerError> {
    let Some(engine) = inner.refine.clone() else {
        return Err(ServerError::NotRefinable {
            reason: "this server has no refine engine",
        });
    };
    // A link's grant reads one result and makes none.
    refuse_grant(caller)?;
    let record = accessed(inner, parent, caller).await?;
    readable(&record)?;
    if record.consistency != Consistency::Snapshot || inner.spool.is_none() {
        return Err(not_stored());
    }
    if sql.len() > MAX_REFINE_SQL_BYTES {
        return Err(with_columns(
            ExecutorError::new(format!(
                "the SQL is {} bytes, more than the cap of {MAX_REFINE_SQL_BYTES}",
                sql.len()
            )),
            &record.columns,
        ));
    }
    engine
        .check(sql)
        .map_err(|error| with_columns(error, &record.columns))?;
    let uri = dual_core::uri::resource_uri(&inner.config.uri_scheme, parent);
    let mut request = CreateResponse::new(REFINE_KIND, json!({"parent": parent.to_string(), "sql": sql}))
        .name(format!("{} (refined)", record.name))
        .metadata(json!({"refines": uri}));
    // No later than the parent (a pinned parent has no expiry: the default applies).
    request.expires_by = record.expires_at;
    request.refinement = true;
    if let Some(owner) = &record.owner {
        request = request.owner(owner.clone());
    }
    creation::create(inner, request)
        .await
        .map_err(|error| match error {
            ServerError::QueryExecutionFailed(error) => with_columns(error, &record.columns),
            // A refinement has no count of its own to fail: its limit, said as the query's failure.
            ServerError::CountExecutionFailed(error) => ServerError::QueryExecutionFailed(error),
            other => other,
        })
}

/// A SQL error for the model, with the columns of `result` it can use.
fn with_columns(error: ExecutorError, columns: &[Column]) -> ServerError {
    let mut message = error.message().to_owned();
    message.push_str("\nThe table `result` has the columns: ");
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            message.push_str(", ");
        }
        message.push_str(&dual_core::escape::display_safe(&column.name));
        message.push_str(" (");
        message.push_str(column.column_type.as_str());
        message.push(')');
    }
    ServerError::QueryExecutionFailed(ExecutorError::new(message))
}
