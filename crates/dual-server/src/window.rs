//! Which rows of a live result a [`LiveQuery`](crate::LiveQuery) reads: a window of them.

use dual_core::Sort;

/// Up to `limit` rows from `offset` (0-based) of a live result, in `sort`'s order when given and in the
/// query's own order otherwise, of which the server keeps those within `max_bytes`: what
/// [`LiveQuery::fetch`](crate::LiveQuery::fetch) reads. One value instead of integers side by side, so
/// an offset is never passed as a limit.
///
/// ```
/// use dual_core::{Sort, SortOrder};
/// use dual_server::RowWindow;
///
/// let by_name = Sort::new("name", SortOrder::Asc);
/// let window = RowWindow::new(20, 10).sorted(Some(&by_name));
/// assert_eq!((window.offset, window.limit, window.end()), (20, 10, 30));
/// assert_eq!(window.max_bytes, usize::MAX);
/// assert_eq!(window.capped(4_096).max_bytes, 4_096);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RowWindow<'a> {
    /// The first row, 0-based.
    pub offset: u64,
    /// How many rows at the most.
    pub limit: u64,
    /// The order the rows are counted in; `None`: the query's own.
    pub sort: Option<&'a Sort>,
    /// The page's byte budget: the server keeps the rows whose compact JSON, plus one byte each, fits
    /// within it, and always the first (see [`RowBudget`](dual_core::budget::RowBudget)). `usize::MAX`
    /// (the default) when every row of the window is wanted, as a [stream](crate::paged_stream) does.
    pub max_bytes: usize,
}

impl<'a> RowWindow<'a> {
    /// `limit` rows from `offset`, in the query's own order.
    #[must_use]
    pub const fn new(offset: u64, limit: u64) -> Self {
        Self {
            offset,
            limit,
            sort: None,
            max_bytes: usize::MAX,
        }
    }

    /// The same window in `sort`'s order (`None`: the query's own).
    #[must_use]
    pub const fn sorted(self, sort: Option<&'a Sort>) -> Self {
        Self { sort, ..self }
    }

    /// The same window, of which the server keeps the rows within `max_bytes` (see
    /// [`RowWindow::max_bytes`]).
    #[must_use]
    pub const fn capped(self, max_bytes: usize) -> Self {
        Self { max_bytes, ..self }
    }

    /// One past the last row of the window (`offset + limit`, saturating).
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.limit)
    }
}
