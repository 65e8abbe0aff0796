//! Writing a snapshot: rows in, bounded segments out, the manifest last.

use std::sync::Arc;

use bytes::Bytes;
use dual_core::ResourceId;

use crate::limits::SegmentLimits;
use crate::segment::SegmentBuilder;
use crate::{Manifest, SpoolBackend, SpoolError};

/// Writes the snapshot of one resource; from [`Spool::writer`](crate::Spool::writer).
///
/// Rows are appended as their encoded bytes (for JSON, each row's compact JSON). The writer holds at
/// most one segment in memory and stores each full segment before it takes the next row, so a
/// slow storage slows the writer down instead of filling memory.
///
/// The snapshot becomes readable only when [`finish`](Self::finish) stores the manifest. A writer
/// dropped before that (an error, a cancelled query) removes the segments it stored, in a task of
/// the current tokio runtime; when there is none, or that removal fails, the orphan sweep removes
/// them later. Write each resource's snapshot once: a new writer for the id of a just-abandoned one
/// may lose segments to that cleanup (it spares finished snapshots only).
#[derive(Debug)]
pub struct SpoolWriter {
    backend: Arc<dyn SpoolBackend>,
    limits: SegmentLimits,
    builder: SegmentBuilder,
    manifest: Manifest,
    /// Whether nothing needs cleaning up on drop (finished, or nothing stored yet).
    clean: bool,
}

impl SpoolWriter {
    pub(crate) fn new(backend: Arc<dyn SpoolBackend>, id: ResourceId, limits: SegmentLimits) -> Self {
        Self {
            backend,
            limits,
            builder: SegmentBuilder::new(),
            manifest: Manifest::new(id),
            clean: true,
        }
    }

    /// The resource.
    #[must_use]
    pub fn id(&self) -> ResourceId {
        self.manifest.id()
    }

    /// Rows appended so far.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.manifest.rows() + self.builder.rows() as u64
    }

    /// The manifest of the segments stored so far: the rows that [`Spool::cursor_in`] and
    /// [`Spool::read_rows_in`] can read before the snapshot is finished (the rows of the segment
    /// being built are not among them).
    ///
    /// [`Spool::cursor_in`]: crate::Spool::cursor_in
    /// [`Spool::read_rows_in`]: crate::Spool::read_rows_in
    #[must_use]
    pub fn stored(&self) -> &Manifest {
        &self.manifest
    }

    /// Appends one encoded row. Stores the current segment first when the row would take it past
    /// the limits, and after the row when the segment has its row limit.
    ///
    /// # Errors
    ///
    /// [`SpoolError::RowTooLarge`] for a row of 4 GiB or more; storage failures when a segment is
    /// stored (the writer is then unusable: drop it).
    pub async fn append(&mut self, row: &[u8]) -> Result<(), SpoolError> {
        let rows = self.builder.rows();
        let full = rows > 0
            && (rows >= self.limits.rows as usize
                || self.builder.encoded_len_with(row.len()) > self.limits.bytes);
        if full {
            self.flush().await?;
        }
        self.builder.push(row)?;
        // A segment full by its row count is stored at once, so its rows are readable while the
        // writer waits for the next one (`stored`).
        if self.builder.rows() >= self.limits.rows as usize {
            self.flush().await?;
        }
        Ok(())
    }

    /// Stores the last segment and the manifest, and returns the manifest. The snapshot is readable
    /// from then on, by every instance that shares the storage.
    ///
    /// # Errors
    ///
    /// Storage failures (the writer's segments are then removed as if it had been dropped).
    pub async fn finish(self) -> Result<Manifest, SpoolError> {
        self.finish_with(None).await
    }

    /// [`SpoolWriter::finish`] with `annex` stored in the manifest ([`Manifest::annex`]).
    ///
    /// # Errors
    ///
    /// As [`SpoolWriter::finish`]; [`SpoolError::Corrupt`] for an annex over
    /// [`MAX_ANNEX_BYTES`](crate::MAX_ANNEX_BYTES), which no reader would accept.
    pub async fn finish_with_annex(self, annex: Bytes) -> Result<Manifest, SpoolError> {
        if annex.len() > crate::MAX_ANNEX_BYTES {
            return Err(SpoolError::Corrupt {
                id: self.manifest.id(),
                reason: "annex too large",
            });
        }
        self.finish_with(Some(annex)).await
    }

    async fn finish_with(mut self, annex: Option<Bytes>) -> Result<Manifest, SpoolError> {
        if self.builder.rows() > 0 {
            self.flush().await?;
        }
        if let Some(annex) = annex {
            self.manifest.set_annex(annex);
        }
        self.backend.put_manifest(&self.manifest).await?;
        self.clean = true;
        tracing::debug!(
            id = %self.manifest.id(),
            rows = self.manifest.rows(),
            segments = self.manifest.segments().len(),
            bytes = self.manifest.bytes(),
            "spool: snapshot finished"
        );
        Ok(self.manifest.clone())
    }

    /// Stores the segment being built.
    async fn flush(&mut self) -> Result<(), SpoolError> {
        let index =
            u32::try_from(self.manifest.segments().len()).map_err(|_| SpoolError::RowTooLarge { len: 0 })?;
        let rows = u32::try_from(self.builder.rows()).unwrap_or(u32::MAX);
        let segment = self.builder.take();
        let bytes = segment.len() as u64;
        self.clean = false;
        self.backend
            .put_segment(self.manifest.id(), index, segment)
            .await?;
        self.manifest.push(rows, bytes);
        Ok(())
    }
}

impl Drop for SpoolWriter {
    fn drop(&mut self) {
        if self.clean {
            return;
        }
        let id = self.manifest.id();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(%id, "spool: writer abandoned outside a runtime; the orphan sweep removes its segments");
            return;
        };
        let backend = Arc::clone(&self.backend);
        runtime.spawn(async move {
            // A snapshot finished meanwhile under the same id (a retried execution) is not ours.
            if backend.get_manifest(id).await.is_ok() {
                return;
            }
            match backend.delete(id).await {
                Ok(()) => tracing::debug!(%id, "spool: abandoned writer's segments removed"),
                Err(error) => tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "spool: abandoned writer's segments stay for the orphan sweep"),
            }
        });
    }
}
