//! The error of setting a shared store up, one type for every backend.

use crate::StoreError;
use crate::error::BoxError;

/// Connecting a store (`RedisStoreBuilder::connect`, `PostgresStoreBuilder::connect`, …) failed.
///
/// One type for every backend, so code that opens "some store" from a URL matches one error. Like
/// [`StoreError`], it keeps its cause as its source and its `Display` does not repeat it (show the
/// chain with [`dual_core::error::Report`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The configuration cannot work (a malformed URL, an empty key prefix, an unusable schema name,
    /// a zero pool size or timeout). The message names the backend and the option, never a password.
    #[error("invalid store configuration: {message}")]
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

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use dual_core::error::Report;

    use super::ConnectError;
    use crate::StoreError;

    #[test]
    fn a_configuration_error_keeps_its_cause_without_repeating_it() {
        let error = ConnectError::config("redis: cannot use redis://h")
            .with_source(std::io::Error::other("bad port"));
        assert_eq!(
            error.to_string(),
            "invalid store configuration: redis: cannot use redis://h"
        );
        assert_eq!(
            error.source().map(ToString::to_string).as_deref(),
            Some("bad port")
        );
        assert_eq!(
            Report::new(&error).to_string(),
            "invalid store configuration: redis: cannot use redis://h: bad port"
        );
    }

    #[test]
    fn a_store_failure_is_the_stores_error_itself() {
        let error = ConnectError::from(
            StoreError::unavailable("postgres connect").with_source(std::io::Error::other("refused")),
        );
        assert!(matches!(
            &error,
            ConnectError::Store(StoreError::Unavailable { .. })
        ));
        assert_eq!(error.to_string(), "store unavailable: postgres connect");
        assert_eq!(
            error.source().map(ToString::to_string).as_deref(),
            Some("refused")
        );
    }
}
