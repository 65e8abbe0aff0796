//! Compact sort keys: one 24-byte entry per row (its key and its row number), the text of string
//! keys (and the JSON text of array and object keys) in one shared buffer, and their order
//! (docs/DESIGN.md §3).

use std::cmp::Ordering;
use std::fmt;

use dual_core::SortOrder;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// Bytes of one row's entry while an order is derived: its key and row number.
pub(crate) const ENTRY_BYTES: u64 = size_of::<Entry>() as u64;

/// A row's sort key; the text of `Str` and `Json` lies in [`Keys::text`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// Finite, never `-0.0` (normalised to `0.0`, which equals the integer 0).
    Float(f64),
    Str {
        start: u64,
        len: u32,
    },
    Json {
        start: u64,
        len: u32,
    },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    row: u32,
}

/// One row's key, decoded from its row and not yet appended to [`Keys`].
#[derive(Debug)]
pub(crate) enum RowKey {
    Plain(Key),
    Str(String),
    /// An array or object, by its JSON text.
    Json(String),
}

impl RowKey {
    /// The key of the row encoded as `row` (compact JSON of an object): its `field`, null when
    /// absent or when the row does not decode.
    pub(crate) fn of(row: &[u8], field: &str) -> Self {
        match field_value(row, field) {
            Value::Null => Self::Plain(Key::Null),
            Value::Bool(b) => Self::Plain(Key::Bool(b)),
            Value::Number(n) => Self::Plain(if let Some(i) = n.as_i64() {
                Key::Int(i)
            } else if let Some(u) = n.as_u64() {
                Key::UInt(u)
            } else {
                // `+ 0.0` turns -0.0 into 0.0; JSON numbers are finite.
                Key::Float(n.as_f64().unwrap_or(0.0) + 0.0)
            }),
            Value::String(s) => Self::Str(s),
            composite @ (Value::Array(_) | Value::Object(_)) => Self::Json(composite.to_string()),
        }
    }

    /// Bytes of text it adds to [`Keys`]: a string's UTF-8 length, the JSON text's length.
    pub(crate) fn text_len(&self) -> usize {
        match self {
            Self::Plain(_) => 0,
            Self::Str(text) | Self::Json(text) => text.len(),
        }
    }
}

/// A key's text is longer than 4 GiB, or the snapshot has 2^32 rows or more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLarge;

/// The sort keys of a snapshot's rows, in snapshot order.
#[derive(Debug, Default)]
pub(crate) struct Keys {
    entries: Vec<Entry>,
    text: Vec<u8>,
}

impl Keys {
    /// Room for `rows` entries, allocated now (the text buffer grows through [`Keys::grow_text`]).
    pub(crate) fn with_rows(rows: usize) -> Self {
        Self {
            entries: Vec::with_capacity(rows),
            text: Vec::new(),
        }
    }

    /// Bytes allocated: entries and text buffer, by capacity.
    pub(crate) fn allocated(&self) -> u64 {
        self.entries.capacity() as u64 * ENTRY_BYTES + self.text.capacity() as u64
    }

    /// How many bytes the text buffer must grow by to take `more` bytes without reallocating;
    /// zero when it already can. Grows by at least a quarter, so pushing stays amortised.
    pub(crate) fn text_growth(&self, more: usize) -> usize {
        let need = self.text.len().saturating_add(more);
        let capacity = self.text.capacity();
        if need <= capacity {
            0
        } else {
            need.max(capacity.saturating_add(capacity / 4)) - capacity
        }
    }

    /// Grows the text buffer's capacity by exactly `more` bytes (as [`Keys::text_growth`] said).
    pub(crate) fn grow_text(&mut self, more: usize) {
        let len = self.text.len();
        let target = self.text.capacity().saturating_add(more);
        self.text.reserve_exact(target - len);
    }

    /// Appends the key of the next row.
    pub(crate) fn push(&mut self, key: RowKey) -> Result<(), TooLarge> {
        let row = u32::try_from(self.entries.len()).map_err(|_| TooLarge)?;
        let key = match key {
            RowKey::Plain(key) => key,
            RowKey::Str(text) => {
                let (start, len) = self.append_text(text.as_bytes())?;
                Key::Str { start, len }
            }
            RowKey::Json(text) => {
                let (start, len) = self.append_text(text.as_bytes())?;
                Key::Json { start, len }
            }
        };
        self.entries.push(Entry { key, row });
        Ok(())
    }

