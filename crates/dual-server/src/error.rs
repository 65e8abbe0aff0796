//! Server errors.

use std::time::Duration;

use dual_core::{page::RequestError, status::QueryFailure};
use dual_spool::{SpoolError, SpoolQuota};
use dual_store::StoreError;

use crate::ExecutorError;
use crate::quota::{QUOTA_RETRY_AFTER, Quota};

mod caused;

pub use caused::{InvalidRequest, SpoolFailed, StoreFailed};

/// How long a caller of a pending resource is told to wait before asking again.
pub const NOT_READY_RETRY_AFTER: Duration = Duration::from_secs(1);

/// The stable code of a [`ServerError`] (docs/DESIGN.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerErrorCode {
    /// The executor's `fetch` failed.
    QueryExecutionFailed,
    /// The executor's `count` failed.
    CountExecutionFailed,
    /// The store failed or is unreachable.
    StorageError,
    /// No such resource (or it was deleted or purged).
    ResourceNotFound,
    /// The resource is past its expiry.
    ResourceExpired,
    /// No executor is registered for the query's kind.
    UnknownQueryKind,
    /// The request is malformed (page request, sort field, creation options).
    InvalidRequest,
    /// No capacity right now (no database connection within the wait limit); retryable.
    Overloaded,
    /// The store holds the configured maximum of live resources; retryable once some are deleted or
    /// expire.
    TooManyResources,
    /// The resource's query is still running (docs/DESIGN.md §8); retryable.
    NotReady,
    /// The resource's query failed (docs/DESIGN.md §8); retryable when its failure code is.
    ResourceFailed,
    /// The query ran past the server's time limit.
    QueryTimeout,
    /// A quota is reached (see [`Quota`]); retryable once room is freed.
    QuotaExceeded,
    /// The resource has no column profile (a live result, or profiles are off).
    NoProfile,
    /// The resource cannot be refined (its rows are not stored, or the server has no refine engine).
    NotRefinable,
}

impl ServerErrorCode {
    /// `QUERY_EXECUTION_FAILED`, `RESOURCE_NOT_FOUND`, ….
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::QueryExecutionFailed => "QUERY_EXECUTION_FAILED",
            Self::CountExecutionFailed => "COUNT_EXECUTION_FAILED",
            Self::StorageError => "STORAGE_ERROR",
            Self::ResourceNotFound => "RESOURCE_NOT_FOUND",
            Self::ResourceExpired => "RESOURCE_EXPIRED",
            Self::UnknownQueryKind => "UNKNOWN_QUERY_KIND",
            Self::InvalidRequest => "INVALID_REQUEST",
            Self::Overloaded => "OVERLOADED",
            Self::TooManyResources => "TOO_MANY_RESOURCES",
            Self::NotReady => "NOT_READY",
            Self::ResourceFailed => "RESOURCE_FAILED",
            Self::QueryTimeout => "QUERY_TIMEOUT",
            Self::QuotaExceeded => "QUOTA_EXCEEDED",
            Self::NoProfile => "NO_PROFILE",
            Self::NotRefinable => "NOT_REFINABLE",
        }
    }
}

