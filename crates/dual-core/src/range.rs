//! Row ranges: the `offset`/`limit` slice of a result an export streams (the unit of parallel download).

use crate::page::RequestError;

/// A slice of a result's rows: `limit` rows (all remaining ones when `None`) starting at `offset`.
///
/// Unlike a page, a range has no upper bound on `limit` other than `u64`: exports stream with
/// bounded memory whatever their size. A client downloads a result in parallel by asking for
/// disjoint ranges (`offset=0&limit=N`, `offset=N&limit=N`, …) of the same sort.
///
/// ```
/// use dual_core::range::RowRange;
///
/// let range = RowRange::new(100, Some(50));
/// assert_eq!(range.end(), Some(150));
/// assert!(range.check(150).is_ok()); // may run past the end: it is cut there
/// assert!(RowRange::new(150, None).check(150).is_ok()); // the empty range at the end
/// assert!(RowRange::new(151, None).check(150).is_err()); // `offset` beyond the result
/// assert!(RowRange::ALL.is_all());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RowRange {
    /// The first row, 0-based.
    pub offset: u64,
    /// At most this many rows; `None` reads to the end of the result.
    pub limit: Option<u64>,
}

impl RowRange {
    /// The whole result.
    pub const ALL: Self = Self {
        offset: 0,
        limit: None,
    };

    /// `limit` rows (to the end when `None`) from `offset`.
    #[must_use]
    pub const fn new(offset: u64, limit: Option<u64>) -> Self {
        Self { offset, limit }
    }

    /// Whether the range is the whole result.
    #[must_use]
    pub const fn is_all(&self) -> bool {
        self.offset == 0 && self.limit.is_none()
    }

    /// One past the last row, when the range has a limit (saturating at `u64::MAX`).
    #[must_use]
    pub const fn end(&self) -> Option<u64> {
        match self.limit {
            Some(limit) => Some(self.offset.saturating_add(limit)),
            None => None,
        }
    }

    /// Checks the range against a result of `total_count` rows: `offset` may be at most
    /// `total_count` (the empty range at the very end is allowed); a limit running past the end is
    /// simply cut there.
    ///
    /// # Errors
    /// [`RequestError::OffsetOutOfRange`] naming `offset`.
    pub const fn check(&self, total_count: u64) -> Result<(), RequestError> {
        if self.offset > total_count {
            Err(RequestError::OffsetOutOfRange {
                offset: self.offset,
                total_count,
            })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_the_offset_against_the_total() {
        assert!(RowRange::ALL.check(0).is_ok());
        assert!(RowRange::new(0, Some(1)).check(0).is_ok());
        let Err(error) = RowRange::new(11, Some(1)).check(10) else {
            panic!("an offset beyond the total is rejected");
        };
        assert_eq!(error.field(), Some("offset"));
        assert!(error.to_string().contains("(10)"), "{error}");
        assert_eq!(RowRange::new(u64::MAX, Some(5)).end(), Some(u64::MAX));
        assert_eq!(RowRange::new(3, None).end(), None);
        assert!(!RowRange::new(0, Some(3)).is_all());
    }
}
