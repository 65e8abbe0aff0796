//! SQLite values and declared types as dual-core rows and columns.

use base64::Engine as _;
use dual_core::{Column, ColumnType, Row};
use dual_server::ExecutorError;
use dual_sql::ValueCap;
use rusqlite::types::ValueRef;
use serde_json::{Number, Value};

/// The column type of a SQLite declared type, by SQLite's affinity rules (section 3.1 of "Datatypes
/// In SQLite"): `INT` → integer; `CHAR`/`CLOB`/`TEXT` → string; `BLOB` → string (`"base64:…"`);
/// `REAL`/`FLOA`/`DOUB` → number; `DATE` exactly → date; anything else (NUMERIC, DECIMAL) → number.
pub(crate) fn column_type(decl: &str) -> ColumnType {
    let upper = decl.to_ascii_uppercase();
    if upper.contains("INT") || upper.starts_with("BOOL") {
        ColumnType::Integer
    } else if ["CHAR", "CLOB", "TEXT", "BLOB"].iter().any(|t| upper.contains(t)) {
        ColumnType::String
    } else if ["REAL", "FLOA", "DOUB"].iter().any(|t| upper.contains(t)) {
        ColumnType::Number
    } else if upper.trim() == "DATE" {
        ColumnType::Date
    } else if upper.contains("DATE") || upper.contains("TIME") {
        ColumnType::String
    } else {
        ColumnType::Number
    }
}

/// The columns of a prepared statement, when SQLite knows every declared type (result columns that
/// are expressions have none; then `None`, and the server infers the columns from the sample).
pub(crate) fn columns(stmt: &rusqlite::Statement<'_>) -> Option<Vec<Column>> {
    stmt.columns()
        .map(|c| Some(Column::new(c.name(), column_type(c.decl_type()?))))
        .collect()
}

/// What a blob starts with, before its bytes in standard base64 (padded): `"base64:3q2+7w=="`. The
/// same in every executor (docs/TYPES.md).
const BINARY_MARKER: &str = "base64:";

/// One SQLite value as JSON: integers and reals as numbers (non-finite reals as null), text as
/// strings, blobs as [`BINARY_MARKER`] and their base64.
pub(crate) fn json_value(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Number(i.into()),
        ValueRef::Real(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(bytes) => {
            let mut text = String::with_capacity(BINARY_MARKER.len() + bytes.len().div_ceil(3) * 4);
            text.push_str(BINARY_MARKER);
            base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut text);
            Value::String(text)
        }
    }
}

/// Reads a result row into a [`Row`] keyed by `names`, its values counted against `cap` (SQLite
/// refuses a single value over it; a row of several large values is refused here, naming the column
/// that passed it, as a [`rusqlite::Error::FromSqlConversionFailure`] holding the [`ExecutorError`]).
pub(crate) fn row(row: &rusqlite::Row<'_>, names: &[String], cap: &mut ValueCap) -> rusqlite::Result<Row> {
    let mut out = Row::with_capacity(names.len());
    cap.end_row();
    for (i, name) in names.iter().enumerate() {
        let value = row.get_ref(i)?;
        if let ValueRef::Text(bytes) | ValueRef::Blob(bytes) = value {
            cap.value(name, bytes.len())
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), Box::new(e)))?;
        }
        out.insert(name.clone(), json_value(value));
    }
    Ok(out)
}

/// The [`ExecutorError`] [`row`] refused a row with, if `error` is one.
pub(crate) fn refused_row(error: &rusqlite::Error) -> Option<&ExecutorError> {
    match error {
        rusqlite::Error::FromSqlConversionFailure(_, _, inner) => inner.downcast_ref::<ExecutorError>(),
        _ => None,
    }
}

/// About the bytes `row` holds (its keys and values, without serialising): what an export batch
/// counts to stay near its byte target.
pub(crate) fn approx_len(row: &Row) -> usize {
    fn value(v: &Value) -> usize {
        match v {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => 20,
            Value::String(s) => s.len() + 2,
            Value::Array(items) => items.iter().map(value).sum::<usize>() + items.len() + 2,
            Value::Object(map) => map.iter().map(|(k, v)| k.len() + 4 + value(v)).sum::<usize>() + 2,
        }
    }
    row.iter().map(|(k, v)| k.len() + 4 + value(v)).sum::<usize>() + 2
}

/// `"name"` with inner quotes doubled: a safe SQLite identifier whatever the name holds.
pub(crate) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_rules() {
        for (decl, want) in [
            ("INTEGER", ColumnType::Integer),
            ("BIGINT", ColumnType::Integer),
            ("VARCHAR(20)", ColumnType::String),
            ("TEXT", ColumnType::String),
            ("REAL", ColumnType::Number),
            ("DOUBLE PRECISION", ColumnType::Number),
            ("NUMERIC", ColumnType::Number),
            ("DATE", ColumnType::Date),
            ("DATETIME", ColumnType::String),
            ("BOOLEAN", ColumnType::Integer),
        ] {
            assert_eq!(column_type(decl), want, "{decl}");
        }
    }

    #[test]
    fn values() {
        assert_eq!(json_value(ValueRef::Integer(7)), Value::from(7));
        assert_eq!(json_value(ValueRef::Real(f64::NAN)), Value::Null);
        assert_eq!(json_value(ValueRef::Text(b"hi")), Value::from("hi"));
        assert_eq!(json_value(ValueRef::Blob(&[0, 255])), Value::from("base64:AP8="));
        assert_eq!(json_value(ValueRef::Blob(&[])), Value::from("base64:"));
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_identifier("enrollment"), "\"enrollment\"");
        assert_eq!(quote_identifier("a\"b"), "\"a\"\"b\"");
    }
}
