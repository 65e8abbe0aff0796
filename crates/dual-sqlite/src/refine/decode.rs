//! A stored row's JSON read straight into the values of `result`'s columns, in column order, with no
//! map built and no text copied unless it has escapes: what loading a refinement's table spends most
//! of its time on.

use std::borrow::Cow;
use std::fmt;

use rusqlite::types::{ToSqlOutput, ValueRef};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// One value of a row, as SQLite will store it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(Cow<'a, str>),
}

impl Cell<'_> {
    /// The value to bind.
    pub(crate) fn bound(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(match self {
            Self::Null => ValueRef::Null,
            Self::Integer(i) => ValueRef::Integer(*i),
            Self::Real(f) => ValueRef::Real(*f),
            Self::Text(text) => ValueRef::Text(text.as_bytes()),
        })
    }
}

/// Reads `json`, one stored row (a JSON object), into `cells`: one cell per name of `columns`, in
/// that order; a key that is no column is skipped, a column missing from the row is NULL. `true`
/// and `false` are 1 and 0, integers past `i64` reals, arrays and objects their JSON text.
///
/// # Errors
/// The JSON error, when `json` is not one JSON object.
pub(crate) fn row_cells<'a>(
    json: &'a [u8],
    columns: &[String],
    cells: &mut Vec<Cell<'a>>,
) -> Result<(), serde_json::Error> {
    cells.clear();
    cells.resize(columns.len(), Cell::Null);
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    de::Deserializer::deserialize_map(&mut deserializer, RowVisitor { columns, cells })?;
    deserializer.end()
}

struct RowVisitor<'c, 'a> {
    columns: &'c [String],
    cells: &'c mut Vec<Cell<'a>>,
}

impl<'a> Visitor<'a> for RowVisitor<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row as a JSON object")
    }

    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<(), M::Error> {
        // Stored rows keep the columns' order: the next column is the first guess.
        let mut next = 0;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let found = if self.columns.get(next).is_some_and(|name| *name == *key) {
                Some(next)
            } else {
                self.columns.iter().position(|name| *name == *key)
            };
            match found {
                Some(i) => {
                    self.cells[i] = map.next_value_seed(CellSeed)?;
                    next = i + 1;
                }
                None => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A key, borrowed unless it has escapes (serde's own `Cow<str>` always copies).
struct KeySeed;

impl<'a> DeserializeSeed<'a> for KeySeed {
    type Value = Cow<'a, str>;

    fn deserialize<D: de::Deserializer<'a>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'a> Visitor<'a> for TextVisitor {
    type Value = Cow<'a, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'a str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(text))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text))
    }
}

struct CellSeed;

impl<'a> DeserializeSeed<'a> for CellSeed {
    type Value = Cell<'a>;

    fn deserialize<D: de::Deserializer<'a>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(CellVisitor)
    }
}

struct CellVisitor;

impl<'a> Visitor<'a> for CellVisitor {
    type Value = Cell<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Cell::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Cell::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Cell::Integer(i64::from(b)))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Self::Value, E> {
        Ok(Cell::Integer(i))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Self::Value, E> {
        // Past i64: kept as the nearest real, as SQLite itself reads such a literal.
        #[allow(
            clippy::cast_precision_loss,
            reason = "SQLite stores integers past i64 as reals"
        )]
        Ok(i64::try_from(u).map_or(Cell::Real(u as f64), Cell::Integer))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Self::Value, E> {
        Ok(Cell::Real(f))
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'a str) -> Result<Self::Value, E> {
        Ok(Cell::Text(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cell::Text(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Cell::Text(Cow::Owned(text)))
    }

    fn visit_seq<S: SeqAccess<'a>>(self, seq: S) -> Result<Self::Value, S::Error> {
        let value: Value = de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Cell::Text(Cow::Owned(value.to_string())))
    }

    fn visit_map<M: MapAccess<'a>>(self, map: M) -> Result<Self::Value, M::Error> {
        let value: Value = de::Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Cell::Text(Cow::Owned(value.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(names: &[&str]) -> Vec<String> {
        names.iter().map(|&n| n.to_owned()).collect()
    }

    #[test]
    fn values_land_in_column_order_whatever_the_key_order() {
        let cols = columns(&["a", "b", "c", "d", "e", "f"]);
        let mut cells = Vec::new();
        let json = br#"{"b":"x\"y","a":1,"zz":[1,{"q":2}],"c":2.5,"e":true,"f":{"k":[1,null]}}"#;
        row_cells(json, &cols, &mut cells).expect("a row");
        assert_eq!(
            cells,
            [
                Cell::Integer(1),
                Cell::Text(Cow::Owned("x\"y".to_owned())),
                Cell::Real(2.5),
                Cell::Null,
                Cell::Integer(1),
                Cell::Text(Cow::Owned(r#"{"k":[1,null]}"#.to_owned())),
            ]
        );
        assert!(
            matches!(cells[1], Cell::Text(Cow::Owned(_))),
            "escaped text is copied"
        );
        row_cells(
            br#"{"a":"plain","b":18446744073709551615,"c":-7}"#,
            &cols,
            &mut cells,
        )
        .expect("a row");
        assert!(
            matches!(&cells[0], Cell::Text(Cow::Borrowed("plain"))),
            "plain text is borrowed"
        );
        assert_eq!(cells[1], Cell::Real(18_446_744_073_709_551_615.0));
        assert_eq!(cells[2], Cell::Integer(-7));
        assert_eq!(cells[3], Cell::Null, "each row starts with every column NULL");
    }

    #[test]
    fn anything_but_one_object_is_refused() {
        let cols = columns(&["a"]);
        let mut cells = Vec::new();
        for json in [&b"[1]"[..], b"1", b"{\"a\":1} x", b"{\"a\":", b""] {
            assert!(
                row_cells(json, &cols, &mut cells).is_err(),
                "{}",
                String::from_utf8_lossy(json)
            );
        }
    }
}
