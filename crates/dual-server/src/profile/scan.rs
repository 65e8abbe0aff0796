//! Reading a stored row's JSON object one key and value at a time, without building a map: what
//! the profile needs of each value is its JSON type, its number, or its text as a slice.

/// One value of a row, as the profile reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Scalar<'a> {
    Null,
    Bool(bool),
    /// A number that fits `i64` and was written without a fraction or exponent.
    Int(i64),
    /// Any other number (its JSON text, for showing it as written).
    Float(f64, &'a [u8]),
    /// A string: the bytes between its quotes, still escaped when `escaped`.
    Str {
        raw: &'a [u8],
        escaped: bool,
    },
    /// An array or object: its whole JSON text.
    Nested(&'a [u8]),
}

/// A row that is not one JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NotAnObject;

/// Calls `each` with every key (between its quotes, with whether it holds escapes) and value of
/// the JSON object `row`, in order. Whitespace between tokens is allowed; anything else that is
/// not JSON is [`NotAnObject`] (the values before it were already given to `each`).
pub(super) fn object<'a>(
    row: &'a [u8],
    mut each: impl FnMut(&'a [u8], bool, Scalar<'a>),
) -> Result<(), NotAnObject> {
    let mut at = skip_space(row, 0);
    if row.get(at) != Some(&b'{') {
        return Err(NotAnObject);
    }
    at = skip_space(row, at + 1);
    if row.get(at) == Some(&b'}') {
        return Ok(());
    }
    loop {
        if row.get(at) != Some(&b'"') {
            return Err(NotAnObject);
        }
        let (key, key_escaped, next) = string(row, at + 1)?;
        at = skip_space(row, next);
        if row.get(at) != Some(&b':') {
            return Err(NotAnObject);
        }
        at = skip_space(row, at + 1);
        let (value, next) = value(row, at)?;
        each(key, key_escaped, value);
        at = skip_space(row, next);
        match row.get(at) {
            Some(b',') => at = skip_space(row, at + 1),
            Some(b'}') => return Ok(()),
            _ => return Err(NotAnObject),
        }
    }
}

fn skip_space(row: &[u8], mut at: usize) -> usize {
    while matches!(row.get(at), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        at += 1;
    }
    at
}

/// The string whose text starts at `at` (just past its opening quote): its raw bytes, whether they
/// hold an escape, and the position past its closing quote.
fn string(row: &[u8], start: usize) -> Result<(&[u8], bool, usize), NotAnObject> {
    let mut escaped = false;
    let mut at = start;
    loop {
        let rest = row.get(at..).ok_or(NotAnObject)?;
        let found = rest
            .iter()
            .position(|b| *b == b'"' || *b == b'\\')
            .ok_or(NotAnObject)?;
        at += found;
        if row[at] == b'"' {
            return Ok((&row[start..at], escaped, at + 1));
        }
        // A backslash: it and the character it escapes (a `\uXXXX`'s digits hold no quote).
        escaped = true;
        at += 2;
    }
}

/// The value starting at `at` and the position past it.
fn value(row: &[u8], at: usize) -> Result<(Scalar<'_>, usize), NotAnObject> {
    match row.get(at) {
        Some(b'"') => {
            let (raw, escaped, next) = string(row, at + 1)?;
            Ok((Scalar::Str { raw, escaped }, next))
        }
        Some(b'n') => literal(row, at, b"null", Scalar::Null),
        Some(b't') => literal(row, at, b"true", Scalar::Bool(true)),
        Some(b'f') => literal(row, at, b"false", Scalar::Bool(false)),
        Some(b'{' | b'[') => {
            let end = nested_end(row, at)?;
            Ok((Scalar::Nested(&row[at..end]), end))
        }
        Some(b'-' | b'0'..=b'9') => number(row, at),
        _ => Err(NotAnObject),
    }
}

fn literal<'a>(
    row: &'a [u8],
    at: usize,
    word: &[u8],
    value: Scalar<'a>,
) -> Result<(Scalar<'a>, usize), NotAnObject> {
    let end = at + word.len();
    if row.get(at..end) == Some(word) {
        Ok((value, end))
    } else {
        Err(NotAnObject)
    }
}

