//! Byte caps: a page cut to whole rows within a byte budget ([`RowBudget`]), and text for the
//! model cut at a character boundary with a marker ([`cut_text`]).
//!
//! A page is cut, never a row: its rows are kept in order while their compact JSON fits, the first
//! row always (a row larger than the budget comes alone, so paging always advances), and the first
//! row refused says that rows follow. `has_next` and `next_offset` stay exact, so a client paging by
//! `next_offset` sees every row once.
//!
//! ```
//! use dual_core::budget::RowBudget;
//!
//! // Rows of 40 bytes under a budget of 100 bytes (each row counts its bytes plus one separator).
//! let mut budget = RowBudget::new(10, 100);
//! assert!(budget.admit(40) && budget.admit(40));
//! assert!(!budget.admit(40)); // 123 bytes would not fit: the page ends here, rows follow
//! assert_eq!((budget.kept(), budget.has_next()), (2, true));
//! ```

use std::borrow::Cow;

use crate::PageResponse;
use crate::page::ValidPage;

/// The largest a page's JSON is without its rows: `{"data":[]`, every count at 20 digits, both
/// flags `false` and `next_offset` a number. A page whose rows take at most `max - PAGE_ENVELOPE_BYTES`
/// bytes (as [`RowBudget`] counts them) serialises to at most `max` bytes.
pub const PAGE_ENVELOPE_BYTES: usize = 216;

/// Default cap on error text returned to the model (a tool's `isError` text, a failed query's
/// message): 4 KiB.
pub const DEFAULT_MAX_ERROR_TEXT_BYTES: usize = 4 * 1024;

/// Counts the rows of one page against a row limit and a byte budget, in order.
///
/// Each row counts its compact JSON bytes plus one (the `,` between rows in the `data` array). A row
/// is kept while the page has fewer than `limit` rows and the rows kept so far plus this one fit the
/// budget; the first row is always kept, whatever its size. The first row refused ends the page: it
/// exists, so [`has_next`](Self::has_next) is true. A reader may therefore stop reading rows right
/// after the first one refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowBudget {
    limit: u64,
    max_bytes: usize,
    used: usize,
    kept: u64,
    refused: bool,
}

impl RowBudget {
    /// A budget of at most `limit` rows and `max_bytes` bytes of rows.
    #[must_use]
    pub fn new(limit: u64, max_bytes: usize) -> Self {
        Self {
            limit,
            max_bytes,
            used: 0,
            kept: 0,
            refused: false,
        }
    }

    /// The budget of `page` when its whole JSON must take at most `max_page_bytes` bytes
    /// ([`PAGE_ENVELOPE_BYTES`] are set aside for everything but the rows).
    #[must_use]
    pub fn for_page(page: &ValidPage, max_page_bytes: usize) -> Self {
        Self::new(page.limit, max_page_bytes.saturating_sub(PAGE_ENVELOPE_BYTES))
    }

    /// Offers the next row, of `row_bytes` bytes of compact JSON: `true` when it is kept, `false`
    /// when the page ended before it (it and every later row are refused).
    pub fn admit(&mut self, row_bytes: usize) -> bool {
        if self.refused {
            return false;
        }
        let cost = row_bytes.saturating_add(1);
        let fits = self.used.saturating_add(cost) <= self.max_bytes;
        if self.kept >= self.limit || (self.kept > 0 && !fits) {
            self.refused = true;
            return false;
        }
        self.used = self.used.saturating_add(cost);
        self.kept += 1;
        true
    }

    /// Offers the next `rows` rows at once, whose compact JSON joined by commas (what a page's
    /// `data` array holds between its brackets) takes `joined_bytes`: keeps them all and returns
    /// `true` when offering them one by one with [`admit`](Self::admit) would keep every one;
    /// otherwise changes nothing and returns `false`, and the caller offers them one by one. It
    /// never keeps a row that `admit` would refuse, so it is a shortcut for rows stored joined (one
    /// length for a run instead of a length per row), never a second rule.
    ///
    /// ```
    /// use dual_core::budget::RowBudget;
    ///
    /// let mut budget = RowBudget::new(10, 100);
    /// assert!(budget.admit_joined(2, 81)); // two rows of 40 bytes and a comma: 82 bytes counted
    /// assert!(!budget.admit_joined(1, 40)); // 123 would not fit: nothing changes
    /// assert!(!budget.admit(40)); // and one by one, the same row is refused
    /// assert_eq!((budget.kept(), budget.used()), (2, 82));
    /// ```
    pub fn admit_joined(&mut self, rows: u64, joined_bytes: usize) -> bool {
        let cost = joined_bytes.saturating_add(1);
        let fits = self.used.saturating_add(cost) <= self.max_bytes;
        if self.refused || rows == 0 || rows > self.rows_left() || !fits {
            return false;
        }
        self.used += cost;
        self.kept += rows;
        true
    }

