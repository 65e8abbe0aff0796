//! What `create_response` is asked to create.

use std::time::Duration;

use dual_core::{Column, QuerySpec};
use serde::Serialize;
use serde_json::Value;

/// A request to run a query and create a dual response for it.
///
/// ```
/// use std::time::Duration;
/// use dual_server::CreateResponse;
/// let request = CreateResponse::new("institutions", serde_json::json!({"state": "NJ"}))
///     .name("Institution Search Results")
///     .sample_size(20)
///     .expiration(Duration::from_secs(1800))
///     .owner("tenant-42")
///     .metadata(serde_json::json!({"source": "ipeds"}));
/// assert_eq!(request.query().kind, "institutions");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct CreateResponse {
    pub(crate) query: QuerySpec,
    pub(crate) name: Option<String>,
    pub(crate) columns: Option<Vec<Column>>,
    pub(crate) sample_size: Option<u64>,
    pub(crate) expiration: Option<Duration>,
    pub(crate) owner: Option<String>,
    pub(crate) metadata: Value,
    /// The latest the resource may expire (a refinement's parent's expiry), whatever `expiration`.
    pub(crate) expires_by: Option<time::OffsetDateTime>,
    /// Made by `DualResponseServer::refine`, which authorized the parent: the only way to run the
    /// kind `refine`.
    pub(crate) refinement: bool,
}

impl CreateResponse {
    /// Runs the executor registered for `kind` with `params`.
    pub fn new(kind: impl Into<String>, params: Value) -> Self {
        Self::from_spec(QuerySpec::new(kind, params))
    }

    /// Like [`CreateResponse::new`] with typed parameters, serialised to JSON.
    ///
    /// # Errors
    /// The serialisation error, when `params` does not serialise to JSON.
    pub fn typed<P: Serialize>(kind: impl Into<String>, params: &P) -> Result<Self, serde_json::Error> {
        Ok(Self::new(kind, serde_json::to_value(params)?))
    }

    /// Runs `query`.
    pub fn from_spec(query: QuerySpec) -> Self {
        Self {
            query,
            name: None,
            columns: None,
            sample_size: None,
            expiration: None,
            owner: None,
            metadata: Value::Null,
            expires_by: None,
            refinement: false,
        }
    }

    /// The resource's name (default: `"Query Results"`). It is display text: its control characters
    /// and bidirectional controls are stored escaped
    /// ([`display_safe`](dual_core::escape::display_safe)), so `ESC` in a name made from the model's
    /// SQL reaches no model, terminal or log raw.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The columns (default: what the executor declares, else inferred from the sample).
    pub fn columns(mut self, columns: Vec<Column>) -> Self {
        self.columns = Some(columns);
        self
    }

    /// Sample rows for the model (default: the server's sample size).
    pub fn sample_size(mut self, size: u64) -> Self {
        self.sample_size = Some(size);
        self
    }

    /// Lifetime of the resource (default: the server's expiration).
    pub fn expiration(mut self, expiration: Duration) -> Self {
        self.expiration = Some(expiration);
        self
    }

    /// Binds the resource to a tenant or principal: only a [`Caller`](crate::Caller) with this owner
    /// sees it, on every surface (REST, MCP `resources/read`); everyone else gets what an unknown id
    /// gets.
    pub fn owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = Some(owner.into());
        self
    }

    /// Custom JSON kept with the resource and returned by its metadata.
    pub fn metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }

    /// The query to run.
    #[must_use]
    pub fn query(&self) -> &QuerySpec {
        &self.query
    }
}