    fn append_text(&mut self, bytes: &[u8]) -> Result<(u64, u32), TooLarge> {
        let len = u32::try_from(bytes.len()).map_err(|_| TooLarge)?;
        let start = self.text.len() as u64;
        self.text.extend_from_slice(bytes);
        Ok((start, len))
    }

    /// The row numbers in `order`: stable ascending (ties in snapshot order), descending its exact
    /// reverse. Sorts in place (no scratch copy of the entries): the row number breaks ties.
    pub(crate) fn into_order(self, order: SortOrder) -> Vec<u32> {
        let Self { mut entries, text } = self;
        entries.sort_unstable_by(|a, b| compare(&a.key, &b.key, &text).then(a.row.cmp(&b.row)));
        drop(text);
        let rows = entries.iter().map(|e| e.row);
        match order {
            SortOrder::Asc => rows.collect(),
            SortOrder::Desc => rows.rev().collect(),
        }
    }
}

/// The ascending order of sort keys, SQL's with nulls first (SQLite's `ORDER BY`): null, then
/// booleans (false first), numbers (by exact value), strings (by code point), then arrays and
/// objects by their JSON text. A total order, so sorting never meets an inconsistent comparison.
fn compare(a: &Key, b: &Key, text: &[u8]) -> Ordering {
    fn rank(key: &Key) -> u8 {
        match key {
            Key::Null => 0,
            Key::Bool(_) => 1,
            Key::Int(_) | Key::UInt(_) | Key::Float(_) => 2,
            Key::Str { .. } => 3,
            Key::Json { .. } => 4,
        }
    }
    let slice = |start: u64, len: u32| {
        let start = usize::try_from(start).unwrap_or(usize::MAX);
        text.get(start..start.saturating_add(len as usize))
            .unwrap_or_default()
    };
    match (*a, *b) {
        (x, y) if rank(&x) != rank(&y) => rank(&x).cmp(&rank(&y)),
        (Key::Bool(x), Key::Bool(y)) => x.cmp(&y),
        (Key::Str { start: s, len: l }, Key::Str { start: t, len: m })
        | (Key::Json { start: s, len: l }, Key::Json { start: t, len: m }) => slice(s, l).cmp(slice(t, m)),
        (Key::Float(x), Key::Float(y)) => x.total_cmp(&y),
        (Key::Float(x), other) => integer(&other).map_or(Ordering::Equal, |i| int_vs_float(i, x).reverse()),
        (other, Key::Float(y)) => integer(&other).map_or(Ordering::Equal, |i| int_vs_float(i, y)),
        // Two integers, or two nulls (`None == None`).
        (x, y) => integer(&x).cmp(&integer(&y)),
    }
}

/// The value of an integer key, wide enough for both `i64` and `u64`.
fn integer(key: &Key) -> Option<i128> {
    match *key {
        Key::Int(i) => Some(i128::from(i)),
        Key::UInt(u) => Some(i128::from(u)),
        _ => None,
    }
}

