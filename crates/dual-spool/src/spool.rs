//! The spool handle: writers, range reads, cursors, delete and the orphan sweep over any backend.

use std::sync::Arc;

use dual_core::ResourceId;
use dual_store::id_hash::IdHashing;

use crate::limits::SegmentLimits;
use crate::rows::{RowRun, Rows};
use crate::segment::Segment;
use crate::{Manifest, SegmentInfo, SpoolBackend, SpoolError, SpoolUsage, SpoolWriter, Spooled};

/// A spool of snapshots: a cheap `Clone` handle around a [`SpoolBackend`].
///
/// A snapshot is written once through [`Spool::writer`] and then read any number of times with
/// [`Spool::read_rows`] (a page) or [`Spool::cursor`] (an export, one segment at a time). It stays
/// until [`Spool::delete`] or [`Spool::sweep_orphans`] removes it.
#[derive(Debug, Clone)]
pub struct Spool {
    backend: Arc<dyn SpoolBackend>,
    limits: SegmentLimits,
    validated: Arc<Validated>,
}

/// Segments already validated, by the address and length of their bytes: a backend that keeps
/// segments in memory hands out the same allocation on every read, and a page then skips the
/// bound-table scan. Only a marker (no bytes are kept alive); cleared when it grows past
/// [`VALIDATED_MAX`].
#[derive(Debug, Default)]
struct Validated(std::sync::Mutex<Seen>);

/// Segments validated, by resource and index: the address and length of the bytes validated.
type Seen = std::collections::HashMap<(ResourceId, u32), (usize, usize), IdHashing>;

/// The address and length of `bytes`: which allocation they are.
fn address(bytes: &[u8]) -> (usize, usize) {
    (bytes.as_ptr() as usize, bytes.len())
}

/// Most segments remembered as validated.
const VALIDATED_MAX: usize = 1 << 16;

impl Validated {
    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn seen(&self, id: ResourceId, index: u32, bytes: &[u8]) -> bool {
        self.lock().get(&(id, index)) == Some(&address(bytes))
    }

    fn remember(&self, id: ResourceId, index: u32, address: (usize, usize)) {
        let mut map = self.lock();
        if map.len() >= VALIDATED_MAX {
            map.clear();
        }
        map.insert((id, index), address);
    }

    fn forget(&self, id: ResourceId) {
        self.lock().retain(|(seen, _), _| *seen != id);
    }
}

impl Spool {
    /// A spool on `backend` with the default [`SegmentLimits`].
    pub fn new(backend: impl SpoolBackend) -> Self {
        Self::from_arc(Arc::new(backend))
    }

    /// A spool on a shared backend.
    #[must_use]
    pub fn from_arc(backend: Arc<dyn SpoolBackend>) -> Self {
        Self {
            backend,
            limits: SegmentLimits::default(),
            validated: Arc::default(),
        }
    }

    /// Uses `limits` for the segments of writers made from now on.
    #[must_use]
    pub fn with_segment_limits(mut self, limits: SegmentLimits) -> Self {
        self.limits = SegmentLimits {
            bytes: limits.bytes.max(1),
            rows: limits.rows.max(1),
        };
        self
    }

    /// The segment limits of new writers.
    #[must_use]
    pub fn segment_limits(&self) -> SegmentLimits {
        self.limits
    }

    /// The backend.
    #[must_use]
    pub fn backend(&self) -> &Arc<dyn SpoolBackend> {
        &self.backend
    }

