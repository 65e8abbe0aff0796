//! The query string: percent-decoding and the export's parameters, `sort`, `offset` and `limit`.

use dual_core::{
    Sort,
    page::{RequestError, parse_sort_param},
    range::RowRange,
};

use crate::rejection::Rejection;

/// Checks that a route without parameters got none.
pub(crate) fn expect_none(query: Option<&str>) -> Result<(), Rejection> {
    match pairs(query)?.into_iter().next() {
        Some((name, _)) => Err(Rejection::unknown_parameter(&name, "this path takes none")),
        None => Ok(()),
    }
}

/// The export's parameters: `sort=field[:asc|desc]`, and the row range `offset` (default 0) and
/// `limit` (default: to the end; at least 1, at most `u64::MAX`). Any other parameter, one given
/// twice, a negative or non-integer value or a zero `limit` is a 400 naming the parameter. Whether
/// `offset` lies within the result is the server's check, against the record's `total_count`.
pub(crate) fn export_params(query: Option<&str>) -> Result<(Option<Sort>, RowRange), Rejection> {
    let mut sort = None;
    let mut offset = None;
    let mut limit = None;
    for (name, value) in pairs(query)? {
        let (seen, parsed) = match name.as_str() {
            "sort" => (sort.is_some(), Param::Sort(parse_sort_param(&value)?)),
            "offset" => (offset.is_some(), Param::Offset(integer(&value, "offset", 0)?)),
            "limit" => (limit.is_some(), Param::Limit(integer(&value, "limit", 1)?)),
            _ => {
                return Err(Rejection::unknown_parameter(
                    &name,
                    "expected `sort`, `offset` or `limit`",
                ));
            }
        };
        if seen {
            return Err(Rejection::InvalidRequest(format!(
                "`{name}` may be given only once"
            )));
        }
        match parsed {
            Param::Sort(value) => sort = Some(value),
            Param::Offset(value) => offset = Some(value),
            Param::Limit(value) => limit = Some(value),
        }
    }
    Ok((sort, RowRange::new(offset.unwrap_or(0), limit)))
}

enum Param {
    Sort(Sort),
    Offset(u64),
    Limit(u64),
}

/// A decimal integer of at least `min` (ASCII digits only: no sign, no fraction, no exponent).
fn integer(text: &str, field: &'static str, min: u64) -> Result<u64, Rejection> {
    let expected = if min == 0 {
        "a non-negative integer"
    } else {
        "a positive integer"
    };
    let wrong = || Rejection::from(RequestError::WrongType { field, expected });
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(wrong());
    }
    match text.parse::<u64>() {
        Ok(value) if value >= min => Ok(value),
        Ok(_) => Err(wrong()),
        Err(_) => Err(Rejection::InvalidRequest(format!(
            "`{field}` must be at most {}",
            u64::MAX
        ))),
    }
}

/// `name=value` pairs of a `application/x-www-form-urlencoded` query, decoded. Empty segments
/// (`a=1&&b=2`) are skipped; a name without `=` has an empty value.
fn pairs(query: Option<&str>) -> Result<Vec<(String, String)>, Rejection> {
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    query
        .split('&')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            let (name, value) = segment.split_once('=').unwrap_or((segment, ""));
            Ok((decode(name)?, decode(value)?))
        })
        .collect()
}

fn decode(text: &str) -> Result<String, Rejection> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| {
                    let h = std::str::from_utf8(h).ok()?;
                    u8::from_str_radix(h, 16).ok()
                });
                out.push(hex.ok_or_else(malformed)?);
                i += 2;
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| malformed())
}

