//! The storage a [`Spool`](crate::Spool) runs on.

use std::fmt;

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;

use crate::{Manifest, SpoolError, SpoolUsage};

/// A resource that has something in the spool, as [`SpoolBackend::list`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spooled {
    /// The resource.
    pub id: ResourceId,
    /// Whether its snapshot is finished (has a manifest); `false` while it is written, and for a
    /// writer that was abandoned or crashed.
    pub finished: bool,
}

/// Where segments and manifests live. Implement it for a new kind of storage and run the
/// conformance suite (`dual_testkit::spool`) against it; use it through [`Spool`](crate::Spool),
/// which does the encoding, indexing and range arithmetic once for every backend.
///
/// Segments are numbered from 0 per resource and written once; the manifest is written last.
/// Every method may fail with [`SpoolError::Unavailable`] when the storage is down.
#[async_trait]
pub trait SpoolBackend: fmt::Debug + Send + Sync + 'static {
    /// Stores segment `index` of resource `id`.
    async fn put_segment(&self, id: ResourceId, index: u32, segment: Bytes) -> Result<(), SpoolError>;

    /// Segment `index` of resource `id`, as stored; [`SpoolError::NotFound`] when it is not there.
    async fn get_segment(&self, id: ResourceId, index: u32) -> Result<Bytes, SpoolError>;

    /// Stores the manifest, which makes the snapshot finished and readable.
    async fn put_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError>;

    /// The manifest of resource `id`; [`SpoolError::NotFound`] when the snapshot is not finished.
    async fn get_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError>;

    /// Stores `manifest` (of a snapshot still being written: the segments stored so far) as the
    /// partial manifest of its resource, replacing the last one, so that readers in other processes
    /// can read those rows before the snapshot is finished ([`Spool::partial_manifest`]). Written
    /// again as the snapshot grows; [`delete`](Self::delete) removes it, and the finished manifest
    /// supersedes it. Must never make the snapshot look finished.
    ///
    /// The default keeps nothing: a process-local backend has no readers in other processes, and
    /// its readers elsewhere (none) would wait for the finished snapshot. A shared backend should
    /// store it.
    ///
    /// [`Spool::partial_manifest`]: crate::Spool::partial_manifest
    async fn put_partial_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        let _ = manifest;
        Ok(())
    }

    /// The partial manifest last stored for resource `id`; [`SpoolError::NotFound`] when there is
    /// none (the default).
    async fn get_partial_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        Err(SpoolError::NotFound(id))
    }

    /// Removes the manifest and every segment of resource `id`; succeeds when there is nothing.
    /// The manifest goes first, so a delete cut short leaves an unfinished resource for the orphan
    /// sweep, never a finished snapshot with missing segments.
    async fn delete(&self, id: ResourceId) -> Result<(), SpoolError>;

    /// Every resource with a manifest or at least one segment.
    async fn list(&self) -> Result<Vec<Spooled>, SpoolError>;

    /// Whether other processes read and write the same snapshots (object storage), so that servers
    /// sharing a store can share this spool. A process-local backend (the default answer, and
    /// [`MemorySpool`](crate::MemorySpool)'s) holds snapshots only this process can read.
    fn is_shared(&self) -> bool {
        false
    }

    /// What the backend holds per tier against its caps, when it keeps count
    /// ([`MemorySpool`](crate::MemorySpool) does; object storage does not). Must be cheap: no IO.
    fn usage(&self) -> Option<SpoolUsage> {
        None
    }

    /// Releases the backend's resources (a local spool removes its private directory). Later calls
    /// may fail.
    async fn close(&self) -> Result<(), SpoolError> {
        Ok(())
    }
}
