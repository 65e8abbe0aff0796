//! [`ValueCap`]: the largest value, and the largest row, a database executor keeps of a result
//! ([`DatabaseOptions::max_value_bytes`](crate::DatabaseOptions::max_value_bytes)); past it the
//! query fails with an error that names the cap and the column.

use dual_server::ExecutorError;

/// Checks the values of each row against one cap, in bytes as the database sent them: a value over
/// it, or a row whose values together pass it, fails the query with a message for the model naming
/// the cap and the column. Call [`ValueCap::value`] for each value of a row, then
/// [`ValueCap::end_row`].
///
/// ```
/// use dual_sql::ValueCap;
///
/// let mut cap = ValueCap::new(10);
/// assert!(cap.value("name", 6).is_ok());
/// let error = cap.value("notes", 6).unwrap_err();
/// assert!(error.message().contains("`notes`"));
/// cap.end_row();
/// assert!(cap.value("notes", 11).unwrap_err().message().contains("cap of 10 bytes"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueCap {
    cap: usize,
    row: usize,
}

impl ValueCap {
    /// A cap of `bytes` for a value and for a row.
    #[must_use]
    pub const fn new(bytes: usize) -> Self {
        Self { cap: bytes, row: 0 }
    }

    /// The cap, in bytes.
    #[must_use]
    pub const fn bytes(&self) -> usize {
        self.cap
    }

    /// Counts a value of `bytes` in `column`.
    ///
    /// # Errors
    /// The value alone, or the row so far with it, is over the cap.
    pub fn value(&mut self, column: &str, bytes: usize) -> Result<(), ExecutorError> {
        let cap = self.cap;
        if bytes > cap {
            return Err(ExecutorError::new(format!(
                "the value of column `{column}` is {bytes} bytes, over the cap of {cap} bytes \
                 (max_value_bytes): select less of it, e.g. a substring or the length of the column"
            )));
        }
        self.row = self.row.saturating_add(bytes);
        if self.row > cap {
            return Err(ExecutorError::new(format!(
                "a row of the result is over the cap of {cap} bytes (max_value_bytes) at column \
                 `{column}`: select fewer or shorter columns"
            )));
        }
        Ok(())
    }

    /// The row ended: the next value starts a new one.
    pub fn end_row(&mut self) {
        self.row = 0;
    }
}
