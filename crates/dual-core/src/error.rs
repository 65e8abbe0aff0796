//! The JSON error body every REST error carries, and [`Report`], how an error is shown to a person.

use serde::{Deserialize, Serialize};

mod report;

pub use report::Report;

/// The machine-readable error code of a REST error (`error` in the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// 400: the request is malformed; the message names the field.
    InvalidRequest,
    /// 404: unknown or malformed id, or a resource bound to another owner.
    NotFound,
    /// 404: the resource is known but past its expiry.
    Expired,
    /// 405: the method is not supported on the path (see `Allow`).
    MethodNotAllowed,
    /// 406: the export cannot be produced in any representation `Accept` allows; the message lists
    /// the ones the server can produce.
    NotAcceptable,
    /// 408: the request body did not arrive in full within the server's body timeout.
    RequestTimeout,
    /// 413: the body is over the limit.
    PayloadTooLarge,
    /// 415: the body is not JSON.
    UnsupportedMediaType,
    /// 409: the resource's query is still running (docs/DESIGN.md §8); sent with `Retry-After`,
    /// retry later.
    NotReady,
    /// 500: the query executor failed, or the resource's query failed (docs/DESIGN.md §8).
    QueryFailed,
    /// 503: the store is unreachable or failing; retry later.
    StorageError,
    /// 503: no capacity right now (no database connection could be had in time, a connection cap);
    /// sent with `Retry-After`, retry later.
    Overloaded,
    /// 429: a quota is reached (spool bytes, an owner's live bytes, resources, running queries or
    /// pins); the message names the quota. Sent with `Retry-After`; nothing existing was evicted, so
    /// the request succeeds once room is freed (resources deleted or expired, queries finished).
    QuotaExceeded,
    /// 404: the resource exists but has no column profile (it is live, or its server computes
    /// none); the message says which.
    NoProfile,
    /// 409: the result cannot be refined with SQL (`POST /{id}/query`): it is live (its rows are not
    /// stored), or the server has no refine engine; the message says which.
    NotRefinable,
    /// A code this version does not know (newer servers may add codes).
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The wire name, e.g. `"not_found"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::NotFound => "not_found",
            Self::Expired => "expired",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotAcceptable => "not_acceptable",
            Self::RequestTimeout => "request_timeout",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::NotReady => "not_ready",
            Self::QueryFailed => "query_failed",
            Self::StorageError => "storage_error",
            Self::Overloaded => "overloaded",
            Self::QuotaExceeded => "quota_exceeded",
            Self::NoProfile => "no_profile",
            Self::NotRefinable => "not_refinable",
            Self::Unknown => "unknown",
        }
    }

    /// The HTTP status this code is sent with.
    #[must_use]
    pub const fn status(self) -> u16 {
        match self {
            Self::InvalidRequest => 400,
            Self::NotFound | Self::Expired | Self::NoProfile => 404,
            Self::MethodNotAllowed => 405,
            Self::NotAcceptable => 406,
            Self::RequestTimeout => 408,
            Self::PayloadTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::NotReady | Self::NotRefinable => 409,
            Self::QuotaExceeded => 429,
            Self::QueryFailed | Self::Unknown => 500,
            Self::StorageError | Self::Overloaded => 503,
        }
    }

    /// Whether a client may retry the same request later.
    #[must_use]
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            Self::StorageError | Self::Overloaded | Self::NotReady | Self::QuotaExceeded
        )
    }
}

/// `{"error": CODE, "message": TEXT, "retryable": BOOL}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The code.
    pub error: ErrorCode,
    /// A human-readable message that never carries internals.
    pub message: String,
    /// Whether retrying may succeed.
    #[serde(default)]
    pub retryable: bool,
}

impl ErrorBody {
    /// A body for `code` with `message`; `retryable` follows the code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            error: code,
            message: message.into(),
            retryable: code.retryable(),
        }
    }
}

/// The message of `not_found`, identical for unknown, malformed and foreign ids so existence does not leak.
pub const NOT_FOUND_MESSAGE: &str = "Resource not found or expired";
