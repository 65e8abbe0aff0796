//! PostgreSQL's binary result values as JSON (the type mapping in the crate docs). [`Raw`] reads any
//! column's bytes, so a row never fails on a type the crate does not name; [`value`] decodes them by
//! the column's type.

use std::error::Error;
use std::fmt::Write as _;

use base64::Engine as _;
use dual_core::ColumnType;
use dual_server::JsonRowWriter;
use serde_json::{Number, Value};
use time::{Date, Duration, PrimitiveDateTime, Time};
use tokio_postgres::types::{FromSql, Kind, Type};

use crate::as_text::is_text;
use crate::options::NumericMode;

/// What a binary value (`bytea`) starts with, before its bytes in standard base64 (padded):
/// `"base64:3q2+7w=="`. The same in every executor (docs/TYPES.md).
pub(crate) const BINARY_MARKER: &str = "base64:";

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

/// A decoded value, before it is written: borrowed from the column's bytes where it can be, the
/// text in the caller's scratch buffer where it was written out.
pub(crate) enum Cell<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// A finite number.
    Float(f64),
    Str(&'a str),
    /// A string: the text in the scratch buffer.
    Scratch,
    Json(Value),
}

/// Decodes a value of type `ty` (`None`: NULL), writing any text it makes into `scratch`.
pub(crate) fn cell<'a>(
    ty: &Type,
    raw: Option<&'a [u8]>,
    numeric: NumericMode,
    scratch: &mut String,
) -> Result<Cell<'a>, BoxError> {
    let Some(buf) = raw else {
        return Ok(Cell::Null);
    };
    scratch.clear();
    Ok(match *ty {
        Type::BOOL => Cell::Bool(*buf.first().ok_or("empty bool")? != 0),
        Type::INT2 => Cell::Int(i64::from(i16::from_be_bytes(fixed(buf)?))),
        Type::INT4 => Cell::Int(i64::from(i32::from_be_bytes(fixed(buf)?))),
        Type::INT8 => Cell::Int(i64::from_be_bytes(fixed(buf)?)),
        Type::OID => Cell::Int(i64::from(u32::from_be_bytes(fixed(buf)?))),
        Type::FLOAT4 => float(f64::from(f32::from_be_bytes(fixed(buf)?))),
        Type::FLOAT8 => float(f64::from_be_bytes(fixed(buf)?)),
        Type::NUMERIC => {
            decimal(buf, scratch)?;
            numeric_cell(scratch, numeric)
        }
        Type::BYTEA => {
            scratch.push_str(BINARY_MARKER);
            base64::engine::general_purpose::STANDARD.encode_string(buf, scratch);
            Cell::Scratch
        }
        // `pg_sleep(…)` and other functions that return nothing: no value.
        Type::VOID => Cell::Null,
        Type::CHAR => {
            single_byte_char(buf, scratch)?;
            Cell::Scratch
        }
        Type::DATE => {
            date(i32::from_be_bytes(fixed(buf)?), scratch)?;
            Cell::Scratch
        }
        Type::TIME => {
            time_of_day(i64::from_be_bytes(fixed(buf)?), scratch)?;
            Cell::Scratch
        }
        Type::TIMETZ => {
            let (micros, zone) = buf.split_at_checked(8).ok_or("short timetz")?;
            let west = i32::from_be_bytes(fixed(zone)?);
            time_of_day(i64::from_be_bytes(fixed(micros)?), scratch)?;
            offset(-west, scratch);
            Cell::Scratch
        }
        Type::TIMESTAMP => {
            timestamp(i64::from_be_bytes(fixed(buf)?), "", scratch)?;
            Cell::Scratch
        }
        Type::TIMESTAMPTZ => {
            timestamp(i64::from_be_bytes(fixed(buf)?), "Z", scratch)?;
            Cell::Scratch
        }
        Type::INTERVAL => {
            interval(buf, scratch)?;
            Cell::Scratch
        }
        Type::UUID => {
            uuid(buf, scratch)?;
            Cell::Scratch
        }
        Type::JSON => Cell::Json(serde_json::from_slice(buf)?),
        Type::JSONB => match buf.split_first() {
            Some((1, json)) => Cell::Json(serde_json::from_slice(json)?),
            _ => return Err("unknown jsonb version".into()),
        },
        _ => match ty.kind() {
            Kind::Array(element) => Cell::Json(array(element, buf, numeric)?),
            // text, varchar, bpchar, name, citext, enums: their bytes are their text.
            _ if is_text(ty) => Cell::Str(std::str::from_utf8(buf)?),
            // The executor asks for any other type as text (`as_text`): never opaque bytes.
            _ => return Err(format!("no decoder for type {ty}").into()),
        },
    })
}

