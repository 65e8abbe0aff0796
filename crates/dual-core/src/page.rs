//! Page requests, their validation, and page responses with their arithmetic.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Column, Row, Sort, SortOrder};

mod plain;

/// Default page limit when a request gives none.
pub const DEFAULT_PAGE_LIMIT: u64 = 100;
/// Largest page limit a request may ask for.
pub const MAX_PAGE_LIMIT: u64 = 10_000;

/// A page request as sent by a client: every field optional (`POST /{id}` with an empty body is allowed).
///
/// Parse untrusted bytes with [`PageRequest::from_json`], which rejects unknown fields and wrong types
/// naming the field, then call [`PageRequest::validate`] against the resource's columns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageRequest {
    /// First row, 0-based. Defaults to 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Maximum rows to return. Defaults to the server's default limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Sort before paging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<Sort>,
}

/// The page limits a server enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimits {
    /// Limit used when a request gives none.
    pub default_limit: u64,
    /// Largest limit accepted.
    pub max_limit: u64,
}

impl Default for PageLimits {
    fn default() -> Self {
        Self {
            default_limit: DEFAULT_PAGE_LIMIT,
            max_limit: MAX_PAGE_LIMIT,
        }
    }
}

/// A request that passed validation: offset and limit resolved, sort field known to be a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidPage {
    /// First row, 0-based.
    pub offset: u64,
    /// Rows per page, within `1..=max_limit`.
    pub limit: u64,
    /// Sort, if any.
    pub sort: Option<Sort>,
}

impl ValidPage {
    /// How many rows to ask the executor for: one more than `limit`, so `has_next` is exact.
    #[must_use]
    pub fn fetch_limit(&self) -> u64 {
        self.limit.saturating_add(1)
    }
}

/// Why a page request (or an export's `sort` parameter) was rejected. Every message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The body is not JSON.
    #[error("request body is not valid JSON: {0}")]
    MalformedJson(String),
    /// The body is JSON but not an object.
    #[error("request body must be a JSON object")]
    NotAnObject,
    /// The body has a field the API does not know.
    #[error("unknown field `{0}`; expected `offset`, `limit` or `sort`")]
    UnknownField(String),
    /// A field has the wrong type or sign.
    #[error("`{field}` must be {expected}")]
    WrongType {
        /// The offending field, e.g. `offset` or `sort.field`.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// `limit` is outside `1..=max`.
    #[error("`limit` must be between 1 and {max}")]
    LimitOutOfRange {
        /// The server's maximum.
        max: u64,
    },
    /// `sort.field` is not a column of the resource.
    #[error("`sort.field` must be one of the resource's columns; `{0}` is not")]
    UnknownSortField(String),
    /// `sort.order` is neither `asc` nor `desc`.
    #[error("`sort.order` must be \"asc\" or \"desc\"")]
    InvalidSortOrder,
    /// An export range's `offset` is beyond the result (`offset == total_count` is the empty range).
    #[error("`offset` must be at most the result's total_count ({total_count}); got {offset}")]
    OffsetOutOfRange {
        /// The offset asked for.
        offset: u64,
        /// The resource's `total_count`.
        total_count: u64,
    },
    /// The resource is too large for the server to sort (docs/DESIGN.md §3): fetch it unsorted or
    /// export it and sort locally.
    #[error("`sort` refused: {0}; fetch the pages without `sort`, or export `/data` and sort it locally")]
    SortTooLarge(SortLimit),
}

/// Which of the server's sort limits a [`RequestError::SortTooLarge`] hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SortLimit {
    /// The resource has more rows than the server sorts.
    #[error("the resource has {rows} rows, more than the {max} this server sorts")]
    Rows {
        /// The resource's rows.
        rows: u64,
        /// The server's limit.
        max: u64,
    },
    /// The resource's snapshot is larger than the server sorts.
    #[error("the resource holds {bytes} bytes, more than the {max} this server sorts")]
    Bytes {
        /// The snapshot's bytes of compact JSON rows.
        bytes: u64,
        /// The server's limit.
        max: u64,
    },
    /// Sorting the resource needs more working memory (its sort keys) than the server's budget.
    #[error(
        "sorting the resource by this column needs more than the {max} bytes of memory this server gives sorts"
    )]
    Memory {
        /// The server's working-memory budget of sorts.
        max: u64,
    },
}

