//! PostgreSQL's binary result values as JSON (the type mapping in the crate docs). [`Raw`] reads any
//! column's bytes, so a row never fails on a type the crate does not name; [`value`] decodes them by
//! the column's type.

use std::error::Error;
use std::fmt::Write as _;

use base64::Engine as _;
use dual_core::ColumnType;
use serde_json::{Number, Value};
use time::{Date, Duration, PrimitiveDateTime, Time};
use tokio_postgres::types::{FromSql, Kind, Type};

use crate::options::NumericMode;

pub(crate) type BoxError = Box<dyn Error + Sync + Send>;

/// A column's value as sent: its binary bytes, or `None` for NULL.
pub(crate) struct Raw<'a>(pub(crate) Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Self(Some(raw)))
    }

    fn from_sql_null(_ty: &Type) -> Result<Self, BoxError> {
        Ok(Self(None))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

/// The column type of values of `ty`, as [`value`] writes them.
pub(crate) fn column_type(ty: &Type, numeric: NumericMode) -> ColumnType {
    match *ty {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => ColumnType::Integer,
        Type::FLOAT4 | Type::FLOAT8 => ColumnType::Number,
        Type::NUMERIC => match numeric {
            NumericMode::Number => ColumnType::Number,
            // Exact strings, also for a mode of a later release.
            _ => ColumnType::String,
        },
        Type::BOOL => ColumnType::Boolean,
        Type::DATE => ColumnType::Date,
        Type::TIMESTAMP | Type::TIMESTAMPTZ => ColumnType::Datetime,
        Type::JSON | Type::JSONB => ColumnType::Json,
        _ if matches!(ty.kind(), Kind::Array(_)) => ColumnType::Json,
        _ => ColumnType::String,
    }
}

/// The JSON of a value of type `ty` (`None`: NULL).
pub(crate) fn value(ty: &Type, raw: Option<&[u8]>, numeric: NumericMode) -> Result<Value, BoxError> {
    let Some(buf) = raw else {
        return Ok(Value::Null);
    };
    Ok(match *ty {
        Type::BOOL => Value::Bool(*buf.first().ok_or("empty bool")? != 0),
        Type::INT2 => Value::from(i16::from_be_bytes(fixed(buf)?)),
        Type::INT4 => Value::from(i32::from_be_bytes(fixed(buf)?)),
        Type::INT8 => Value::from(i64::from_be_bytes(fixed(buf)?)),
        Type::OID => Value::from(u32::from_be_bytes(fixed(buf)?)),
        Type::FLOAT4 => float(f64::from(f32::from_be_bytes(fixed(buf)?))),
        Type::FLOAT8 => float(f64::from_be_bytes(fixed(buf)?)),
        Type::NUMERIC => numeric_value(&decimal(buf)?, numeric),
        Type::BYTEA => Value::String(base64::engine::general_purpose::STANDARD.encode(buf)),
        Type::DATE => Value::String(date(i32::from_be_bytes(fixed(buf)?))?),
        Type::TIME => Value::String(time_of_day(i64::from_be_bytes(fixed(buf)?))?),
        Type::TIMETZ => {
            let (micros, zone) = buf.split_at_checked(8).ok_or("short timetz")?;
            let west = i32::from_be_bytes(fixed(zone)?);
            Value::String(format!(
                "{}{}",
                time_of_day(i64::from_be_bytes(fixed(micros)?))?,
                offset(-west)
            ))
        }
        Type::TIMESTAMP => Value::String(timestamp(i64::from_be_bytes(fixed(buf)?), "")?),
        Type::TIMESTAMPTZ => Value::String(timestamp(i64::from_be_bytes(fixed(buf)?), "Z")?),
        Type::INTERVAL => Value::String(interval(buf)?),
        Type::UUID => Value::String(uuid(buf)?),
        Type::JSON => serde_json::from_slice(buf)?,
        Type::JSONB => match buf.split_first() {
            Some((1, json)) => serde_json::from_slice(json)?,
            _ => return Err("unknown jsonb version".into()),
        },
        _ => match ty.kind() {
            Kind::Array(element) => array(element, buf, numeric)?,
            // text, varchar, bpchar, name, "char", citext, enums, xml: their bytes are their text.
            _ => match std::str::from_utf8(buf) {
                Ok(text) => Value::String(text.to_owned()),
                Err(_) => Value::String(base64::engine::general_purpose::STANDARD.encode(buf)),
            },
        },
    })
}

fn fixed<const N: usize>(buf: &[u8]) -> Result<[u8; N], BoxError> {
    buf.try_into()
        .map_err(|_| format!("expected {N} bytes, got {}", buf.len()).into())
}

/// A float as a JSON number; NaN and the infinities (which JSON lacks) as the strings PostgreSQL
/// writes for them.
fn float(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String("NaN".to_owned()),
        None if f > 0.0 => Value::String("Infinity".to_owned()),
        None => Value::String("-Infinity".to_owned()),
    }
}

