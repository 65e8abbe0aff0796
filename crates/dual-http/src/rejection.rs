//! Every way a request can fail, each knowing its status, its JSON body and its log event.

use dual_core::{
    error::{ErrorBody, ErrorCode, NOT_FOUND_MESSAGE, Report},
    escape::log_safe,
    page::RequestError,
    status::FailureCode,
};
use dual_server::ServerError;
use http::StatusCode;

/// Longest piece of client input (a query parameter name, say) echoed in an error message.
const ECHO_LIMIT: usize = 64;

/// A request the handler answers with an error, in the shape of docs/DESIGN.md §5:
/// `{"error": CODE, "message": TEXT, "retryable": BOOL}`.
///
/// [`parse_request`](crate::parse::parse_request) and [`execute`](crate::execute::execute) produce them;
/// [`render`](crate::render::render) turns one into a response and logs it once (client errors at `debug`,
/// query failures at `error`, store failures at `warn`). Messages never carry internals: the executor's
/// or the store's text only reaches the log.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum Rejection {
    /// 400 `invalid_request`: the body or query is malformed; the message names the field.
    InvalidRequest(String),
    /// 404 `not_found`: unknown or malformed id, a path the API does not serve, or a resource the
    /// caller may not see.
    NotFound,
    /// 404 `expired`: the resource is known but past its expiry.
    Expired,
    /// 405 `method_not_allowed`, with the route's `Allow` header.
    MethodNotAllowed {
        /// The value of the `Allow` header.
        allow: &'static str,
    },
    /// 406 `not_acceptable`: the export's `Accept` allows none of the formats the server can produce.
    NotAcceptable,
    /// 406 `not_acceptable`: `format=` names a format this server cannot produce (`arrow` without
    /// feature `arrow`).
    FormatUnavailable {
        /// The format named.
        format: &'static str,
    },
    /// 408 `request_timeout`: the body did not arrive in full within the body timeout.
    RequestTimeout {
        /// The timeout.
        after: std::time::Duration,
    },
    /// 413 `payload_too_large`: the body is over the limit.
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// 415 `unsupported_media_type`: a body that is not declared as JSON.
    UnsupportedMediaType,
    /// 409 `not_ready` (retryable, with `Retry-After`): the resource's query is still running.
    NotReady {
        /// Seconds to wait before asking again, sent as `Retry-After`.
        retry_after_secs: u64,
    },
    /// 500 `query_failed`: the resource's query failed (docs/DESIGN.md §8); retryable when its
    /// failure code is (`query_interrupted`, `storage_error`).
    ResourceFailed {
        /// The failure's code (the message stays with the model).
        code: FailureCode,
    },
    /// 500 `query_failed`: the executor failed (or is not registered on this instance).
    QueryFailed {
        /// What went wrong, for the log only.
        detail: String,
    },
    /// 503 `storage_error` (retryable): the store is unreachable or failing.
    Storage {
        /// What went wrong, for the log only.
        detail: String,
    },
    /// 503 `overloaded` (retryable, with `Retry-After`): no capacity right now, e.g. no database
    /// connection could be had within the executor's wait limit.
    Overloaded {
        /// Seconds to wait before retrying (at least 1), sent as `Retry-After`.
        retry_after_secs: u64,
        /// What went wrong, for the log only.
        detail: String,
    },
    /// 404 `no_profile`: the resource has no column profile; the message says why.
    NoProfile {
        /// Why (the server's words).
        reason: &'static str,
    },
    /// 409 `not_refinable`: the result cannot be refined with SQL; the message says why.
    NotRefinable {
        /// Why (the server's words).
        reason: &'static str,
    },
    /// 429 `quota_exceeded` (retryable, with `Retry-After`): a quota is reached; the message names it.
    QuotaExceeded {
        /// The quota's name (`owner_pins`, `spool_bytes`, …).
        quota: &'static str,
        /// Its configured limit.
        limit: u64,
        /// Seconds to wait before retrying (at least 1), sent as `Retry-After`.
        retry_after_secs: u64,
    },
}

