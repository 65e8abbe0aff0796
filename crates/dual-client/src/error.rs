//! The client's error type and its codes.

use std::error::Error as StdError;
use std::fmt;

use dual_core::{
    error::ErrorBody,
    status::{FailureCode, FailureSummary},
};
use http::StatusCode;

pub(crate) type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// The class of a [`ClientError`], as named by the Dual Response specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientErrorCode {
    /// `PARSE_ERROR`: a value handed to [`parse_strict`](crate::DualResponseClient::parse_strict) is not a
    /// (well-formed) dual response, or a URL or URI cannot be used.
    Parse,
    /// `FETCH_ERROR`: the request failed: connection refused or reset, an HTTP error status, or a
    /// truncated, non-JSON or wrongly shaped response body.
    Fetch,
    /// `TIMEOUT`: the request did not complete within the client's timeout.
    Timeout,
    /// `RESOURCE_NOT_FOUND`: the server answered 404 `not_found` (unknown, deleted or foreign resource).
    ResourceNotFound,
    /// `RESOURCE_EXPIRED`: the server answered 404 `expired` (or 410): the resource is past its expiry.
    ResourceExpired,
    /// `NOT_READY`: the resource's query is still running (409 `not_ready`). Retryable: ask again
    /// later, or wait for it with [`wait_ready`](crate::ParsedDualResponse::wait_ready).
    NotReady,
    /// `QUERY_FAILED`: the resource's query failed (its metadata says `failed`, or the server answered
    /// 500 `query_failed`). [`ClientError::failure`] gives the failure's code and whether running the
    /// query again may succeed, when the server said.
    QueryFailed,
}

impl ClientErrorCode {
    /// The code as the specification spells it, e.g. `"RESOURCE_NOT_FOUND"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Parse => "PARSE_ERROR",
            Self::Fetch => "FETCH_ERROR",
            Self::Timeout => "TIMEOUT",
            Self::ResourceNotFound => "RESOURCE_NOT_FOUND",
            Self::ResourceExpired => "RESOURCE_EXPIRED",
            Self::NotReady => "NOT_READY",
            Self::QueryFailed => "QUERY_FAILED",
        }
    }
}

impl fmt::Display for ClientErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong parsing a tool result or talking to a Dual Response server.
///
/// An opaque error in the style of `hyper-util`'s: ask it what happened with [`code`](Self::code),
/// [`status`](Self::status) and the `is_*` predicates. Its `Display` never contains row data or header
/// values.
pub struct ClientError {
    inner: Box<Inner>,
}

struct Inner {
    code: ClientErrorCode,
    message: String,
    status: Option<StatusCode>,
    server: Option<ErrorBody>,
    failure: Option<FailureSummary>,
    connect: bool,
    source: Option<BoxError>,
}

