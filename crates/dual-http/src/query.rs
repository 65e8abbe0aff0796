//! The query string: percent-decoding and the export's one parameter, `sort`.

use dual_core::{Sort, parse_sort_param};

use crate::Rejection;

/// Checks that a route without parameters got none.
pub(crate) fn expect_none(query: Option<&str>) -> Result<(), Rejection> {
    match pairs(query)?.into_iter().next() {
        Some((name, _)) => Err(Rejection::unknown_parameter(&name, "this path takes none")),
        None => Ok(()),
    }
}

/// The export's `sort=field[:asc|desc]`, if given; any other parameter (or `sort` twice) is a 400.
pub(crate) fn export_sort(query: Option<&str>) -> Result<Option<Sort>, Rejection> {
    let mut sort = None;
    for (name, value) in pairs(query)? {
        if name != "sort" {
            return Err(Rejection::unknown_parameter(&name, "expected `sort`"));
        }
        if sort.is_some() {
            return Err(Rejection::InvalidRequest(
                "`sort` may be given only once".to_owned(),
            ));
        }
        sort = Some(parse_sort_param(&value)?);
    }
    Ok(sort)
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
        let Err(Rejection::InvalidRequest(message)) = export_sort(Some("limit=5")) else {
            panic!("expected a 400");
        };
        assert!(message.contains("`limit`"), "{message}");
        let Err(Rejection::InvalidRequest(message)) = export_sort(Some("sort=a:sideways")) else {
            panic!("expected a 400");
        };
        assert!(message.contains("sort.order"), "{message}");
    }
}
