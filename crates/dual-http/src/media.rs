//! Media types: is a request body JSON, and which export format does `Accept` ask for.

use dual_server::LinkFormat;
use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};

/// The representation of a `GET /{id}/data` export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExportFormat {
    /// One JSON array of row objects (`application/json`), the default.
    Json,
    /// One row object per line (`application/x-ndjson`).
    Ndjson,
    /// RFC 4180 CSV with a header row (`text/csv`).
    Csv,
    /// An Arrow IPC stream (`application/vnd.apache.arrow.stream`), with feature `arrow`: the
    /// schema, record batches of up to 8,192 rows, the end-of-stream marker. docs/DESIGN.md has the
    /// type mapping; a value that does not fit its column aborts the export.
    #[cfg(feature = "arrow")]
    Arrow,
    /// A Parquet file (`application/vnd.apache.parquet`), with feature `parquet`: the Arrow export's
    /// schema and type mapping, zstd-compressed, in row groups of up to 65,536 rows (configurable
    /// with [`DualHttpBuilder::parquet_row_group_rows`](crate::DualHttpBuilder::parquet_row_group_rows));
    /// a value that does not fit its column aborts the export, as in the Arrow export.
    #[cfg(feature = "parquet")]
    Parquet,
}

impl ExportFormat {
    /// The `Content-Type` the export is sent with.
    #[must_use]
    pub const fn content_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Ndjson => "application/x-ndjson",
            Self::Csv => "text/csv; charset=utf-8; header=present",
            #[cfg(feature = "arrow")]
            Self::Arrow => "application/vnd.apache.arrow.stream",
            #[cfg(feature = "parquet")]
            Self::Parquet => "application/vnd.apache.parquet",
        }
    }

    /// Whether the format compresses itself (Parquet's pages), so it is sent without a
    /// `Content-Encoding`.
    pub(crate) const fn is_compressed(self) -> bool {
        match self {
            Self::Json | Self::Ndjson | Self::Csv => false,
            #[cfg(feature = "arrow")]
            Self::Arrow => false,
            #[cfg(feature = "parquet")]
            Self::Parquet => true,
        }
    }

    /// The format `format=` names; `None` for one this build cannot produce (`arrow` without
    /// feature `arrow`).
    pub(crate) fn from_link(format: LinkFormat) -> Option<Self> {
        match format {
            LinkFormat::Json => Some(Self::Json),
            LinkFormat::Ndjson => Some(Self::Ndjson),
            LinkFormat::Csv => Some(Self::Csv),
            #[cfg(feature = "arrow")]
            LinkFormat::Arrow => Some(Self::Arrow),
            #[cfg(feature = "parquet")]
            LinkFormat::Parquet => Some(Self::Parquet),
            _ => None,
        }
    }

    /// Server preference among equally acceptable formats.
    const PREFERENCE: &[Self] = &[
        Self::Json,
        Self::Ndjson,
        Self::Csv,
        #[cfg(feature = "arrow")]
        Self::Arrow,
        #[cfg(feature = "parquet")]
        Self::Parquet,
    ];

    /// How specifically the media range `ty/sub` names this format: 2 exactly, 1 by `ty/*`, 0 by
    /// `*/*`, `None` not at all.
    fn specificity(self, ty: &str, sub: &str) -> Option<u8> {
        let (own_ty, subs): (&str, &[&str]) = match self {
            Self::Json => ("application", &["json"]),
            Self::Ndjson => ("application", &["x-ndjson", "ndjson", "jsonl"]),
            Self::Csv => ("text", &["csv"]),
            #[cfg(feature = "arrow")]
            Self::Arrow => ("application", &["vnd.apache.arrow.stream"]),
            #[cfg(feature = "parquet")]
            Self::Parquet => ("application", &["vnd.apache.parquet", "x-parquet"]),
        };
        if ty == "*" && sub == "*" {
            Some(0)
        } else if ty.eq_ignore_ascii_case(own_ty) && sub == "*" {
            Some(1)
        } else if ty.eq_ignore_ascii_case(own_ty) && subs.iter().any(|s| sub.eq_ignore_ascii_case(s)) {
            Some(2)
        } else {
            None
        }
    }

    /// The media types the server can produce, for the message of a 406.
    #[cfg(not(feature = "arrow"))]
    pub(crate) const PRODUCIBLE: &'static str = "application/json, application/x-ndjson, text/csv";
    /// The media types the server can produce, for the message of a 406.
    #[cfg(all(feature = "arrow", not(feature = "parquet")))]
    pub(crate) const PRODUCIBLE: &'static str =
        "application/json, application/x-ndjson, text/csv, application/vnd.apache.arrow.stream";
    /// The media types the server can produce, for the message of a 406.
    #[cfg(feature = "parquet")]
    pub(crate) const PRODUCIBLE: &'static str = "application/json, application/x-ndjson, text/csv, application/vnd.apache.arrow.stream, application/vnd.apache.parquet";

    /// Picks the export format from the request's `Accept` headers: the acceptable format with the
    /// highest quality, ties going to the one the client listed first, then to JSON, NDJSON, CSV,
    /// Arrow, Parquet. Arrow and Parquet are acceptable only by name or by a wildcard (`application/*`,
    /// `*/*`) that no other format outranks, and only with features `arrow` and `parquet`: without
    /// them, an `Accept` of only `application/vnd.apache.arrow.stream` (or
    /// `application/vnd.apache.parquet`) is a 406 like any other format the server cannot produce.
    /// No `Accept` (or none with a well-formed media range) means JSON; `None` when `Accept` names
    /// media ranges but none of them, with a quality above 0, matches a format the server can
    /// produce (the handler answers 406 `not_acceptable`).
    #[must_use]
    pub fn negotiate(headers: &HeaderMap) -> Option<Self> {
        let ranges: Vec<MediaRange<'_>> = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(MediaRange::parse)
            .collect();
        if ranges.is_empty() {
            return Some(Self::Json);
        }
        let mut best: Option<(u16, std::cmp::Reverse<usize>, Self)> = None;
        for &format in Self::PREFERENCE {
            // The most specific range naming the format decides its quality (RFC 9110 §12.5.1).
            let matched = ranges
                .iter()
                .enumerate()
                .filter_map(|(position, range)| {
                    format
                        .specificity(range.ty, range.sub)
                        .map(|s| (s, position, range.quality))
                })
                .max_by_key(|(s, position, _)| (*s, std::cmp::Reverse(*position)));
            let Some((_, position, quality)) = matched else {
                continue;
            };
            let candidate = (quality, std::cmp::Reverse(position), format);
            if quality > 0 && best.is_none_or(|b| (candidate.0, candidate.1) > (b.0, b.1)) {
                best = Some(candidate);
            }
        }
        best.map(|(_, _, format)| format)
    }
}

