//! Configuration of a [`MemorySpool`].

use std::path::PathBuf;

use super::dir::SpillDir;
use super::{Caps, MemorySpool, space};
use crate::SpoolError;

/// The default memory budget: 256 MiB (`--spool-memory-mb 256`).
pub const DEFAULT_MEMORY_BUDGET: u64 = 256 << 20;

/// The share of the spill directory's free space at start-up (above the free-space floor) that the
/// default cap on spool bytes allows: 50 %. See [`MemorySpoolBuilder::max_bytes`].
pub const DEFAULT_FREE_SPACE_PERCENT: u64 = 50;

/// The default free-space floor: 1 GiB, or 5 % of the spill directory's file system when that is
/// smaller. See [`MemorySpoolBuilder::min_free_bytes`].
pub const DEFAULT_MIN_FREE_BYTES: u64 = 1 << 30;

/// Builds a [`MemorySpool`]; from [`MemorySpool::builder`].
#[derive(Debug, Clone)]
pub struct MemorySpoolBuilder {
    budget: u64,
    dir: Option<PathBuf>,
    max_bytes: Option<Option<u64>>,
    min_free: Option<u64>,
}

impl Default for MemorySpoolBuilder {
    fn default() -> Self {
        Self {
            budget: DEFAULT_MEMORY_BUDGET,
            dir: None,
            max_bytes: None,
            min_free: None,
        }
    }
}

impl MemorySpoolBuilder {
    /// The most bytes of segments kept in memory, for all resources together; the rest spill to
    /// disk. 0 spills everything.
    #[must_use]
    pub fn memory_budget(mut self, bytes: u64) -> Self {
        self.budget = bytes;
        self
    }

    /// The budget in MiB, as `--spool-memory-mb` gives it.
    #[must_use]
    pub fn memory_budget_mb(self, mib: u64) -> Self {
        self.memory_budget(mib.saturating_mul(1 << 20))
    }