impl RequestError {
    /// The field the error is about, when there is one (`offset`, `limit`, `sort`, `sort.field`, …).
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::MalformedJson(_) | Self::NotAnObject => None,
            Self::UnknownField(name) => Some(name),
            Self::WrongType { field, .. } => Some(field),
            Self::LimitOutOfRange { .. } => Some("limit"),
            Self::UnknownSortField(_) => Some("sort.field"),
            Self::InvalidSortOrder => Some("sort.order"),
            Self::OffsetOutOfRange { .. } => Some("offset"),
            Self::SortTooLarge(_) => Some("sort"),
        }
    }
}

impl PageRequest {
    /// Parses an untrusted request body. An empty (or all-whitespace) body is the default request.
    ///
    /// # Errors
    /// [`RequestError`] naming the field for malformed JSON, a non-object, unknown fields, a negative or
    /// non-integer `offset` or `limit`, or a malformed `sort`.
    pub fn from_json(body: &[u8]) -> Result<Self, RequestError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        if let Some(request) = plain::parse(body) {
            return Ok(request);
        }
        let value: Value =
            serde_json::from_slice(body).map_err(|e| RequestError::MalformedJson(e.to_string()))?;
        Self::from_value(&value)
    }

    /// Parses a request already decoded as JSON. See [`PageRequest::from_json`].
    ///
    /// # Errors
    /// As [`PageRequest::from_json`].
    pub fn from_value(value: &Value) -> Result<Self, RequestError> {
        let object = value.as_object().ok_or(RequestError::NotAnObject)?;
        let mut request = Self::default();
        for (key, value) in object {
            match key.as_str() {
                "offset" => request.offset = optional_u64(value, "offset", "a non-negative integer")?,
                "limit" => request.limit = optional_u64(value, "limit", "a positive integer")?,
                "sort" if value.is_null() => {}
                "sort" => request.sort = Some(sort_from_value(value)?),
                other => return Err(RequestError::UnknownField(other.to_owned())),
            }
        }
        Ok(request)
    }

    /// Resolves defaults and checks the request against the server's limits and the resource's columns.
    ///
    /// # Errors
    /// [`RequestError::LimitOutOfRange`] for a limit outside `1..=max_limit`, and
    /// [`RequestError::UnknownSortField`] for a sort field that is not one of `columns`.
    pub fn validate(&self, limits: PageLimits, columns: &[Column]) -> Result<ValidPage, RequestError> {
        let limit = self.limit.unwrap_or(limits.default_limit.min(limits.max_limit));
        if limit == 0 || limit > limits.max_limit {
            return Err(RequestError::LimitOutOfRange {
                max: limits.max_limit,
            });
        }
        let sort = self
            .sort
            .as_ref()
            .map(|s| validate_sort(s, columns))
            .transpose()?;
        Ok(ValidPage {
            offset: self.offset.unwrap_or(0),
            limit,
            sort,
        })
    }
}

/// Checks that `sort.field` names one of `columns`.
///
/// # Errors
/// [`RequestError::UnknownSortField`] when it does not.
pub fn validate_sort(sort: &Sort, columns: &[Column]) -> Result<Sort, RequestError> {
    if columns.iter().any(|c| c.name == sort.field) {
        Ok(sort.clone())
    } else {
        Err(RequestError::UnknownSortField(sort.field.clone()))
    }
}

/// Parses the export's `sort=field:asc|desc` query parameter (`field` alone means ascending).
///
/// # Errors
/// [`RequestError`] for an empty field or an order other than `asc`/`desc`.
pub fn parse_sort_param(text: &str) -> Result<Sort, RequestError> {
    let (field, order) = match text.rsplit_once(':') {
        Some((field, order)) => (
            field,
            SortOrder::parse(order).ok_or(RequestError::InvalidSortOrder)?,
        ),
        None => (text, SortOrder::Asc),
    };
    if field.is_empty() {
        return Err(RequestError::WrongType {
            field: "sort.field",
            expected: "a non-empty column name",
        });
    }
    Ok(Sort::new(field, order))
}

