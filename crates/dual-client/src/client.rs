//! `DualResponseClient`: a cheap handle around one connection pool and the client's settings.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dual_core::mcp::StructuredContent;
use http::HeaderMap;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::Value;

use crate::builder::{DualResponseClientBuilder, HeaderNames};
use crate::error::ClientError;
use crate::parse;
use crate::parsed::ParsedDualResponse;
use crate::retry::RetryPolicy;

pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// What every clone of a client shares.
pub(crate) struct Shared {
    pub(crate) http: HttpClient,
    pub(crate) base_url: Option<String>,
    pub(crate) headers: HeaderMap,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_body_bytes: usize,
}

/// Parses dual responses out of tool results and fetches their full results over REST.
///
/// Cheap to clone: clones share one connection pool (`http` and `https`, HTTP/1.1, rustls) and
/// settings. Every [`ParsedDualResponse`] it returns holds a clone.
///
/// ```
/// use dual_client::DualResponseClient;
///
/// let client = DualResponseClient::new();
/// let not_dual = serde_json::json!({"content": [{"type": "text", "text": "hello"}]});
/// assert!(client.parse(&not_dual).is_none());
/// ```
#[derive(Clone)]
pub struct DualResponseClient {
    shared: Arc<Shared>,
}

impl DualResponseClient {
    /// A client with default settings: no base URL, no extra headers, 30 s timeout, 3 retries.
    #[must_use]
    pub fn new() -> Self {
        match Self::builder().build() {
            Ok(client) => client,
            // Without a base URL or extra roots the only fallible step is rustls accepting ring's
            // default protocol versions, which it always does.
            Err(error) => panic!("the default client configuration is valid: {error}"),
        }
    }

    /// A builder for a configured client.
    pub fn builder() -> DualResponseClientBuilder {
        DualResponseClientBuilder::default()
    }

    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The configured base URL, without a trailing slash.
    #[must_use]
    pub fn base_url(&self) -> Option<&str> {
        self.shared.base_url.as_deref()
    }

    /// The timeout of one request attempt.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.shared.timeout
    }

    /// Recognises a dual response in `value`; `None` when it is not one (or is a malformed one).
    ///
    /// Accepted shapes: a whole MCP tool result; `structuredContent` alone; a `content` array (or a
    /// single text block) whose text carries the JSON; a lone `resource_link` (needs a base URL); tool
    /// output wrapped by agent SDKs (a JSON string or object in an `output` or `result` field, possibly
    /// inside a text block); and the reference implementation's shape without `columns` and
    /// `expires_at`. See [`parse_strict`](Self::parse_strict) for why a value was rejected.
    #[must_use]
    pub fn parse(&self, value: &Value) -> Option<ParsedDualResponse> {
        self.parse_strict(value).ok()
    }

    /// Like [`parse`](Self::parse), but says what is wrong.
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ErrorCode::Parse) naming the malformed field (say,
    /// `metadata.total_count must be a non-negative integer`), or saying that nothing in `value` looks
    /// like a dual response.
    pub fn parse_strict(&self, value: &Value) -> Result<ParsedDualResponse, ClientError> {
        let found = parse::find(value).map_err(ClientError::parse)?;
        ParsedDualResponse::from_found(self.clone(), found).map_err(ClientError::parse)
    }

    /// Parses text holding any shape [`parse`](Self::parse) accepts, e.g. a tool result read from a file.
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ErrorCode::Parse) when the text is not JSON or not a dual response.
    pub fn parse_str(&self, text: &str) -> Result<ParsedDualResponse, ClientError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ClientError::parse(format!("not JSON: {e}")).with_source(e))?;
        self.parse_strict(&value)
    }

    /// Wraps an already typed `structuredContent` (from `dual-core` or an MCP SDK).
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ErrorCode::Parse) when its resource URL cannot be used.
    pub fn from_structured(&self, structured: &StructuredContent) -> Result<ParsedDualResponse, ClientError> {
        ParsedDualResponse::from_found(self.clone(), parse::Found::from_structured(structured))
            .map_err(ClientError::parse)
    }

    /// A handle on a resource known only by its REST URL (`https://…/resources/{id}`) or, with a base
    /// URL configured, its URI (`resource://{id}`): no sample, unknown count until
    /// [`load_metadata`](ParsedDualResponse::load_metadata).
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ErrorCode::Parse) when it is neither.
    pub fn resource(&self, url_or_uri: &str) -> Result<ParsedDualResponse, ClientError> {
        ParsedDualResponse::from_found(self.clone(), parse::Found::from_location(url_or_uri))
            .map_err(ClientError::parse)
    }
}

impl Default for DualResponseClient {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for DualResponseClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DualResponseClient")
            .field("base_url", &self.shared.base_url)
            .field("headers", &HeaderNames(&self.shared.headers))
            .field("timeout", &self.shared.timeout)
            .field("retry", &self.shared.retry)
            .finish_non_exhaustive()
    }
}
