//! The formats a download link names.

use std::fmt;
use std::str::FromStr;

/// The format of a download: the `format=` parameter of `GET /{id}/data`, which a data link signs.
///
/// ```
/// use dual_server::LinkFormat;
/// let csv: LinkFormat = "csv".parse()?;
/// assert_eq!((csv, csv.as_str(), csv.extension()), (LinkFormat::Csv, "csv", "csv"));
/// assert!("xml".parse::<LinkFormat>().is_err());
/// # Ok::<(), dual_server::links::UnknownLinkFormat>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkFormat {
    /// One JSON document: `{"results": [...], ...}` (`application/json`).
    Json,
    /// One JSON row per line (`application/x-ndjson`).
    Ndjson,
    /// Comma-separated values with a header row (`text/csv`).
    Csv,
    /// An Apache Arrow IPC stream (`application/vnd.apache.arrow.stream`; dual-http's `arrow`
    /// feature).
    Arrow,
    /// An Apache Parquet file (`application/vnd.apache.parquet`; dual-http's `parquet` feature).
    Parquet,
}

impl LinkFormat {
    /// Every format, in the order the docs list them.
    pub const ALL: [Self; 5] = [Self::Csv, Self::Ndjson, Self::Json, Self::Arrow, Self::Parquet];

    /// The parameter's value: `json`, `ndjson`, `csv`, `arrow` or `parquet`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Ndjson => "ndjson",
            Self::Csv => "csv",
            Self::Arrow => "arrow",
            Self::Parquet => "parquet",
        }
    }

    /// The file name extension of a download in this format (`{id}.{extension}`).
    #[must_use]
    pub const fn extension(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Ndjson => "ndjson",
            Self::Csv => "csv",
            Self::Arrow => "arrows",
            Self::Parquet => "parquet",
        }
    }
}

impl fmt::Display for LinkFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LinkFormat {
    type Err = UnknownLinkFormat;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|format| format.as_str() == text)
            .ok_or(UnknownLinkFormat(()))
    }
}

/// A `format` that is none of `csv`, `ndjson`, `json`, `arrow` and `parquet`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("format must be one of csv, ndjson, json, arrow or parquet")]
pub struct UnknownLinkFormat(());
