//! The query string: percent-decoding, the export's parameters (`sort`, `offset`, `limit`,
//! `format`) and a capability link's (`expires`, `token`).

use dual_core::{
    Sort,
    page::{RequestError, parse_sort_param},
    range::RowRange,
};
use dual_server::LinkFormat;

use crate::rejection::Rejection;

/// A request's query, decoded, with a capability link's `expires` and `token` taken out.
#[derive(Debug)]
pub(crate) struct Query {
    /// Every other parameter, in order.
    rest: Vec<(String, String)>,
    /// `expires` and `token`, when either was given.
    pub(crate) link: Option<LinkParams>,
}

/// A capability link's parameters as the query gave them (verified by [`crate::link`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LinkParams {
    /// `expires`, unix seconds (not yet checked to be digits).
    pub(crate) expires: Option<String>,
    /// `token`, base64url (not yet decoded).
    pub(crate) token: Option<String>,
}

/// The export's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ExportParams {
    /// `sort=field[:asc|desc]`.
    pub(crate) sort: Option<Sort>,
    /// `offset` and `limit`.
    pub(crate) range: RowRange,
    /// `format=csv|ndjson|json|arrow|parquet`, which overrides `Accept`.
    pub(crate) format: Option<LinkFormat>,
}

/// Decodes `query` and takes out `expires` and `token` (each at most once: 400).
pub(crate) fn parse(query: Option<&str>) -> Result<Query, Rejection> {
    let mut rest = Vec::new();
    let mut link: Option<LinkParams> = None;
    for (name, value) in pairs(query)? {
        let slot = match name.as_str() {
            "expires" => &mut link.get_or_insert_with(LinkParams::default).expires,
            "token" => &mut link.get_or_insert_with(LinkParams::default).token,
            _ => {
                rest.push((name, value));
                continue;
            }
        };
        if slot.replace(value).is_some() {
            return Err(once(&name));
        }
    }
    Ok(Query { rest, link })
}

/// Whether `query` names a capability link's `expires` or `token` (however encoded, even in a query
/// that does not parse), so that the response tells the browser to send no `Referer`.
pub(crate) fn mentions_link(query: Option<&str>) -> bool {
    query.is_some_and(|query| {
        query.split('&').any(|segment| {
            let name = segment.split_once('=').map_or(segment, |(name, _)| name);
            let name = decode(name).unwrap_or_else(|_| name.to_owned());
            // A name holding `=` had its `=` percent-encoded (`token%3D…`): still a link's parameter.
            let name = name.split_once('=').map_or(name.as_str(), |(name, _)| name);
            name == "token" || name == "expires"
        })
    })
}

impl Query {
    /// Checks that a route without parameters (other than a link's) got none.
    pub(crate) fn expect_none(&self) -> Result<(), Rejection> {
        match self.rest.first() {
            Some((name, _)) => Err(Rejection::unknown_parameter(name, "this path takes none")),
            None => Ok(()),
        }
    }

    /// The export's parameters: `sort=field[:asc|desc]`, the row range `offset` (default 0) and
    /// `limit` (default: to the end; at least 1, at most `u64::MAX`), and `format`. Any other
    /// parameter, one given twice, a negative or non-integer value, a zero `limit` or an unknown
    /// format is a 400 naming the parameter. Whether `offset` lies within the result is the
    /// server's check, against the record's `total_count`.
    pub(crate) fn export(&self) -> Result<ExportParams, Rejection> {
        let mut sort = None;
        let mut offset = None;
        let mut limit = None;
        let mut format = None;
        for (name, value) in &self.rest {
            let (seen, parsed) = match name.as_str() {
                "sort" => (sort.is_some(), Param::Sort(parse_sort_param(value)?)),
                "offset" => (offset.is_some(), Param::Offset(integer(value, "offset", 0)?)),
                "limit" => (limit.is_some(), Param::Limit(integer(value, "limit", 1)?)),
                "format" => (format.is_some(), Param::Format(link_format(value)?)),
                _ => {
                    return Err(Rejection::unknown_parameter(
                        name,
                        "expected `sort`, `offset`, `limit`, `format`, `expires` or `token`",
                    ));
                }
            };
            if seen {
                return Err(once(name));
            }
            match parsed {
                Param::Sort(value) => sort = Some(value),
                Param::Offset(value) => offset = Some(value),
                Param::Limit(value) => limit = Some(value),
                Param::Format(value) => format = Some(value),
            }
        }
        Ok(ExportParams {
            sort,
            range: RowRange::new(offset.unwrap_or(0), limit),
            format,
        })
    }
}

fn once(name: &str) -> Rejection {
    Rejection::InvalidRequest(format!("`{name}` may be given only once"))
}

fn link_format(value: &str) -> Result<LinkFormat, Rejection> {
    value.parse().map_err(|_| {
        Rejection::InvalidRequest("`format` must be one of csv, ndjson, json, arrow or parquet".to_owned())
    })
}

enum Param {
    Sort(Sort),
    Offset(u64),
    Limit(u64),
    Format(LinkFormat),
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

    fn export_params(query: Option<&str>) -> Result<(Option<Sort>, RowRange), Rejection> {
        let params = parse(query)?.export()?;
        Ok((params.sort, params.range))
    }

    fn expect_none(query: Option<&str>) -> Result<(), Rejection> {
        parse(query)?.expect_none()
    }

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
            "format=xml",
            "format=csv&format=csv",
            "token=a&token=b",
            "expires=1&%65xpires=2",
            "sort=%zz",
            "sort=%e9",
            "sort=%",
        ] {
            let err = export_sort(Some(bad)).err();
            assert!(matches!(err, Some(Rejection::InvalidRequest(_))), "{bad}");
        }
        assert!(expect_none(Some("x=1")).is_err());
        assert!(expect_none(Some("&&")).is_ok());
        assert!(expect_none(Some("expires=1&token=x")).is_ok());
    }

    #[test]
    fn takes_out_link_parameters_and_formats() {
        let query = parse(Some("format=csv&limit=2&expires=17&token=a-b_c")).ok();
        let query = query.expect("parses");
        assert_eq!(
            query.link,
            Some(LinkParams {
                expires: Some("17".to_owned()),
                token: Some("a-b_c".to_owned()),
            })
        );
        let export = query.export().ok();
        assert_eq!(
            export,
            Some(ExportParams {
                sort: None,
                range: RowRange::new(0, Some(2)),
                format: Some(LinkFormat::Csv),
            })
        );
        assert_eq!(parse(Some("format=json")).ok().map(|q| q.link), Some(None));
        let Err(Rejection::InvalidRequest(message)) = parse(Some("format=xml")).and_then(|q| q.export())
        else {
            panic!("expected a 400");
        };
        assert!(message.contains("`format`"), "{message}");
    }

    #[test]
    fn sees_link_parameters_however_written() {
        for query in [
            "token=x",
            "a=1&expires=2",
            "%74oken=x",
            "token",
            "sort=%zz&token=1",
        ] {
            assert!(mentions_link(Some(query)), "{query}");
        }
        for query in ["", "tokens=1", "sort=token", "x=expires"] {
            assert!(!mentions_link(Some(query)), "{query}");
        }
        assert!(!mentions_link(None));
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
