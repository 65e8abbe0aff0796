//! The free space of the spill directory's file system, for the free-space floor and the default
//! cap. Unix only (`statvfs`); elsewhere it is unknown and no floor is enforced.

use std::io;
use std::path::Path;

/// Space of a file system, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Space {
    /// Bytes an unprivileged process may still write.
    pub(super) available: u64,
    /// The file system's size.
    pub(super) total: u64,
}

/// The space of the file system `path` is on; `None` where it cannot be known (not Unix).
#[cfg(unix)]
pub(super) fn of(path: &Path) -> io::Result<Option<Space>> {
    let stat = rustix::fs::statvfs(path)?;
    let block = stat.f_frsize.max(1);
    Ok(Some(Space {
        available: stat.f_bavail.saturating_mul(block),
        total: stat.f_blocks.saturating_mul(block),
    }))
}

/// The space of the file system `path` is on; `None` where it cannot be known (not Unix).
#[cfg(not(unix))]
pub(super) fn of(_path: &Path) -> io::Result<Option<Space>> {
    Ok(None)
}

/// [`of`] on tokio's blocking pool (a network file system may take its time to answer).
pub(super) async fn of_async(path: &Path) -> io::Result<Option<Space>> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || of(&path))
        .await
        .map_err(io::Error::other)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn the_temporary_directory_has_a_size_and_some_room() {
        let space = of(&std::env::temp_dir()).unwrap().unwrap();
        assert!(space.total > 0 && space.available <= space.total, "{space:?}");
    }
}