    /// Rows the limit still allows (the byte budget aside).
    #[must_use]
    pub fn rows_left(&self) -> u64 {
        if self.refused {
            return 0;
        }
        self.limit.saturating_sub(self.kept)
    }

    /// Rows kept.
    #[must_use]
    pub fn kept(&self) -> u64 {
        self.kept
    }

    /// Bytes the kept rows take, separators included.
    #[must_use]
    pub fn used(&self) -> usize {
        self.used
    }

    /// Whether a row was refused: rows follow the page.
    #[must_use]
    pub fn has_next(&self) -> bool {
        self.refused
    }

    /// Bytes left before the budget is spent.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.max_bytes.saturating_sub(self.used)
    }

    /// The pagination of `page` with the rows kept: a [`PageResponse`] whose `data` is empty,
    /// `returned_count` the rows kept, `has_next` whether one was refused and `next_offset` the
    /// first row not returned.
    #[must_use]
    pub fn paginate(&self, page: &ValidPage, total_count: u64) -> PageResponse {
        PageResponse {
            data: Vec::new(),
            total_count,
            returned_count: self.kept,
            offset: page.offset,
            limit: page.limit,
            has_next: self.refused,
            has_previous: page.offset > 0,
            next_offset: self.refused.then(|| page.offset.saturating_add(self.kept)),
        }
    }
}

/// `text` cut to at most `max_bytes` bytes at a character boundary, ending with a marker that says
/// how long it was: `…[cut: 1048576 bytes in all]`. Text that fits comes back as it is. With a
/// `max_bytes` too small for the marker, the text is only cut.
///
/// ```
/// use dual_core::budget::cut_text;
/// assert_eq!(cut_text("short", 100), "short");
/// let long = "é".repeat(100); // 200 bytes
/// let cut = cut_text(&long, 60);
/// assert!(cut.len() <= 60 && cut.ends_with("…[cut: 200 bytes in all]"));
/// ```
#[must_use]
pub fn cut_text(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let marker = format!("…[cut: {} bytes in all]", text.len());
    let (keep, marker) = match max_bytes.checked_sub(marker.len()) {
        Some(keep) => (keep, marker.as_str()),
        None => (max_bytes, ""),
    };
    let mut end = keep;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + marker.len());
    out.push_str(&text[..end]);
    out.push_str(marker);
    Cow::Owned(out)
}

/// The length of `row`'s compact JSON, computed without keeping the text: the measure
/// [`RowBudget::admit`] takes, for a server cutting a page and an executor that stops reading at the
/// same row.
#[must_use]
pub fn row_json_len(row: &crate::Row) -> usize {
    json_len(row)
}

/// The length of `value`'s compact JSON, written nowhere.
pub(crate) fn json_len(value: &impl serde::Serialize) -> usize {
    let mut counter = ByteCounter(0);
    // Serialising plain data with string keys cannot fail; a failure counts what was written.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Counts bytes written, storing none.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_is_the_largest_empty_page() {
        let page = PageResponse {
            data: Vec::new(),
            total_count: u64::MAX,
            returned_count: u64::MAX,
            offset: u64::MAX,
            limit: u64::MAX,
            has_next: false,
            has_previous: false,
            next_offset: Some(u64::MAX),
        };
        let json = serde_json::to_vec(&page).unwrap_or_default();
        assert_eq!(json.len(), PAGE_ENVELOPE_BYTES);
    }

    #[test]
    fn a_row_larger_than_the_budget_comes_alone() {
        let mut budget = RowBudget::new(10, 100);
        assert!(budget.admit(1_000));
        assert!(!budget.admit(1));
        assert_eq!((budget.kept(), budget.has_next()), (1, true));
        let mut alone = RowBudget::new(10, 100);
        assert!(alone.admit(1_000));
        assert!(!alone.has_next(), "nothing was refused: no next row is known");
    }

    #[test]
    fn the_limit_refuses_the_row_after_it() {
        let mut budget = RowBudget::new(2, usize::MAX);
        assert!(budget.admit(5) && budget.admit(5));
        assert!(!budget.admit(5));
        assert!(!budget.admit(0), "once refused, always refused");
        assert_eq!((budget.kept(), budget.used()), (2, 12));
    }

    #[test]
    fn cut_text_respects_char_boundaries_and_tiny_caps() {
        let text = "ab€cd".repeat(10);
        for max in 0..text.len() {
            let cut = cut_text(&text, max);
            assert!(cut.len() <= max, "{max}: {cut}");
        }
        assert_eq!(cut_text("€€", 4), "€");
    }
}
