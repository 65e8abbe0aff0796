//! [`ExecutorError`]: how an executor fails — a message for the model, or a lack of capacity that
//! the server reports as retryable.

use std::time::Duration;

/// An executor failed. The message is meant for the model (e.g. a SQL error it can fix); it is
/// never shown to REST callers.
///
/// Most failures are the query's ([`ExecutorError::new`]); an executor that cannot get capacity in
/// time (no database connection free within its wait limit) returns [`ExecutorError::overloaded`]
/// instead, which the server reports as the retryable `OVERLOADED` and REST as 503 `overloaded` with
/// `Retry-After` — never a hang.
///
/// Its `Display` is the message. [`ExecutorError::from_error`] takes another error's text as the
/// message and, like `std::io::Error::other`, goes on from that error's own
/// [`source`](std::error::Error::source), so no text is shown twice; [`ExecutorError::get_ref`]
/// gives the wrapped error itself.
#[derive(Debug)]
pub struct ExecutorError {
    message: String,
    /// `Some` when the failure is a lack of capacity: when to retry.
    retry_after: Option<Duration>,
    /// The error `from_error` wrapped: its text is `message`.
    wrapped: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl std::fmt::Display for ExecutorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExecutorError {
    /// The wrapped error's source: the wrapped error's own text is already the message.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.wrapped.as_ref()?.source()
    }
}

impl ExecutorError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retry_after: None,
            wrapped: None,
        }
    }

    /// Wraps `error`, keeping its display text as the message; its sources are this error's.
    pub fn from_error(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            message: error.to_string(),
            retry_after: None,
            wrapped: Some(Box::new(error)),
        }
    }

    /// The error [`ExecutorError::from_error`] wrapped (to downcast it), `None` for the others.
    #[must_use]
    pub fn get_ref(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.wrapped.as_deref()
    }

    /// No capacity right now (say, no database connection could be had within the wait limit):
    /// retryable, after about `retry_after`.
    pub fn overloaded(message: impl Into<String>, retry_after: Duration) -> Self {
        Self {
            message: message.into(),
            retry_after: Some(retry_after),
            wrapped: None,
        }
    }

    /// When this is an [`ExecutorError::overloaded`] error: how long to wait before retrying.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}
