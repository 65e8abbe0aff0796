//! The common request body, `{"offset": 200, "limit": 100}` (with or without a `sort`), read straight
//! into its fields: no `serde_json::Value`, no map, no allocation but the sort's column name.
//!
//! Anything this shape refuses (an unknown or repeated field, an integral float such as `100.0`, a
//! negative number, an escaped or empty column name, an unknown order, malformed JSON) is read again
//! by [`PageRequest::from_value`](super::PageRequest::from_value), which accepts or names the error
//! exactly as before. So this is a shortcut, never a second set of rules: whenever it answers, its
//! answer is the one `from_value` would give.

use serde::Deserialize;

use super::PageRequest;
use crate::{Sort, SortOrder};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Plain<'a> {
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default, borrow)]
    sort: Option<PlainSort<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainSort<'a> {
    field: &'a str,
    #[serde(default)]
    order: Option<&'a str>,
}

/// `body` as a [`PageRequest`] when it is an object of the common shape; `None` for anything else.
pub(super) fn parse(body: &[u8]) -> Option<PageRequest> {
    if let Some(request) = numbers(body) {
        return Some(request);
    }
    // Only an object: a derived struct would take an array too (`[1]` as `{"offset": 1}`).
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let plain: Plain<'_> = serde_json::from_slice(body).ok()?;
    let sort = match plain.sort {
        None => None,
        Some(PlainSort { field: "", .. }) => return None,
        Some(PlainSort { field, order }) => {
            let order = match order {
                None => SortOrder::Asc,
                Some(text) => SortOrder::parse(text)?,
            };
            Some(Sort::new(field, order))
        }
    };
    Some(PageRequest {
        offset: plain.offset,
        limit: plain.limit,
        sort,
    })
}

/// The body of nearly every `POST`, `{"offset": 200, "limit": 100}` (either field, both or none, in
/// any order, JSON's whitespace anywhere between tokens), read byte by byte: several times faster
/// than even the derived struct. `None` for anything else, a sort included, and for anything JSON
/// would not accept (a leading zero, a fraction, an exponent, a repeated field, a number past
/// `u64`), which the derived struct or `from_value` then reads.
fn numbers(body: &[u8]) -> Option<PageRequest> {
    let mut scan = Scan { rest: body };
    scan.token(b'{')?;
    let mut request = PageRequest::default();
    if scan.token(b'}').is_some() {
        return scan.at_end().then_some(request);
    }
    loop {
        let slot = match scan.key()? {
            b"offset" => &mut request.offset,
            b"limit" => &mut request.limit,
            _ => return None,
        };
        scan.token(b':')?;
        if slot.replace(scan.number()?).is_some() {
            return None;
        }
        if scan.token(b'}').is_some() {
            return scan.at_end().then_some(request);
        }
        scan.token(b',')?;
    }
}

/// What is left of a body being read.
struct Scan<'a> {
    rest: &'a [u8],
}

impl<'a> Scan<'a> {
    /// Skips JSON's whitespace (space, tab, line feed, carriage return: not form feed).
    fn skip_whitespace(&mut self) {
        while let [b' ' | b'\t' | b'\n' | b'\r', rest @ ..] = self.rest {
            self.rest = rest;
        }
    }

    /// `byte` after optional whitespace.
    fn token(&mut self, byte: u8) -> Option<()> {
        self.skip_whitespace();
        let (&first, rest) = self.rest.split_first()?;
        (first == byte).then(|| self.rest = rest)
    }

    /// A string without escapes or control characters, after optional whitespace: its bytes.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.token(b'"')?;
        let end = self
            .rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        let (key, rest) = self.rest.split_at(end);
        self.rest = rest.strip_prefix(b"\"")?;
        Some(key)
    }

    /// A non-negative integer as JSON writes it (no leading zero), after optional whitespace.
    fn number(&mut self) -> Option<u64> {
        self.skip_whitespace();
        let digits = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (text, rest) = self.rest.split_at(digits);
        if text.is_empty() || (text.len() > 1 && text.starts_with(b"0")) {
            return None;
        }
        self.rest = rest;
        text.iter().try_fold(0u64, |n, &digit| {
            n.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
        })
    }

    /// Whether nothing but whitespace is left.
    fn at_end(&mut self) -> bool {
        self.skip_whitespace();
        self.rest.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_bodies_are_read_byte_by_byte() {
        let request = |offset, limit| {
            Some(PageRequest {
                offset,
                limit,
                sort: None,
            })
        };
        for (body, expected) in [
            (&b"{\"offset\":0,\"limit\":100}"[..], request(Some(0), Some(100))),
            (
                b" {\r\n\t\"limit\" : 7 ,\"offset\":18446744073709551615 }\n",
                request(Some(u64::MAX), Some(7)),
            ),
            (b"{}", request(None, None)),
            (b"{ \"offset\": 10 }", request(Some(10), None)),
        ] {
            assert_eq!(numbers(body), expected, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn everything_else_is_left_to_serde() {
        // One body a line: malformed JSON, numbers this reader leaves alone (a leading zero, a
        // fraction, an exponent, `-0`, past `u64`), a repeated or escaped field, other shapes.
        let bodies = r#"{"offset":01}
            {"offset":1.0}
            {"offset":1e2}
            {"offset":18446744073709551616}
            {"offset":1,}
            {"offset":1}x
            {"offset":-0}
            {"offset":1,"offset":2}
            {"off\u0073et":1}
            {"limit":null}
            {"sort":{"field":"a"}}
            {,}
            [1]"#;
        let form_feed = "\x0c{\"offset\":1}";
        for body in bodies.lines().map(str::trim).chain([form_feed, r#"{"offset":1"#]) {
            assert_eq!(numbers(body.as_bytes()), None, "{body}");
        }
    }
}
