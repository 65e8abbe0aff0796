//! `ParsedDualResponse`: what a tool result said, and the operations on its resource.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use dual_core::{
    Column, PageRequest, PageResponse, Row, Sort,
    metadata::{PinResponse, ResourceMetadata},
    status::ResourceStatus,
};
use http::Method;
use time::OffsetDateTime;
use tokio::time::Instant;
use tracing::Instrument;

use crate::client::DualResponseClient;
use crate::error::{ClientError, ClientErrorCode};
use crate::parse::Found;
use crate::transport::Call;

/// Which page [`ParsedDualResponse::fetch`] asks for.
///
/// ```
/// use dual_client::FetchOptions;
/// use dual_client::{Sort, SortOrder};
///
/// let options = FetchOptions::new().offset(100).limit(50).sort(Sort::new("enrollment", SortOrder::Desc));
/// assert_eq!(options.limit, Some(50));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchOptions {
    /// First row, 0-based (default 0).
    pub offset: u64,
    /// Rows to return; `None` lets the server use its default (100).
    pub limit: Option<u64>,
    /// Sort by a column before paging; the server re-executes the query with it.
    pub sort: Option<Sort>,
}

impl FetchOptions {
    /// The first page with the server's default limit, unsorted.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the first row.
    #[must_use]
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }

    /// Sets the page size.
    #[must_use]
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sets the sort.
    #[must_use]
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = Some(sort);
        self
    }
}

/// A dual response found in a tool result: the sample and count the model saw, and the operations
/// that fetch the full result from the REST API.
///
/// It holds a clone of the [`DualResponseClient`] that parsed it, so its requests use that client's
/// base URL, headers, timeout, retries and connection pool.
#[derive(Clone)]
pub struct ParsedDualResponse {
    pub(crate) client: DualResponseClient,
    pub(crate) url: Arc<str>,
    sample: Vec<Row>,
    total_count: Option<u64>,
    uri: Option<String>,
    name: Option<String>,
    columns: Vec<Column>,
    executed_at: Option<OffsetDateTime>,
    expires_at: Option<OffsetDateTime>,
    status: ResourceStatus,
}

impl ParsedDualResponse {
    pub(crate) fn from_found(client: DualResponseClient, found: Found) -> Result<Self, String> {
        let url = crate::url::resolve(client.base_url(), found.uri.as_deref(), found.url.as_deref())?;
        let columns = found
            .columns
            .unwrap_or_else(|| dual_core::column::infer_columns(&found.sample));
        Ok(Self {
            client,
            url: url.into(),
            sample: found.sample,
            total_count: found.total_count,
            uri: found.uri,
            name: found.name,
            columns,
            executed_at: found.executed_at,
            expires_at: found.expires_at,
            status: found.status,
        })
    }

    /// The sample rows the tool returned (empty for a lone `resource_link`).
    #[must_use]
    pub fn sample(&self) -> &[Row] {
        &self.sample
    }

    /// Takes the sample rows out.
    #[must_use]
    pub fn into_sample(self) -> Vec<Row> {
        self.sample
    }

    /// The number of rows the query matched when it ran.
    ///
    /// `None` when the tool result did not say, as for a lone `resource_link`;
    /// [`load_metadata`](Self::load_metadata) fills it in. While the resource is
    /// [pending](Self::status), the rows its query had produced so far;
    /// [`wait_ready`](Self::wait_ready) replaces it with the final count.
    #[must_use]
    pub fn total_count(&self) -> Option<u64> {
        self.total_count
    }

