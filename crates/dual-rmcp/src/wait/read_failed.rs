//! [`ReadFailed`]: the payload of [`WaitError::Server`](super::WaitError::Server).

use dual_server::{ServerError, ServerErrorCode};

/// Reading the waited-for resource failed: deleted (a cancel) or expired meanwhile, another
/// owner's, or the store failed.
///
/// Opaque, so that this crate's API names no other crate's error type: ask it with
/// [`code`](Self::code) and the `is_*` predicates. `Display` is `reading the resource failed`; the
/// server's error is the [`source`](std::error::Error::source) (show the chain with
/// [`dual_core::error::Report`]), and [`WaitError::tool_result`](super::WaitError::tool_result) tells
/// the model what happened.
#[derive(Debug, thiserror::Error)]
#[error("reading the resource failed")]
pub struct ReadFailed {
    #[source]
    source: Box<ServerError>,
}

impl ReadFailed {
    pub(crate) fn new(error: ServerError) -> Self {
        Self {
            source: Box::new(error),
        }
    }

    /// The server's error, for the tool result.
    pub(crate) fn server_error(&self) -> &ServerError {
        &self.source
    }

    /// The server's stable code (`RESOURCE_NOT_FOUND`, `STORAGE_ERROR`, …).
    #[must_use]
    pub fn code(&self) -> ServerErrorCode {
        self.source.code()
    }

    /// Whether the resource is gone: deleted (a cancel), purged, or another owner's.
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        self.code() == ServerErrorCode::ResourceNotFound
    }

    /// Whether the resource expired while it was waited for.
    #[must_use]
    pub fn is_expired(&self) -> bool {
        self.code() == ServerErrorCode::ResourceExpired
    }

    /// Whether waiting again later may succeed (the store was down).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.source.is_retryable()
    }
}
