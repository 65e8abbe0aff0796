//! Streaming a range of a snapshot one segment at a time.

use crate::rows::RowRun;
use crate::spool::run;
use dual_core::ResourceId;

use crate::{Manifest, Spool, SpoolError};

impl Spool {
    /// A cursor over rows `offset..offset + limit` (to the end when `limit` is `None`) that loads one
    /// segment per step: an export's memory is one segment, whatever the snapshot's size.
    ///
    /// # Errors
    ///
    /// [`SpoolError::NotFound`] when there is no finished snapshot; storage failures.
    pub async fn cursor(
        &self,
        id: ResourceId,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<RowCursor, SpoolError> {
        let manifest = self.manifest(id).await?;
        Ok(self.cursor_in(manifest, offset, limit))
    }

    /// [`Spool::cursor`] over the segments `manifest` lists: for a snapshot still being written, the
    /// manifest of the segments its writer has stored so far ([`SpoolWriter::stored`]), which are
    /// readable before the snapshot is finished. The range ends at the manifest's last row.
    ///
    /// [`SpoolWriter::stored`]: crate::SpoolWriter::stored
    #[must_use]
    pub fn cursor_in(&self, manifest: Manifest, offset: u64, limit: Option<u64>) -> RowCursor {
        RowCursor::new(self.clone(), manifest, offset, limit)
    }
}

/// Reads a range of a snapshot one segment per [`next`](Self::next) call; from
/// [`Spool::cursor`](crate::Spool::cursor). It holds only the manifest between calls, so the memory
/// of an export is the one segment the caller is writing out.
#[derive(Debug)]
pub struct RowCursor {
    spool: Spool,
    manifest: Manifest,
    segment: usize,
    next_row: u64,
    end: u64,
}

impl RowCursor {
    pub(crate) fn new(spool: Spool, manifest: Manifest, offset: u64, limit: Option<u64>) -> Self {
        let end = limit
            .map_or(u64::MAX, |limit| offset.saturating_add(limit))
            .min(manifest.rows());
        let segment = manifest.locate(offset).unwrap_or(manifest.segments().len());
        Self {
            spool,
            manifest,
            segment,
            next_row: offset.min(end),
            end,
        }
    }

    /// The snapshot's manifest.
    #[must_use]
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Rows this cursor has yet to return.
    #[must_use]
    pub fn remaining(&self) -> u64 {
        self.end - self.next_row
    }

    /// The next run of rows (the part of the range in the next segment), or `None` at the end.
    ///
    /// # Errors
    ///
    /// [`SpoolError::NotFound`] when the snapshot was deleted meanwhile; storage failures (the same
    /// call may be retried: the cursor only advances on success).
    pub async fn next(&mut self) -> Result<Option<RowRun>, SpoolError> {
        if self.next_row >= self.end {
            return Ok(None);
        }
        let id = self.manifest.id();
        let Some(info) = self.manifest.segments().get(self.segment).copied() else {
            return Ok(None);
        };
        let segment = self.spool.segment(id, self.segment, &info).await?;
        let run = run(
            segment,
            self.next_row - info.first_row,
            self.end - info.first_row,
            info.first_row,
        );
        self.next_row += run.len() as u64;
        self.segment += 1;
        Ok(Some(run))
    }
}
