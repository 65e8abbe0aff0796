//! Wire types and MCP formatting of the MCP *Dual Response* pattern.
//!
//! An MCP tool returns to the model only a sample of rows, the total count and a resource link; the host
//! application fetches the complete result out of band over a small REST API. This crate holds the
//! types both sides agree on — ids, columns, rows, resource records, page requests and responses,
//! metadata, error bodies — and renders a dual response as an MCP tool result with its output schema.
//!
//! It does no IO: no tokio, no HTTP. Depend on it directly when you only need the types (say, to
//! render tool results in your own MCP framework); servers use `dual-server`, host applications use
//! `dual-client`.
//!
//! ```
//! use dual_core::{PageLimits, PageRequest, PageResponse, Column, ColumnType, Row};
//!
//! let columns = [Column::new("enrollment", ColumnType::Integer)];
//! let request = PageRequest::from_json(br#"{"offset": 0, "limit": 2, "sort": {"field": "enrollment", "order": "desc"}}"#)?;
//! let page = request.validate(PageLimits::default(), &columns)?;
//! assert_eq!(page.fetch_limit(), 3); // one extra row makes `has_next` exact
//!
//! let rows: Vec<Row> = (0..3).map(|i| serde_json::json!({"enrollment": i}).as_object().cloned().unwrap_or_default()).collect();
//! let response = PageResponse::from_rows(rows, &page, 847);
//! assert_eq!((response.returned_count, response.has_next, response.next_offset), (2, true, Some(2)));
//!
//! let bad = PageRequest::from_json(br#"{"offset": -1}"#).unwrap_err();
//! assert_eq!(bad.field(), Some("offset"));
//! # Ok::<(), dual_core::RequestError>(())
//! ```

mod column;
mod consistency;
mod error_body;
mod id;
pub mod mcp;
mod metadata;
mod page;
mod query;
mod range;
mod record;
mod status;
mod uri;

pub use column::{Column, ColumnType, infer_columns};
pub use consistency::{Consistency, UnknownConsistency};
pub use error_body::{ErrorBody, ErrorCode, NOT_FOUND_MESSAGE};
pub use id::{InvalidResourceId, ResourceId};
pub use mcp::{DualResponse, output_schema};
pub use metadata::{PinResponse, PinStatus, ResourceMetadata};
pub use page::{
    DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PageLimits, PageRequest, PageResponse, RequestError, ValidPage,
    parse_sort_param, validate_sort,
};
pub use query::{QuerySpec, Sort, SortOrder};
pub use range::RowRange;
pub use record::ResourceRecord;
pub use status::{FailureCode, FailureSummary, Progress, QueryFailure, ResourceStatus};
pub use uri::{DEFAULT_URI_SCHEME, ParsedUri, parse_resource_uri, resource_uri, resource_url};

/// One result row: column name → JSON value, in column order.
pub type Row = serde_json::Map<String, serde_json::Value>;

/// Re-exported so users name the same `time` and `serde_json` versions.
pub use serde_json;
pub use time;