impl Rejection {
    /// A 400 naming the offending field of a page request or `sort` parameter.
    #[must_use]
    pub(crate) fn invalid(error: &RequestError) -> Self {
        Self::InvalidRequest(error.to_string())
    }

    /// The wire code.
    #[must_use]
    pub(crate) const fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidRequest(_) => ErrorCode::InvalidRequest,
            Self::NotFound => ErrorCode::NotFound,
            Self::Expired => ErrorCode::Expired,
            Self::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            Self::NotAcceptable | Self::FormatUnavailable { .. } => ErrorCode::NotAcceptable,
            Self::RequestTimeout { .. } => ErrorCode::RequestTimeout,
            Self::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            Self::UnsupportedMediaType => ErrorCode::UnsupportedMediaType,
            Self::NotReady { .. } => ErrorCode::NotReady,
            Self::QueryFailed { .. } | Self::ResourceFailed { .. } => ErrorCode::QueryFailed,
            Self::Storage { .. } => ErrorCode::StorageError,
            Self::Overloaded { .. } => ErrorCode::Overloaded,
            Self::QuotaExceeded { .. } => ErrorCode::QuotaExceeded,
            Self::NoProfile { .. } => ErrorCode::NoProfile,
            Self::NotRefinable { .. } => ErrorCode::NotRefinable,
        }
    }

    /// The HTTP status.
    #[must_use]
    pub(crate) fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code().status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The message sent to the client.
    #[must_use]
    pub(crate) fn message(&self) -> String {
        match self {
            Self::InvalidRequest(message) => message.clone(),
            Self::NotFound => NOT_FOUND_MESSAGE.to_owned(),
            Self::Expired => "Resource expired".to_owned(),
            Self::MethodNotAllowed { allow } => {
                format!("method not allowed on this path; allowed: {allow}")
            }
            Self::NotAcceptable => format!(
                "`Accept` allows none of the export formats this server can produce: {}",
                crate::ExportFormat::PRODUCIBLE
            ),
            Self::FormatUnavailable { format } => format!(
                "`format={format}` is not available on this server; it produces: {}",
                crate::ExportFormat::PRODUCIBLE
            ),
            Self::RequestTimeout { after } => {
                format!("the request body did not arrive within {} ms", after.as_millis())
            }
            Self::PayloadTooLarge { limit } => {
                format!("request body is larger than the limit of {limit} bytes")
            }
            Self::UnsupportedMediaType => {
                "request body must be JSON (Content-Type: application/json)".to_owned()
            }
            Self::NotReady { retry_after_secs } => format!(
                "The resource's query is still running; retry in {retry_after_secs} s (GET the resource for its progress)"
            ),
            Self::ResourceFailed {
                code: FailureCode::QueryInterrupted,
            } => "The server running the resource's query stopped before it finished (query_interrupted); run the query again".to_owned(),
            Self::ResourceFailed { code } => format!("The resource's query failed ({code})"),
            Self::QueryFailed { .. } => "The query could not be executed".to_owned(),
            Self::Storage { .. } => "The resource store is unavailable; retry later".to_owned(),
            Self::Overloaded { retry_after_secs, .. } => format!(
                "The server has no capacity for this request right now; retry in {retry_after_secs} s"
            ),
            Self::QuotaExceeded {
                quota,
                limit,
                retry_after_secs,
            } => format!(
                "Quota `{quota}` reached (limit {limit}); retry in {retry_after_secs} s or once room is freed"
            ),
            Self::NoProfile { reason } => format!("The result has no column profile: {reason}"),
            Self::NotRefinable { reason } => format!("The result cannot be refined: {reason}"),
        }
    }

    /// The JSON body.
    #[must_use]
    pub(crate) fn body(&self) -> ErrorBody {
        let mut body = ErrorBody::new(self.code(), self.message());
        if let Self::ResourceFailed { code } = self {
            body.retryable = code.is_retryable();
        }
        body
    }

    /// Emits the rejection's one `tracing` event; [`render`](crate::render::render) calls it.
    pub(crate) fn log(&self) {
        let code = self.code().as_str();
        match self {
            Self::QueryFailed { detail } => {
                tracing::error!(code, detail = %log_safe(detail), "dual-http request failed: query execution failed");
            }
            Self::Storage { detail } => {
                tracing::warn!(code, detail = %log_safe(detail), "dual-http request failed: store unavailable");
            }
            Self::Overloaded { detail, .. } => {
                tracing::warn!(code, detail = %log_safe(detail), "dual-http request refused: no capacity");
            }
            _ => tracing::debug!(code, message = %log_safe(&self.message()), "dual-http request rejected"),
        }
    }

    /// A 400 for a query parameter the route does not take. Only the name up to a `=` is echoed: a
    /// name holding one is a parameter whose `=` was percent-encoded (`token%3D…`), and what follows
    /// it may be a capability link's token, which no answer or log repeats.
    pub(crate) fn unknown_parameter(name: &str, expected: &str) -> Self {
        let name = name.split_once('=').map_or(name, |(name, _)| name);
        Self::InvalidRequest(format!(
            "unknown query parameter `{}`; {expected}",
            truncate(name)
        ))
    }
}

