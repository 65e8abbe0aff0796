//! Store errors.

/// A store operation failed. Every variant becomes `503 storage_error` (retryable) on the REST API;
/// messages are for logs and never reach REST callers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached (connection refused, timed out, pool exhausted).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The store answered with an error.
    #[error("store failed: {0}")]
    Backend(String),
    /// A stored record could not be decoded.
    #[error("stored record is corrupt: {0}")]
    Corrupt(String),
    /// The store was closed.
    #[error("store is closed")]
    Closed,
}

impl StoreError {
    /// Whether retrying the same operation later may succeed.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Backend(_))
    }
}
