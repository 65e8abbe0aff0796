//! Splitting `0..total` into the contiguous row ranges `fetch_all` downloads in parallel.

use std::ops::Range;

/// The fewest rows a planned range has (unless the whole result is smaller): below this, the cost of
/// one more request outweighs what parallelism gains.
pub(crate) const MIN_RANGE_ROWS: u64 = 4096;

/// Ranges planned per unit of parallelism, so a slow range does not leave the others idle for long and
/// a retried range re-downloads little.
const RANGES_PER_SLOT: u64 = 4;

/// The rows per range when the caller chose none: `max(MIN_RANGE_ROWS, ⌈total / (4 × parallelism)⌉)`.
///
/// Large results get about four ranges per slot (each at most `⌈total / parallelism⌉` rows); small
/// ones get ranges of [`MIN_RANGE_ROWS`], down to a single request.
pub(crate) fn default_range_rows(total: u64, parallelism: usize) -> u64 {
    let slots = u64::try_from(parallelism.max(1))
        .unwrap_or(u64::MAX)
        .saturating_mul(RANGES_PER_SLOT);
    total.div_ceil(slots).max(MIN_RANGE_ROWS)
}

/// Contiguous, non-empty ranges of at most `rows` rows (at least 1) that cover `0..total` once, in order.
pub(crate) fn plan(total: u64, rows: u64) -> Vec<Range<u64>> {
    let rows = rows.max(1);
    let count = usize::try_from(total.div_ceil(rows)).unwrap_or(usize::MAX);
    let mut ranges = Vec::with_capacity(count.min(1 << 16));
    let mut start = 0;
    while start < total {
        let end = start.saturating_add(rows).min(total);
        ranges.push(start..end);
        start = end;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_plan_covers_every_row_exactly_once(total in 0u64..2_000_000, parallelism in 1usize..64,
                                                   explicit in proptest::option::of(1u64..50_000)) {
            let rows = explicit.unwrap_or_else(|| default_range_rows(total, parallelism));
            let ranges = plan(total, rows);
            let mut next = 0;
            for range in &ranges {
                prop_assert_eq!(range.start, next, "contiguous");
                prop_assert!(range.end > range.start, "non-empty");
                prop_assert!(range.end - range.start <= rows);
                next = range.end;
            }
            prop_assert_eq!(next, total, "covers 0..total");
            if explicit.is_none() && total > 0 {
                let per_slot = total.div_ceil(parallelism as u64);
                prop_assert!(rows >= MIN_RANGE_ROWS);
                prop_assert!(rows <= per_slot.max(MIN_RANGE_ROWS));
                prop_assert!(ranges.len() as u64 <= RANGES_PER_SLOT * parallelism as u64 || rows == MIN_RANGE_ROWS);
            }
        }
    }

    fn one(range: Range<u64>) -> Vec<Range<u64>> {
        vec![range]
    }

    #[test]
    fn small_results_are_one_request_and_large_ones_four_per_slot() {
        assert_eq!(plan(0, default_range_rows(0, 4)), Vec::<Range<u64>>::new());
        assert_eq!(plan(1, default_range_rows(1, 4)), one(0..1));
        assert_eq!(plan(4096, default_range_rows(4096, 8)), one(0..4096));
        assert_eq!(plan(4097, default_range_rows(4097, 8)), [0..4096, 4096..4097]);
        let rows = default_range_rows(1_000_000, 4);
        assert_eq!(rows, 62_500);
        assert_eq!(plan(1_000_000, rows).len(), 16);
        assert_eq!(plan(7, 3), [0..3, 3..6, 6..7]);
        assert_eq!(plan(u64::MAX, u64::MAX), one(0..u64::MAX));
    }
}
