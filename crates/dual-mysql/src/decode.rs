//! MySQL's binary-protocol values as JSON (the type mapping in the crate docs), and the column type
//! each declared type gets.

use std::fmt::Write as _;

use base64::Engine as _;
use dual_core::ColumnType;
use mysql_async::consts::{ColumnFlags, ColumnType as My};
use mysql_async::{Column, Value};
use serde_json::Number;

use crate::geometry::well_known_text;
use crate::options::NumericMode;

/// What a binary value (`BINARY`, `VARBINARY`, `BLOB`) starts with, before its bytes in standard
/// base64 (padded): `"base64:3q2+7w=="`. The same in every executor (docs/TYPES.md).
const BINARY_MARKER: &str = "base64:";

/// The binary character set: a string column with it holds bytes, not text.
const BINARY: u16 = 63;

/// The column type of values of `column`, as [`value`] writes them.
pub(crate) fn column_type(column: &Column, numeric: NumericMode) -> ColumnType {
    match column.column_type() {
        My::MYSQL_TYPE_TINY
        | My::MYSQL_TYPE_SHORT
        | My::MYSQL_TYPE_LONG
        | My::MYSQL_TYPE_INT24
        | My::MYSQL_TYPE_LONGLONG
        | My::MYSQL_TYPE_YEAR
        | My::MYSQL_TYPE_BIT => ColumnType::Integer,
        My::MYSQL_TYPE_FLOAT | My::MYSQL_TYPE_DOUBLE => ColumnType::Number,
        My::MYSQL_TYPE_DECIMAL | My::MYSQL_TYPE_NEWDECIMAL => match numeric {
            NumericMode::Number => ColumnType::Number,
            // Exact strings, also for a mode of a later release.
            _ => ColumnType::String,
        },
        My::MYSQL_TYPE_DATE | My::MYSQL_TYPE_NEWDATE => ColumnType::Date,
        My::MYSQL_TYPE_DATETIME
        | My::MYSQL_TYPE_DATETIME2
        | My::MYSQL_TYPE_TIMESTAMP
        | My::MYSQL_TYPE_TIMESTAMP2 => ColumnType::Datetime,
        My::MYSQL_TYPE_JSON => ColumnType::Json,
        _ => ColumnType::String,
    }
}

/// The JSON of `value`, a value of `column`.
pub(crate) fn value(
    column: &Column,
    value: &Value,
    numeric: NumericMode,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match value {
        Value::NULL => J::Null,
        Value::Int(i) => J::from(*i),
        Value::UInt(u) => J::from(*u),
        Value::Float(f) => float(f64::from(*f)),
        Value::Double(f) => float(*f),
        Value::Date(year, month, day, hour, minute, second, micros) => {
            let mut text = format!("{year:04}-{month:02}-{day:02}");
            if !matches!(column.column_type(), My::MYSQL_TYPE_DATE | My::MYSQL_TYPE_NEWDATE) {
                let _ = write!(text, "T{}", clock(u32::from(*hour), *minute, *second, *micros));
                if matches!(
                    column.column_type(),
                    My::MYSQL_TYPE_TIMESTAMP | My::MYSQL_TYPE_TIMESTAMP2
                ) {
                    // The session's time zone is UTC (set on every connection).
                    text.push('Z');
                }
            }
            J::String(text)
        }
        Value::Time(negative, days, hours, minutes, seconds, micros) => {
            let sign = if *negative { "-" } else { "" };
            J::String(format!(
                "{sign}{}",
                clock(days * 24 + u32::from(*hours), *minutes, *seconds, *micros)
            ))
        }
        Value::Bytes(bytes) => bytes_value(column, bytes, numeric)?,
    })
}

fn bytes_value(column: &Column, bytes: &[u8], numeric: NumericMode) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match column.column_type() {
        My::MYSQL_TYPE_DECIMAL | My::MYSQL_TYPE_NEWDECIMAL => {
            let text = String::from_utf8_lossy(bytes).into_owned();
            match numeric {
                NumericMode::Number => text
                    .parse::<i64>()
                    .map(J::from)
                    .ok()
                    .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64).map(J::Number))
                    .unwrap_or(J::String(text)),
                _ => J::String(text),
            }
        }
        My::MYSQL_TYPE_JSON => {
            serde_json::from_slice(bytes).map_err(|e| format!("a JSON value that does not parse: {e}"))?
        }
        My::MYSQL_TYPE_BIT => J::from(bytes.iter().fold(0u64, |n, b| (n << 8) | u64::from(*b))),
        My::MYSQL_TYPE_GEOMETRY => J::String(well_known_text(bytes)?),
        _ if column.character_set() == BINARY
            && !column
                .flags()
                .intersects(ColumnFlags::ENUM_FLAG | ColumnFlags::SET_FLAG) =>
        {
            let mut text = String::with_capacity(BINARY_MARKER.len() + bytes.len().div_ceil(3) * 4);
            text.push_str(BINARY_MARKER);
            base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut text);
            J::String(text)
        }
        _ => J::String(String::from_utf8_lossy(bytes).into_owned()),
    })
}

fn float(f: f64) -> serde_json::Value {
    match Number::from_f64(f) {
        Some(n) => serde_json::Value::Number(n),
        None if f.is_nan() => serde_json::Value::String("NaN".to_owned()),
        None if f > 0.0 => serde_json::Value::String("Infinity".to_owned()),
        None => serde_json::Value::String("-Infinity".to_owned()),
    }
}

/// `HH:MM:SS` and the microseconds, if any, without trailing zeros.
fn clock(hours: u32, minutes: u8, seconds: u8, micros: u32) -> String {
    let mut text = format!("{hours:02}:{minutes:02}:{seconds:02}");
    if micros > 0 {
        let fraction = format!("{micros:06}");
        let _ = write!(text, ".{}", fraction.trim_end_matches('0'));
    }
    text
}
