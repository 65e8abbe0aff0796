//! `DualResponseClient`: a cheap handle around one connection pool and the client's settings.
//!
//! Its operations live beside what they use: `recognise.rs` parses tool results into a
//! `ParsedDualResponse`, `transport.rs` sends requests.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::builder::DualResponseClientBuilder;
use crate::error::ClientBuildError;
use crate::shared::{HeaderNames, Shared};

/// Parses dual responses out of tool results and fetches their full results over REST.
///
/// Cheap to clone: clones share one connection pool (`http` and `https`, HTTP/1.1, rustls) and
/// settings. Every [`ParsedDualResponse`](crate::ParsedDualResponse) it returns holds a clone.
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
}

impl DualResponseClientBuilder {
    /// Builds the client. Its connection pool is shared by every clone.
    ///
    /// # Errors
    /// [`ClientBuildError`] for a base URL that is not an absolute `http(s)://` URL or an invalid root
    /// certificate.
    pub fn build(self) -> Result<DualResponseClient, ClientBuildError> {
        Ok(DualResponseClient {
            shared: Arc::new(self.into_shared()?),
        })
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
