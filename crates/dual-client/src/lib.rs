//! The host-application side of the MCP *Dual Response* pattern: recognise a dual response in a tool
//! result, and fetch its full result over the REST API — page by page, all at once, or as a stream.
//!
//! An MCP tool that implements the pattern returns a sample of rows, the total count and a resource link
//! to the model. The application around the model — a chat UI, a report, a CSV export — wants every
//! row. Depend on this crate there: it needs only `dual-core` and an HTTP client (hyper, rustls), never
//! the server crates.
//!
//! # Parsing
//!
//! [`DualResponseClient::parse`] accepts a whole tool result, `structuredContent` alone, a `content`
//! array whose text block carries the JSON, a lone `resource_link` (resolved with the configured base
//! URL), agent-SDK wrappers (a JSON string inside an `output` field, possibly inside a text block), and
//! the reference implementation's shape, which has no columns and no expiry.
//! [`parse_strict`](DualResponseClient::parse_strict) says what is wrong with a value it rejects.
//!
//! ```
//! use dual_client::DualResponseClient;
//! use serde_json::json;
//!
//! let client = DualResponseClient::new();
//! let tool_output = json!({
//!     "results": [{"name": "Rutgers", "enrollment": 50000}],
//!     "resource": {"uri": "resource://01J0000000000000000000000A",
//!                  "url": "https://api.example.com/resources/01J0000000000000000000000A",
//!                  "name": "Query Results", "mimeType": "application/json"},
//!     "metadata": {"total_count": 847, "sample_count": 1, "executed_at": "2026-01-15T10:30:00.000Z"}
//! });
//! // Agent SDKs often hand over the output as a JSON string inside `output`.
//! let wrapped = json!({"type": "function_call_output", "output": tool_output.to_string()});
//!
//! let parsed = client.parse(&wrapped).expect("a dual response");
//! assert_eq!(parsed.total_count(), Some(847));
//! assert_eq!(parsed.sample().len(), 1);
//! assert_eq!(parsed.resource_url(), "https://api.example.com/resources/01J0000000000000000000000A");
//! assert_eq!(parsed.columns()[1].name, "enrollment"); // no declared columns: inferred from the sample
//! assert!(!parsed.is_expired());
//!
//! let error = client.parse_strict(&json!({"resource": {"url": "x"}, "metadata": {}})).unwrap_err();
//! assert_eq!(error.code().as_str(), "PARSE_ERROR");
//! assert!(error.message().contains("total_count"));
//! ```
//!
//! # Fetching
//!
//! A [`ParsedDualResponse`] fetches with the client that parsed it: [`fetch`](ParsedDualResponse::fetch)
//! one page, [`fetch_all`](ParsedDualResponse::fetch_all) every row (row ranges of the streamed `/data`
//! export downloaded in parallel and put back in order, else pages in parallel; always exactly
//! `total_count` rows or an error), [`fetch_stream`](ParsedDualResponse::fetch_stream) batches in
//! order with bounded memory, [`wait_ready`](ParsedDualResponse::wait_ready) for a query still running,
//! [`download`](ParsedDualResponse::download) the export's bytes in any format the server produces
//! (CSV, an Arrow stream, a Parquet file, …; [`ExportFormat`]) chunk by chunk,
//! [`metadata`](ParsedDualResponse::metadata),
//! [`pin`](ParsedDualResponse::pin) and [`delete`](ParsedDualResponse::delete).
//!
//! ```no_run
//! use std::time::Duration;
//! use dual_client::{DualResponseClient, FetchAllOptions, FetchOptions};
//! use dual_client::{Sort, SortOrder};
//! use http::{HeaderValue, header::AUTHORIZATION};
//!
//! # async fn run(tool_result: serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
//! let client = DualResponseClient::builder()
//!     .base_url("https://api.example.com/resources")
//!     .header(AUTHORIZATION, HeaderValue::from_static("Bearer token"))
//!     .timeout(Duration::from_secs(10))
//!     .build()?;
//! let Some(parsed) = client.parse(&tool_result) else { return Ok(()) };
//!
//! let page = parsed
//!     .fetch(FetchOptions::new().limit(100).sort(Sort::new("enrollment", SortOrder::Desc)))
//!     .await?;
//! println!("{} of {} rows, more: {}", page.returned_count, page.total_count, page.has_next);
//!
//! let rows = parsed
//!     .fetch_all(FetchAllOptions::new().parallelism(4).on_progress(|done, total| eprintln!("{done}/{total}")))
//!     .await?;
//! println!("fetched {} rows", rows.len());
//! # Ok(())
//! # }
//! ```
//!
//! # Long-running queries
//!
//! A server may return the tool result before its query has ended: the result's
//! [`status`](ParsedDualResponse::status) is then `pending`, its `total_count` counts the rows so far,
//! and pages and exports answer `NOT_READY` until the query ends (docs/DESIGN.md §8).
//! [`wait_ready`](ParsedDualResponse::wait_ready) polls the metadata with exponential backoff
//! (250 ms doubling to 5 s, and at least the server's `Retry-After`), reports progress, and returns once the
//! resource is `ready`, with `QUERY_FAILED` once it failed, or with `TIMEOUT` after 10 minutes (all
//! configurable with [`WaitOptions`]). [`fetch_all`](ParsedDualResponse::fetch_all) and
//! [`fetch_stream`](ParsedDualResponse::fetch_stream) wait by themselves;
//! [`fetch`](ParsedDualResponse::fetch) does not, it answers `NOT_READY` at once.
//!
//! ```no_run
//! use std::time::Duration;
//! use dual_client::{DualResponseClient, FailureCode, FetchAllOptions, ResourceStatus, WaitOptions};
//!
//! # async fn run(tool_result: serde_json::Value) -> Result<(), dual_client::ClientError> {
//! let mut parsed = DualResponseClient::new().parse_strict(&tool_result)?;
//! if parsed.status() == ResourceStatus::Pending {
//!     let waited = parsed
//!         .wait_ready(WaitOptions::new().on_progress(|rows, elapsed| eprintln!("{rows} rows, {elapsed:?}")))
//!         .await;
//!     match waited {
//!         Ok(metadata) => println!("ready: {} rows", metadata.total_count),
//!         Err(error) if error.failure_code() == Some(FailureCode::QueryTimeout) => {
//!             eprintln!("the server gave up on the query");
//!             return Err(error);
//!         }
//!         Err(error) => return Err(error),
//!     }
//! }
//! let rows = parsed.fetch_all(FetchAllOptions::new()).await?; // exactly the final count
//! # Ok(())
//! # }
//! ```
//!
//! # Errors and retries
//!
//! Every failure is a [`ClientError`] with a [`code`](ClientError::code): `PARSE_ERROR` (a value is not
//! a well-formed dual response, or its URL is unusable), `FETCH_ERROR` (connection failed, an error
//! status, or a truncated, non-JSON or wrongly shaped response body), `TIMEOUT`, `RESOURCE_NOT_FOUND`
//! (404 `not_found`), `RESOURCE_EXPIRED` (404 `expired`), `NOT_READY` (409 `not_ready`: the query is
//! still running) and `QUERY_FAILED` (the query failed; [`failure`](ClientError::failure) gives its
//! [`FailureCode`] and whether running it again may succeed), plus the HTTP
//! [`status`](ClientError::status).
//! Connect errors, 429 and 503 are retried with exponential backoff and jitter, honouring
//! `Retry-After`; other statuses and timeouts are not (`fetch_all` and `fetch_stream` ask again after
//! a 409 `not_ready`, within their wait timeout). `fetch_all` retries one
//! failed row range by itself, and resumes a range whose response was cut off at its first missing row.
//!
//! # Security
//!
//! The URL in a tool result is data produced by a tool. Configure a
//! [`base_url`](DualResponseClientBuilder::base_url) when the default headers carry credentials: every
//! request then goes to the base URL, whatever the tool result names.
//!
//! Operations log `tracing` spans (`dual_client.fetch`, `dual_client.fetch_all`, …) with the resource URL
//! and paging parameters; never row data or header values.