    /// Whether the resource's query was still running (`pending`) when the tool result was made, as
    /// its `structuredContent.metadata.status` says; `ready` when it says nothing, as every result
    /// of a finished query (and a lone `resource_link`, whose status is unknown until
    /// [`load_metadata`](Self::load_metadata)).
    ///
    /// Local knowledge: [`wait_ready`](Self::wait_ready) and [`load_metadata`](Self::load_metadata)
    /// update it.
    ///
    /// ```
    /// use dual_client::{DualResponseClient, ResourceStatus};
    /// use serde_json::json;
    ///
    /// let pending = json!({
    ///     "results": [{"id": 1}],
    ///     "resource": {"uri": "resource://01J0000000000000000000000A",
    ///                  "url": "https://api.example.com/resources/01J0000000000000000000000A"},
    ///     "metadata": {"total_count": 1, "sample_count": 1, "status": "pending",
    ///                  "executed_at": "2026-01-15T10:30:00Z"}
    /// });
    /// let parsed = DualResponseClient::new().parse(&pending).expect("a dual response");
    /// assert_eq!(parsed.status(), ResourceStatus::Pending);
    /// assert_eq!(parsed.total_count(), Some(1), "the rows so far");
    /// ```
    #[must_use]
    pub fn status(&self) -> ResourceStatus {
        self.status
    }

    /// The resource URI, e.g. `resource://01J…` (`None` when the result gave only a URL).
    #[must_use]
    pub fn resource_uri(&self) -> Option<&str> {
        self.uri.as_deref()
    }

    /// The REST URL every operation uses: the result's URL, or `{base_url}/{id}` with a base URL.
    #[must_use]
    pub fn resource_url(&self) -> &str {
        &self.url
    }

    /// The resource's name, when the result gave one.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The columns: as declared by the tool result, or else inferred from the sample (the reference
    /// implementation declares none). Empty for a lone `resource_link` until
    /// [`load_metadata`](Self::load_metadata).
    #[must_use]
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// When the query ran, when the result said.
    #[must_use]
    pub fn executed_at(&self) -> Option<OffsetDateTime> {
        self.executed_at
    }

    /// When the resource expires; `None` when it does not (pinned) or the result did not say.
    #[must_use]
    pub fn expires_at(&self) -> Option<OffsetDateTime> {
        self.expires_at
    }

    /// Whether `expires_at` has passed, by this machine's clock. Local knowledge only: a pin made
    /// elsewhere shows after [`load_metadata`](Self::load_metadata).
    #[must_use]
    pub fn is_expired(&self) -> bool {
        self.expires_at.is_some_and(|at| at <= OffsetDateTime::now_utc())
    }

    /// The client this response fetches with.
    #[must_use]
    pub fn client(&self) -> &DualResponseClient {
        &self.client
    }

    /// Fetches one page (`POST {url}`): the wire type of the answer, [`PageResponse`] (`data`,
    /// `total_count`, `returned_count`, `offset`, `limit`, `has_next`, `has_previous`, `next_offset`).
    ///
    /// It does not wait for a pending resource: while the resource's query is still running the
    /// answer is a `NOT_READY` error at once. [`wait_ready`](Self::wait_ready) waits for the query to
    /// end.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND`, `RESOURCE_EXPIRED`, `TIMEOUT`, `NOT_READY` (retryable) while the
    /// resource's query is still running, `QUERY_FAILED` once it failed (with
    /// [`ClientError::failure`] when the metadata reports it), or `FETCH_ERROR` for any other failure,
    /// including a 400 for a limit above the server's maximum or an unknown sort field, and a body
    /// that is not a page.
    pub async fn fetch(&self, options: FetchOptions) -> Result<PageResponse, ClientError> {
        let span = tracing::debug_span!("dual_client.fetch", url = %self.url, offset = options.offset,
            limit = options.limit, sort = options.sort.as_ref().map(tracing::field::display));
        async {
            match fetch_page(&self.client, &self.url, options, None).await {
                Err(error) => Err(explain_failure(&self.client, &self.url, error).await),
                page => page,
            }
        }
        .instrument(span)
        .await
    }

