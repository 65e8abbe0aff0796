//! The error of setting a shared store up, one type for every backend.

use crate::StoreError;

/// Connecting a store (`RedisStoreBuilder::connect`, `PostgresStoreBuilder::connect`, …) failed.
///
/// One type for every backend, so code that opens "some store" from a URL matches one error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The configuration cannot work (a malformed URL, an empty key prefix, an unusable schema name,
    /// a zero pool size or timeout). The message names the backend and the option, never a password.
    #[error("invalid store configuration: {0}")]
    Config(String),
    /// The store could not be reached, or its set-up (a migration) failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ConnectError> for StoreError {
    fn from(error: ConnectError) -> Self {
        match error {
            ConnectError::Config(message) => Self::Backend(message),
            ConnectError::Store(error) => error,
        }
    }
}