mod builder;
mod client;
mod download;
mod error;
mod export;
mod fetch_all;
mod ndjson;
mod parallel;
mod parse;
mod parsed;
mod progress;
mod ranges;
mod recognise;
mod retry;
mod shared;
mod stream;
mod transport;
mod url;
mod wait;

pub use builder::{DEFAULT_MAX_BODY_BYTES, DEFAULT_TIMEOUT, DualResponseClientBuilder};
pub use client::DualResponseClient;
pub use download::{Download, DownloadOptions, ExportFormat};
pub use error::{ClientBuildError, ClientError, ClientErrorCode};
#[expect(deprecated, reason = "the former name stays exported for one release")]
pub use fetch_all::DEFAULT_CONCURRENCY;
pub use fetch_all::{DEFAULT_BATCH_SIZE, DEFAULT_PARALLELISM, FetchAllOptions};
pub use parsed::{FetchOptions, ParsedDualResponse};
pub use stream::{FetchStreamOptions, RowBatches};
pub use wait::{DEFAULT_MAX_POLL_INTERVAL, DEFAULT_POLL_INTERVAL, DEFAULT_WAIT_TIMEOUT, WaitOptions};

/// The wire types this crate's API uses, re-exported so users need not depend on `dual-core` directly.
pub use dual_core::{
    Column, ColumnType, PageResponse, Row, Sort, SortOrder,
    metadata::{PinResponse, ResourceMetadata},
    status::{FailureCode, FailureSummary, Progress, ResourceStatus},
};
