//! Column definitions and their inference from sample rows.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Row;

/// The type of a column, as declared to the model and to host applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Text.
    String,
    /// Any JSON number that is not always an integer.
    Number,
    /// Whole numbers.
    Integer,
    /// `true` / `false`.
    Boolean,
    /// A calendar date (`YYYY-MM-DD`).
    Date,
    /// A date and time (RFC 3339).
    Datetime,
    /// Nested JSON: arrays and objects.
    Json,
}

impl ColumnType {
    /// The wire name (`"string"`, `"integer"`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Date => "date",
            Self::Datetime => "datetime",
            Self::Json => "json",
        }
    }

    /// Every column type, in wire-name order of the JSON Schema enum.
    pub const ALL: [Self; 7] = [
        Self::String,
        Self::Number,
        Self::Integer,
        Self::Boolean,
        Self::Date,
        Self::Datetime,
        Self::Json,
    ];

    /// The type a single non-null JSON value suggests.
    fn of_value(value: &Value) -> Option<Self> {
        Some(match value {
            Value::Null => return None,
            Value::Bool(_) => Self::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::Integer,
            Value::Number(_) => Self::Number,
            Value::String(s) if looks_like_date(s) => Self::Date,
            Value::String(s) if looks_like_datetime(s) => Self::Datetime,
            Value::String(_) => Self::String,
            Value::Array(_) | Value::Object(_) => Self::Json,
        })
    }

    /// The narrowest type that holds values of both `self` and `other`.
    fn widen(self, other: Self) -> Self {
        match (self, other) {
            (a, b) if a == b => a,
            (Self::Integer, Self::Number) | (Self::Number, Self::Integer) => Self::Number,
            (Self::Date, Self::Datetime) | (Self::Datetime, Self::Date) => Self::Datetime,
            (Self::Json, _) | (_, Self::Json) => Self::Json,
            _ => Self::String,
        }
    }
}

impl std::fmt::Display for ColumnType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A column of a result: its name and type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Column {
    /// The column's name, the key of the value in every row.
    pub name: String,
    /// The column's type.
    #[serde(rename = "type")]
    pub column_type: ColumnType,
}

impl Column {
    /// A column named `name` of type `column_type`.
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> Self {
        Self {
            name: name.into(),
            column_type,
        }
    }
}

/// Infers columns from sample rows.
///
/// Columns appear in the order their names are first seen. A column's type is the narrowest one that
/// holds every non-null value seen (integers and numbers widen to `number`, dates and datetimes to
/// `datetime`, anything else mixed to `string`); a column that is null in every row is `string`.
#[must_use]
pub fn infer_columns(rows: &[Row]) -> Vec<Column> {
    let mut columns: Vec<(String, Option<ColumnType>)> = Vec::new();
    for row in rows {
        for (name, value) in row {
            let seen = ColumnType::of_value(value);
            match columns.iter_mut().find(|(n, _)| n == name) {
                Some((_, slot)) => {
                    *slot = match (*slot, seen) {
                        (Some(a), Some(b)) => Some(a.widen(b)),
                        (a, b) => a.or(b),
                    };
                }
                None => columns.push((name.clone(), seen)),
            }
        }
    }
    columns
        .into_iter()
        .map(|(name, t)| Column::new(name, t.unwrap_or(ColumnType::String)))
        .collect()
}

fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).is_ok()
}

fn looks_like_datetime(s: &str) -> bool {
    s.len() >= 20
        && s.as_bytes().get(10).is_some_and(|c| *c == b'T' || *c == b't')
        && time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(value: Value) -> Vec<Row> {
        serde_json::from_value(value).unwrap_or_default()
    }

    #[test]
    fn infers_each_type_in_first_seen_order() {
        let sample = rows(json!([
            {"id": 1, "name": "Rutgers", "gpa": 3.5, "public": true, "founded": "1766-11-10",
             "updated": "2026-01-15T10:30:00Z", "tags": ["a"]},
        ]));
        let cols = infer_columns(&sample);
        let got: Vec<_> = cols.iter().map(|c| (c.name.as_str(), c.column_type)).collect();
        assert_eq!(
            got,
            vec![
                ("id", ColumnType::Integer),
                ("name", ColumnType::String),
                ("gpa", ColumnType::Number),
                ("public", ColumnType::Boolean),
                ("founded", ColumnType::Date),
                ("updated", ColumnType::Datetime),
                ("tags", ColumnType::Json),
            ]
        );
    }

    #[test]
    fn widens_across_rows_and_skips_nulls() {
        let sample = rows(json!([
            {"a": 1, "b": null, "c": "2026-01-01", "d": 1, "e": null},
            {"a": 2.5, "b": 7, "c": "2026-01-01T00:00:00Z", "d": "x", "e": null},
        ]));
        let cols = infer_columns(&sample);
        let got: Vec<_> = cols.iter().map(|c| c.column_type).collect();
        assert_eq!(
            got,
            vec![
                ColumnType::Number,
                ColumnType::Integer,
                ColumnType::Datetime,
                ColumnType::String,
                ColumnType::String
            ]
        );
    }

    #[test]
    fn not_quite_dates_are_strings() {
        let sample = rows(json!([{"a": "2026-13-45", "b": "2026-01-01 10:00", "c": "12345678901"}]));
        assert!(
            infer_columns(&sample)
                .iter()
                .all(|c| c.column_type == ColumnType::String)
        );
    }

    #[test]
    fn wire_names() {
        let col = Column::new("id", ColumnType::Integer);
        assert_eq!(
            serde_json::to_value(&col).ok(),
            Some(json!({"name": "id", "type": "integer"}))
        );
        for t in ColumnType::ALL {
            assert_eq!(serde_json::to_value(t).ok(), Some(json!(t.as_str())));
        }
    }
}
