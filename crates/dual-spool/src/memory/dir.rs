//! The spill directory of a [`MemorySpool`](super::MemorySpool): one subdirectory per resource,
//! one file per spilled segment, and a lock file held for as long as the spool lives.
//!
//! The lock ([`LOCK_FILE`], an advisory `flock`-style lock through [`std::fs::File::try_lock`]) is
//! how a directory in use is told from a dead process's leftover: the operating system releases
//! it when its process dies, `kill -9` included. A given directory (`--spool-dir`) whose lock is
//! held is refused; a private directory whose lock is free belonged to a dead process and is
//! removed when the next private spool starts.

use std::fs::{File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use dual_core::ResourceId;

/// The lock file in every spill directory, held by the process whose spool uses it.
pub const LOCK_FILE: &str = ".dual-spool.lock";

/// The name prefix of private spill directories in the system's temporary directory.
const PRIVATE_PREFIX: &str = "dual-spool-";

/// The directory spilled segments go to.
#[derive(Debug)]
pub(super) struct SpillDir {
    path: PathBuf,
    /// Created by the spool, removed with it.
    private: bool,
    /// The open lock file, locked: released when the spool (or the process) goes away.
    _lock: File,
}

impl SpillDir {
    /// A new private directory in the system's temporary directory, readable by this user only.
    /// The private directories of dead processes are removed first. The directory is made and
    /// locked under a staging name and then renamed, so that no other process ever sees it
    /// unlocked.
    pub(super) fn private() -> io::Result<Self> {
        let base = std::env::temp_dir();
        remove_dead_private(&base);
        let id = ResourceId::new();
        let staging = base.join(format!("{PRIVATE_PREFIX}{id}.new"));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&staging)?;
        let path = base.join(format!("{PRIVATE_PREFIX}{id}"));
        let locked = lock(&staging).and_then(|lock| std::fs::rename(&staging, &path).map(|()| lock));
        match locked {
            Ok(lock) => Ok(Self {
                path,
                private: true,
                _lock: lock,
            }),
            Err(error) => {
                let _ = std::fs::remove_dir_all(&staging);
                Err(error)
            }
        }
    }

    /// `path`, created when missing, locked for this process: a directory another live process
    /// holds is refused (an error of kind [`io::ErrorKind::ResourceBusy`] naming the lock file).
    /// Segment directories a crashed process left there are then removed: a memory spool's index
    /// dies with its process, so nothing else can ever read them. Returns the directory and how
    /// many leftovers it removed; other files are left alone.
    pub(super) async fn shared(path: PathBuf) -> io::Result<(Self, usize)> {
        tokio::fs::create_dir_all(&path).await?;
        let lock = lock(&path)?;
        let mut removed = 0;
        let mut entries = tokio::fs::read_dir(&path).await?;
        while let Some(entry) = entries.next_entry().await? {
            let is_resource = entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.parse::<ResourceId>().is_ok());
            if is_resource && entry.file_type().await?.is_dir() {
                tokio::fs::remove_dir_all(entry.path()).await?;
                removed += 1;
            }
        }
        Ok((
            Self {
                path,
                private: false,
                _lock: lock,
            },
            removed,
        ))
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory of one resource's segments.
    pub(super) fn resource(&self, id: ResourceId) -> PathBuf {
        self.path.join(id.to_string())
    }

    /// The file of one segment.
    pub(super) fn segment(&self, id: ResourceId, index: u32) -> PathBuf {
        self.resource(id).join(format!("{index:08}.seg"))
    }

    /// Writes one segment file (the resource's directory is created inside the spill directory,
    /// which must exist: a missing spill directory is a storage failure).
    pub(super) async fn write(&self, id: ResourceId, index: u32, bytes: &[u8]) -> io::Result<()> {
        match tokio::fs::create_dir(self.resource(id)).await {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        tokio::fs::write(self.segment(id, index), bytes).await
    }

    /// Removes one resource's segment files; nothing there is fine.
    pub(super) async fn remove(&self, id: ResourceId) -> io::Result<()> {
        match tokio::fs::remove_dir_all(self.resource(id)).await {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Removes the directory if the spool created it, else only the resources' files in it.
    pub(super) async fn close(&self, ids: impl IntoIterator<Item = ResourceId>) -> io::Result<()> {
        if self.private {
            return match tokio::fs::remove_dir_all(&self.path).await {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            };
        }
        for id in ids {
            self.remove(id).await?;
        }
        Ok(())
    }
}

/// Opens (creating it) and locks the lock file of directory `dir`.
fn lock(dir: &Path) -> io::Result<File> {
    let path = dir.join(LOCK_FILE);
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            format!(
                "in use by another process (it holds the lock {}); give each process a spill directory of its own",
                path.display()
            ),
        )),
        Err(TryLockError::Error(error)) => Err(error),
    }
}