/// Writes a value of type `ty` (`None`: NULL) as the next value of `out`.
pub(crate) fn write(
    out: &mut JsonRowWriter,
    ty: &Type,
    raw: Option<&[u8]>,
    numeric: NumericMode,
    scratch: &mut String,
) -> Result<(), BoxError> {
    match cell(ty, raw, numeric, scratch)? {
        Cell::Null => out.null(),
        Cell::Bool(b) => out.bool(b),
        Cell::Int(i) => out.i64(i),
        Cell::Float(f) => out.f64(f),
        Cell::Str(text) => out.str(text),
        Cell::Scratch => out.str(scratch),
        Cell::Json(value) => out.value(&value),
    }
    Ok(())
}

/// The JSON of a value of type `ty` (`None`: NULL): live pages' values and an array's elements.
pub(crate) fn value(ty: &Type, raw: Option<&[u8]>, numeric: NumericMode) -> Result<Value, BoxError> {
    let mut scratch = String::new();
    Ok(match cell(ty, raw, numeric, &mut scratch)? {
        Cell::Null => Value::Null,
        Cell::Bool(b) => Value::Bool(b),
        Cell::Int(i) => Value::from(i),
        Cell::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        Cell::Str(text) => Value::String(text.to_owned()),
        Cell::Scratch => Value::String(scratch),
        Cell::Json(value) => value,
    })
}

fn fixed<const N: usize>(buf: &[u8]) -> Result<[u8; N], BoxError> {
    buf.try_into()
        .map_err(|_| format!("expected {N} bytes, got {}", buf.len()).into())
}

/// A float as a JSON number; NaN and the infinities (which JSON lacks) as the strings PostgreSQL
/// writes for them.
fn float(f: f64) -> Cell<'static> {
    match f {
        f if f.is_finite() => Cell::Float(f),
        f if f.is_nan() => Cell::Str("NaN"),
        f if f > 0.0 => Cell::Str("Infinity"),
        _ => Cell::Str("-Infinity"),
    }
}

/// `n` in decimal, zero-padded to `width` digits.
fn pad(out: &mut String, n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in digits.len() - at..width {
        out.push('0');
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// A `numeric` in decimal, exactly: its base-10000 digits written out to its display scale.
fn decimal(buf: &[u8], text: &mut String) -> Result<(), BoxError> {
    let word = |at: usize| -> Result<u16, BoxError> {
        Ok(u16::from_be_bytes(fixed(
            buf.get(at..at + 2).ok_or("short numeric")?,
        )?))
    };
    let ndigits = usize::from(word(0)?);
    let weight = i32::from(word(2)?.cast_signed());
    let sign = word(4)?;
    let dscale = usize::from(word(6)?);
    let special = match sign {
        0xC000 => Some("NaN"),
        0xD000 => Some("Infinity"),
        0xF000 => Some("-Infinity"),
        _ => None,
    };
    if let Some(special) = special {
        text.push_str(special);
        return Ok(());
    }
    if buf.len() < 8 + 2 * ndigits {
        return Err("short numeric".into());
    }
    let digit = |i: i32| -> u16 {
        usize::try_from(i)
            .ok()
            .filter(|&i| i < ndigits)
            .and_then(|i| word(8 + 2 * i).ok())
            .unwrap_or(0)
    };
    if sign == 0x4000 {
        text.push('-');
    }
    if weight < 0 {
        text.push('0');
    } else {
        pad(text, u64::from(digit(0)), 1);
        for i in 1..=weight {
            pad(text, u64::from(digit(i)), 4);
        }
    }
    if dscale > 0 {
        text.push('.');
        let point = text.len();
        let mut i = weight + 1;
        while text.len() - point < dscale {
            pad(text, u64::from(digit(i)), 4);
            i += 1;
        }
        text.truncate(point + dscale);
    }
    Ok(())
}

/// A `numeric`'s text (in `text`) as the value `mode` asks for.
fn numeric_cell(text: &str, mode: NumericMode) -> Cell<'static> {
    match mode {
        NumericMode::Number => {
            if let Ok(i) = text.parse::<i64>() {
                return Cell::Int(i);
            }
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Cell::Float(f),
                _ => Cell::Scratch,
            }
        }
        _ => Cell::Scratch,
    }
}

