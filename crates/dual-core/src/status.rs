//! The lifecycle of a resource's query: `pending` → `ready` | `failed` (docs/DESIGN.md §8).

use serde::{Deserialize, Serialize};

/// A resource's lifecycle status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ResourceStatus {
    /// The query is still running: pages and exports answer `not_ready`.
    Pending,
    /// The result can be fetched. Records stored before statuses existed read as ready.
    #[default]
    Ready,
    /// The query failed; the record's `failure` says why.
    Failed,
}

impl ResourceStatus {
    /// The wire name: `pending`, `ready` or `failed`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Ready => "ready",
            Self::Failed => "failed",
        }
    }

    /// Whether this is [`ResourceStatus::Ready`].
    #[must_use]
    pub fn is_ready(&self) -> bool {
        *self == Self::Ready
    }

    /// The status for its wire name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Self::Pending),
            "ready" => Some(Self::Ready),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

impl std::fmt::Display for ResourceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a resource's query failed: the stable code REST shows in the metadata's `error.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureCode {
    /// The executor failed (its message goes to the model only).
    QueryExecutionFailed,
    /// The query ran past the server's time limit.
    QueryTimeout,
    /// The instance running the query stopped renewing its lease (it died): run the query again.
    QueryInterrupted,
    /// The spool or the store failed while the result was written: run the query again.
    StorageError,
    /// The executor had no capacity (no database connection within its wait limit): run the query
    /// again in a few seconds.
    Overloaded,
}

impl FailureCode {
    /// The wire name, e.g. `query_timeout`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::QueryExecutionFailed => "query_execution_failed",
            Self::QueryTimeout => "query_timeout",
            Self::QueryInterrupted => "query_interrupted",
            Self::StorageError => "storage_error",
            Self::Overloaded => "overloaded",
        }
    }

    /// The code for its wire name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::QueryExecutionFailed,
            Self::QueryTimeout,
            Self::QueryInterrupted,
            Self::StorageError,
            Self::Overloaded,
        ]
        .into_iter()
        .find(|code| code.as_str() == text)
    }

    /// Whether running the same query again may succeed: an interruption, a storage failure or a
    /// lack of capacity.
    #[must_use]
    pub const fn is_retryable(self) -> bool {
        matches!(
            self,
            Self::QueryInterrupted | Self::StorageError | Self::Overloaded
        )
    }
}

impl std::fmt::Display for FailureCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a resource's query failed, as its record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryFailure {
    /// The stable code.
    pub code: FailureCode,
    /// What went wrong, for the model (an executor's message may name SQL): never shown over REST.
    pub message: String,
}

impl QueryFailure {
    /// A failure with `code` and `message`.
    pub fn new(code: FailureCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// A pending resource's progress, as `GET /{id}` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Rows written so far.
    pub rows: u64,
    /// Milliseconds since the query started.
    pub elapsed_ms: u64,
}

/// A failed resource's error, as `GET /{id}` shows it: the code, never the executor's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureSummary {
    /// The stable code.
    pub code: FailureCode,
    /// Whether running the query again may succeed.
    pub retryable: bool,
}

impl From<&QueryFailure> for FailureSummary {
    fn from(failure: &QueryFailure) -> Self {
        Self {
            code: failure.code,
            retryable: failure.code.is_retryable(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for status in [
            ResourceStatus::Pending,
            ResourceStatus::Ready,
            ResourceStatus::Failed,
        ] {
            assert_eq!(ResourceStatus::parse(status.as_str()), Some(status));
            assert_eq!(serde_json::to_value(status).ok(), Some(status.as_str().into()));
        }
        for code in [
            FailureCode::QueryExecutionFailed,
            FailureCode::QueryTimeout,
            FailureCode::QueryInterrupted,
            FailureCode::StorageError,
            FailureCode::Overloaded,
        ] {
            assert_eq!(FailureCode::parse(code.as_str()), Some(code));
            assert_eq!(serde_json::to_value(code).ok(), Some(code.as_str().into()));
        }
        assert_eq!(ResourceStatus::parse("done"), None);
        assert!(FailureCode::QueryInterrupted.is_retryable());
        assert!(FailureCode::Overloaded.is_retryable());
        assert!(!FailureCode::QueryTimeout.is_retryable());
    }
}
