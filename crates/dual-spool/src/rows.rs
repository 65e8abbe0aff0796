//! Rows read back from a snapshot, still encoded: runs of consecutive rows that share a segment's
//! bytes.

use bytes::Bytes;

use crate::segment::Segment;

/// Consecutive rows of one segment. Cloning and slicing share the segment's bytes; nothing is
/// decoded or copied.
#[derive(Debug, Clone)]
pub struct RowRun {
    segment: Segment,
    start: u32,
    end: u32,
    first_row: u64,
}

impl RowRun {
    /// Rows `start..end` of `segment`, whose first row is snapshot row `segment_first_row`.
    pub(crate) fn new(segment: Segment, start: u32, end: u32, segment_first_row: u64) -> Self {
        let end = end.min(segment.rows());
        let start = start.min(end);
        Self {
            segment,
            start,
            end,
            first_row: segment_first_row + u64::from(start),
        }
    }

    /// The snapshot offset of the run's first row.
    #[must_use]
    pub fn first_row(&self) -> u64 {
        self.first_row
    }

    /// Rows in the run.
    #[must_use]
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the run has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Whether the spool's storage keeps the run's segment in memory anyway (a memory backend's
    /// segment, not one read from a file or an object store): holding [`RowRun::joined`] for as
    /// long as a response is written then keeps no more memory alive. Otherwise holding it keeps
    /// the whole segment (up to [`SegmentLimits`](crate::SegmentLimits)' bytes), and a caller that
    /// keeps a few rows for long should copy them.
    #[must_use]
    pub fn resident(&self) -> bool {
        self.segment.resident()
    }

    /// The length of [`RowRun::joined`]: the run's row bytes and the commas between them.
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.segment.span(self.start..self.end).len()
    }

    /// The length of the run's first `rows` rows joined by commas (of all of them when it has
    /// fewer): [`RowRun::byte_len`] of [`RowRun::head`], without a new run.
    #[must_use]
    pub fn head_byte_len(&self, rows: usize) -> usize {
        self.segment.span(self.start..self.after(rows)).len()
    }

    /// The run's rows joined by commas (what a JSON array holds between its brackets): one slice
    /// of the segment, no copy.
    #[must_use]
    pub fn joined(&self) -> Bytes {
        self.segment.slice(self.start..self.end)
    }

    /// The run's first `rows` rows (all of them when it has fewer).
    #[must_use]
    pub fn head(&self, rows: usize) -> Self {
        Self {
            segment: self.segment.clone(),
            start: self.start,
            end: self.after(rows),
            first_row: self.first_row,
        }
    }

    /// The segment's index `rows` rows into the run, at most the run's end.
    fn after(&self, rows: usize) -> u32 {
        u32::try_from(rows).map_or(self.end, |rows| self.start.saturating_add(rows).min(self.end))
    }

    /// Row `i` of the run.
    #[must_use]
    pub fn row(&self, i: usize) -> Option<Bytes> {
        let i = u32::try_from(i).ok().filter(|i| *i < self.end - self.start)?;
        let span = self.segment.row_span(self.start, self.start + i);
        let all = self.joined();
        (span.end <= all.len()).then(|| all.slice(span))
    }

    /// The rows one by one, borrowed from the segment: no reference count is touched (a page
    /// copies them out this way).
    pub fn slices(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.segment.row_slices(self.start..self.end)
    }

    /// The rows from the run's row `first` on, one by one, borrowed like [`RowRun::slices`].
    pub fn slices_from(&self, first: usize) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.segment.row_slices(self.after(first)..self.end)
    }

    /// The rows one by one, each its own slice.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Bytes> + '_ {
        let all = self.joined();
        (self.start..self.end).map(move |i| {
            let span = self.segment.row_span(self.start, i);
            all.get(span.clone()).map_or_else(Bytes::new, |_| all.slice(span))
        })
    }
}

/// The rows of a range read with [`Spool::read_rows`](crate::Spool::read_rows): one [`RowRun`] per
/// segment the range touches.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    runs: Vec<RowRun>,
}

impl Rows {
    pub(crate) fn push(&mut self, run: RowRun) {
        if !run.is_empty() {
            self.runs.push(run);
        }
    }

    /// Rows in the range.
    #[must_use]
    pub fn len(&self) -> usize {
        self.runs.iter().map(RowRun::len).sum()
    }

    /// Whether the range is empty (offset at or past the end, or an empty snapshot).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The runs, in row order; a JSON page is `[`, the runs' [`RowRun::joined`] joined by `,`, and `]`.
    #[must_use]
    pub fn runs(&self) -> &[RowRun] {
        &self.runs
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = Bytes> + '_ {
        self.runs.iter().flat_map(RowRun::iter)
    }
}

#[cfg(test)]
mod tests {
    use dual_core::ResourceId;

    use super::*;
    use crate::segment::SegmentBuilder;

    #[test]
    fn a_runs_head_and_tail_are_its_rows_joined_and_one_by_one() {
        let mut builder = SegmentBuilder::new();
        for row in [&b"aa"[..], b"b", b"ccc", b"dddd"] {
            builder
                .push(row)
                .unwrap_or_else(|e| panic!("small rows fit: {e}"));
        }
        let segment =
            Segment::decode(ResourceId::new(), builder.take()).unwrap_or_else(|e| panic!("valid: {e}"));
        // Rows 1..4 of the segment: "b", "ccc", "dddd".
        let run = RowRun::new(segment, 1, 4, 0);
        for rows in 0..6 {
            assert_eq!(run.head_byte_len(rows), run.head(rows).byte_len(), "{rows} rows");
        }
        assert_eq!(
            (run.head_byte_len(0), run.head_byte_len(2), run.head_byte_len(9)),
            (0, 5, 10)
        );
        let from = |first| run.slices_from(first).collect::<Vec<&[u8]>>();
        assert_eq!(from(0), run.slices().collect::<Vec<_>>());
        assert_eq!(from(2), [&b"dddd"[..]]);
        assert!(from(3).is_empty() && from(usize::MAX).is_empty());
    }
}