impl std::fmt::Display for ServerErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything a [`DualResponseServer`](crate::DualResponseServer) operation can fail with.
///
/// Executor failures keep the executor's message (the model reads it to correct its query, so put it
/// in the tool's error text); REST callers only ever see a generic message.
///
/// `Display` says what failed at this layer (`query execution failed`, `the resource store failed`)
/// and never repeats the cause, which stays reachable through
/// [`source`](std::error::Error::source): the executor's error, the store's, the spool's. A message
/// for a person shows the whole chain with [`dual_core::error::Report`]:
/// `query execution failed: no such column: nme`. No variant names another crate's error type: a
/// store, spool or request failure comes as this crate's [`StoreFailed`], [`SpoolFailed`] or
/// [`InvalidRequest`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The executor's `fetch` (or `stream`) failed; the executor's error, whose message is for the
    /// model, is the source.
    #[error("query execution failed")]
    QueryExecutionFailed(#[source] ExecutorError),
    /// The executor's `count` failed; the executor's error, whose message is for the model, is the
    /// source.
    #[error("count execution failed")]
    CountExecutionFailed(#[source] ExecutorError),
    /// The executor had no capacity in time (see [`ExecutorError::overloaded`]), or a sort found no
    /// derivation slot within its wait or its working memory taken by other sorts; retry after
    /// [`ServerError::retry_after`]. The executor's error is the source.
    #[error("no capacity to run the query right now")]
    Overloaded(#[source] ExecutorError),
    /// The store already holds the configured maximum of live resources; nothing was evicted.
    /// Deleting resources, or their expiry, frees room.
    #[error(
        "the resource store is full: it holds the maximum of {max} live resources; retry once some \
         are deleted or expire"
    )]
    TooManyResources {
        /// The configured maximum.
        max: u64,
    },
    /// The store failed (code `STORAGE_ERROR`; retryable when the store is unreachable or failing).
    /// `Display` is `the resource store failed`; the store's error is the source. A
    /// [`StoreError`](dual_store::StoreError) becomes this variant with `?` or `From`.
    #[error(transparent)]
    Storage(StoreFailed),
    /// The snapshot spool failed (code `STORAGE_ERROR`; retryable when the spool's storage is down).
    /// `Display` is `the snapshot spool failed`; the spool's error is the source.
    #[error(transparent)]
    Spool(SpoolFailed),
    /// No such resource.
    #[error("resource not found")]
    ResourceNotFound,
    /// The resource expired.
    #[error("resource expired")]
    ResourceExpired,
    /// No executor is registered for this kind.
    #[error("unknown query kind `{0}`")]
    UnknownQueryKind(String),
    /// A page request or option is invalid; `Display` is the message for the caller and names the
    /// field ([`InvalidRequest::field`]). A [`RequestError`] becomes this variant with `?` or `From`.
    #[error(transparent)]
    InvalidRequest(InvalidRequest),
    /// The resource's query is still running: retry after [`ServerError::retry_after`].
    #[error("the resource's query is still running ({rows} rows so far)")]
    NotReady {
        /// Rows written so far.
        rows: u64,
    },
    /// The resource's query failed; `failure.message` is for the model only.
    #[error("the resource's query failed ({}): {}", failure.code, failure.message)]
    ResourceFailed {
        /// The code and message.
        failure: QueryFailure,
    },
    /// The query ran past the server's time limit and was cancelled.
    #[error("the query ran past the time limit of {} s and was cancelled", limit.as_secs_f64())]
    QueryTimeout {
        /// The limit.
        limit: Duration,
    },
    /// A quota is reached; nothing existing was evicted. Retryable once room is freed.
    #[error("quota `{quota}` reached (limit {limit}); retry once room is freed")]
    QuotaExceeded {
        /// Which quota.
        quota: Quota,
        /// Its configured limit (bytes, resources, queries or pins, as the quota counts).
        limit: u64,
    },
    /// The resource has no column profile: it is live (its rows are not stored, so nothing profiled
    /// them), or it was stored by a server that computes no profiles.
    #[error("the result has no column profile: {reason}")]
    NoProfile {
        /// Why, for the caller.
        reason: &'static str,
    },
    /// The result cannot be refined
    /// ([`DualResponseServer::refine`](crate::DualResponseServer::refine)): it is live (its rows are
    /// not stored), or this server has no refine engine.
    #[error("the result cannot be refined: {reason}")]
    NotRefinable {
        /// Why, for the caller.
        reason: &'static str,
    },
}

impl ServerError {
    /// The stable code.
    #[must_use]
    pub fn code(&self) -> ServerErrorCode {
        match self {
            Self::QueryExecutionFailed(_) => ServerErrorCode::QueryExecutionFailed,
            Self::CountExecutionFailed(_) => ServerErrorCode::CountExecutionFailed,
            Self::Overloaded(_) => ServerErrorCode::Overloaded,
            Self::TooManyResources { .. } => ServerErrorCode::TooManyResources,
            Self::Storage(_) | Self::Spool(_) => ServerErrorCode::StorageError,
            Self::ResourceNotFound => ServerErrorCode::ResourceNotFound,
            Self::ResourceExpired => ServerErrorCode::ResourceExpired,
            Self::UnknownQueryKind(_) => ServerErrorCode::UnknownQueryKind,
            Self::InvalidRequest(_) => ServerErrorCode::InvalidRequest,
            Self::NotReady { .. } => ServerErrorCode::NotReady,
            Self::ResourceFailed { .. } => ServerErrorCode::ResourceFailed,
            Self::QueryTimeout { .. } => ServerErrorCode::QueryTimeout,
            Self::QuotaExceeded { .. } => ServerErrorCode::QuotaExceeded,
            Self::NoProfile { .. } => ServerErrorCode::NoProfile,
            Self::NotRefinable { .. } => ServerErrorCode::NotRefinable,
        }
    }

