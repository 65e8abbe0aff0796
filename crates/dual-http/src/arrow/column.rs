//! One Arrow column of an export: the builder of its type, and the rules for what JSON values fit it.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
};
use arrow_schema::DataType;
use dual_core::ColumnType;
use serde_json::{Number, Value};

/// Why a value does not fit its column: the end of a mismatch message ("… does not fit").
pub(crate) type Misfit = &'static str;

/// 2^63 as an `f64`: integral values in `[-2^63, 2^63)` are exactly an `i64`.
const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;

/// The Julian day number of 1970-01-01, day 0 of Arrow's `Date32`.
const UNIX_EPOCH_JULIAN_DAY: i32 = 2_440_588;

/// The builder of one column, by its Arrow type.
#[derive(Debug)]
pub(crate) enum ColumnBuilder {
    Int64(Int64Builder),
    Float64(Float64Builder),
    Boolean(BooleanBuilder),
    Date32(Date32Builder),
    /// `string`, `datetime` and `json` columns, which keep the column type for the rules.
    Utf8(StringBuilder, ColumnType),
}

impl ColumnBuilder {
    pub(crate) fn new(column_type: ColumnType) -> Self {
        match column_type {
            ColumnType::Integer => Self::Int64(Int64Builder::new()),
            ColumnType::Number => Self::Float64(Float64Builder::new()),
            ColumnType::Boolean => Self::Boolean(BooleanBuilder::new()),
            ColumnType::Date => Self::Date32(Date32Builder::new()),
            ColumnType::String | ColumnType::Datetime | ColumnType::Json => {
                Self::Utf8(StringBuilder::new(), column_type)
            }
        }
    }

    /// The Arrow type of a column of `column_type`.
    pub(crate) fn data_type(column_type: ColumnType) -> DataType {
        match column_type {
            ColumnType::Integer => DataType::Int64,
            ColumnType::Number => DataType::Float64,
            ColumnType::Boolean => DataType::Boolean,
            ColumnType::Date => DataType::Date32,
            ColumnType::String | ColumnType::Datetime | ColumnType::Json => DataType::Utf8,
        }
    }

    /// Whether `value` (`None`: the row has no such key) fits, without appending it.
    pub(crate) fn check(&self, value: Option<&Value>) -> Result<(), Misfit> {
        match self {
            Self::Int64(_) => integer(value).map(drop),
            Self::Float64(_) => float(value).map(drop),
            Self::Boolean(_) => boolean(value).map(drop),
            Self::Date32(_) => date(value).map(drop),
            Self::Utf8(_, column_type) => text(*column_type, value).map(drop),
        }
    }

    /// Appends `value`, or a null for a missing key or a JSON `null`.
    pub(crate) fn append(&mut self, value: Option<&Value>) -> Result<(), Misfit> {
        match self {
            Self::Int64(builder) => builder.append_option(integer(value)?),
            Self::Float64(builder) => builder.append_option(float(value)?),
            Self::Boolean(builder) => builder.append_option(boolean(value)?),
            Self::Date32(builder) => builder.append_option(date(value)?),
            Self::Utf8(builder, column_type) => match text(*column_type, value)? {
                None => builder.append_null(),
                Some(Text::Verbatim(text)) => builder.append_value(text),
                Some(Text::Json(value)) => {
                    // The JSON text, written straight into the builder's value buffer.
                    write!(builder, "{value}").map_err(|_| "a value whose JSON text cannot be written")?;
                    builder.append_value("");
                }
            },
        }
        Ok(())
    }

    /// About how many bytes the values appended so far take.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Self::Int64(builder) => builder.len() * 8,
            Self::Float64(builder) => builder.len() * 8,
            Self::Boolean(builder) => builder.len().div_ceil(8),
            Self::Date32(builder) => builder.len() * 4,
            Self::Utf8(builder, _) => builder.values_slice().len() + builder.len() * 4,
        }
    }

    /// The column's array of the values appended so far; the builder starts over empty.
    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            Self::Int64(builder) => Arc::new(builder.finish()),
            Self::Float64(builder) => Arc::new(builder.finish()),
            Self::Boolean(builder) => Arc::new(builder.finish()),
            Self::Date32(builder) => Arc::new(builder.finish()),
            Self::Utf8(builder, _) => Arc::new(builder.finish()),
        }
    }
}

