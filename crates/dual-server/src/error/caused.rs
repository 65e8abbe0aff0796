//! The payloads of the [`ServerError`](super::ServerError) variants another crate's error causes.
//!
//! Each is opaque, in the way of axum's rejections (one type per failure) and hyper's `Error`: this
//! crate's API names no other crate's error type, so a new store or spool error kind does not break
//! a caller that matches `ServerError`. Each keeps the cause as its
//! [`source`](std::error::Error::source) and answers what callers ask of it (`is_retryable`,
//! `field`); its `Display` says only what failed at this layer.

use dual_core::page::{RequestError, SortLimit};
use dual_spool::SpoolError;
use dual_store::StoreError;

/// The resource store failed: the payload of [`ServerError::Storage`](super::ServerError::Storage).
///
/// `Display` is `the resource store failed`; the store's error (with the driver's error under it) is
/// the [`source`](std::error::Error::source). Show the chain with [`dual_core::error::Report`].
#[derive(Debug, thiserror::Error)]
#[error("the resource store failed")]
pub struct StoreFailed {
    #[source]
    source: Box<StoreError>,
}

impl StoreFailed {
    /// Whether retrying the same call later may succeed: the store was unreachable or failing (not a
    /// corrupt record, not a closed store).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.source.is_retryable()
    }
}

impl From<StoreError> for StoreFailed {
    fn from(error: StoreError) -> Self {
        Self {
            source: Box::new(error),
        }
    }
}

/// The snapshot spool failed: the payload of [`ServerError::Spool`](super::ServerError::Spool).
///
/// `Display` is `the snapshot spool failed`; the spool's error (with the storage's error under it)
/// is the [`source`](std::error::Error::source). Show the chain with [`dual_core::error::Report`].
#[derive(Debug, thiserror::Error)]
#[error("the snapshot spool failed")]
pub struct SpoolFailed {
    #[source]
    source: Box<SpoolError>,
}

impl SpoolFailed {
    /// Whether retrying the same call later may succeed: the spool's storage was unreachable or
    /// failing.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.source.is_retryable()
    }
}

impl From<SpoolError> for SpoolFailed {
    fn from(error: SpoolError) -> Self {
        Self {
            source: Box::new(error),
        }
    }
}

/// A page request, a `sort` or a creation option the server refused: the payload of
/// [`ServerError::InvalidRequest`](super::ServerError::InvalidRequest).
///
/// Its `Display` is the message for the caller and names the offending field
/// (`` `limit` must be between 1 and 1000 ``); [`field`](Self::field) names it alone. It has no
/// source: the message is its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(transparent)]
pub struct InvalidRequest(RequestError);

impl InvalidRequest {
    /// The offending field (`limit`, `sort.field`, an unknown field's name), when one is to blame.
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        self.0.field()
    }

    /// The sort limit the resource is over, when `sort` was refused because the resource is too
    /// large for the server to sort (docs/DESIGN.md §3).
    #[must_use]
    pub fn sort_limit(&self) -> Option<SortLimit> {
        match &self.0 {
            RequestError::SortTooLarge(limit) => Some(*limit),
            _ => None,
        }
    }
}

impl From<RequestError> for InvalidRequest {
    fn from(error: RequestError) -> Self {
        Self(error)
    }
}
