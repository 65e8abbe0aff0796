//! Which rows of a live result a [`LiveQuery`](crate::LiveQuery) reads: a window of them.

use dual_core::Sort;

/// Up to `limit` rows from `offset` (0-based) of a live result, in `sort`'s order when given and in the
/// query's own order otherwise: what [`LiveQuery::fetch`](crate::LiveQuery::fetch) and
/// [`LiveQuery::fetch_page`](crate::LiveQuery::fetch_page) read. One value instead of two integers
/// side by side, so an offset is never passed as a limit.
///
/// ```
/// use dual_core::{Sort, SortOrder};
/// use dual_server::RowWindow;
///
/// let by_name = Sort::new("name", SortOrder::Asc);
/// let window = RowWindow::new(20, 10).sorted(Some(&by_name));
/// assert_eq!((window.offset, window.limit, window.end()), (20, 10, 30));
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
}

impl<'a> RowWindow<'a> {
    /// `limit` rows from `offset`, in the query's own order.
    #[must_use]
    pub const fn new(offset: u64, limit: u64) -> Self {
        Self {
            offset,
            limit,
            sort: None,
        }
    }

    /// The same window in `sort`'s order (`None`: the query's own).
    #[must_use]
    pub const fn sorted(self, sort: Option<&'a Sort>) -> Self {
        Self { sort, ..self }
    }

    /// One past the last row of the window (`offset + limit`, saturating).
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.limit)
    }
}
