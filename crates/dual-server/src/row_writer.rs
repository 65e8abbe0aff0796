//! [`JsonRowWriter`]: an executor writes its rows as compact JSON, value by value, into one buffer
//! per batch — no map, key or value allocated per row — and sends the [`RowBatch`] it makes.

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::{ExecutorError, JsonRows, RowBatch};

/// The columns of a result, their names encoded once for every row a [`JsonRowWriter`] writes.
#[derive(Debug, Clone)]
pub struct JsonColumns {
    /// Each column's `"name":`, JSON-escaped.
    keys: Box<[Box<[u8]>]>,
}

impl JsonColumns {
    /// The columns named `names`, in order.
    ///
    /// # Errors
    /// A name given twice: a row object cannot hold both values, and one would be lost. The message
    /// (for the model) names it and asks for distinct names, e.g. `SELECT a.id, b.id AS b_id`.
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Result<Self, ExecutorError> {
        let mut seen = std::collections::HashSet::new();
        let mut keys = Vec::new();
        for name in names {
            let name = name.as_ref();
            if !seen.insert(name.to_owned()) {
                let plain = name.chars().all(|c| c.is_alphanumeric() || c == '_');
                let example = if plain {
                    format!("`SELECT a.{name}, b.{name} AS b_{name}`")
                } else {
                    "`SELECT count(*) AS n, max(x) AS top`: name each expression with AS".to_owned()
                };
                return Err(ExecutorError::new(format!(
                    "the result has two columns named `{name}`; give each column its own name (for example {example})"
                )));
            }
            let mut key = serde_json::to_vec(name).map_err(ExecutorError::from_error)?;
            key.push(b':');
            keys.push(key.into_boxed_slice());
        }
        Ok(Self { keys: keys.into() })
    }

    /// Columns.
    #[must_use]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no columns.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Writes rows as compact JSON objects, one value per column in the [`JsonColumns`]' order, then
/// [`JsonRowWriter::end_row`]; [`JsonRowWriter::finish`] gives the [`RowBatch`] to send.
///
/// Each row is exactly the bytes `serde_json::to_vec` writes for the same [`Row`](dual_core::Row)
/// (keys in column order), so a snapshot stores it as it is. A row with too few or too many values
/// is refused by `end_row` and left out.
///
/// ```
/// use std::sync::Arc;
/// use dual_server::{JsonColumns, JsonRowWriter};
///
/// # fn main() -> Result<(), dual_server::ExecutorError> {
/// let columns = Arc::new(JsonColumns::new(["id", "name"])?);
/// let mut rows = JsonRowWriter::new(columns, 2);
/// for (id, name) in [(1, "Ada"), (2, "Grace \"Hopper\"")] {
///     rows.i64(id);
///     rows.str(name);
///     rows.end_row()?;
/// }
/// let batch = rows.finish();
/// assert_eq!(batch.len(), 2);
/// assert_eq!(batch.into_rows()?[1]["name"], "Grace \"Hopper\"");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct JsonRowWriter {
    columns: Arc<JsonColumns>,
    buf: Vec<u8>,
    ends: Vec<usize>,
    /// Values written in the current row.
    at: usize,
    /// More values than columns were written, or a value could not be encoded.
    broken: bool,
}

impl JsonRowWriter {
    /// A writer of rows with `columns`, with room for about `rows` rows.
    #[must_use]
    pub fn new(columns: Arc<JsonColumns>, rows: usize) -> Self {
        let per_row = 16 * columns.len().max(1);
        Self {
            buf: Vec::with_capacity(rows.saturating_mul(per_row).min(1 << 20)),
            ends: Vec::with_capacity(rows.min(1 << 16)),
            columns,
            at: 0,
            broken: false,
        }
    }