struct MediaRange<'a> {
    ty: &'a str,
    sub: &'a str,
    /// Quality in thousandths.
    quality: u16,
}

impl<'a> MediaRange<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let mut parts = text.split(';');
        let (ty, sub) = parts.next()?.trim().split_once('/')?;
        let (ty, sub) = (ty.trim(), sub.trim());
        if ty.is_empty() || sub.is_empty() {
            return None;
        }
        let mut quality = 1000;
        for param in parts {
            if let Some((name, value)) = param.split_once('=')
                && name.trim().eq_ignore_ascii_case("q")
            {
                quality = parse_quality(value.trim())?;
            }
        }
        Some(Self { ty, sub, quality })
    }
}

/// `0`, `1`, `0.5`, `0.125`, `1.000` → thousandths; anything else is not a quality.
pub(crate) fn parse_quality(text: &str) -> Option<u16> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let int = match int {
        "0" => 0,
        "1" => 1000,
        _ => return None,
    };
    let frac = format!("{frac:0<3}").parse::<u16>().ok()?;
    let quality = int + frac;
    (quality <= 1000).then_some(quality)
}

/// Whether the request declares a JSON body: `application/json` or `application/*+json`, with an
/// optional `charset=utf-8`.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    let Some(text) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    // Every `POST` asks, so the common value is read without a copy and without `str::split`,
    // whose search costs more than these few bytes do: `application/json` has no `;`.
    let (essence, params) = split_at_byte(text, b';').unwrap_or((text, ""));
    let Some((ty, sub)) = split_at_byte(essence.trim(), b'/') else {
        return false;
    };
    let suffix = sub
        .len()
        .checked_sub(5)
        .and_then(|start| sub.as_bytes().get(start..));
    let json = sub.eq_ignore_ascii_case("json")
        || (sub.len() > 5 && suffix.is_some_and(|suffix| suffix.eq_ignore_ascii_case(b"+json")));
    if !ty.eq_ignore_ascii_case("application") || !json {
        return false;
    }
    params.is_empty()
        || params.split(';').all(|param| match param.split_once('=') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("charset") => {
                let value = value.trim().trim_matches('"');
                value.eq_ignore_ascii_case("utf-8") || value.eq_ignore_ascii_case("utf8")
            }
            _ => true,
        })
}

