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
//! The root holds the types nearly every user names; everything else is in its module:
//!
//! | module | holds |
//! |---|---|
//! | [`id`] | [`ResourceId`] (a ULID) and why a string is not one |
//! | [`query`] | [`QuerySpec`] (a query as data: kind and params), [`Sort`], [`SortOrder`] |
//! | [`column`](mod@column) | [`Column`], [`ColumnType`], column inference from a sample |
//! | [`record`] | [`ResourceRecord`], what a store keeps |
//! | [`page`] | [`PageRequest`] and its validation, [`PageResponse`], page limits, sort parameters |
//! | [`budget`] | byte caps: pages cut to whole rows ([`budget::RowBudget`]), text for the model cut with a marker |
//! | [`profile`] | [`profile::Profile`]: the column profile of a whole result (counts, ranges, distributions) |
//! | [`range`] | row ranges of exports |
//! | [`metadata`] | the metadata and pin answers of the REST API |
//! | [`status`] | the status lifecycle of a resource (pending, ready, failed), failures and progress |
//! | [`consistency`] | snapshot or live |
//! | [`task`] | [`task::TaskRecord`]: a durable MCP task, its id and state |
//! | [`error`] | the REST API's error body and wire error codes |
//! | [`escape`] | [`escape::log_safe`] and [`escape::display_safe`]: user, SQL and executor text made safe for a log line, a model, a person or a terminal |
//! | [`uri`] | resource URIs and URLs |
//! | [`mcp`] | [`DualResponse`] rendered as an MCP tool result per protocol version, the output schema |
//!
//! ```
//! use dual_core::{PageRequest, PageResponse, Column, ColumnType, Row, page::PageLimits};
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
//! # Ok::<(), dual_core::page::RequestError>(())
//! ```

pub mod budget;
pub mod column;
pub mod consistency;
pub mod error;
pub mod escape;
pub mod id;
pub mod mcp;
pub mod metadata;
pub mod page;
pub mod profile;
pub mod query;
pub mod range;
pub mod record;
pub mod status;
pub mod task;
pub mod uri;

pub use column::{Column, ColumnType};
pub use id::ResourceId;
pub use mcp::DualResponse;
pub use page::{PageRequest, PageResponse};
pub use query::{QuerySpec, Sort, SortOrder};
pub use record::ResourceRecord;

/// One result row: column name → JSON value, in column order.
pub type Row = serde_json::Map<String, serde_json::Value>;

/// Re-exported so users name the same `time` and `serde_json` versions.
pub use serde_json;
pub use time;
