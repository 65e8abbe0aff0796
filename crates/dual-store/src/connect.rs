//! The error of setting a shared store up, one type for every backend.

use crate::StoreError;
use crate::error::{BoxError, WithCause};

/// Connecting a store (`RedisStoreBuilder::connect`, `PostgresStoreBuilder::connect`, …) failed.
///
/// One type for every backend, so code that opens "some store" from a URL matches one error. Like
/// [`StoreError`], it keeps its cause as its source and shows it after its message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The configuration cannot work (a malformed URL, an empty key prefix, an unusable schema name,
    /// a zero pool size or timeout). The message names the backend and the option, never a password.
    #[error("invalid store configuration: {}", WithCause(.message, .source))]
    Config {
        /// What is wrong, e.g. `redis: timeouts must be positive`.
        message: String,
        /// Why, when another error (the driver's URL parser, say) says so; never one that echoes a
        /// password.
        #[source]
        source: Option<BoxError>,
    },
    /// The store could not be reached, or its set-up (a migration) failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ConnectError {
    /// [`ConnectError::Config`] with `message` and no cause yet.
    #[must_use]
    pub fn config(message: impl Into<String>) -> Self {
        Self::Config {
            message: message.into(),
            source: None,
        }
    }

    /// The same error with `source` as its cause (replacing any earlier one); a
    /// [`ConnectError::Store`] is returned unchanged (it keeps its own cause).
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        if let Self::Config { source: slot, .. } = &mut self {
            *slot = Some(source.into());
        }
        self
    }
}

impl From<ConnectError> for StoreError {
    fn from(error: ConnectError) -> Self {
        match error {
            ConnectError::Config { message, source } => Self::Backend { message, source },
            ConnectError::Store(error) => error,
        }
    }
}