/// `text` around the first `byte` (an ASCII byte, so both halves are `str`s), found by a plain
/// loop.
fn split_at_byte(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == byte)?;
    Some((text.get(..at)?, text.get(at + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(name: http::header::HeaderName, values: &[&'static str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(name.clone(), HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn negotiates_export_formats() {
        use ExportFormat::{Csv, Json, Ndjson};
        let cases: &[(&[&'static str], Option<ExportFormat>)] = &[
            (&[], Some(Json)),
            (&[""], Some(Json)),
            (&["*/*"], Some(Json)),
            (&["application/json"], Some(Json)),
            (&["application/x-ndjson"], Some(Ndjson)),
            (&["application/ndjson"], Some(Ndjson)),
            (&["text/csv"], Some(Csv)),
            (&["TEXT/CSV; charset=utf-8"], Some(Csv)),
            (&["text/*"], Some(Csv)),
            (&["text/csv, */*;q=0.1"], Some(Csv)),
            (&["application/json;q=0.5, text/csv"], Some(Csv)),
            (&["application/json;q=0, text/csv"], Some(Csv)),
            (&["application/x-ndjson, application/json"], Some(Ndjson)),
            (&["application/json, application/x-ndjson"], Some(Json)),
            (&["text/csv;q=0.9", "application/x-ndjson;q=0.8"], Some(Csv)),
            (&["application/*, text/csv;q=0.4"], Some(Json)),
            (&["*/*;q=0.2, application/json;q=0"], Some(Ndjson)),
            (&["image/png, text/html;q=0.9, */*;q=0.1"], Some(Json)),
            // Nothing a client sent with a quality above 0 can be produced: 406.
            (&["text/html"], None),
            (&["image/png"], None),
            (&["text/csv;q=0"], None),
            (
                &["application/json;q=0, application/x-ndjson;q=0, text/csv;q=0"],
                None,
            ),
            (&["*/*;q=0"], None),
            (&["application/xml", "image/*"], None),
            // Malformed ranges are ignored; only malformed ones is as good as no `Accept`.
            (&["text/csv;q=bogus"], Some(Json)),
            (&["garbage"], Some(Json)),
            (&["garbage, image/png"], None),
            (&["/csv, text/"], Some(Json)),
        ];
        for (accept, expected) in cases {
            assert_eq!(
                ExportFormat::negotiate(&headers(ACCEPT, accept)),
                *expected,
                "{accept:?}"
            );
        }
    }

    #[cfg(feature = "arrow")]
    #[test]
    fn negotiates_arrow_by_name() {
        use ExportFormat::{Arrow, Json};
        let cases: &[(&[&'static str], Option<ExportFormat>)] = &[
            (&["application/vnd.apache.arrow.stream"], Some(Arrow)),
            (&["Application/VND.Apache.Arrow.Stream; q=0.9"], Some(Arrow)),
            (
                &["application/vnd.apache.arrow.stream, application/json;q=0.5"],
                Some(Arrow),
            ),
            (
                &["application/json, application/vnd.apache.arrow.stream"],
                Some(Json),
            ),
            (
                &["text/csv;q=0.1, application/vnd.apache.arrow.stream"],
                Some(Arrow),
            ),
            (&["application/*"], Some(Json)),
            (&["application/vnd.apache.arrow.stream;q=0"], None),
            // The IPC file format is another media type, which the server does not produce.
            (&["application/vnd.apache.arrow.file"], None),
        ];
        for (accept, expected) in cases {
            assert_eq!(
                ExportFormat::negotiate(&headers(ACCEPT, accept)),
                *expected,
                "{accept:?}"
            );
        }
        assert_eq!(Arrow.content_type(), "application/vnd.apache.arrow.stream");
        assert!(ExportFormat::PRODUCIBLE.contains("application/vnd.apache.arrow.stream"));
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn negotiates_parquet_by_name() {
        use ExportFormat::{Arrow, Json, Parquet};
        let cases: &[(&[&'static str], Option<ExportFormat>)] = &[
            (&["application/vnd.apache.parquet"], Some(Parquet)),
            (&["application/x-parquet"], Some(Parquet)),
            (&["Application/VND.Apache.Parquet; q=0.9"], Some(Parquet)),
            (
                &["application/vnd.apache.parquet, application/vnd.apache.arrow.stream"],
                Some(Parquet),
            ),
            (
                &["application/vnd.apache.arrow.stream, application/vnd.apache.parquet"],
                Some(Arrow),
            ),
            (
                &["application/json;q=0.5, application/vnd.apache.parquet"],
                Some(Parquet),
            ),
            (&["application/*"], Some(Json)),
            (&["application/vnd.apache.parquet;q=0"], None),
        ];
        for (accept, expected) in cases {
            assert_eq!(
                ExportFormat::negotiate(&headers(ACCEPT, accept)),
                *expected,
                "{accept:?}"
            );
        }
        assert_eq!(Parquet.content_type(), "application/vnd.apache.parquet");
        assert!(ExportFormat::PRODUCIBLE.ends_with("application/vnd.apache.parquet"));
    }

    #[cfg(not(feature = "parquet"))]
    #[test]
    fn parquet_is_not_acceptable_without_the_feature() {
        let accept = headers(ACCEPT, &["application/vnd.apache.parquet"]);
        assert_eq!(ExportFormat::negotiate(&accept), None);
        assert!(!ExportFormat::PRODUCIBLE.contains("parquet"));
    }

    #[cfg(not(feature = "arrow"))]
    #[test]
    fn arrow_is_not_acceptable_without_the_feature() {
        let accept = headers(ACCEPT, &["application/vnd.apache.arrow.stream"]);
        assert_eq!(ExportFormat::negotiate(&accept), None);
        assert!(!ExportFormat::PRODUCIBLE.contains("arrow"));
    }

    #[test]
    fn recognises_json_bodies() {
        for good in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=\"UTF-8\"",
            "application/merge-patch+json",
            "application/vnd.api+json; v=1",
            "APPLICATION/Problem+JSON",
        ] {
            assert!(is_json(&headers(CONTENT_TYPE, &[good])), "{good}");
        }
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/jsonx",
            "application/+json",
            "application/x+jsonp",
            "application/+JSON",
            "text/json",
            "application/json; charset=latin1",
            "json",
        ] {
            assert!(!is_json(&headers(CONTENT_TYPE, &[bad])), "{bad}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }

    #[test]
    fn qualities() {
        assert_eq!(parse_quality("1"), Some(1000));
        assert_eq!(parse_quality("0.5"), Some(500));
        assert_eq!(parse_quality("0.125"), Some(125));
        assert_eq!(parse_quality("1.000"), Some(1000));
        assert_eq!(parse_quality("1.5"), None);
        assert_eq!(parse_quality("0.1234"), None);
        assert_eq!(parse_quality("-1"), None);
    }
}
