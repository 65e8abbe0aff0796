//! The quotas a server enforces, named in [`ServerError::QuotaExceeded`](crate::ServerError::QuotaExceeded).

use std::time::Duration;

/// How long a caller refused by a quota is told to wait before trying again (`Retry-After`).
pub const QUOTA_RETRY_AFTER: Duration = Duration::from_secs(30);

/// A quota that can be reached. At a quota the request is refused with the retryable
/// `QUOTA_EXCEEDED` (REST 429 `quota_exceeded` with `Retry-After`); nothing existing is evicted or
/// lost, so the same request succeeds once room is freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Quota {
    /// Bytes of snapshots the spool holds in memory and on disk together.
    SpoolBytes,
    /// Free space the spool leaves on its disk.
    SpoolFreeSpace,
    /// Bytes of live snapshots of one owner.
    OwnerBytes,
    /// Live resources of one owner.
    OwnerResources,
    /// Queries of one owner running at once.
    OwnerQueries,
    /// Pinned resources of one owner (or pinning by anonymous callers, when it is off).
    OwnerPins,
}

impl Quota {
    /// The quota's name, as messages and metrics say it (`spool_bytes`, `owner_pins`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SpoolBytes => "spool_bytes",
            Self::SpoolFreeSpace => "spool_free_space",
            Self::OwnerBytes => "owner_bytes",
            Self::OwnerResources => "owner_resources",
            Self::OwnerQueries => "owner_queries",
            Self::OwnerPins => "owner_pins",
        }
    }
}

impl std::fmt::Display for Quota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