impl From<RequestError> for Rejection {
    fn from(error: RequestError) -> Self {
        Self::invalid(&error)
    }
}

impl From<ServerError> for Rejection {
    fn from(error: ServerError) -> Self {
        match error {
            ServerError::ResourceNotFound => Self::NotFound,
            ServerError::ResourceExpired => Self::Expired,
            // The message is the invalid request's own text and names the field.
            ServerError::InvalidRequest(request) => Self::InvalidRequest(request.to_string()),
            ServerError::Storage(store) => Self::Storage {
                detail: Report::new(&store).to_string(),
            },
            ServerError::Spool(spool) => Self::Storage {
                detail: Report::new(&spool).to_string(),
            },
            ServerError::Overloaded(executor) => Self::Overloaded {
                retry_after_secs: executor
                    .retry_after()
                    .map_or(1, |after| after.as_secs_f64().ceil().max(1.0) as u64),
                detail: Report::new(&executor).to_string(),
            },
            ServerError::NotReady { .. } => Self::NotReady {
                retry_after_secs: dual_server::NOT_READY_RETRY_AFTER.as_secs().max(1),
            },
            ServerError::ResourceFailed { failure } => Self::ResourceFailed { code: failure.code },
            ServerError::NoProfile { reason } => Self::NoProfile { reason },
            ServerError::NotRefinable { reason } => Self::NotRefinable { reason },
            ServerError::QuotaExceeded { quota, limit } => Self::QuotaExceeded {
                quota: quota.as_str(),
                limit,
                retry_after_secs: dual_server::QUOTA_RETRY_AFTER.as_secs().max(1),
            },
            ServerError::UnknownQueryKind(kind) => Self::QueryFailed {
                detail: format!("no executor is registered for kind `{kind}` on this instance"),
            },
            // The detail (for the log only) is the error with its cause: the executor's message.
            other => Self::QueryFailed {
                detail: Report::new(&other).to_string(),
            },
        }
    }
}