/// Removes the private spill directories in `base` whose lock is free: their process died without
/// removing them (`kill -9`, a crash). Directories without a lock file (another program's, or an
/// older version's) and those of live processes are left alone; failures are logged, never fatal.
/// Returns how many it removed.
pub(super) fn remove_dead_private(base: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = name
            .to_str()
            .and_then(|name| name.strip_prefix(PRIVATE_PREFIX))
            .is_some_and(|id| id.parse::<ResourceId>().is_ok());
        // `file_type` does not follow symbolic links: a link is never entered.
        if !ours || !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let dir = entry.path();
        // Opened without creating it: no lock file, not a directory of this version.
        let Ok(file) = File::options().read(true).write(true).open(dir.join(LOCK_FILE)) else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => removed += 1,
            Err(error) => {
                tracing::warn!(path = %dir.display(), %error, "spool: could not remove a dead process's spill directory");
            }
        }
    }
    if removed > 0 {
        tracing::info!(removed, dir = %base.display(), "spool: spill directories of dead processes removed");
    }
    removed
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if self.private {
            // Blocking, once, when the last handle of the spool goes away.
            if let Err(error) = std::fs::remove_dir_all(&self.path)
                && error.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!(path = %self.path.display(), error = %dual_core::escape::log_safe(&error.to_string()), "spool: could not remove the spill directory");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory named like a private spill directory, with a lock file unless `lock_file` is false.
    fn private_like(base: &Path, lock_file: bool) -> PathBuf {
        let dir = base.join(format!("{PRIVATE_PREFIX}{}", ResourceId::new()));
        std::fs::create_dir_all(dir.join(ResourceId::new().to_string())).unwrap();
        if lock_file {
            std::fs::write(dir.join(LOCK_FILE), b"").unwrap();
        }
        dir
    }

    #[test]
    fn only_the_private_directories_of_dead_processes_are_removed() {
        let base = std::env::temp_dir().join(format!("dual-spool-dead-test-{}", ResourceId::new()));
        std::fs::create_dir_all(&base).unwrap();
        let dead = private_like(&base, true);
        let live = private_like(&base, true);
        // A live owner: its lock is held (by another open file description, as another process would).
        let held = lock(&live).unwrap();
        let unknown = private_like(&base, false);
        let other = base.join("dual-spool-not-an-id");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join(LOCK_FILE), b"").unwrap();

        assert_eq!(remove_dead_private(&base), 1);
        assert!(!dead.exists(), "a free lock: its process died");
        assert!(live.exists(), "a held lock: its process is alive");
        assert!(unknown.exists() && other.exists(), "not recognisably ours");
        drop(held);
        assert_eq!(remove_dead_private(&base), 1, "released once its process is gone");
        assert!(!live.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_private_directory_is_locked_while_it_lives() {
        let dir = SpillDir::private().unwrap();
        let path = dir.path().to_path_buf();
        let base = path.parent().unwrap().to_path_buf();
        remove_dead_private(&base);
        assert!(
            path.exists(),
            "a live spool's directory is never taken for a dead one's"
        );
        let second = lock(&path).unwrap_err();
        assert_eq!(second.kind(), io::ErrorKind::ResourceBusy);
        assert!(second.to_string().contains(LOCK_FILE), "{second}");
        drop(dir);
        assert!(!path.exists());
    }
}