    /// Fetches the current metadata (`GET {url}`): status, count, columns, expiry, access count.
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch).
    pub async fn metadata(&self) -> Result<ResourceMetadata, ClientError> {
        let span = tracing::debug_span!("dual_client.metadata", url = %self.url);
        self.client
            .json(&Call::new(Method::GET, &self.url), "metadata")
            .instrument(span)
            .await
    }

    /// Fetches the column profile of every row (`GET {url}/profile`, docs/DESIGN.md §4): per column
    /// its type, nulls, distinct values, range, distribution and top values; `complete: false` while
    /// the server is still writing the rows.
    ///
    /// # Errors
    /// `not_ready` while nothing is profiled yet (retryable); `no_profile` for a live result;
    /// otherwise as [`fetch`](Self::fetch).
    pub async fn profile(&self) -> Result<dual_core::profile::Profile, ClientError> {
        let span = tracing::debug_span!("dual_client.profile", url = %self.url);
        let url = format!("{}/profile", self.url);
        self.client
            .json(&Call::new(Method::GET, &url), "profile")
            .instrument(span)
            .await
    }

    /// Fetches the metadata and updates `status`, `total_count`, `columns`, `expires_at` and `name`
    /// from it.
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch).
    pub async fn load_metadata(&mut self) -> Result<ResourceMetadata, ClientError> {
        let metadata = self.metadata().await?;
        self.apply_metadata(&metadata);
        Ok(metadata)
    }

    /// Updates what the metadata tells about the resource.
    pub(crate) fn apply_metadata(&mut self, metadata: &ResourceMetadata) {
        self.status = metadata.status;
        self.total_count = Some(metadata.total_count);
        self.expires_at = metadata.expires_at;
        self.name = Some(metadata.name.clone());
        if !metadata.columns.is_empty() {
            self.columns.clone_from(&metadata.columns);
        }
    }

    /// Pins the resource so it never expires (`PUT {url}`), and clears `expires_at`.
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch).
    pub async fn pin(&mut self) -> Result<PinResponse, ClientError> {
        let span = tracing::debug_span!("dual_client.pin", url = %self.url);
        let response: PinResponse = self
            .client
            .json(&Call::new(Method::PUT, &self.url), "pin")
            .instrument(span)
            .await?;
        self.expires_at = response.expires_at;
        Ok(response)
    }

    /// Deletes the resource (`DELETE {url}`).
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` when it is already gone; otherwise as [`fetch`](Self::fetch).
    pub async fn delete(&self) -> Result<(), ClientError> {
        let span = tracing::debug_span!("dual_client.delete", url = %self.url);
        self.client
            .expect_success(&Call::new(Method::DELETE, &self.url))
            .instrument(span)
            .await
            .map(drop)
    }
}

/// `POST {url}` with `{"offset", "limit", "sort"}`; a `not_ready` answer is asked again until
/// `ready_by` when it is set (see [`Call::ready_by`]).
pub(crate) async fn fetch_page(
    client: &DualResponseClient,
    url: &str,
    options: FetchOptions,
    ready_by: Option<Instant>,
) -> Result<PageResponse, ClientError> {
    let request = PageRequest {
        offset: Some(options.offset),
        limit: options.limit,
        sort: options.sort,
    };
    let body = serde_json::to_vec(&request)
        .map_err(|e| ClientError::fetch("cannot encode the page request").with_source(e))?;
    let call = Call {
        json_body: Some(Bytes::from(body)),
        ready_by,
        ..Call::new(Method::POST, url)
    };
    client.json(&call, "page").await
}

/// Adds to a `QUERY_FAILED` error the failure the resource's metadata reports (one more request);
/// any other error, or one whose metadata reports no failure, comes back as it was.
pub(crate) async fn explain_failure(
    client: &DualResponseClient,
    url: &str,
    error: ClientError,
) -> ClientError {
    if error.code() != ClientErrorCode::QueryFailed || error.failure().is_some() {
        return error;
    }
    let metadata = client
        .json::<ResourceMetadata>(&Call::new(Method::GET, url), "metadata")
        .await;
    match metadata {
        Ok(ResourceMetadata {
            status: ResourceStatus::Failed,
            error: Some(failure),
            ..
        }) => error.with_failure(failure),
        _ => error,
    }
}

impl fmt::Debug for ParsedDualResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Row data stays out of debug output; the sample is summarised by its length.
        f.debug_struct("ParsedDualResponse")
            .field("resource_url", &self.url)
            .field("resource_uri", &self.uri)
            .field("name", &self.name)
            .field("total_count", &self.total_count)
            .field("sample_len", &self.sample.len())
            .field("columns", &self.columns)
            .field("executed_at", &self.executed_at)
            .field("expires_at", &self.expires_at)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}