/// `i` against `f`, exactly (no rounding of `i` to a float).
fn int_vs_float(i: i128, f: f64) -> Ordering {
    /// 2^127, exactly representable.
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if f.is_nan() {
        return if f.is_sign_negative() {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    if f >= LIMIT {
        return Ordering::Less;
    }
    if f < -LIMIT {
        return Ordering::Greater;
    }
    let whole = f.trunc();
    #[expect(clippy::cast_possible_truncation, reason = "|whole| < 2^127: exact")]
    let whole_int = whole as i128;
    i.cmp(&whole_int).then(if f > whole {
        Ordering::Less
    } else if f < whole {
        Ordering::Greater
    } else {
        Ordering::Equal
    })
}

/// The value of `field` in an encoded row, decoding nothing else (the other values are skipped,
/// not built); `null` when absent or when the row is not one JSON object.
fn field_value(row: &[u8], field: &str) -> Value {
    let mut de = serde_json::Deserializer::from_slice(row);
    let found = FieldOf(field).deserialize(&mut de);
    match (found, de.end()) {
        (Ok(value), Ok(())) => value,
        _ => Value::Null,
    }
}

/// Finds one field of a JSON object (the last, when repeated, as a decoded map would keep).
struct FieldOf<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for FieldOf<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FieldOf<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut found = Value::Null;
        while let Some(is_field) = map.next_key_seed(NameIs(self.0))? {
            if is_field {
                found = map.next_value()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a map key is the field, compared without allocating.
struct NameIs<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for NameIs<'_> {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for NameIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<bool, E> {
        Ok(name == self.0)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn order_of(values: &[Value], order: SortOrder) -> Vec<u32> {
        let mut keys = Keys::with_rows(values.len());
        for value in values {
            let row =
                serde_json::to_vec(&json!({ "other": [1, {"x": "y"}], "k": value })).unwrap_or_default();
            let key = RowKey::of(&row, "k");
            keys.grow_text(keys.text_growth(key.text_len()));
            keys.push(key).expect("push");
        }
        keys.into_order(order)
    }

    #[test]
    fn entries_are_24_bytes() {
        assert_eq!(ENTRY_BYTES, 24);
    }

    #[test]
    fn keys_order_like_sql_with_nulls_first() {
        let values = [
            json!("b"),
            json!(10),
            json!(null),
            json!(2.5),
            json!(true),
            json!("a"),
            json!(u64::MAX),
            json!(-3),
            json!([1]),
            json!(false),
        ];
        let expected = [2, 9, 4, 7, 3, 1, 6, 5, 0, 8];
        assert_eq!(order_of(&values, SortOrder::Asc), expected);
        let mut reversed = expected;
        reversed.reverse();
        assert_eq!(order_of(&values, SortOrder::Desc), reversed);
    }

    #[test]
    fn ties_keep_snapshot_order_and_descending_is_the_exact_reverse() {
        let values = [
            json!(1),
            json!("x"),
            json!(1.0),
            json!(null),
            json!("x"),
            json!(null),
        ];
        assert_eq!(order_of(&values, SortOrder::Asc), [3, 5, 0, 2, 1, 4]);
        assert_eq!(order_of(&values, SortOrder::Desc), [4, 1, 2, 0, 5, 3]);
    }

    #[test]
    fn numbers_compare_exactly_across_integers_and_floats() {
        let big = 9_007_199_254_740_993_i64; // 2^53 + 1: no f64 holds it
        let values = [
            json!(big),
            json!(9_007_199_254_740_992.0),
            json!(big - 1),
            json!(-0.0),
            json!(0),
        ];
        // -0.0 equals 0 (ties in snapshot order); 2^53 as a float equals big - 1.
        assert_eq!(order_of(&values, SortOrder::Asc), [3, 4, 1, 2, 0]);
    }

    #[test]
    fn strings_by_code_point_and_escapes_decoded() {
        let values = [json!("é"), json!("z"), json!("\u{1F600}"), json!("a\"b")];
        assert_eq!(order_of(&values, SortOrder::Asc), [3, 1, 0, 2]);
    }

    #[test]
    fn only_the_field_is_decoded_and_bad_rows_are_null() {
        assert_eq!(field_value(br#"{"a":1,"k":"v","b":[2]}"#, "k"), json!("v"));
        assert_eq!(field_value(br#"{"k":1,"k":2}"#, "k"), json!(2));
        assert_eq!(field_value(br#"{"k\u0031":7}"#, "k1"), json!(7));
        assert_eq!(field_value(br#"{"a":1}"#, "k"), Value::Null);
        assert_eq!(field_value(br#"[1,2]"#, "k"), Value::Null);
        assert_eq!(field_value(br#"{"k":1"#, "k"), Value::Null);
        assert_eq!(field_value(br#"{"k":1} x"#, "k"), Value::Null);
    }

    #[test]
    fn text_grows_by_what_it_needs_or_a_quarter() {
        let mut keys = Keys::default();
        assert_eq!(keys.text_growth(100), 100);
        keys.grow_text(100);
        assert_eq!(keys.allocated(), 100);
        assert_eq!(keys.text_growth(100), 0);
        let key = RowKey::of(
            &serde_json::to_vec(&json!({"k": "x".repeat(100)})).unwrap_or_default(),
            "k",
        );
        assert_eq!(key.text_len(), 100);
        keys.push(key).expect("push");
        assert_eq!(keys.text_growth(1), 25);
        assert_eq!(RowKey::of(br#"{"k":[1, 2]}"#, "k").text_len(), "[1,2]".len());
        assert_eq!(
            RowKey::of(br#"{"k":"\u00e9"}"#, "k").text_len(),
            2,
            "decoded, not escaped"
        );
    }
}
