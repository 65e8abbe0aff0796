//! Errors of setting a store up.

use dual_store::StoreError;

/// [`RedisStoreBuilder::connect`](crate::RedisStoreBuilder::connect) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The configuration cannot work (a malformed URL, an empty key prefix, a zero timeout).
    #[error("invalid redis store configuration: {0}")]
    Config(String),
    /// Redis could not be reached or answered with an error.
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