/// What a `Utf8` column holds for a value.
enum Text<'a> {
    /// A string, as it is.
    Verbatim(&'a str),
    /// The JSON text of a value.
    Json(&'a Value),
}

/// `None` for a missing key or a JSON `null`.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

/// An `integer` value: an integer in the range of `i64`, or a number with an integral `f64` value
/// that is exactly one (`3.0`).
fn integer(value: Option<&Value>) -> Result<Option<i64>, Misfit> {
    let Some(value) = present(value) else {
        return Ok(None);
    };
    let Value::Number(number) = value else {
        return Err(kind(value));
    };
    if let Some(int) = number.as_i64() {
        return Ok(Some(int));
    }
    if number.is_u64() {
        return Err("an integer beyond the range of Int64");
    }
    match number.as_f64() {
        Some(float) if float.trunc() == float && (-I64_BOUND..I64_BOUND).contains(&float) => {
            Ok(Some(float as i64))
        }
        Some(float) if float.trunc() == float => Err("an integer beyond the range of Int64"),
        _ => Err("a number with a fraction"),
    }
}

/// A `number` value: any JSON number whose value an `f64` holds exactly, or one of the strings
/// `"NaN"`, `"Infinity"` and `"-Infinity"` that stand for the floats JSON cannot write (executors
/// write a database's NaN and infinities so, as PostgreSQL spells them).
fn float(value: Option<&Value>) -> Result<Option<f64>, Misfit> {
    let Some(value) = present(value) else {
        return Ok(None);
    };
    let number = match value {
        Value::Number(number) => number,
        Value::String(text) => {
            return match text.as_str() {
                "NaN" => Ok(Some(f64::NAN)),
                "Infinity" => Ok(Some(f64::INFINITY)),
                "-Infinity" => Ok(Some(f64::NEG_INFINITY)),
                _ => Err(kind(value)),
            };
        }
        _ => return Err(kind(value)),
    };
    exact_f64(number)
        .map(Some)
        .ok_or("an integer that Float64 cannot hold exactly")
}

/// The number as an `f64`, when that is exact: always for a float, for an integer when it has
/// at most 53 significant bits.
fn exact_f64(number: &Number) -> Option<f64> {
    if let Some(int) = number.as_i64() {
        let float = int as f64;
        return (float as i128 == i128::from(int)).then_some(float);
    }
    if let Some(int) = number.as_u64() {
        let float = int as f64;
        return (float as u128 == u128::from(int)).then_some(float);
    }
    number.as_f64()
}

/// A `boolean` value: `true` or `false`.
fn boolean(value: Option<&Value>) -> Result<Option<bool>, Misfit> {
    match present(value) {
        None => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => Err(kind(other)),
    }
}

/// A `date` value: a `YYYY-MM-DD` string naming a calendar day, as days since 1970-01-01.
fn date(value: Option<&Value>) -> Result<Option<i32>, Misfit> {
    match present(value) {
        None => Ok(None),
        Some(Value::String(text)) => parse_date(text)
            .map(|day| Some(day.to_julian_day() - UNIX_EPOCH_JULIAN_DAY))
            .ok_or("a string that is not a YYYY-MM-DD date"),
        Some(other) => Err(kind(other)),
    }
}

/// `YYYY-MM-DD`, exactly: four-digit year, two-digit month and day, a day the month has.
fn parse_date(text: &str) -> Option<dual_core::time::Date> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes.get(range).filter(|b| b.iter().all(u8::is_ascii_digit))?;
        Some(())
    };
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    digits(0..4)?;
    digits(5..7)?;
    digits(8..10)?;
    let year = text[0..4].parse().ok()?;
    let month = dual_core::time::Month::try_from(text[5..7].parse::<u8>().ok()?).ok()?;
    let day = text[8..10].parse().ok()?;
    dual_core::time::Date::from_calendar_date(year, month, day).ok()
}

