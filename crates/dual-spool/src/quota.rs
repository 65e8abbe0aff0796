//! The caps a spool enforces on what it holds, and what it holds against them.

use std::fmt;

/// A cap of a spool, named in [`SpoolError::QuotaExceeded`](crate::SpoolError::QuotaExceeded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpoolQuota {
    /// Bytes of snapshots held in memory and on disk together
    /// ([`MemorySpoolBuilder::max_bytes`](crate::MemorySpoolBuilder::max_bytes)).
    Bytes,
    /// Free space a spill leaves on the spill directory's file system
    /// ([`MemorySpoolBuilder::min_free_bytes`](crate::MemorySpoolBuilder::min_free_bytes)).
    FreeSpace,
}

impl SpoolQuota {
    /// The cap's name as messages and metrics say it: `spool_bytes` or `spool_free_space`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Bytes => "spool_bytes",
            Self::FreeSpace => "spool_free_space",
        }
    }
}

impl fmt::Display for SpoolQuota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a spool holds right now per tier, against its caps: from
/// [`Spool::usage`](crate::Spool::usage), cheap enough for a metrics gauge on every scrape (a lock
/// and a few loads, no IO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SpoolUsage {
    /// Bytes of segments held in memory.
    pub memory_bytes: u64,
    /// The memory tier's budget: beyond it segments go to disk.
    pub memory_budget: u64,
    /// Bytes of segments on disk (spilled), including those being written.
    pub disk_bytes: u64,
    /// The cap on memory and disk bytes together; `None` when there is none.
    pub max_bytes: Option<u64>,
    /// The free space a spill must leave on the spill directory's file system.
    pub min_free_bytes: u64,
}