/// A `numeric` in decimal, exactly: its base-10000 digits written out to its display scale.
fn decimal(buf: &[u8]) -> Result<String, BoxError> {
    let word = |at: usize| -> Result<u16, BoxError> {
        Ok(u16::from_be_bytes(fixed(
            buf.get(at..at + 2).ok_or("short numeric")?,
        )?))
    };
    let ndigits = usize::from(word(0)?);
    let weight = i32::from(word(2)?.cast_signed());
    let sign = word(4)?;
    let dscale = usize::from(word(6)?);
    match sign {
        0xC000 => return Ok("NaN".to_owned()),
        0xD000 => return Ok("Infinity".to_owned()),
        0xF000 => return Ok("-Infinity".to_owned()),
        _ => {}
    }
    let digits = (0..ndigits)
        .map(|i| word(8 + 2 * i))
        .collect::<Result<Vec<u16>, _>>()?;
    let digit = |i: i32| -> u16 {
        usize::try_from(i)
            .ok()
            .and_then(|i| digits.get(i))
            .copied()
            .unwrap_or(0)
    };
    let mut text = String::new();
    if sign == 0x4000 {
        text.push('-');
    }
    if weight < 0 {
        text.push('0');
    } else {
        let _ = write!(text, "{}", digit(0));
        for i in 1..=weight {
            let _ = write!(text, "{:04}", digit(i));
        }
    }
    if dscale > 0 {
        let mut fraction = String::with_capacity(dscale + 4);
        let mut i = weight + 1;
        while fraction.len() < dscale {
            let _ = write!(fraction, "{:04}", digit(i));
            i += 1;
        }
        fraction.truncate(dscale);
        text.push('.');
        text.push_str(&fraction);
    }
    Ok(text)
}

fn numeric_value(text: &str, mode: NumericMode) -> Value {
    match mode {
        NumericMode::Number => {
            if let Ok(i) = text.parse::<i64>() {
                return Value::from(i);
            }
            match text.parse::<f64>().ok().and_then(Number::from_f64) {
                Some(n) => Value::Number(n),
                None => Value::String(text.to_owned()),
            }
        }
        _ => Value::String(text.to_owned()),
    }
}

const EPOCH: Date = time::macros::date!(2000 - 01 - 01);

fn date(days: i32) -> Result<String, BoxError> {
    Ok(match days {
        i32::MAX => "infinity".to_owned(),
        i32::MIN => "-infinity".to_owned(),
        _ => {
            let date = EPOCH
                .checked_add(Duration::days(i64::from(days)))
                .ok_or("date out of range")?;
            ymd(date)
        }
    })
}

fn ymd(date: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

fn hms(time: Time) -> String {
    clock(
        i64::from(time.hour()),
        i64::from(time.minute()),
        i64::from(time.second()),
        i64::from(time.microsecond()),
    )
}

/// `HH:MM:SS` and the microseconds, if any, without trailing zeros.
fn clock(hours: i64, minutes: i64, seconds: i64, micros: i64) -> String {
    let mut text = format!("{hours:02}:{minutes:02}:{seconds:02}");
    if micros > 0 {
        let fraction = format!("{micros:06}");
        let _ = write!(text, ".{}", fraction.trim_end_matches('0'));
    }
    text
}

/// A `time` (microseconds since midnight; 24:00:00 is valid in PostgreSQL).
fn time_of_day(micros: i64) -> Result<String, BoxError> {
    if !(0..=86_400_000_000).contains(&micros) {
        return Err("time out of range".into());
    }
    let seconds = micros / 1_000_000;
    Ok(clock(
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        micros % 1_000_000,
    ))
}

/// `±HH:MM` of an offset east of UTC in seconds.
fn offset(east: i32) -> String {
    let sign = if east < 0 { '-' } else { '+' };
    let east = east.unsigned_abs();
    let mut text = format!("{sign}{:02}:{:02}", east / 3600, east / 60 % 60);
    if !east.is_multiple_of(60) {
        let _ = write!(text, ":{:02}", east % 60);
    }
    text
}

/// A timestamp as RFC 3339 (`suffix` "Z" for `timestamptz`, sent in UTC; none for `timestamp`).
fn timestamp(micros: i64, suffix: &str) -> Result<String, BoxError> {
    Ok(match micros {
        i64::MAX => "infinity".to_owned(),
        i64::MIN => "-infinity".to_owned(),
        _ => {
            let at = PrimitiveDateTime::new(EPOCH, Time::MIDNIGHT)
                .checked_add(Duration::microseconds(micros))
                .ok_or("timestamp out of range")?;
            format!("{}T{}{suffix}", ymd(at.date()), hms(at.time()))
        }
    })
}

/// An `interval` as ISO 8601 (`P1Y2M3DT4H5M6.5S`; `PT0S` when zero), each part with its own sign as
/// PostgreSQL keeps them apart.
fn interval(buf: &[u8]) -> Result<String, BoxError> {
    let (micros, rest) = buf.split_at_checked(8).ok_or("short interval")?;
    let (days, months) = rest.split_at_checked(4).ok_or("short interval")?;
    let micros = i64::from_be_bytes(fixed(micros)?);
    let days = i32::from_be_bytes(fixed(days)?);
    let months = i32::from_be_bytes(fixed(months)?);
    let mut text = String::from("P");
    let (years, months) = (months / 12, months % 12);
    for (n, unit) in [(years, 'Y'), (months, 'M'), (days, 'D')] {
        if n != 0 {
            let _ = write!(text, "{n}{unit}");
        }
    }
    if micros != 0 {
        text.push('T');
        let sign = if micros < 0 { "-" } else { "" };
        let abs = micros.unsigned_abs();
        let (hours, minutes) = (abs / 3_600_000_000, abs / 60_000_000 % 60);
        let (seconds, fraction) = (abs / 1_000_000 % 60, abs % 1_000_000);
        if hours != 0 {
            let _ = write!(text, "{sign}{hours}H");
        }
        if minutes != 0 {
            let _ = write!(text, "{sign}{minutes}M");
        }
        if seconds != 0 || fraction != 0 {
            let _ = write!(text, "{sign}{seconds}");
            if fraction != 0 {
                let _ = write!(text, ".{}", format!("{fraction:06}").trim_end_matches('0'));
            }
            text.push('S');
        }
    }
    if text == "P" {
        text.push_str("T0S");
    }
    Ok(text)
}

fn uuid(buf: &[u8]) -> Result<String, BoxError> {
    let bytes: [u8; 16] = fixed(buf)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

/// An array (of any dimensions) as nested JSON arrays of its elements' JSON.
fn array(element: &Type, buf: &[u8], numeric: NumericMode) -> Result<Value, BoxError> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], BoxError> {
        let slice = buf.get(at..at + n).ok_or("short array")?;
        at += n;
        Ok(slice)
    };
    let ndim = usize::try_from(i32::from_be_bytes(fixed(take(4)?)?)).map_err(|_| "bad array")?;
    let _has_nulls = take(4)?;
    let _element_oid = take(4)?;
    let mut dims = Vec::with_capacity(ndim);
    for _ in 0..ndim {
        dims.push(usize::try_from(i32::from_be_bytes(fixed(take(4)?)?)).map_err(|_| "bad array")?);
        let _lower_bound = take(4)?;
    }
    let count: usize = if ndim == 0 { 0 } else { dims.iter().product() };
    let mut values = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let len = i32::from_be_bytes(fixed(take(4)?)?);
        let raw = match usize::try_from(len) {
            Ok(len) => Some(take(len)?),
            Err(_) => None,
        };
        values.push(value(element, raw, numeric)?);
    }
    Ok(nest(&dims, &mut values.into_iter()))
}