fn optional_u64(
    value: &Value,
    field: &'static str,
    expected: &'static str,
) -> Result<Option<u64>, RequestError> {
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_u64() {
            Some(v) => Ok(Some(v)),
            // Integral floats such as `100.0` are accepted; anything fractional or negative is not.
            None => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&f) =>
                {
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        reason = "checked integral, non-negative and below 2^53"
                    )]
                    Ok(Some(f as u64))
                }
                _ => Err(RequestError::WrongType { field, expected }),
            },
        },
        _ => Err(RequestError::WrongType { field, expected }),
    }
}

fn sort_from_value(value: &Value) -> Result<Sort, RequestError> {
    let object: &Map<String, Value> = value.as_object().ok_or(RequestError::WrongType {
        field: "sort",
        expected: "an object {\"field\": …, \"order\": \"asc\"|\"desc\"}",
    })?;
    let mut field = None;
    let mut order = SortOrder::Asc;
    for (key, value) in object {
        match key.as_str() {
            "field" => match value.as_str() {
                Some(name) if !name.is_empty() => field = Some(name.to_owned()),
                _ => {
                    return Err(RequestError::WrongType {
                        field: "sort.field",
                        expected: "a non-empty column name",
                    });
                }
            },
            "order" => {
                order = match value {
                    Value::Null => SortOrder::Asc,
                    Value::String(text) => SortOrder::parse(text).ok_or(RequestError::InvalidSortOrder)?,
                    _ => return Err(RequestError::InvalidSortOrder),
                };
            }
            other => return Err(RequestError::UnknownField(format!("sort.{other}"))),
        }
    }
    let field = field.ok_or(RequestError::WrongType {
        field: "sort.field",
        expected: "a non-empty column name",
    })?;
    Ok(Sort::new(field, order))
}

/// One page of a result, as `POST /{id}` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageResponse {
    /// The rows of this page.
    pub data: Vec<Row>,
    /// The row count at creation.
    pub total_count: u64,
    /// `data.len()`.
    pub returned_count: u64,
    /// This page's first row.
    pub offset: u64,
    /// The limit the page was fetched with.
    pub limit: u64,
    /// Whether rows follow this page (exact: the query was asked for one row more).
    pub has_next: bool,
    /// Whether rows precede this page.
    pub has_previous: bool,
    /// The offset of the next page; `None` on the last page.
    pub next_offset: Option<u64>,
}

impl PageResponse {
    /// Builds a page from the rows an executor returned for `page.fetch_limit()` rows.
    ///
    /// When the executor returned more than `page.limit` rows, the surplus is dropped and `has_next` is
    /// true; `next_offset` is then `offset + limit`.
    #[must_use]
    pub fn from_rows(mut rows: Vec<Row>, page: &ValidPage, total_count: u64) -> Self {
        let mut response = Self::paginate(&mut rows, page, total_count);
        response.data = rows;
        response
    }

    /// The pagination of a page whose rows are kept elsewhere (say, already encoded): cuts `rows`,
    /// fetched with `page.fetch_limit()`, to `page.limit` exactly as [`PageResponse::from_rows`]
    /// does, and returns the page with empty `data`.
    #[must_use]
    pub fn paginate<T>(rows: &mut Vec<T>, page: &ValidPage, total_count: u64) -> Self {
        let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
        let has_next = rows.len() > limit;
        rows.truncate(limit);
        let returned_count = rows.len() as u64;
        Self {
            data: Vec::new(),
            total_count,
            returned_count,
            offset: page.offset,
            limit: page.limit,
            has_next,
            has_previous: page.offset > 0,
            next_offset: has_next.then(|| page.offset.saturating_add(returned_count)),
        }
    }
}
