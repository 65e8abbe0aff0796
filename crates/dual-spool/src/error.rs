//! Spool errors.

use std::error::Error as StdError;

use dual_core::{ResourceId, error::ErrorCode};

use crate::SpoolQuota;

/// The boxed cause of a storage failure.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// A spool operation failed.
///
/// [`code`](Self::code) is the REST code a server answers with: `not_found` for
/// [`NotFound`](Self::NotFound), `storage_error` (503, retryable) for storage failures. Messages are
/// for logs; they name object keys and paths and must not reach REST callers.
///
/// A failure caused by another error (the file system's, `object_store`'s) keeps it as its
/// [`source`](StdError::source) and does not repeat it in its `Display`; a log line shows the whole
/// chain with [`dual_core::error::Report`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpoolError {
    /// The resource has no finished snapshot (never written, still being written, abandoned or
    /// deleted), or one of its segments is gone.
    #[error("no snapshot for resource {0}")]
    NotFound(ResourceId),
    /// A writer was asked for a resource that already has a finished snapshot; snapshots are
    /// immutable.
    #[error("resource {0} already has a snapshot")]
    AlreadyExists(ResourceId),
    /// The storage is unreachable or failing (connection refused, timeout, 5xx, disk error).
    /// Retrying later may succeed. The storage's error is the [`source`](StdError::source).
    #[error("spool storage unavailable")]
    Unavailable {
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// A stored segment or manifest does not decode.
    #[error("spooled data of resource {id} is corrupt: {reason}")]
    Corrupt {
        /// The resource.
        id: ResourceId,
        /// What is wrong.
        reason: &'static str,
    },
    /// A row longer than a segment can hold (4 GiB), or more rows than a segment can count.
    #[error("row of {len} bytes does not fit in a segment")]
    RowTooLarge {
        /// The row's length in bytes.
        len: usize,
    },
    /// Storing the segment would pass a cap of the spool: the snapshot being written is refused (its
    /// writer removes what it stored) and nothing stored before is touched. Retryable: room is
    /// freed as resources are deleted or expire.
    #[error("spool quota `{quota}` reached (limit {limit} bytes): segment of {segment} bytes refused")]
    QuotaExceeded {
        /// Which cap.
        quota: SpoolQuota,
        /// Its configured limit in bytes.
        limit: u64,
        /// The size of the refused segment.
        segment: u64,
    },
    /// The spool's configuration is invalid (a malformed `s3://` URL, an unusable directory).
    #[error("invalid spool configuration: {message}")]
    Config {
        /// What is wrong, e.g. `spill directory /var/spool/dual`.
        message: String,
        /// Why, when another error (the file system's, `object_store`'s) says so.
        #[source]
        source: Option<BoxError>,
    },
}

impl SpoolError {
    /// Wraps a storage failure as [`SpoolError::Unavailable`].
    pub fn unavailable(source: impl Into<BoxError>) -> Self {
        Self::Unavailable {
            source: source.into(),
        }
    }

    /// [`SpoolError::Config`] with `message`, and `source` as its cause when another error says why.
    pub(crate) fn config(message: impl Into<String>, source: Option<BoxError>) -> Self {
        Self::Config {
            message: message.into(),
            source,
        }
    }

    /// The REST code for this error: `not_found`, `quota_exceeded` or `storage_error`.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::QuotaExceeded { .. } => ErrorCode::QuotaExceeded,
            Self::AlreadyExists(_)
            | Self::Unavailable { .. }
            | Self::Corrupt { .. }
            | Self::RowTooLarge { .. }
            | Self::Config { .. } => ErrorCode::StorageError,
        }
    }

    /// Whether retrying the same operation later may succeed (storage outages, and a cap reached).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable { .. } | Self::QuotaExceeded { .. })
    }

    /// Whether this is [`SpoolError::NotFound`].
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound(_))
    }
}

impl From<std::io::Error> for SpoolError {
    /// Every IO error of a local spool directory is a storage failure.
    fn from(error: std::io::Error) -> Self {
        Self::unavailable(error)
    }
}

#[cfg(test)]
mod tests {
    use dual_core::error::Report;

    use super::*;

    /// `error` reads `text`, its source `cause`, and its report both.
    fn assert_caused(error: &SpoolError, text: &str, cause: &str) {
        assert_eq!(error.to_string(), text);
        assert_eq!(
            std::error::Error::source(error)
                .map(ToString::to_string)
                .as_deref(),
            Some(cause)
        );
        assert_eq!(Report::new(error).to_string(), format!("{text}: {cause}"));
    }

    #[test]
    fn outages_are_retryable_storage_errors_and_missing_snapshots_are_not_found() {
        let down = SpoolError::unavailable(std::io::Error::other("disk gone"));
        assert_eq!(
            (down.code(), down.code().status(), down.is_retryable()),
            (ErrorCode::StorageError, 503, true)
        );
        assert_caused(&down, "spool storage unavailable", "disk gone");
        let missing = SpoolError::NotFound(ResourceId::new());
        assert_eq!(
            (missing.code(), missing.is_retryable()),
            (ErrorCode::NotFound, false)
        );
    }

    #[test]
    fn a_cap_reached_is_a_retryable_quota_error_naming_the_cap() {
        let full = SpoolError::QuotaExceeded {
            quota: SpoolQuota::Bytes,
            limit: 1 << 20,
            segment: 4096,
        };
        assert_eq!(
            (full.code(), full.code().status(), full.is_retryable()),
            (ErrorCode::QuotaExceeded, 429, true)
        );
        assert_eq!(
            full.to_string(),
            "spool quota `spool_bytes` reached (limit 1048576 bytes): segment of 4096 bytes refused"
        );
    }

    #[test]
    fn a_configuration_error_keeps_its_cause_without_repeating_it() {
        let plain = SpoolError::config("\"x\" is not s3://BUCKET[/PREFIX]", None);
        assert_eq!(
            plain.to_string(),
            "invalid spool configuration: \"x\" is not s3://BUCKET[/PREFIX]"
        );
        assert!(std::error::Error::source(&plain).is_none());
        let caused = SpoolError::config("spill directory", Some(std::io::Error::other("read-only").into()));
        assert_caused(
            &caused,
            "invalid spool configuration: spill directory",
            "read-only",
        );
        assert!(!caused.is_retryable());
    }
}
