//! Configuration of a [`MemorySpool`].

use std::path::PathBuf;

use super::MemorySpool;
use super::dir::SpillDir;
use crate::SpoolError;

/// The default memory budget: 256 MiB (`--spool-memory-mb 256`).
pub const DEFAULT_MEMORY_BUDGET: u64 = 256 << 20;

/// Builds a [`MemorySpool`]; from [`MemorySpool::builder`].
#[derive(Debug, Clone)]
pub struct MemorySpoolBuilder {
    budget: u64,
    dir: Option<PathBuf>,
}

impl Default for MemorySpoolBuilder {
    fn default() -> Self {
        Self {
            budget: DEFAULT_MEMORY_BUDGET,
            dir: None,
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

    /// Spills into `dir` (`--spool-dir`) instead of a private temporary directory. The directory
    /// is created when missing and belongs to this spool: subdirectories named like resource ids are
    /// leftovers of a crashed process and are removed when the spool is built. It is not removed on
    /// close; the spool's own files in it are.
    #[must_use]
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Creates the spill directory (or clears a given one of leftovers) and returns the spool.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Config`] when the directory cannot be created or read.
    pub async fn build(self) -> Result<MemorySpool, SpoolError> {
        let dir = match self.dir {
            None => SpillDir::private().map_err(|e| SpoolError::config("spill directory", Some(e.into())))?,
            Some(path) => {
                let shown = path.display().to_string();
                let (dir, removed) = SpillDir::shared(path)
                    .await
                    .map_err(|e| SpoolError::config(format!("spill directory {shown}"), Some(e.into())))?;
                if removed > 0 {
                    tracing::info!(dir = %shown, removed, "spool: leftover segments of an earlier process removed");
                }
                dir
            }
        };
        Ok(MemorySpool::from_parts(self.budget, dir))
    }
}
