//! Property tests of the byte-cap arithmetic: pages cut to whole rows within a budget.

use dual_core::{
    PageRequest,
    budget::{PAGE_ENVELOPE_BYTES, RowBudget},
    page::PageLimits,
};
use proptest::prelude::*;

/// One page of `sizes` (each row's JSON bytes) at `offset`, as a server cuts it: rows offered in
/// order until the budget refuses one; the page's pagination.
fn page(sizes: &[usize], offset: u64, limit: u64, max_page_bytes: usize) -> dual_core::PageResponse {
    let request = PageRequest {
        offset: Some(offset),
        limit: Some(limit),
        sort: None,
    };
    let valid = request
        .validate(
            PageLimits {
                default_limit: 100,
                max_limit: 10_000,
            },
            &[],
        )
        .expect("valid");
    let mut budget = RowBudget::for_page(&valid, max_page_bytes);
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(sizes.len());
    // Rows `offset..offset + limit + 1`, as fetched.
    for &size in sizes[start..]
        .iter()
        .take(usize::try_from(valid.fetch_limit()).unwrap_or(usize::MAX))
    {
        if !budget.admit(size) {
            break;
        }
    }
    budget.paginate(&valid, sizes.len() as u64)
}

proptest! {
    /// Following `next_offset` visits every row exactly once, each page within the cap unless it
    /// holds a single row, and `has_next` says exactly whether rows follow.
    #[test]
    fn paging_by_next_offset_visits_every_row_once_within_the_cap(
        sizes in prop::collection::vec(0usize..5_000, 0..400),
        limit in 1u64..200,
        cap in (PAGE_ENVELOPE_BYTES + 1)..40_000,
    ) {
        let mut offset = 0u64;
        let mut seen = 0u64;
        loop {
            let meta = page(&sizes, offset, limit, cap);
            prop_assert_eq!(meta.offset, offset);
            prop_assert!(meta.returned_count <= limit);
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            let end = start + usize::try_from(meta.returned_count).unwrap_or(0);
            let rows: usize = sizes[start..end].iter().map(|s| s + 1).sum();
            prop_assert!(meta.returned_count <= 1 || rows + PAGE_ENVELOPE_BYTES <= cap, "{} rows take {}", meta.returned_count, rows);
            // Whole rows, greedily: the next row would not have fitted (or the limit was reached).
            if meta.has_next && meta.returned_count < limit {
                prop_assert!(rows + sizes[end] + 1 + PAGE_ENVELOPE_BYTES > cap);
            }
            prop_assert_eq!(meta.has_next, end < sizes.len());
            seen += meta.returned_count;
            match meta.next_offset {
                Some(next) => {
                    prop_assert_eq!(next, offset + meta.returned_count);
                    prop_assert!(next > offset, "paging always advances");
                    offset = next;
                }
                None => break,
            }
        }
        prop_assert_eq!(seen, sizes.len() as u64);
    }

    /// Offering rows in runs with `admit_joined` (one by one where a run is refused, as a page of
    /// spooled rows does) keeps exactly the rows, bytes and `has_next` that offering them one by one
    /// keeps.
    #[test]
    fn runs_admit_exactly_what_rows_one_by_one_admit(
        sizes in prop::collection::vec(0usize..5_000, 0..300),
        runs in prop::collection::vec(1usize..40, 1..40),
        limit in 0u64..200,
        cap in 0usize..40_000,
    ) {
        let mut one_by_one = RowBudget::new(limit, cap);
        for &size in &sizes {
            if !one_by_one.admit(size) {
                break;
            }
        }
        let mut by_runs = RowBudget::new(limit, cap);
        let mut rest = sizes.as_slice();
        'runs: for &len in runs.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (run, after) = rest.split_at(len.min(rest.len()));
            rest = after;
            let joined = run.iter().sum::<usize>() + run.len() - 1;
            if by_runs.admit_joined(run.len() as u64, joined) {
                continue;
            }
            for &size in run {
                if !by_runs.admit(size) {
                    break 'runs;
                }
            }
        }
        prop_assert_eq!(
            (by_runs.kept(), by_runs.used(), by_runs.has_next()),
            (one_by_one.kept(), one_by_one.used(), one_by_one.has_next())
        );
    }

    /// Text cut for the model stays within the cap, is a prefix of the text, and says it was cut.
    #[test]
    fn cut_text_is_a_bounded_prefix(text in "\\PC{0,300}", max in 0usize..400) {
        let cut = dual_core::budget::cut_text(&text, max);
        prop_assert!(cut.len() <= max || cut == text);
        if cut != text {
            let marker = format!("…[cut: {} bytes in all]", text.len());
            let kept = cut.strip_suffix(marker.as_str()).unwrap_or(&cut);
            prop_assert!(text.starts_with(kept));
            prop_assert!(kept.len() < cut.len() || max < marker.len(), "a marker whenever it fits");
        }
    }
}