    /// Whether retrying the same call later may succeed (store outages, no capacity, a full store).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Storage(e) => e.is_retryable(),
            Self::Spool(e) => e.is_retryable(),
            Self::Overloaded(_)
            | Self::TooManyResources { .. }
            | Self::NotReady { .. }
            | Self::QuotaExceeded { .. } => true,
            Self::ResourceFailed { failure } => failure.code.is_retryable(),
            _ => false,
        }
    }

    /// How long to wait before retrying, when the error says ([`ServerError::Overloaded`]).
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Overloaded(e) => e.retry_after(),
            Self::NotReady { .. } => Some(NOT_READY_RETRY_AFTER),
            Self::QuotaExceeded { .. } => Some(QUOTA_RETRY_AFTER),
            _ => None,
        }
    }

    /// An executor's `fetch`/`stream` failure: [`ServerError::Overloaded`] when it is a lack of
    /// capacity, else [`ServerError::QueryExecutionFailed`].
    #[must_use]
    pub fn query_failed(error: ExecutorError) -> Self {
        if error.retry_after().is_some() {
            Self::Overloaded(error)
        } else {
            Self::QueryExecutionFailed(error)
        }
    }

    /// A spool failure while serving a resource: a snapshot gone meanwhile (deleted or purged by
    /// another request) is `RESOURCE_NOT_FOUND`, anything else [`ServerError::Spool`].
    pub(crate) fn spool(error: SpoolError) -> Self {
        if error.is_not_found() {
            Self::ResourceNotFound
        } else {
            Self::spool_write(error)
        }
    }

    /// A spool failure while writing a snapshot: a spool cap reached is
    /// [`ServerError::QuotaExceeded`] naming it, anything else [`ServerError::Spool`].
    pub(crate) fn spool_write(error: SpoolError) -> Self {
        match error {
            SpoolError::QuotaExceeded { quota, limit, .. } => Self::QuotaExceeded {
                quota: match quota {
                    SpoolQuota::FreeSpace => Quota::SpoolFreeSpace,
                    _ => Quota::SpoolBytes,
                },
                limit,
            },
            other => Self::Spool(other.into()),
        }
    }

    /// An executor's `count` failure, like [`ServerError::query_failed`].
    pub(crate) fn count_failed(error: ExecutorError) -> Self {
        if error.retry_after().is_some() {
            Self::Overloaded(error)
        } else {
            Self::CountExecutionFailed(error)
        }
    }
}

impl From<StoreError> for ServerError {
    /// [`ServerError::Storage`].
    fn from(error: StoreError) -> Self {
        Self::Storage(error.into())
    }
}

impl From<RequestError> for ServerError {
    /// [`ServerError::InvalidRequest`].
    fn from(error: RequestError) -> Self {
        Self::InvalidRequest(error.into())
    }
}

/// Why [`DualResponseServerBuilder::build`](crate::DualResponseServerBuilder::build) refused a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerBuildError {
    /// `base_url` was not set.
    #[error("base_url is required (e.g. \"https://api.example.com/resources\")")]
    MissingBaseUrl,
    /// `base_url` is not an absolute http(s) URL.
    #[error(
        "base_url {0:?} must be an absolute http:// or https:// URL with a host and no query or fragment"
    )]
    InvalidBaseUrl(String),
    /// An option is out of range.
    #[error("invalid option `{option}`: {reason}")]
    InvalidOption {
        /// The option's name.
        option: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Snapshots are on with a store other instances share ([`ResourceStore::is_shared`]) and a
    /// spool only this process can read ([`SpoolBackend::is_shared`] is false): another instance
    /// would find a resource ready and its pages missing. Give the builder a shared spool (S3), or
    /// build `without_snapshots()`.
    ///
    /// [`ResourceStore::is_shared`]: dual_store::ResourceStore::is_shared
    /// [`SpoolBackend::is_shared`]: dual_spool::SpoolBackend::is_shared
    #[error(
        "the store is shared with other instances but {spool} is process-local: they could not read this instance's snapshots; give the builder a shared spool (S3) with spool(), or call without_snapshots()"
    )]
    ProcessLocalSpool {
        /// Which spool: the default memory spool or the one given to `spool()`.
        spool: &'static str,
    },
    /// The sweeper needs a Tokio runtime and `build` was called outside one.
    #[error(
        "build() must run inside a Tokio runtime to start the expiry sweeper (or call without_sweeper())"
    )]
    NoRuntime,
}

#[cfg(test)]
mod tests;
