//! Executors with typed parameters.

use std::sync::Arc;

use async_trait::async_trait;
use dual_core::{Column, Row};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::executor::{error_stream, no_live_paging};
use crate::{ExecutorError, LiveQuery, QueryExecutor, QueryStart, RowStream, RowWindow};

/// A [`QueryExecutor`] whose parameters are a typed struct instead of raw JSON. Register it wrapped in
/// [`Typed`]; create responses for it with [`CreateResponse::typed`](crate::CreateResponse::typed).
///
/// As for a [`QueryExecutor`], only [`TypedExecutor::stream`] is required; live resources need
/// [`TypedExecutor::live`] too.
///
/// ```
/// use std::sync::Arc;
/// use dual_core::Row;
/// use dual_server::{QueryStart, RowStream, Typed, TypedExecutor};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Search { state: String }
///
/// /// One row per letter of the state code.
/// struct Institutions;
///
/// impl TypedExecutor for Institutions {
///     type Params = Search;
///     fn stream(self: Arc<Self>, p: Search, start: QueryStart) -> RowStream {
///         start.started();
///         let row = |c: char| serde_json::json!({"letter": c}).as_object().cloned().unwrap_or_default();
///         let rows: Vec<Row> = p.state.chars().map(row).collect();
///         Box::pin(futures_util::stream::iter([Ok(rows.into())]))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = dual_server::DualResponseServer::builder()
///     .base_url("http://localhost/resources")
///     .executor("institutions", Typed::new(Institutions))
///     .build()?;
/// let request = dual_server::CreateResponse::typed("institutions", &Search { state: "NJ".into() })?;
/// let response = server.create_response(request).await?;
/// assert_eq!(response.total_count, 2);
/// # Ok(()) }
/// ```
pub trait TypedExecutor: Send + Sync + 'static {
    /// The parameters, decoded from the stored `QuerySpec.params`.
    type Params: DeserializeOwned + Send + Sync + 'static;

    /// As [`QueryExecutor::stream`].
    fn stream(self: Arc<Self>, params: Self::Params, start: QueryStart) -> RowStream;

    /// As [`QueryExecutor::columns`].
    fn columns(&self, _params: &Self::Params) -> Option<Vec<Column>> {
        None
    }

    /// As [`QueryExecutor::live`]: needed only for live resources.
    fn live(&self) -> Option<&dyn LiveQuery<Self::Params>> {
        None
    }
}

/// Adapts a [`TypedExecutor`] into a [`QueryExecutor`]; parameters that do not decode are an
/// executor error naming what is wrong (for [`QueryExecutor::stream`], its one item).
#[derive(Debug)]
pub struct Typed<E>(Arc<E>);

impl<E: TypedExecutor> Typed<E> {
    /// Adapts `executor`.
    pub fn new(executor: E) -> Self {
        Self(Arc::new(executor))
    }
}

impl<E> From<Arc<E>> for Typed<E> {
    /// Adapts a shared executor.
    fn from(executor: Arc<E>) -> Self {
        Self(executor)
    }
}

impl<E> Clone for Typed<E> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

fn decode<P: DeserializeOwned>(params: &Value) -> Result<P, ExecutorError> {
    P::deserialize(params).map_err(|e| ExecutorError::new(format!("invalid query parameters: {e}")))
}

impl<E: TypedExecutor> Typed<E> {
    /// The typed executor's live paging, or the error saying it has none.
    fn typed_live(&self) -> Result<&dyn LiveQuery<E::Params>, ExecutorError> {
        self.0.live().ok_or_else(no_live_paging)
    }
}

impl<E: TypedExecutor> QueryExecutor for Typed<E> {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        match decode(&params) {
            Ok(params) => Arc::clone(&self.0).stream(params, start),
            Err(error) => error_stream(error),
        }
    }

    fn columns(&self, params: &Value) -> Option<Vec<Column>> {
        decode(params).ok().and_then(|p| self.0.columns(&p))
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        self.0.live().is_some().then_some(self as &dyn LiveQuery)
    }
}

#[async_trait]
impl<E: TypedExecutor> LiveQuery for Typed<E> {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        let params = decode(params)?;
        self.typed_live()?.count(&params).await
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let params = decode(params)?;
        self.typed_live()?.fetch(&params, window).await
    }
}