/// The `is_*` predicate of each code: `$name => $code` is `pub fn $name(&self) -> bool`, whether the
/// error's code is `$code`.
macro_rules! code_predicates {
    ($($(#[doc = $doc:literal])* $name:ident => $code:ident,)*) => {$(
        $(#[doc = $doc])*
        #[must_use]
        pub fn $name(&self) -> bool {
            self.inner.code == ClientErrorCode::$code
        }
    )*};
}

impl ClientError {
    fn new(code: ClientErrorCode, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                code,
                message: message.into(),
                status: None,
                server: None,
                failure: None,
                connect: false,
                source: None,
            }),
        }
    }

    pub(crate) fn parse(message: impl Into<String>) -> Self {
        Self::new(ClientErrorCode::Parse, message)
    }

    pub(crate) fn fetch(message: impl Into<String>) -> Self {
        Self::new(ClientErrorCode::Fetch, message)
    }

    pub(crate) fn timeout(message: impl Into<String>) -> Self {
        Self::new(ClientErrorCode::Timeout, message)
    }

    /// `QUERY_FAILED` for a resource whose metadata says `failed`, with the failure it reports.
    pub(crate) fn query_failed(failure: Option<FailureSummary>) -> Self {
        let message = match failure {
            Some(failure) => format!(
                "the resource's query failed ({}{})",
                failure.code,
                if failure.retryable {
                    "; running it again may succeed"
                } else {
                    ""
                }
            ),
            None => "the resource's query failed".to_owned(),
        };
        let mut error = Self::new(ClientErrorCode::QueryFailed, message);
        error.inner.failure = failure;
        error
    }

    /// Attaches the failure a `QUERY_FAILED` answer stands for, as the resource's metadata reports it.
    pub(crate) fn with_failure(mut self, failure: FailureSummary) -> Self {
        self.inner.failure = Some(failure);
        self
    }

    /// An error for a response with a non-success `status` and, when it parsed, the server's error body.
    pub(crate) fn from_status(status: StatusCode, body: Option<ErrorBody>) -> Self {
        let server_code = body.as_ref().map(|b| b.error);
        let code = match (status, server_code) {
            (StatusCode::NOT_FOUND, Some(dual_core::error::ErrorCode::Expired)) | (StatusCode::GONE, _) => {
                ClientErrorCode::ResourceExpired
            }
            (StatusCode::NOT_FOUND, _) => ClientErrorCode::ResourceNotFound,
            (_, Some(dual_core::error::ErrorCode::NotReady)) => ClientErrorCode::NotReady,
            (_, Some(dual_core::error::ErrorCode::QueryFailed)) => ClientErrorCode::QueryFailed,
            _ => ClientErrorCode::Fetch,
        };
        let message = match &body {
            Some(body) => format!(
                "server answered {status}: {} ({})",
                body.message,
                body.error.as_str()
            ),
            None => format!("server answered {status}"),
        };
        let mut error = Self::new(code, message).with_status(status);
        error.inner.server = body;
        error
    }

    pub(crate) fn with_status(mut self, status: StatusCode) -> Self {
        self.inner.status = Some(status);
        self
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.inner.source = Some(source.into());
        self
    }

    /// Puts `context` (say, which row range) in front of the message.
    pub(crate) fn context(mut self, context: impl fmt::Display) -> Self {
        self.inner.message = format!("{context}: {}", self.inner.message);
        self
    }

    pub(crate) fn connect(mut self) -> Self {
        self.inner.connect = true;
        self
    }

    /// The class of the error.
    #[must_use]
    pub fn code(&self) -> ClientErrorCode {
        self.inner.code
    }

    /// The HTTP status of the response that caused the error, when there was a response.
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        self.inner.status
    }

    /// The server's JSON error body (`{"error", "message", "retryable"}`), when it sent one.
    #[must_use]
    pub fn server_error(&self) -> Option<&ErrorBody> {
        self.inner.server.as_ref()
    }

    /// A human-readable description (the same text `Display` shows after the code).
    #[must_use]
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    code_predicates! {
        /// Whether a value could not be parsed as a dual response ([`ClientErrorCode::Parse`]).
        is_parse => Parse,
        /// Whether the request timed out ([`ClientErrorCode::Timeout`]).
        is_timeout => Timeout,
        /// Whether the resource does not exist (any more) ([`ClientErrorCode::ResourceNotFound`]).
        is_not_found => ResourceNotFound,
        /// Whether the resource has expired ([`ClientErrorCode::ResourceExpired`]).
        is_expired => ResourceExpired,
        /// Whether the resource's query is still running ([`ClientErrorCode::NotReady`]).
        is_not_ready => NotReady,
        /// Whether the resource's query failed ([`ClientErrorCode::QueryFailed`]); see
        /// [`failure`](Self::failure).
        is_query_failed => QueryFailed,
    }

    /// For a [`QUERY_FAILED`](ClientErrorCode::QueryFailed) error, how the resource's query failed: its
    /// [`FailureCode`] (`query_execution_failed`, `query_timeout`, `query_interrupted`,
    /// `storage_error`, `overloaded`) and whether running the query again (a new tool call) may succeed.
    ///
    /// `None` when the resource's metadata does not report a failure, e.g. when the executor of a
    /// live resource failed while serving one page.
    #[must_use]
    pub fn failure(&self) -> Option<FailureSummary> {
        self.inner.failure
    }

    /// The code of [`failure`](Self::failure).
    #[must_use]
    pub fn failure_code(&self) -> Option<FailureCode> {
        self.inner.failure.map(|f| f.code)
    }

    /// Whether the connection to the server could not be established.
    #[must_use]
    pub fn is_connect(&self) -> bool {
        self.inner.connect
    }

    /// Whether the same request may succeed later: connect errors, 429 and 503 (after the client's
    /// own retries were used up), `NOT_READY`, or any error the server marked `retryable`. For a
    /// `QUERY_FAILED` error, whether running the query again may succeed (see
    /// [`failure`](Self::failure)).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.inner.connect
            || self.inner.code == ClientErrorCode::NotReady
            || matches!(
                self.inner.status,
                Some(StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE)
            )
            || self.inner.server.as_ref().is_some_and(|b| b.retryable)
            || self.inner.failure.is_some_and(|f| f.retryable)
    }
}