    /// Whether other processes share this spool's snapshots ([`SpoolBackend::is_shared`]).
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.backend.is_shared()
    }

    /// What the spool holds per tier against its caps ([`SpoolBackend::usage`]); `None` for a
    /// backend that keeps no count. Cheap: meant for metrics gauges.
    #[must_use]
    pub fn usage(&self) -> Option<SpoolUsage> {
        self.backend.usage()
    }

    /// A writer for the snapshot of resource `id`.
    ///
    /// Save the resource's record before writing: the orphan sweep removes the segments of every
    /// resource its `is_live` does not know.
    ///
    /// # Errors
    ///
    /// [`SpoolError::AlreadyExists`] when `id` already has a finished snapshot; storage failures.
    pub async fn writer(&self, id: ResourceId) -> Result<SpoolWriter, SpoolError> {
        match self.backend.get_manifest(id).await {
            Ok(_) => Err(SpoolError::AlreadyExists(id)),
            Err(SpoolError::NotFound(_)) => Ok(SpoolWriter::new(Arc::clone(&self.backend), id, self.limits)),
            Err(e) => Err(e),
        }
    }

    /// The manifest of the finished snapshot of `id`.
    ///
    /// # Errors
    ///
    /// [`SpoolError::NotFound`] when there is none; storage failures.
    pub async fn manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.backend.get_manifest(id).await
    }

    /// Publishes `stored` (a writer's [`SpoolWriter::stored`]) as the partial manifest of its
    /// snapshot, for readers in other processes: a no-op on a backend that is not shared.
    ///
    /// # Errors
    ///
    /// Storage failures.
    pub async fn publish_partial(&self, stored: &Manifest) -> Result<(), SpoolError> {
        if !self.backend.is_shared() {
            return Ok(());
        }
        self.backend.put_partial_manifest(stored).await
    }

    /// The segments of the snapshot of `id` stored so far, as its writer (in any process) last
    /// published them with [`Spool::publish_partial`]: `None` when it published none. Read them
    /// with [`Spool::read_rows_in`] or [`Spool::cursor_in`].
    ///
    /// # Errors
    ///
    /// Storage failures; [`SpoolError::Corrupt`].
    pub async fn partial_manifest(&self, id: ResourceId) -> Result<Option<Manifest>, SpoolError> {
        match self.backend.get_partial_manifest(id).await {
            Ok(manifest) => Ok(Some(manifest)),
            Err(SpoolError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Rows `offset..offset + limit` of the snapshot of `id` (fewer at the end, none past it),
    /// still encoded. Reads only the segments the range touches, found through the manifest.
    ///
    /// # Errors
    ///
    /// [`SpoolError::NotFound`] when there is no finished snapshot (or it was deleted meanwhile);
    /// storage failures; [`SpoolError::Corrupt`].
    pub async fn read_rows(&self, id: ResourceId, offset: u64, limit: usize) -> Result<Rows, SpoolError> {
        let manifest = self.manifest(id).await?;
        self.read_rows_in(&manifest, offset, limit).await
    }

    /// [`Spool::read_rows`] over the segments `manifest` lists (of its resource): for a snapshot still
    /// being written, the segments its writer has stored so far ([`SpoolWriter::stored`]).
    ///
    /// # Errors
    ///
    /// [`SpoolError::NotFound`] when a listed segment is not there (the snapshot was deleted);
    /// storage failures; [`SpoolError::Corrupt`].
    pub async fn read_rows_in(
        &self,
        manifest: &Manifest,
        offset: u64,
        limit: usize,
    ) -> Result<Rows, SpoolError> {
        let id = manifest.id();
        let mut rows = Rows::default();
        let end = offset.saturating_add(limit as u64).min(manifest.rows());
        let Some(first) = manifest.locate(offset) else {
            return Ok(rows);
        };
        for (index, info) in manifest.segments().iter().enumerate().skip(first) {
            if info.first_row >= end {
                break;
            }
            let segment = self.segment(id, index, info).await?;
            let start = offset.saturating_sub(info.first_row);
            let stop = end - info.first_row;
            rows.push(run(segment, start, stop, info.first_row));
        }
        Ok(rows)
    }

    /// Removes the snapshot of `id`, finished or not, with every segment. Deleting nothing succeeds.
    ///
    /// # Errors
    ///
    /// Storage failures; the snapshot may then be partly removed (never readable with holes: the
    /// manifest goes first), and a later delete or sweep finishes the job.
    pub async fn delete(&self, id: ResourceId) -> Result<(), SpoolError> {
        self.validated.forget(id);
        self.backend.delete(id).await?;
        tracing::debug!(%id, "spool: snapshot deleted");
        Ok(())
    }

    /// Every resource that has something in the spool.
    ///
    /// # Errors
    ///
    /// Storage failures.
    pub async fn list(&self) -> Result<Vec<Spooled>, SpoolError> {
        self.backend.list().await
    }

    /// Removes the snapshot of every resource `is_live` says is gone — deleted, expired, or never
    /// saved (a crash between writing and saving) — finished or not, and returns how many it removed.
    /// Unfinished snapshots of live resources are kept: their writers may still be running.
    ///
    /// # Errors
    ///
    /// Storage failures; what was removed before the failure stays removed.
    pub async fn sweep_orphans(
        &self,
        mut is_live: impl FnMut(ResourceId) -> bool + Send,
    ) -> Result<usize, SpoolError> {
        let mut removed = 0;
        for spooled in self.list().await? {
            if !is_live(spooled.id) {
                self.backend.delete(spooled.id).await?;
                removed += 1;
            }
        }
        if removed > 0 {
            tracing::info!(removed, "spool: orphaned snapshots swept");
        }
        Ok(removed)
    }

    /// Closes the backend.
    ///
    /// # Errors
    ///
    /// The backend's.
    pub async fn close(&self) -> Result<(), SpoolError> {
        self.backend.close().await
    }

    /// Segment `index` of `id`, decoded and checked against the manifest's `info`.
    pub(crate) async fn segment(
        &self,
        id: ResourceId,
        index: usize,
        info: &SegmentInfo,
    ) -> Result<Segment, SpoolError> {
        let corrupt = |reason| SpoolError::Corrupt { id, reason };
        let index = u32::try_from(index).map_err(|_| corrupt("segment number"))?;
        let bytes = self.backend.get_segment(id, index).await?;
        let segment = if self.validated.seen(id, index, &bytes) {
            Segment::decode_validated(id, bytes)?
        } else {
            let seen = address(&bytes);
            let segment = Segment::decode(id, bytes)?;
            self.validated.remember(id, index, seen);
            segment
        };
        if segment.rows() != info.rows {
            return Err(corrupt("segment row count differs from the manifest"));
        }
        Ok(segment)
    }
}

/// Rows `start..stop` of a segment (relative, clamped) as a run.
pub(crate) fn run(segment: Segment, start: u64, stop: u64, first_row: u64) -> RowRun {
    let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    RowRun::new(segment, clamp(start), clamp(stop), first_row)
}