fn malformed() -> Rejection {
    Rejection::InvalidRequest("the query string is not valid percent-encoded UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dual_core::SortOrder;

    fn export_sort(query: Option<&str>) -> Result<Option<Sort>, Rejection> {
        export_params(query).map(|(sort, _)| sort)
    }

    fn export_range(query: &str) -> Result<RowRange, String> {
        match export_params(Some(query)) {
            Ok((_, range)) => Ok(range),
            Err(Rejection::InvalidRequest(message)) => Err(message),
            Err(other) => Err(format!("not a 400: {other:?}")),
        }
    }

    #[test]
    fn decodes_sort() {
        assert_eq!(export_sort(None).ok().flatten(), None);
        assert_eq!(export_sort(Some("")).ok().flatten(), None);
        assert_eq!(
            export_sort(Some("sort=first%20name%26x:desc")).ok().flatten(),
            Some(Sort::new("first name&x", SortOrder::Desc))
        );
        assert_eq!(
            export_sort(Some("sort=a+b")).ok().flatten(),
            Some(Sort::new("a b", SortOrder::Asc))
        );
    }

    #[test]
    fn parses_ranges() {
        assert_eq!(export_params(None).ok().map(|(_, r)| r), Some(RowRange::ALL));
        assert_eq!(export_range("offset=0"), Ok(RowRange::ALL));
        assert_eq!(export_range("offset=10"), Ok(RowRange::new(10, None)));
        assert_eq!(export_range("limit=1"), Ok(RowRange::new(0, Some(1))));
        assert_eq!(
            export_range("limit=5&sort=a:desc&offset=20"),
            Ok(RowRange::new(20, Some(5)))
        );
        assert_eq!(export_range("offset=007"), Ok(RowRange::new(7, None)));
        assert_eq!(
            export_range("offset=18446744073709551615&limit=18446744073709551615"),
            Ok(RowRange::new(u64::MAX, Some(u64::MAX)))
        );
        assert_eq!(export_range("offset=%31%32"), Ok(RowRange::new(12, None)));
    }

    #[test]
    fn range_errors_name_the_parameter() {
        for (query, field) in [
            ("offset=-1", "`offset` must be a non-negative integer"),
            ("offset=1.5", "`offset` must be a non-negative integer"),
            ("offset=", "`offset` must be a non-negative integer"),
            ("offset", "`offset` must be a non-negative integer"),
            ("offset=+1", "`offset` must be a non-negative integer"),
            ("offset=1e3", "`offset` must be a non-negative integer"),
            ("offset=%20", "`offset` must be a non-negative integer"),
            ("offset=18446744073709551616", "`offset` must be at most"),
            ("limit=0", "`limit` must be a positive integer"),
            ("limit=-5", "`limit` must be a positive integer"),
            ("limit=ten", "`limit` must be a positive integer"),
            ("limit=99999999999999999999", "`limit` must be at most"),
            ("offset=1&offset=2", "`offset` may be given only once"),
            ("limit=1&limit=1", "`limit` may be given only once"),
            ("page=2", "`page`"),
        ] {
            let message = export_range(query).err().unwrap_or_default();
            assert!(message.contains(field), "{query}: {message:?}");
        }
    }

    #[test]
    fn rejects_bad_queries() {
        for bad in [
            "sort=a:up",
            "sort=",
            "sort=:desc",
            "sort=a&sort=b",
            "format=csv",
            "sort=%zz",
            "sort=%e9",
            "sort=%",
        ] {
            let err = export_sort(Some(bad)).err();
            assert!(matches!(err, Some(Rejection::InvalidRequest(_))), "{bad}");
        }
        assert!(expect_none(Some("x=1")).is_err());
        assert!(expect_none(Some("&&")).is_ok());
    }

    #[test]
    fn messages_name_the_parameter() {
        let Err(Rejection::InvalidRequest(message)) = export_sort(Some("size=5")) else {
            panic!("expected a 400");
        };
        assert!(message.contains("`size`"), "{message}");
        let Err(Rejection::InvalidRequest(message)) = export_sort(Some("sort=a:sideways")) else {
            panic!("expected a 400");
        };
        assert!(message.contains("sort.order"), "{message}");
    }
}