impl fmt::Debug for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ClientError");
        d.field("code", &self.inner.code)
            .field("message", &self.inner.message);
        if let Some(status) = self.inner.status {
            d.field("status", &status);
        }
        if let Some(failure) = &self.inner.failure {
            d.field("failure", failure);
        }
        if self.inner.connect {
            d.field("connect", &true);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.code, self.inner.message)
    }
}

impl StdError for ClientError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// Why [`DualResponseClientBuilder::build`](crate::DualResponseClientBuilder::build) failed.
///
/// `Display` says what is wrong; the cause (the URI parser's, rustls' error), when there is one, is
/// the [`source`](StdError::source), boxed so that this crate's API names no other crate's error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientBuildError {
    /// The base URL is not an absolute `http://` or `https://` URL without a query string.
    #[error("invalid base URL: {reason}")]
    InvalidBaseUrl {
        /// What is wrong with it.
        reason: &'static str,
        /// Why it is not a URI at all, when that is what is wrong (the URI parser's error).
        #[source]
        source: Option<BoxError>,
    },
    /// An extra root certificate is not a valid DER-encoded X.509 certificate.
    #[error("root certificate #{number} (in the order added) is not a valid DER-encoded X.509 certificate")]
    InvalidCertificate {
        /// Which certificate: 1 for the first
        /// [`add_root_certificate`](crate::DualResponseClientBuilder::add_root_certificate).
        number: usize,
        /// Why rustls rejected it.
        #[source]
        source: BoxError,
    },
    /// The TLS configuration could not be built.
    #[error("TLS configuration failed")]
    Tls(#[source] BoxError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_mapping() {
        let expired = ErrorBody::new(dual_core::error::ErrorCode::Expired, "gone");
        let e = ClientError::from_status(StatusCode::NOT_FOUND, Some(expired));
        assert!(e.is_expired());
        assert_eq!(e.code().as_str(), "RESOURCE_EXPIRED");
        let e = ClientError::from_status(StatusCode::NOT_FOUND, None);
        assert!(e.is_not_found());
        assert_eq!(e.status(), Some(StatusCode::NOT_FOUND));
        let e = ClientError::from_status(StatusCode::GONE, None);
        assert!(e.is_expired());
        let e = ClientError::from_status(StatusCode::BAD_REQUEST, None);
        assert_eq!(e.code(), ClientErrorCode::Fetch);
        assert!(!e.is_retryable());
        let storage = ErrorBody::new(dual_core::error::ErrorCode::StorageError, "down");
        let e = ClientError::from_status(StatusCode::SERVICE_UNAVAILABLE, Some(storage));
        assert!(e.is_retryable());
        assert!(e.to_string().starts_with("FETCH_ERROR: server answered 503"));

        let not_ready = ErrorBody::new(dual_core::error::ErrorCode::NotReady, "still running");
        let e = ClientError::from_status(StatusCode::CONFLICT, Some(not_ready));
        assert!(e.is_not_ready() && e.is_retryable());
        assert_eq!(e.code().as_str(), "NOT_READY");
        let e = ClientError::from_status(StatusCode::CONFLICT, None);
        assert_eq!(
            e.code(),
            ClientErrorCode::Fetch,
            "a 409 without the body is no `not_ready`"
        );
        let mut failed = ErrorBody::new(dual_core::error::ErrorCode::QueryFailed, "failed");
        failed.retryable = true;
        let e = ClientError::from_status(StatusCode::INTERNAL_SERVER_ERROR, Some(failed));
        assert!(e.is_query_failed() && e.is_retryable());
        assert_eq!(e.failure(), None, "the body does not say which failure");
        let e = e.with_failure(FailureSummary {
            code: FailureCode::QueryInterrupted,
            retryable: true,
        });
        assert_eq!(e.failure_code(), Some(FailureCode::QueryInterrupted));
    }

    #[test]
    fn query_failures_carry_their_code() {
        let e = ClientError::query_failed(Some(FailureSummary {
            code: FailureCode::QueryExecutionFailed,
            retryable: false,
        }));
        assert_eq!(e.code().as_str(), "QUERY_FAILED");
        assert_eq!(e.failure_code(), Some(FailureCode::QueryExecutionFailed));
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("query_execution_failed"), "{e}");
        let e = ClientError::query_failed(Some(FailureSummary {
            code: FailureCode::StorageError,
            retryable: true,
        }));
        assert!(e.is_retryable());
        assert!(format!("{e:?}").contains("StorageError"));
    }
}