const EPOCH: Date = time::macros::date!(2000 - 01 - 01);

fn date(days: i32, out: &mut String) -> Result<(), BoxError> {
    match days {
        i32::MAX => out.push_str("infinity"),
        i32::MIN => out.push_str("-infinity"),
        _ => {
            let date = EPOCH
                .checked_add(Duration::days(i64::from(days)))
                .ok_or("date out of range")?;
            ymd(date, out);
        }
    }
    Ok(())
}

fn ymd(date: Date, out: &mut String) {
    match u64::try_from(date.year()) {
        Ok(year) if year <= 9999 => pad(out, year, 4),
        _ => {
            let _ = write!(out, "{:04}", date.year());
        }
    }
    out.push('-');
    pad(out, u64::from(u8::from(date.month())), 2);
    out.push('-');
    pad(out, u64::from(date.day()), 2);
}

/// `HH:MM:SS` and the microseconds, if any, without trailing zeros.
fn clock(hours: u64, minutes: u64, seconds: u64, micros: u64, out: &mut String) {
    pad(out, hours, 2);
    out.push(':');
    pad(out, minutes, 2);
    out.push(':');
    pad(out, seconds, 2);
    if micros > 0 {
        out.push('.');
        pad(out, micros, 6);
        while out.ends_with('0') {
            out.pop();
        }
    }
}

/// A `time` (microseconds since midnight; 24:00:00 is valid in PostgreSQL).
fn time_of_day(micros: i64, out: &mut String) -> Result<(), BoxError> {
    let micros = u64::try_from(micros)
        .ok()
        .filter(|&m| m <= 86_400_000_000)
        .ok_or("time out of range")?;
    let seconds = micros / 1_000_000;
    clock(
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        micros % 1_000_000,
        out,
    );
    Ok(())
}

/// `±HH:MM` of an offset east of UTC in seconds.
fn offset(east: i32, out: &mut String) {
    out.push(if east < 0 { '-' } else { '+' });
    let east = u64::from(east.unsigned_abs());
    pad(out, east / 3600, 2);
    out.push(':');
    pad(out, east / 60 % 60, 2);
    if !east.is_multiple_of(60) {
        out.push(':');
        pad(out, east % 60, 2);
    }
}

/// A timestamp as RFC 3339 (`suffix` "Z" for `timestamptz`, sent in UTC; none for `timestamp`).
fn timestamp(micros: i64, suffix: &str, out: &mut String) -> Result<(), BoxError> {
    match micros {
        i64::MAX => out.push_str("infinity"),
        i64::MIN => out.push_str("-infinity"),
        _ => {
            let at = PrimitiveDateTime::new(EPOCH, Time::MIDNIGHT)
                .checked_add(Duration::microseconds(micros))
                .ok_or("timestamp out of range")?;
            ymd(at.date(), out);
            out.push('T');
            let time: Time = at.time();
            clock(
                u64::from(time.hour()),
                u64::from(time.minute()),
                u64::from(time.second()),
                u64::from(time.microsecond()),
                out,
            );
            out.push_str(suffix);
        }
    }
    Ok(())
}

/// An `interval` as ISO 8601 (`P1Y2M3DT4H5M6.5S`; `PT0S` when zero), each part with its own sign as
/// PostgreSQL keeps them apart.
fn interval(buf: &[u8], text: &mut String) -> Result<(), BoxError> {
    let (micros, rest) = buf.split_at_checked(8).ok_or("short interval")?;
    let (days, months) = rest.split_at_checked(4).ok_or("short interval")?;
    let micros = i64::from_be_bytes(fixed(micros)?);
    let days = i32::from_be_bytes(fixed(days)?);
    let months = i32::from_be_bytes(fixed(months)?);
    text.push('P');
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
                text.push('.');
                pad(text, fraction, 6);
                while text.ends_with('0') {
                    text.pop();
                }
            }
            text.push('S');
        }
    }
    if text == "P" {
        text.push_str("T0S");
    }
    Ok(())
}