    /// Rows written.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.ends.len()
    }

    /// Bytes written, the current row included.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// Starts the next value: its key, `false` when the row has all its values already.
    fn key(&mut self) -> bool {
        let Some(key) = self.columns.keys.get(self.at) else {
            self.broken = true;
            return false;
        };
        self.buf.push(if self.at == 0 { b'{' } else { b',' });
        self.buf.extend_from_slice(key);
        self.at += 1;
        true
    }

    fn serialize(&mut self, value: &(impl Serialize + ?Sized)) {
        if self.key() && serde_json::to_writer(&mut self.buf, value).is_err() {
            self.broken = true;
        }
    }

    /// The next value: `null`.
    pub fn null(&mut self) {
        if self.key() {
            self.buf.extend_from_slice(b"null");
        }
    }

    /// The next value: a boolean.
    pub fn bool(&mut self, value: bool) {
        if self.key() {
            self.buf.extend_from_slice(if value { b"true" } else { b"false" });
        }
    }

    /// The next value: an integer.
    pub fn i64(&mut self, value: i64) {
        self.serialize(&value);
    }

    /// The next value: a non-negative integer.
    pub fn u64(&mut self, value: u64) {
        self.serialize(&value);
    }

    /// The next value: a number. NaN and the infinities, which JSON lacks, are written `null` (as
    /// `serde_json` writes them); write them as strings to keep them.
    pub fn f64(&mut self, value: f64) {
        self.serialize(&value);
    }

    /// The next value: a string (escaped as JSON).
    pub fn str(&mut self, value: &str) {
        self.serialize(value);
    }

    /// The next value: any JSON value.
    pub fn value(&mut self, value: &Value) {
        self.serialize(value);
    }

    /// Ends the row.
    ///
    /// # Errors
    /// The row had fewer or more values than there are columns, or a value could not be encoded:
    /// it is left out, and the writer goes on with the next row.
    pub fn end_row(&mut self) -> Result<(), ExecutorError> {
        let start = self.ends.last().copied().unwrap_or(0);
        let (values, columns) = (self.at, self.columns.len());
        let broken = std::mem::take(&mut self.broken);
        self.at = 0;
        if broken || values != columns {
            self.buf.truncate(start);
            return Err(ExecutorError::new(format!(
                "a row had {}{values} values for {columns} columns",
                if broken && values == columns {
                    "more than "
                } else {
                    ""
                }
            )));
        }
        if columns == 0 {
            self.buf.push(b'{');
        }
        self.buf.push(b'}');
        self.ends.push(self.buf.len());
        Ok(())
    }

    /// The batch of the rows ended so far (a row not ended is left out).
    #[must_use]
    pub fn finish(mut self) -> RowBatch {
        let end = self.ends.last().copied().unwrap_or(0);
        self.buf.truncate(end);
        RowBatch::Json(JsonRows::packed(Bytes::from(self.buf), self.ends))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dual_core::Row;
    use serde_json::json;

    fn row(value: Value) -> Row {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn rows_are_the_bytes_serde_json_writes() -> Result<(), ExecutorError> {
        let columns = Arc::new(JsonColumns::new(["i", "f", "s", "n", "b", "v", "é \"q\""])?);
        let mut writer = JsonRowWriter::new(Arc::clone(&columns), 0);
        let cases = [
            (i64::MIN, 0.1, "plain", true, json!([1, {"a": null}])),
            (
                0,
                -2.5e-300,
                "quote \" backslash \\ newline \n tab \t nul \u{0} é ☃",
                false,
                json!({}),
            ),
            (i64::MAX, f64::MAX, "", true, json!("x")),
        ];
        let mut expected = Vec::new();
        for (i, f, s, b, v) in &cases {
            writer.i64(*i);
            writer.f64(*f);
            writer.str(s);
            writer.null();
            writer.bool(*b);
            writer.value(v);
            writer.u64(u64::MAX);
            writer.end_row()?;
            expected.push(row(
                json!({"i": i, "f": f, "s": s, "n": null, "b": b, "v": v, "é \"q\"": u64::MAX}),
            ));
        }
        let RowBatch::Json(rows) = writer.finish() else {
            panic!("a writer makes JSON rows");
        };
        for (written, expected) in rows.iter().zip(&expected) {
            assert_eq!(
                written.as_ref(),
                serde_json::to_vec(expected).unwrap_or_default().as_slice()
            );
        }
        assert_eq!(RowBatch::Json(rows).into_rows()?, expected);
        Ok(())
    }

    #[test]
    fn a_row_with_the_wrong_number_of_values_is_left_out() -> Result<(), ExecutorError> {
        let columns = Arc::new(JsonColumns::new(["a", "b"])?);
        let mut writer = JsonRowWriter::new(columns, 4);
        writer.i64(1);
        let short = writer.end_row().err().map(|e| e.to_string());
        assert_eq!(short.as_deref(), Some("a row had 1 values for 2 columns"));
        writer.i64(1);
        writer.i64(2);
        writer.i64(3);
        let long = writer.end_row().err().map(|e| e.to_string());
        assert_eq!(
            long.as_deref(),
            Some("a row had more than 2 values for 2 columns")
        );
        writer.i64(4);
        writer.i64(5);
        writer.end_row()?;
        writer.i64(6);
        assert_eq!(writer.rows(), 1);
        let rows = writer.finish().into_rows()?;
        assert_eq!(rows, vec![row(json!({"a": 4, "b": 5}))]);
        Ok(())
    }

    #[test]
    fn duplicate_names_are_refused_and_no_columns_make_empty_objects() -> Result<(), ExecutorError> {
        let error = JsonColumns::new(["id", "name", "id"])
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("two columns named `id`") && e.contains("b.id AS b_id")));
        let error = JsonColumns::new(["?column?", "?column?"])
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("name each expression with AS")));
        let mut writer = JsonRowWriter::new(Arc::new(JsonColumns::new(Vec::<String>::new())?), 1);
        writer.end_row()?;
        assert_eq!(writer.finish().into_rows()?, vec![Row::new()]);
        Ok(())
    }
}
