//! `Accept-Encoding`: which content coding an export is compressed with.

use http::HeaderMap;
use http::header::ACCEPT_ENCODING;

use crate::media::parse_quality;

/// The content coding of a `GET /{id}/data` export, negotiated from `Accept-Encoding`.
///
/// Only exports are compressed; metadata, pages and errors are small JSON documents sent as they are.
/// With the crate's `compression` feature off (it is on by default), every export is sent as
/// [`ContentCoding::Identity`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ContentCoding {
    /// Not compressed.
    #[default]
    Identity,
    /// `Content-Encoding: gzip` (deflate at a fast level, flushed frame by frame).
    Gzip,
    /// `Content-Encoding: zstd` (a fast level, flushed frame by frame).
    Zstd,
}

impl ContentCoding {
    /// The `Content-Encoding` value, `None` for [`ContentCoding::Identity`].
    #[must_use]
    pub const fn as_header(self) -> Option<&'static str> {
        match self {
            Self::Identity => None,
            Self::Gzip => Some("gzip"),
            Self::Zstd => Some("zstd"),
        }
    }

    /// Picks the coding of an export from the request's `Accept-Encoding` headers.
    ///
    /// `gzip` (or `x-gzip`) and `zstd` are candidates when listed with a quality above 0, or when
    /// not listed but `*` is; the higher quality wins and zstd wins a tie. `identity` and codings
    /// the server does not know are ignored, as is a malformed entry; with no candidate (or without
    /// the `compression` feature) the export is not compressed.
    #[must_use]
    pub fn negotiate(headers: &HeaderMap) -> Self {
        if !cfg!(feature = "compression") {
            return Self::Identity;
        }
        let mut gzip = None;
        let mut zstd = None;
        let mut any = None;
        let entries = headers
            .get_all(ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(parse_entry);
        for (coding, quality) in entries {
            let slot = if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                &mut gzip
            } else if coding.eq_ignore_ascii_case("zstd") {
                &mut zstd
            } else if coding == "*" {
                &mut any
            } else {
                continue;
            };
            // Listed twice: the higher quality counts.
            *slot = Some(slot.map_or(quality, |q: u16| q.max(quality)));
        }
        let zstd = zstd.or(any).unwrap_or(0);
        let gzip = gzip.or(any).unwrap_or(0);
        match (zstd, gzip) {
            (0, 0) => Self::Identity,
            (z, g) if z >= g => Self::Zstd,
            _ => Self::Gzip,
        }
    }
}

/// `coding[;q=value]` → the coding and its quality in thousandths; `None` when malformed.
fn parse_entry(text: &str) -> Option<(&str, u16)> {
    let mut parts = text.split(';');
    let coding = parts.next()?.trim();
    if coding.is_empty() {
        return None;
    }
    let mut quality = 1000;
    for param in parts {
        let (name, value) = param.split_once('=')?;
        if name.trim().eq_ignore_ascii_case("q") {
            quality = parse_quality(value.trim())?;
        }
    }
    Some((coding, quality))
}

#[cfg(all(test, feature = "compression"))]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn negotiate(values: &[&'static str]) -> ContentCoding {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(ACCEPT_ENCODING, HeaderValue::from_static(value));
        }
        ContentCoding::negotiate(&headers)
    }

    #[test]
    fn negotiates_codings() {
        use ContentCoding::{Gzip, Identity, Zstd};
        let cases: &[(&[&'static str], ContentCoding)] = &[
            (&[], Identity),
            (&[""], Identity),
            (&["gzip"], Gzip),
            (&["x-gzip"], Gzip),
            (&["GZIP"], Gzip),
            (&["zstd"], Zstd),
            (&["gzip, zstd"], Zstd),
            (&["zstd, gzip"], Zstd),
            (&["gzip", "zstd"], Zstd),
            (&["gzip;q=1, zstd;q=0.5"], Gzip),
            (&["gzip;q=0.4, zstd;q=0.5"], Zstd),
            (&["gzip;q=0"], Identity),
            (&["gzip;q=0, zstd;q=0"], Identity),
            (&["zstd;q=0, gzip;q=0.1"], Gzip),
            (&["identity"], Identity),
            (&["identity;q=1, gzip;q=0.5"], Gzip),
            (&["br, deflate, compress"], Identity),
            (&["gzip, deflate, br, zstd"], Zstd),
            (&["*"], Zstd),
            (&["*;q=0.5, gzip"], Gzip),
            (&["*, zstd;q=0"], Gzip),
            (&["*;q=0, gzip"], Gzip),
            (&["*;q=0"], Identity),
            (&["gzip;q=bogus"], Identity),
            (&["gzip;q=2"], Identity),
            (&["gzip;level"], Identity),
            (&["gzip;q=0.5, gzip;q=0.9, zstd;q=0.8"], Gzip),
            (&[" , ;q=1, zstd ; q=0.3 "], Zstd),
        ];
        for (accept, expected) in cases {
            assert_eq!(negotiate(accept), *expected, "{accept:?}");
        }
    }

    #[test]
    fn header_values() {
        assert_eq!(ContentCoding::Identity.as_header(), None);
        assert_eq!(ContentCoding::Gzip.as_header(), Some("gzip"));
        assert_eq!(ContentCoding::Zstd.as_header(), Some("zstd"));
    }
}