/// A `"char"` (one byte, as in `pg_class.relkind`): ASCII as itself, the zero byte as nothing, any
/// other byte as PostgreSQL writes it (`\351`).
fn single_byte_char(buf: &[u8], out: &mut String) -> Result<(), BoxError> {
    let [byte] = fixed::<1>(buf)?;
    match byte {
        0 => {}
        1..=0x7f => out.push(char::from(byte)),
        _ => {
            let _ = write!(out, "\\{byte:03o}");
        }
    }
    Ok(())
}

fn uuid(buf: &[u8], out: &mut String) -> Result<(), BoxError> {
    let bytes: [u8; 16] = fixed(buf)?;
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{b:02x}");
    }
    Ok(())
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

    /// The text `f` writes.
    fn written(f: impl FnOnce(&mut String)) -> String {
        let mut out = String::new();
        f(&mut out);
        out
    }

    /// The text `f` writes, `None` for its error.
    fn text(f: impl FnOnce(&mut String) -> Result<(), BoxError>) -> Option<String> {
        let mut out = String::new();
        f(&mut out).ok().map(|()| out)
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
            assert_eq!(text(|out| decimal(&buf, out)).as_deref(), Some(want));
        }
        assert!(
            text(|out| decimal(&numeric(3, 0, 0, 0, &[1]), out)).is_none(),
            "digits missing"
        );
        let as_number = |digits: &[u16], dscale| {
            value(
                &Type::NUMERIC,
                Some(&numeric(2, 0, 0, dscale, digits)),
                NumericMode::Number,
            )
            .ok()
        };
        assert_eq!(as_number(&[12, 5000], 2), Some(serde_json::json!(12.5)));
        assert_eq!(as_number(&[12, 0], 0), Some(serde_json::json!(12)));
    }

    #[test]
    fn times_and_intervals_are_iso() {
        assert_eq!(text(|out| date(0, out)).as_deref(), Some("2000-01-01"));
        assert_eq!(text(|out| date(-1, out)).as_deref(), Some("1999-12-31"));
        let bc = Date::from_calendar_date(-1, time::Month::January, 1).ok();
        assert_eq!(
            bc.map(|d| Some(written(|out| ymd(d, out)))),
            Some(Some("-001-01-01".to_owned()))
        );
        assert_eq!(
            text(|out| timestamp(1_500_000, "Z", out)).as_deref(),
            Some("2000-01-01T00:00:01.5Z")
        );
        assert_eq!(
            text(|out| timestamp(-1, "", out)).as_deref(),
            Some("1999-12-31T23:59:59.999999")
        );
        assert_eq!(
            text(|out| time_of_day(3_723_000_001, out)).as_deref(),
            Some("01:02:03.000001")
        );
        assert!(text(|out| time_of_day(-1, out)).is_none());
        assert_eq!(
            Some(written(|out| offset(-5 * 3600, out))).as_deref(),
            Some("-05:00")
        );
        assert_eq!(
            Some(written(|out| offset(3600 + 30, out))).as_deref(),
            Some("+01:00:30")
        );
        let mut buf = Vec::new();
        buf.extend_from_slice(&(-3_600_000_000i64 - 500_000).to_be_bytes());
        buf.extend_from_slice(&3i32.to_be_bytes());
        buf.extend_from_slice(&14i32.to_be_bytes());
        assert_eq!(
            text(|out| interval(&buf, out)).as_deref(),
            Some("P1Y2M3DT-1H-0.5S")
        );
        let zero = [0u8; 16];
        assert_eq!(text(|out| interval(&zero, out)).as_deref(), Some("PT0S"));
        assert_eq!(text(|out| single_byte_char(b"r", out)).as_deref(), Some("r"));
        assert_eq!(
            text(|out| single_byte_char(&[0o351], out)).as_deref(),
            Some("\\351")
        );
        assert_eq!(text(|out| single_byte_char(&[0], out)).as_deref(), Some(""));
        let id: Vec<u8> = (0u8..16).collect();
        assert_eq!(
            text(|out| uuid(&id, out)).as_deref(),
            Some("00010203-0405-0607-0809-0a0b0c0d0e0f")
        );
    }

    #[test]
    fn pad_writes_at_least_width_digits() {
        let mut out = String::new();
        pad(&mut out, 7, 3);
        pad(&mut out, 12_345, 2);
        pad(&mut out, 0, 1);
        pad(&mut out, u64::MAX, 1);
        assert_eq!(out, "00712345018446744073709551615");
    }
}
