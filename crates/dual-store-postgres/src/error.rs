//! How PostgreSQL and pool errors become [`StoreError`]s.

use deadpool_postgres::PoolError;
use dual_store::StoreError;
use tokio_postgres::error::SqlState;

/// Whether the connection that produced `error` should be thrown away rather than reused.
pub(crate) fn breaks_connection(error: &tokio_postgres::Error) -> bool {
    error.is_closed() || (error.as_db_error().is_none() && is_unavailable(error))
}

/// Connection trouble, server shutdowns and cancelled statements are `Unavailable`; everything else
/// PostgreSQL says is `Backend`. An error the server sent becomes a message of the SQLSTATE and the
/// server's message, without the driver's error as its cause: that would bring along the error's
/// detail, which may quote row values. Any other error (the socket, the connection) is kept as the
/// cause. Neither carries SQL text or parameters.
pub(crate) fn map_pg_error(op: &str, error: tokio_postgres::Error) -> StoreError {
    if let Some(db) = error.as_db_error() {
        let code = db.code();
        let message = format!("postgres {op}: {} ({})", db.message(), code.code());
        if is_unavailable_state(code) {
            tracing::warn!(op, code = code.code(), "postgres store unavailable");
            StoreError::unavailable(message)
        } else {
            tracing::error!(
                op,
                code = code.code(),
                message = %dual_core::escape::log_safe(db.message()),
                "postgres store call failed"
            );
            StoreError::backend(message)
        }
    } else {
        let text = with_sources(&error);
        let failure = if is_unavailable_text(&text) {
            tracing::warn!(op, error = %dual_core::escape::log_safe(&text), "postgres store unavailable");
            StoreError::unavailable(format!("postgres {op}"))
        } else {
            tracing::error!(op, error = %dual_core::escape::log_safe(&text), "postgres store call failed");
            StoreError::backend(format!("postgres {op}"))
        };
        failure.with_source(error)
    }
}

/// A pool failure: the pool's timeouts are `Unavailable`, its other errors `Backend`, each keeping the
/// pool's error as its cause; a closed pool is `Closed`.
pub(crate) fn map_pool_error(op: &str, error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(error) => map_pg_error(op, error),
        PoolError::Timeout(kind) => {
            tracing::warn!(op, ?kind, "postgres store pool timed out");
            StoreError::unavailable(format!("postgres {op}: no connection within the timeout"))
                .with_source(PoolError::Timeout(kind))
        }
        PoolError::Closed => StoreError::Closed,
        other => {
            tracing::error!(op, error = %dual_core::escape::log_safe(&other.to_string()), "postgres store pool failed");
            StoreError::backend(format!("postgres {op}")).with_source(other)
        }
    }
}

/// Errors without a server answer: the socket, the connection, the connect timeout.
fn is_unavailable(error: &tokio_postgres::Error) -> bool {
    error.is_closed() || is_unavailable_text(&with_sources(error))
}

/// `error` and the chain of its sources, e.g. `error connecting to server: Connection refused`.
fn with_sources(error: &tokio_postgres::Error) -> String {
    dual_core::error::Report::new(error).to_string()
}

/// tokio-postgres keeps its error kinds private; these are its texts for connect and IO trouble
/// (an IO error under any of them is connection trouble too).
fn is_unavailable_text(text: &str) -> bool {
    [
        "error connecting",
        "error communicating",
        "timeout waiting",
        "connection closed",
        "error performing TLS",
    ]
    .iter()
    .any(|needle| text.starts_with(needle))
}

fn is_unavailable_state(code: &SqlState) -> bool {
    // Class 08: connection exception; 57P0x: the server is shutting down or starting;
    // 53300: too many connections; 57014: statement cancelled (statement_timeout).
    code.code().starts_with("08")
        || [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::TOO_MANY_CONNECTIONS,
            SqlState::QUERY_CANCELED,
        ]
        .contains(code)
}
