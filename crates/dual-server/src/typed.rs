//! Executors with typed parameters.

use async_trait::async_trait;
use dual_core::{Column, Row, Sort};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{ExecutorError, QueryExecutor};

/// A [`QueryExecutor`] whose parameters are a typed struct instead of raw JSON. Register it wrapped in
/// [`Typed`]; create responses for it with [`CreateResponse::typed`](crate::CreateResponse::typed).
///
/// ```
/// use dual_core::{Row, Sort};
/// use dual_server::{ExecutorError, Typed, TypedExecutor};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Search { state: String }
///
/// struct Institutions;
///
/// #[async_trait::async_trait]
/// impl TypedExecutor for Institutions {
///     type Params = Search;
///     async fn count(&self, p: &Search) -> Result<u64, ExecutorError> { Ok(p.state.len() as u64) }
///     async fn fetch(&self, p: &Search, offset: u64, limit: u64, _: Option<&Sort>) -> Result<Vec<Row>, ExecutorError> {
///         let row = |c: char| serde_json::json!({"letter": c}).as_object().cloned().unwrap_or_default();
///         Ok(p.state.chars().skip(offset as usize).take(limit as usize).map(row).collect())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = dual_server::DualResponseServer::builder()
///     .base_url("http://localhost/resources")
///     .executor("institutions", Typed(Institutions))
///     .build()?;
/// let request = dual_server::CreateResponse::typed("institutions", &Search { state: "NJ".into() })?;
/// let response = server.create_response(request).await?;
/// assert_eq!(response.total_count, 2);
/// # Ok(()) }
/// ```
#[async_trait]
pub trait TypedExecutor: Send + Sync + 'static {
    /// The parameters, decoded from the stored `QuerySpec.params`.
    type Params: DeserializeOwned + Send + Sync;

    /// As [`QueryExecutor::count`].
    async fn count(&self, params: &Self::Params) -> Result<u64, ExecutorError>;

    /// As [`QueryExecutor::fetch`].
    async fn fetch(
        &self,
        params: &Self::Params,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError>;

    /// As [`QueryExecutor::columns`].
    fn columns(&self, _params: &Self::Params) -> Option<Vec<Column>> {
        None
    }
}

/// Adapts a [`TypedExecutor`] into a [`QueryExecutor`]; parameters that do not decode are an
/// executor error naming what is wrong.
#[derive(Debug, Clone, Copy, Default)]
pub struct Typed<E>(pub E);

fn decode<P: DeserializeOwned>(params: &Value) -> Result<P, ExecutorError> {
    P::deserialize(params).map_err(|e| ExecutorError::new(format!("invalid query parameters: {e}")))
}

#[async_trait]
impl<E: TypedExecutor> QueryExecutor for Typed<E> {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        self.0.count(&decode(params)?).await
    }

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        self.0.fetch(&decode(params)?, offset, limit, sort).await
    }

    fn columns(&self, params: &Value) -> Option<Vec<Column>> {
        decode(params).ok().and_then(|p| self.0.columns(&p))
    }
}
