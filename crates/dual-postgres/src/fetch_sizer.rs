//! [`FetchSizer`]: how many rows each portal fetch of a snapshot's stream asks for, so that a batch
//! holds about `batch_bytes` of JSON whatever the rows' width.

use crate::options::PgOptions;

/// Rows asked of the first portal fetches, before the rows' width is known: few, so that neither
/// the first batch (the sample) waits nor wide rows take much memory.
const FIRST_FETCH: usize = 16;

/// How many rows each portal fetch asks for: [`FIRST_FETCH`] until rows were seen, then as many as
/// fill about `batch_bytes` at the width seen so far (the average, or the last batch's when wider),
/// within `1..=fetch_rows` and at most four times the fetch before. The fetch after a batch is sent
/// before that batch is measured, so rows that turn wide mid-result make one fetch of the old size.
pub(crate) struct FetchSizer {
    most: usize,
    batch_bytes: usize,
    rows: usize,
    bytes: usize,
    /// The width of the last batch seen, in bytes per row.
    recent: usize,
    last: usize,
}

impl FetchSizer {
    pub(crate) fn new(options: PgOptions) -> Self {
        Self {
            most: usize::try_from(options.fetch_rows).unwrap_or(usize::MAX).max(1),
            batch_bytes: options.batch_bytes.max(1),
            rows: 0,
            bytes: 0,
            recent: 0,
            last: 0,
        }
    }

    pub(crate) fn next(&mut self) -> usize {
        let rows = if self.bytes == 0 {
            FIRST_FETCH
        } else {
            let per_row = (self.bytes / self.rows.max(1)).max(self.recent).max(1);
            (self.batch_bytes / per_row).min(self.last.max(FIRST_FETCH).saturating_mul(4))
        };
        self.last = rows.clamp(1, self.most);
        self.last
    }

    pub(crate) fn saw(&mut self, rows: usize, bytes: usize) {
        self.recent = bytes / rows.max(1);
        self.rows = self.rows.saturating_add(rows);
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_grow_to_fill_the_batch_bytes_within_fetch_rows() {
        let mut sizer = FetchSizer::new(PgOptions::default().fetch_rows(10_000).batch_bytes(1 << 20));
        assert_eq!(sizer.next(), FIRST_FETCH);
        assert_eq!(sizer.next(), FIRST_FETCH, "nothing seen yet");
        sizer.saw(16, 1_600);
        let grown: Vec<usize> = (0..5).map(|_| sizer.next()).collect();
        assert_eq!(
            grown,
            [64, 256, 1_024, 4_096, 10_000],
            "narrow rows: fourfold up to fetch_rows"
        );
        sizer.saw(1_000, 100 * (1 << 20));
        assert_eq!(sizer.next(), 10, "wide rows: about 1 MiB a batch");
        // Rows that turn wide after many narrow ones: the last batch's width counts at once.
        let mut turning = FetchSizer::new(PgOptions::default().fetch_rows(10_000).batch_bytes(1 << 20));
        turning.saw(1_000_000, 100_000_000);
        for _ in 0..5 {
            turning.next();
        }
        turning.saw(10, 1_000_000);
        assert_eq!(turning.next(), 10, "100 kB rows after a million 100 B rows");
        let mut tiny = FetchSizer::new(PgOptions::default().fetch_rows(5).batch_bytes(10));
        assert_eq!(tiny.next(), 5);
        tiny.saw(1, 1_000);
        assert_eq!(tiny.next(), 1);
    }
}