/// At most [`ECHO_LIMIT`] characters of `text`, with an ellipsis when cut.
pub(crate) fn truncate(text: &str) -> String {
    match text.char_indices().nth(ECHO_LIMIT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_codes_follow_the_design_table() {
        let cases = [
            (Rejection::InvalidRequest("x".into()), 400, "invalid_request"),
            (Rejection::NotFound, 404, "not_found"),
            (Rejection::Expired, 404, "expired"),
            (
                Rejection::MethodNotAllowed { allow: "GET" },
                405,
                "method_not_allowed",
            ),
            (Rejection::NotAcceptable, 406, "not_acceptable"),
            (Rejection::PayloadTooLarge { limit: 1 }, 413, "payload_too_large"),
            (
                Rejection::RequestTimeout {
                    after: std::time::Duration::from_secs(1),
                },
                408,
                "request_timeout",
            ),
            (Rejection::UnsupportedMediaType, 415, "unsupported_media_type"),
            (
                Rejection::QueryFailed {
                    detail: "SELECT".into(),
                },
                500,
                "query_failed",
            ),
            (
                Rejection::Storage {
                    detail: "redis://10.0.0.1".into(),
                },
                503,
                "storage_error",
            ),
            (
                Rejection::Overloaded {
                    retry_after_secs: 2,
                    detail: "sqlite pool".into(),
                },
                503,
                "overloaded",
            ),
        ];
        for (rejection, status, code) in cases {
            assert_eq!(rejection.status().as_u16(), status);
            let body = rejection.body();
            assert_eq!(body.error.as_str(), code);
            assert_eq!(body.retryable, status == 503);
            assert!(!body.message.contains("SELECT") && !body.message.contains("redis"));
        }
    }

    #[test]
    fn server_errors_map_without_leaking() {
        let rejection = Rejection::from(ServerError::QueryExecutionFailed(
            dual_server::ExecutorError::new("no such table: secret"),
        ));
        assert_eq!(rejection.code(), ErrorCode::QueryFailed);
        assert!(!rejection.message().contains("secret"));
        assert_eq!(
            Rejection::from(ServerError::UnknownQueryKind("k".into())).code(),
            ErrorCode::QueryFailed
        );
        assert_eq!(
            Rejection::from(ServerError::ResourceExpired).code(),
            ErrorCode::Expired
        );
    }

    #[test]
    fn store_spool_and_request_failures_keep_their_codes_and_log_their_causes() {
        let store = Rejection::from(ServerError::from(
            dual_store::StoreError::unavailable("redis get")
                .with_source(std::io::Error::other("connection refused")),
        ));
        assert_eq!(
            (store.status().as_u16(), store.code()),
            (503, ErrorCode::StorageError)
        );
        assert!(!store.message().contains("redis"), "{}", store.message());
        let Rejection::Storage { detail } = &store else {
            panic!("expected Storage, got {store:?}");
        };
        assert_eq!(
            detail, "the resource store failed: store unavailable: redis get: connection refused",
            "the log's detail keeps the cause"
        );

        let spool = Rejection::from(ServerError::Spool(
            dual_spool::SpoolError::unavailable(std::io::Error::other("disk gone")).into(),
        ));
        assert_eq!(
            (spool.status().as_u16(), spool.code()),
            (503, ErrorCode::StorageError)
        );
        assert!(matches!(&spool, Rejection::Storage { detail } if detail.ends_with("disk gone")));

        let invalid = Rejection::from(ServerError::from(RequestError::LimitOutOfRange { max: 1000 }));
        assert_eq!(invalid.status().as_u16(), 400);
        assert_eq!(invalid.message(), "`limit` must be between 1 and 1000");

        let failed = Rejection::from(ServerError::QueryExecutionFailed(
            dual_server::ExecutorError::new("no such table: secret"),
        ));
        assert!(
            matches!(&failed, Rejection::QueryFailed { detail } if detail == "query execution failed: no such table: secret"),
            "{failed:?}"
        );
    }

    #[test]
    fn echoes_are_bounded() {
        let long = "é".repeat(1000);
        assert_eq!(truncate(&long).chars().count(), ECHO_LIMIT + 1);
        assert_eq!(truncate("sort"), "sort");
    }

    #[test]
    fn an_interrupted_result_says_to_run_the_query_again_and_is_retryable() {
        let interrupted = Rejection::ResourceFailed {
            code: FailureCode::QueryInterrupted,
        };
        let body = interrupted.body();
        assert!(body.retryable, "query_interrupted is retryable");
        let message = interrupted.message();
        assert!(message.contains("run the query again"), "{message}");
        assert!(!message.contains("could not be executed"), "{message}");
        let failed = Rejection::ResourceFailed {
            code: FailureCode::QueryExecutionFailed,
        };
        assert!(!failed.body().retryable);
    }
}
