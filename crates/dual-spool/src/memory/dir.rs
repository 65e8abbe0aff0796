//! The spill directory of a [`MemorySpool`](super::MemorySpool): one subdirectory per resource,
//! one file per spilled segment.

use std::io;
use std::path::{Path, PathBuf};

use dual_core::ResourceId;

/// The directory spilled segments go to.
#[derive(Debug)]
pub(super) struct SpillDir {
    path: PathBuf,
    /// Created by the spool, removed with it.
    private: bool,
}

impl SpillDir {
    /// A new private directory in the system's temporary directory, readable by this user only.
    pub(super) fn private() -> io::Result<Self> {
        let path = std::env::temp_dir().join(format!("dual-spool-{}", ResourceId::new()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)?;
        Ok(Self { path, private: true })
    }

    /// `path`, created when missing. Segment directories a crashed process left there are removed:
    /// a memory spool's index dies with its process, so nothing else can ever read them. Returns the
    /// directory and how many leftovers it removed; other files are left alone.
    pub(super) async fn shared(path: PathBuf) -> io::Result<(Self, usize)> {
        tokio::fs::create_dir_all(&path).await?;
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
        Ok((Self { path, private: false }, removed))
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
