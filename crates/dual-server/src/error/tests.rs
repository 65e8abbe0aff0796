//! The variants another crate's error causes: their codes, their sources, a `Display` that says
//! what failed here without repeating the cause, and matching on this crate's own payloads.

use std::error::Error as _;

use dual_core::error::Report;
use dual_core::page::{RequestError, SortLimit};
use dual_spool::{SpoolError, SpoolQuota};
use dual_store::StoreError;

use super::{ServerError, ServerErrorCode};
use crate::{ExecutorError, Quota};

/// The text of `error`'s source, and of that source's source.
fn sources(error: &ServerError) -> (Option<String>, Option<String>) {
    let first = error.source();
    (
        first.map(ToString::to_string),
        first.and_then(|e| e.source()).map(ToString::to_string),
    )
}

/// `error` is a retryable `STORAGE_ERROR` whose text is `text`, caused by `cause`, caused by `root`.
fn assert_retryable_storage_error(error: &ServerError, text: &str, (cause, root): (&str, &str)) {
    assert_eq!(
        (error.code(), error.is_retryable()),
        (ServerErrorCode::StorageError, true)
    );
    assert_eq!(error.to_string(), text);
    assert_eq!(sources(error), (Some(cause.to_owned()), Some(root.to_owned())));
    assert_eq!(Report::new(error).to_string(), format!("{text}: {cause}: {root}"));
}

#[test]
fn a_store_failure_keeps_the_stores_error_as_its_source() {
    let error = ServerError::from(
        StoreError::unavailable("redis get").with_source(std::io::Error::other("connection refused")),
    );
    assert!(
        matches!(&error, ServerError::Storage(store) if store.is_retryable()),
        "{error:?}"
    );
    assert_retryable_storage_error(
        &error,
        "the resource store failed",
        ("store unavailable: redis get", "connection refused"),
    );

    let corrupt = ServerError::from(StoreError::corrupt("record JSON"));
    assert!(matches!(&corrupt, ServerError::Storage(store) if !store.is_retryable()));
    assert!(!corrupt.is_retryable());
}

#[test]
fn a_spool_failure_keeps_the_spools_error_as_its_source() {
    let error = ServerError::spool(SpoolError::unavailable(std::io::Error::other("disk gone")));
    assert!(
        matches!(&error, ServerError::Spool(spool) if spool.is_retryable()),
        "{error:?}"
    );
    assert_retryable_storage_error(
        &error,
        "the snapshot spool failed",
        ("spool storage unavailable", "disk gone"),
    );

    let gone = ServerError::spool(SpoolError::NotFound(dual_core::ResourceId::new()));
    assert!(matches!(gone, ServerError::ResourceNotFound));
    let full = ServerError::spool_write(SpoolError::QuotaExceeded {
        quota: SpoolQuota::Bytes,
        limit: 10,
        segment: 20,
    });
    assert!(matches!(
        full,
        ServerError::QuotaExceeded {
            quota: Quota::SpoolBytes,
            limit: 10
        }
    ));
}

#[test]
fn an_invalid_request_is_its_own_message_naming_the_field() {
    let error = ServerError::from(RequestError::LimitOutOfRange { max: 1000 });
    let ServerError::InvalidRequest(request) = &error else {
        panic!("expected InvalidRequest, got {error:?}");
    };
    assert_eq!(request.field(), Some("limit"));
    assert_eq!(request.sort_limit(), None);
    assert_eq!(error.code(), ServerErrorCode::InvalidRequest);
    assert_eq!(error.to_string(), "`limit` must be between 1 and 1000");
    assert!(error.source().is_none(), "the message is the error's own");

    let limit = SortLimit::Rows { rows: 51, max: 50 };
    let error = ServerError::from(RequestError::SortTooLarge(limit));
    assert!(matches!(&error, ServerError::InvalidRequest(request) if request.sort_limit() == Some(limit)));
    assert!(error.to_string().contains("51 rows"), "{error}");
}

#[test]
fn executor_failures_say_what_failed_and_keep_the_executors_message_as_the_source() {
    let error = ServerError::query_failed(ExecutorError::new("no such column: nme"));
    assert!(matches!(error, ServerError::QueryExecutionFailed(_)));
    assert_eq!(error.to_string(), "query execution failed");
    assert_eq!(sources(&error).0.as_deref(), Some("no such column: nme"));
    assert_eq!(
        Report::new(&error).to_string(),
        "query execution failed: no such column: nme"
    );

    let count = ServerError::count_failed(ExecutorError::new("no such table: t"));
    assert_eq!(count.to_string(), "count execution failed");
    assert_eq!(
        Report::new(&count).to_string(),
        "count execution failed: no such table: t"
    );

    let busy = ServerError::query_failed(ExecutorError::overloaded(
        "no connection within 2 s",
        std::time::Duration::from_secs(2),
    ));
    assert!(matches!(busy, ServerError::Overloaded(_)));
    assert_eq!(busy.to_string(), "no capacity to run the query right now");
    assert_eq!(busy.retry_after(), Some(std::time::Duration::from_secs(2)));
    assert_eq!(sources(&busy).0.as_deref(), Some("no connection within 2 s"));
}

/// An error that leaves its cause to `source`.
#[derive(Debug, thiserror::Error)]
#[error("database error")]
struct Driver(#[source] std::io::Error);

#[test]
fn a_wrapped_error_is_the_message_and_its_sources_follow_once() {
    let error = ExecutorError::from_error(Driver(std::io::Error::other("socket closed")));
    assert_eq!(error.message(), "database error");
    assert_eq!(error.to_string(), "database error");
    assert_eq!(
        error.source().map(ToString::to_string).as_deref(),
        Some("socket closed"),
        "the source is the wrapped error's cause, not the wrapped error again"
    );
    assert!(error.get_ref().is_some_and(|wrapped| wrapped.is::<Driver>()));
    let failed = ServerError::query_failed(error);
    assert_eq!(
        Report::new(&failed).to_string(),
        "query execution failed: database error: socket closed"
    );
    assert!(ExecutorError::new("x").get_ref().is_none());
}