fn number(row: &[u8], start: usize) -> Result<(Scalar<'_>, usize), NotAnObject> {
    let mut at = start;
    let mut integral = true;
    while let Some(b) = row.get(at) {
        match b {
            b'0'..=b'9' | b'-' | b'+' => {}
            b'.' | b'e' | b'E' => integral = false,
            _ => break,
        }
        at += 1;
    }
    let raw = &row[start..at];
    if integral && let Some(n) = parse_i64(raw) {
        return Ok((Scalar::Int(n), at));
    }
    // Digits, signs, dots and exponents are ASCII.
    let text = std::str::from_utf8(raw).map_err(|_| NotAnObject)?;
    let n: f64 = text.parse().map_err(|_| NotAnObject)?;
    Ok((Scalar::Float(n, raw), at))
}

/// `raw` as an `i64`: an optional minus and digits, within range.
fn parse_i64(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n: i64 = 0;
    for d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let digit = i64::from(d - b'0');
        n = n.checked_mul(10)?;
        n = if negative {
            n.checked_sub(digit)?
        } else {
            n.checked_add(digit)?
        };
    }
    Some(n)
}

/// The position past the array or object that starts at `at`.
fn nested_end(row: &[u8], start: usize) -> Result<usize, NotAnObject> {
    let mut depth = 0usize;
    let mut at = start;
    while let Some(b) = row.get(at) {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1).ok_or(NotAnObject)?;
                if depth == 0 {
                    return Ok(at + 1);
                }
            }
            b'"' => {
                let (_, _, next) = string(row, at + 1)?;
                at = next;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    Err(NotAnObject)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(row: &str) -> Result<Vec<(String, Scalar<'_>)>, NotAnObject> {
        let mut out = Vec::new();
        object(row.as_bytes(), |key, _, value| {
            out.push((String::from_utf8_lossy(key).into_owned(), value));
        })?;
        Ok(out)
    }

    #[test]
    fn every_kind_of_value_is_read() {
        let row = r#"{"a":null,"b":true,"c":false,"d":-42,"e":1.5e3,"f":"x\"y","g":{"h":[1,"]}"]},"i":"","j":123456789012345678901}"#;
        let values = scan(row).unwrap_or_default();
        let kinds: Vec<_> = values.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(kinds[0], ("a", Scalar::Null));
        assert_eq!(kinds[1], ("b", Scalar::Bool(true)));
        assert_eq!(kinds[2], ("c", Scalar::Bool(false)));
        assert_eq!(kinds[3], ("d", Scalar::Int(-42)));
        assert_eq!(kinds[4], ("e", Scalar::Float(1500.0, b"1.5e3")));
        assert_eq!(
            kinds[5],
            (
                "f",
                Scalar::Str {
                    raw: br#"x\"y"#,
                    escaped: true
                }
            )
        );
        assert_eq!(kinds[6], ("g", Scalar::Nested(br#"{"h":[1,"]}"]}"#)));
        assert_eq!(
            kinds[7],
            (
                "i",
                Scalar::Str {
                    raw: b"",
                    escaped: false
                }
            )
        );
        assert!(matches!(kinds[8], ("j", Scalar::Float(..))), "past i64: a float");
        assert_eq!(kinds.len(), 9);
    }

    #[test]
    fn whitespace_and_empty_objects_are_fine() {
        assert_eq!(scan("{ }").map(|v| v.len()), Ok(0));
        let values = scan(" { \"a\" : 1 , \"b\" :\n\"x\" } ").unwrap_or_default();
        assert_eq!(values.len(), 2);
        assert_eq!(values[0].1, Scalar::Int(1));
    }

    #[test]
    fn what_is_not_an_object_is_refused_without_a_panic() {
        for bad in [
            "",
            "[1]",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":tru}",
            "{\"a\":\"x",
            "{\"a\":[1,2}",
            "{\"a\":1 \"b\":2}",
            "{\"a\":\"\\",
            "{\"a\":-}",
            "{\"a\":]}",
        ] {
            assert_eq!(scan(bad).map(|_| ()), Err(NotAnObject), "{bad:?}");
        }
    }

    #[test]
    fn integers_at_the_edges_of_i64() {
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b"1-2"), None);
    }
}