/// What a `Utf8` column holds for a value. `string`: strings as they are, numbers and booleans
/// as their JSON text (a column inferred from mixed scalars is `string`), but not arrays or objects
/// (only a `json` column holds those). `datetime`: strings, as they are. `json`: the JSON text of any
/// value.
fn text(column_type: ColumnType, value: Option<&Value>) -> Result<Option<Text<'_>>, Misfit> {
    let Some(value) = present(value) else {
        return Ok(None);
    };
    match (column_type, value) {
        (ColumnType::Json, value) => Ok(Some(Text::Json(value))),
        (_, Value::String(text)) => Ok(Some(Text::Verbatim(text))),
        (ColumnType::String, Value::Number(_) | Value::Bool(_)) => Ok(Some(Text::Json(value))),
        (_, other) => Err(kind(other)),
    }
}

/// The kind of a value that is of the wrong JSON type for its column.
fn kind(value: &Value) -> Misfit {
    match value {
        Value::Null => "a null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_fit_only_when_exact() {
        for (value, expected) in [
            (json!(3), Ok(Some(3))),
            (json!(-3), Ok(Some(-3))),
            (json!(3.0), Ok(Some(3))),
            (json!(i64::MIN), Ok(Some(i64::MIN))),
            (json!(i64::MAX), Ok(Some(i64::MAX))),
            (json!(-I64_BOUND), Ok(Some(i64::MIN))),
            (json!(null), Ok(None)),
            (json!(1.5), Err("a number with a fraction")),
            (json!(u64::MAX), Err("an integer beyond the range of Int64")),
            (json!(I64_BOUND), Err("an integer beyond the range of Int64")),
            (json!(1e300), Err("an integer beyond the range of Int64")),
            (json!("3"), Err("a string")),
            (json!(true), Err("a boolean")),
        ] {
            assert_eq!(integer(Some(&value)), expected, "{value}");
        }
        assert_eq!(integer(None), Ok(None));
    }

    #[test]
    fn numbers_fit_when_float64_holds_them() {
        assert_eq!(float(Some(&json!(1.5))), Ok(Some(1.5)));
        assert_eq!(float(Some(&json!(7))), Ok(Some(7.0)));
        assert_eq!(
            float(Some(&json!(1_u64 << 53))),
            Ok(Some(9_007_199_254_740_992.0))
        );
        let misfit = Err("an integer that Float64 cannot hold exactly");
        assert_eq!(float(Some(&json!((1_i64 << 53) + 1))), misfit);
        assert_eq!(float(Some(&json!(i64::MAX))), misfit);
        assert_eq!(float(Some(&json!(u64::MAX))), misfit);
        assert_eq!(float(Some(&json!("1.5"))), Err("a string"));
        assert!(float(Some(&json!("NaN"))).is_ok_and(|f| f.is_some_and(f64::is_nan)));
        assert_eq!(float(Some(&json!("Infinity"))), Ok(Some(f64::INFINITY)));
        assert_eq!(float(Some(&json!("-Infinity"))), Ok(Some(f64::NEG_INFINITY)));
        assert_eq!(float(Some(&json!("nan"))), Err("a string"));
    }

    #[test]
    fn dates_are_strict_calendar_days() {
        assert_eq!(date(Some(&json!("1970-01-01"))), Ok(Some(0)));
        assert_eq!(date(Some(&json!("1969-12-31"))), Ok(Some(-1)));
        assert_eq!(date(Some(&json!("2024-02-29"))), Ok(Some(19_782)));
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-1-01",
            "2024-01-01T00:00:00Z",
            "+024-01-01",
            "",
        ] {
            assert_eq!(
                date(Some(&json!(bad))),
                Err("a string that is not a YYYY-MM-DD date"),
                "{bad}"
            );
        }
        assert_eq!(date(Some(&json!(19_782))), Err("a number"));
    }

    #[test]
    fn text_columns_by_type() {
        let mut builder = ColumnBuilder::new(ColumnType::String);
        for value in [json!("a"), json!(1.5), json!(true)] {
            assert_eq!(builder.append(Some(&value)), Ok(()));
        }
        assert_eq!(builder.check(Some(&json!([1]))), Err("an array"));
        assert_eq!(
            ColumnBuilder::new(ColumnType::Datetime).check(Some(&json!(1))),
            Err("a number")
        );
        assert_eq!(
            ColumnBuilder::new(ColumnType::Json).check(Some(&json!("x"))),
            Ok(())
        );
        let strings = builder.finish();
        let strings = strings
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .map(|a| a.iter().flatten().collect::<Vec<_>>());
        assert_eq!(strings, Some(vec!["a", "1.5", "true"]));
    }
}