    /// The most bytes of snapshots the spool holds in memory and on disk together (`--spool-max-mb`).
    /// A segment that would pass it is refused with [`SpoolError::QuotaExceeded`]
    /// ([`SpoolQuota::Bytes`](crate::SpoolQuota::Bytes)): the snapshot being written fails, and
    /// nothing stored is evicted.
    ///
    /// Default, sized to the machine when the spool is built: the memory budget plus
    /// [`DEFAULT_FREE_SPACE_PERCENT`] (50 %) of the spill directory's free space above the
    /// free-space floor, `budget + (available − min_free) / 2`. Where free space cannot be read
    /// (not Unix) the default is no cap.
    #[must_use]
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(Some(bytes));
        self
    }

    /// [`max_bytes`](Self::max_bytes) in MiB.
    #[must_use]
    pub fn max_mb(self, mib: u64) -> Self {
        self.max_bytes(mib.saturating_mul(1 << 20))
    }

    /// No cap on spool bytes (the free-space floor still applies).
    #[must_use]
    pub fn unlimited_bytes(mut self) -> Self {
        self.max_bytes = Some(None);
        self
    }

    /// The free space a spill must leave on the spill directory's file system
    /// (`--spool-min-free-mb`): a segment whose file would leave less is refused with
    /// [`SpoolError::QuotaExceeded`] ([`SpoolQuota::FreeSpace`](crate::SpoolQuota::FreeSpace)),
    /// checked before each spilled segment. Default: [`DEFAULT_MIN_FREE_BYTES`] (1 GiB), or 5 %
    /// of the file system when that is smaller. 0 checks nothing. Unix only.
    #[must_use]
    pub fn min_free_bytes(mut self, bytes: u64) -> Self {
        self.min_free = Some(bytes);
        self
    }

    /// [`min_free_bytes`](Self::min_free_bytes) in MiB.
    #[must_use]
    pub fn min_free_mb(self, mib: u64) -> Self {
        self.min_free_bytes(mib.saturating_mul(1 << 20))
    }

    /// Spills into `dir` (`--spool-dir`) instead of a private temporary directory. The directory
    /// is created when missing and locked for this process (through its [`LOCK_FILE`](crate::LOCK_FILE)): building a
    /// second spool on a directory a live spool holds fails. Subdirectories named like resource ids
    /// are leftovers of a crashed process and are removed when the spool is built. It is not
    /// removed on close; the spool's own files in it are.
    #[must_use]
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Creates the spill directory (or locks a given one and clears it of leftovers), sizes the
    /// default caps and returns the spool. A private directory's creation first removes the private
    /// directories of dead processes.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Config`] when the directory cannot be created, read or locked (another
    /// process's spool uses it).
    pub async fn build(self) -> Result<MemorySpool, SpoolError> {
        let dir = match &self.dir {
            None => SpillDir::private().map_err(|e| SpoolError::config("spill directory", Some(e.into())))?,
            Some(path) => {
                let shown = path.display().to_string();
                let (dir, removed) = SpillDir::shared(path.clone())
                    .await
                    .map_err(|e| SpoolError::config(format!("spill directory {shown}"), Some(e.into())))?;
                if removed > 0 {
                    tracing::info!(dir = %shown, removed, "spool: leftover segments of an earlier process removed");
                }
                dir
            }
        };
        let space = space::of_async(dir.path()).await.map_err(|e| {
            SpoolError::config(format!("free space of {}", dir.path().display()), Some(e.into()))
        })?;
        Ok(MemorySpool::from_parts(self.budget, dir, self.caps(space)))
    }

    /// The caps, their defaults sized to `space` (the spill directory's file system).
    pub(super) fn caps(&self, space: Option<space::Space>) -> Caps {
        let min_free = self.min_free.unwrap_or_else(|| {
            space.map_or(DEFAULT_MIN_FREE_BYTES, |space| {
                DEFAULT_MIN_FREE_BYTES.min(space.total / 20)
            })
        });
        let max_bytes = self.max_bytes.unwrap_or_else(|| {
            space.map(|space| {
                let room = u128::from(space.available.saturating_sub(min_free));
                let share = room * u128::from(DEFAULT_FREE_SPACE_PERCENT) / 100;
                self.budget
                    .saturating_add(u64::try_from(share).unwrap_or(u64::MAX))
            })
        });
        Caps { max_bytes, min_free }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_caps_are_sized_to_the_file_system() {
        let gib = 1u64 << 30;
        let space = space::Space {
            available: 41 * gib,
            total: 100 * gib,
        };
        let caps = MemorySpoolBuilder::default().memory_budget(gib).caps(Some(space));
        // 1 GiB floor (5 % of 100 GiB is more); half of the 40 GiB above it, plus the budget.
        assert_eq!((caps.min_free, caps.max_bytes), (gib, Some(gib + 20 * gib)));
        let small = space::Space {
            available: 10 << 20,
            total: 100 << 20,
        };
        let caps = MemorySpoolBuilder::default().memory_budget(0).caps(Some(small));
        assert_eq!((caps.min_free, caps.max_bytes), (5 << 20, Some((5 << 20) / 2)));
        let unknown = MemorySpoolBuilder::default().caps(None);
        assert_eq!(
            (unknown.min_free, unknown.max_bytes),
            (DEFAULT_MIN_FREE_BYTES, None)
        );
    }

    #[test]
    fn given_caps_win() {
        let space = space::Space {
            available: 1 << 40,
            total: 1 << 41,
        };
        let caps = MemorySpoolBuilder::default()
            .max_mb(3)
            .min_free_mb(7)
            .caps(Some(space));
        assert_eq!((caps.min_free, caps.max_bytes), (7 << 20, Some(3 << 20)));
        let caps = MemorySpoolBuilder::default().unlimited_bytes().caps(Some(space));
        assert_eq!(caps.max_bytes, None);
    }
}