fn nest(dims: &[usize], values: &mut impl Iterator<Item = Value>) -> Value {
    match dims.split_first() {
        None => Value::Array(Vec::new()),
        Some((&len, [])) => Value::Array(values.take(len).collect()),
        Some((&len, rest)) => Value::Array((0..len).map(|_| nest(rest, values)).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut buf = Vec::new();
        for word in [ndigits, weight.cast_unsigned(), sign, dscale] {
            buf.extend_from_slice(&word.to_be_bytes());
        }
        for d in digits {
            buf.extend_from_slice(&d.to_be_bytes());
        }
        buf
    }

    #[test]
    fn numerics_are_exact() {
        let cases = [
            (numeric(2, 1, 0, 2, &[12, 3456]), "123456.00"),
            (numeric(3, 0, 0x4000, 5, &[1, 2345, 6000]), "-1.23456"),
            (numeric(1, -2, 0, 6, &[1200]), "0.000012"),
            (numeric(0, 0, 0, 0, &[]), "0"),
            (numeric(1, 2, 0, 0, &[9]), "900000000"),
            (numeric(0, 0, 0xC000, 0, &[]), "NaN"),
        ];
        for (buf, want) in cases {
            assert_eq!(decimal(&buf).ok().as_deref(), Some(want));
        }
        assert_eq!(
            numeric_value("12.50", NumericMode::Number),
            serde_json::json!(12.5)
        );
        assert_eq!(numeric_value("12", NumericMode::Number), serde_json::json!(12));
    }

    #[test]
    fn times_and_intervals_are_iso() {
        assert_eq!(date(0).ok().as_deref(), Some("2000-01-01"));
        assert_eq!(date(-1).ok().as_deref(), Some("1999-12-31"));
        assert_eq!(
            timestamp(1_500_000, "Z").ok().as_deref(),
            Some("2000-01-01T00:00:01.5Z")
        );
        assert_eq!(
            time_of_day(3_723_000_001).ok().as_deref(),
            Some("01:02:03.000001")
        );
        assert_eq!(offset(-5 * 3600), "-05:00");
        let mut buf = Vec::new();
        buf.extend_from_slice(&(-3_600_000_000i64 - 500_000).to_be_bytes());
        buf.extend_from_slice(&3i32.to_be_bytes());
        buf.extend_from_slice(&14i32.to_be_bytes());
        assert_eq!(interval(&buf).ok().as_deref(), Some("P1Y2M3DT-1H-0.5S"));
        let zero = [0u8; 16];
        assert_eq!(interval(&zero).ok().as_deref(), Some("PT0S"));
    }
}
