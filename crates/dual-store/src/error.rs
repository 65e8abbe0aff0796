//! Store errors.

use std::error::Error as StdError;

/// The boxed cause of a store failure: the driver's error, a decoding error, ….
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// A store operation failed. Every variant becomes `503 storage_error` (retryable) on the REST API;
/// messages are for logs and never reach REST callers.
///
/// A failure keeps its cause (the driver's error, say) as its [`source`](StdError::source); its
/// `Display` is the kind and the message only — `store unavailable: postgres get` — and never repeats
/// the cause. A log line shows the whole chain with [`dual_core::error::Report`]:
/// `store unavailable: postgres get: error connecting to server: Connection refused`. Make one with
/// [`StoreError::unavailable`], [`StoreError::backend`] or [`StoreError::corrupt`], and attach the
/// cause with [`StoreError::with_source`]:
///
/// ```
/// use dual_core::error::Report;
/// use dual_store::StoreError;
///
/// let cause = std::io::Error::other("connection refused");
/// let error = StoreError::unavailable("redis get").with_source(cause);
/// assert_eq!(error.to_string(), "store unavailable: redis get");
/// assert_eq!(
///     std::error::Error::source(&error).map(ToString::to_string).as_deref(),
///     Some("connection refused")
/// );
/// assert_eq!(Report::new(&error).to_string(), "store unavailable: redis get: connection refused");
/// assert!(error.is_retryable());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached (connection refused, timed out, pool exhausted).
    #[error("store unavailable: {message}")]
    Unavailable {
        /// What failed, e.g. `redis get` or `postgres save timed out after 5s`.
        message: String,
        /// Why, when another error says so.
        #[source]
        source: Option<BoxError>,
    },
    /// The store answered with an error.
    #[error("store failed: {message}")]
    Backend {
        /// What failed, e.g. `postgres save: value too long (22001)`.
        message: String,
        /// Why, when another error says so.
        #[source]
        source: Option<BoxError>,
    },
    /// A stored record could not be decoded.
    #[error("stored record is corrupt: {message}")]
    Corrupt {
        /// What could not be decoded, e.g. `record JSON` or `column status`.
        message: String,
        /// Why, when another error says so.
        #[source]
        source: Option<BoxError>,
    },
    /// The store was closed.
    #[error("store is closed")]
    Closed,
}

impl StoreError {
    /// [`StoreError::Unavailable`] with `message` and no cause yet.
    #[must_use]
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::Unavailable {
            message: message.into(),
            source: None,
        }
    }

    /// [`StoreError::Backend`] with `message` and no cause yet.
    #[must_use]
    pub fn backend(message: impl Into<String>) -> Self {
        Self::Backend {
            message: message.into(),
            source: None,
        }
    }

    /// [`StoreError::Corrupt`] with `message` and no cause yet.
    #[must_use]
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::Corrupt {
            message: message.into(),
            source: None,
        }
    }

    /// The same error with `source` as its cause (replacing any earlier one). [`StoreError::Closed`]
    /// has no cause and is returned unchanged.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        if let Self::Unavailable { source: slot, .. }
        | Self::Backend { source: slot, .. }
        | Self::Corrupt { source: slot, .. } = &mut self
        {
            *slot = Some(source.into());
        }
        self
    }

    /// The message without the kind and the cause (`redis get`), or `None` for
    /// [`StoreError::Closed`].
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::Unavailable { message, .. }
            | Self::Backend { message, .. }
            | Self::Corrupt { message, .. } => Some(message),
            Self::Closed => None,
        }
    }

    /// Whether retrying the same operation later may succeed.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable { .. } | Self::Backend { .. })
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use dual_core::error::Report;

    use super::StoreError;

    #[test]
    fn display_shows_the_message_and_source_keeps_the_cause() {
        let plain = StoreError::corrupt("column id: not a ULID");
        assert_eq!(
            plain.to_string(),
            "stored record is corrupt: column id: not a ULID"
        );
        assert!(plain.source().is_none());

        let caused = StoreError::backend("postgres save").with_source(std::io::Error::other("boom"));
        assert_eq!(caused.to_string(), "store failed: postgres save");
        assert!(
            !caused.to_string().contains("boom"),
            "Display does not repeat the cause"
        );
        assert_eq!(caused.source().map(ToString::to_string).as_deref(), Some("boom"));
        assert_eq!(caused.message(), Some("postgres save"));
        assert_eq!(
            Report::new(&caused).to_string(),
            "store failed: postgres save: boom"
        );

        let closed = StoreError::Closed.with_source(std::io::Error::other("ignored"));
        assert!(matches!(closed, StoreError::Closed));
        assert_eq!(closed.message(), None);
    }

    /// An error that leaves its cause to `source`, like tokio-postgres's.
    #[derive(Debug, thiserror::Error)]
    #[error("error connecting to server")]
    struct Terse(#[source] std::io::Error);

    #[test]
    fn the_causes_own_sources_stay_reachable() {
        let terse =
            StoreError::unavailable("postgres get").with_source(Terse(std::io::Error::other("refused")));
        assert_eq!(terse.to_string(), "store unavailable: postgres get");
        assert_eq!(
            Report::new(&terse).to_string(),
            "store unavailable: postgres get: error connecting to server: refused"
        );
    }

    #[test]
    fn outages_and_backend_failures_are_retryable_corruption_and_closing_are_not() {
        assert!(StoreError::unavailable("x").is_retryable());
        assert!(StoreError::backend("x").is_retryable());
        assert!(!StoreError::corrupt("x").is_retryable());
        assert!(!StoreError::Closed.is_retryable());
    }
}
