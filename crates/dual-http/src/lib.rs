//! The REST API of the MCP *Dual Response* pattern as a framework-agnostic HTTP handler.
//!
//! An MCP tool gives the model a sample and a resource link; the host application then fetches the
//! complete result out of band from this API, mounted under any prefix (say `/resources`):
//!
//! | request | answer |
//! |---|---|
//! | `GET /{id}` | 200 metadata |
//! | `POST /{id}` `{"offset","limit","sort"}` (all optional) | 200 one page |
//! | `PUT /{id}` | 200 `{"status":"pinned","expires_at":null}` |
//! | `DELETE /{id}` | 204 |
//! | `GET /{id}/data[?sort=field:desc&offset=N&limit=M&format=F]` | 200 every row, or the row range, streamed: JSON array, NDJSON (`Accept: application/x-ndjson`), CSV (`Accept: text/csv`; cells a spreadsheet would run as formulas get a leading `'`, see [`CsvFormulas`]) or, with feature `arrow`, an Arrow IPC stream (`Accept: application/vnd.apache.arrow.stream`); 406 for an `Accept` it cannot produce; `format=csv\|ndjson\|json\|arrow` overrides `Accept` and makes the response an attachment (`{id}.{ext}`) |
//! | `GET /{id}/profile` | 200 the column profile of a snapshot (`dual_core::profile::Profile`; `"complete": false` while it is written); 409 `not_ready` while nothing is profiled yet; 404 `no_profile` for a live result |
//! | `POST /{id}/query` `{"sql"}` | 201 a new result refining this one with SQL over its stored rows (the table `result`), as the tool result's `structuredContent`, with `Location`; 400 for SQL the engine refuses or fails on (its message); 409 `not_refinable` for a live result or a server without a refine engine |
//! | `GET /{id}/view` | 200 the result view (`dual_view::rest_page()`), an HTML page that reads this API, under a strict Content-Security-Policy |
//! | `OPTIONS` | CORS preflight, when configured |
//!
//! Errors are JSON `{"error", "message", "retryable"}` with the statuses of docs/DESIGN.md §5, and never carry
//! internals. `docs/openapi.yaml` in the repository describes the API in OpenAPI 3.1.
//!
//! # Capability links
//!
//! A URL minted by `DualResponseServer::download_link` or `view_link` carries `expires` and `token`
//! in its query and needs no `Authorization` header: the handler verifies the token (HMAC-SHA256,
//! constant-time) before any store access and reads as the link's grant instead of asking the
//! [`Authorize`] hook. A data link opens exactly its export, a read link the resource's metadata,
//! pages, exports, `/profile` and `/view`; `PUT`, `DELETE` and `POST /{id}/query` ignore links (the
//! hook decides). A link that does not verify is the unknown id's 404, byte for byte, the query
//! string is never logged, and responses to link requests carry `Referrer-Policy: no-referrer`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use dual_core::range::RowRange;
//! use dual_http::DualHttp;
//! use dual_server::{Caller, CreateResponse, DualResponseServer, LinkFormat};
//! use http::{Request, StatusCode};
//!
//! let server = DualResponseServer::builder()
//!     .base_url("https://api.example.com/resources")
//!     .executor("numbers", dual_testkit::executor::Numbers::new())
//!     .build()?;
//! let created = server
//!     .create_response(CreateResponse::new("numbers", serde_json::json!({"n": 40})).owner("alice"))
//!     .await?;
//! let link = server
//!     .download_link(created.id, &Caller::owner("alice"), LinkFormat::Csv, RowRange::ALL, None)
//!     .await?;
//!
//! // The default hook sees every request as anonymous; the link alone opens alice's resource.
//! let handler = DualHttp::builder(server).prefix("/resources").build();
//! let response = handler.handle(Request::get(link.url.as_str()).body(String::new())?).await;
//! assert_eq!(response.status(), StatusCode::OK);
//! assert_eq!(response.headers()["referrer-policy"], "no-referrer");
//! # Ok(()) }
//! ```
//!
//! Exports are the unit of parallel download: `offset` (default 0, at most the resource's
//! `total_count`, where the range is empty) and `limit` (default: to the end; at least 1, no cap but
//! `u64::MAX`) select a row range of the sorted result, so disjoint ranges fetched at once concatenate
//! to the whole export. With the default feature `compression`, exports honour `Accept-Encoding:
//! gzip` and `zstd` (see [`ContentCoding::negotiate`]), compressed and flushed frame by frame so rows
//! arrive as they are produced; metadata, pages and errors are small JSON documents and are never
//! compressed. Build with `default-features = false` to leave compression (and its dependencies) out.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `compression` | on | `Accept-Encoding: gzip` / `zstd` for exports (flate2, pure Rust, and zstd) |
//! | `arrow` | off | `ExportFormat::Arrow`: exports as Arrow IPC streams (arrow-rs's `arrow-ipc`, no compression codecs); see below |
//! | `parquet` | off | `ExportFormat::Parquet`: exports as Parquet files (arrow-rs's `parquet`, zstd only; implies `arrow`); see below |
//! | `tower` | off | `tower::Service` for [`DualHttp`] (axum's `nest_service`, tower stacks) |
//! | `services` | off | only this crate's test that reads the Arrow and Parquet exports with pyarrow (implies `parquet`) |
//!
//! An Arrow export is the schema, record batches of up to 8,192 rows (cut earlier at about 1 MiB of
//! values, so an export holds one batch in memory) and the end-of-stream marker. Every column is a
//! nullable field: `integer` Int64, `number` Float64, `boolean` Boolean, `date` Date32, and `string`,
//! `datetime` and `json` Utf8 (a `json` value as its JSON text); a missing key or a JSON `null` is a
//! null. A value that does not fit its column (a string or `1.5` in an `integer` column) is never
//! sent as a null or truncated: the export aborts, like a query failing midway, and the error is
//! logged with the row and the column. docs/DESIGN.md §5 has the whole mapping.
//!
//! A Parquet export has the same schema (the Arrow schema is stored in the file, so readers get the
//! same types and the `dual_response.type` field metadata) and the same mismatch rule. Its pages are
//! zstd-compressed, so it is never sent with a `Content-Encoding`; row groups hold up to 65,536 rows
//! (`DualHttpBuilder::parquet_row_group_rows`) or about 32 MiB, and each goes out when it is complete,
//! so an export holds one row group in memory. The footer comes last.
//!
//! [`DualHttp`] is written against the `http` and `http-body` crates only: generic over the request
//! body, infallible, and opening no sockets. It is a hyper `Service` (raw hyper, hyper-util's servers)
//! and, with feature `tower`, a `tower::Service` (axum's `nest_service`, tower stacks). Other stacks
//! call [`DualHttp::handle`], so every adapter behaves the same. Depend on this crate when you serve resources
//! created by a `dual_server::DualResponseServer`.
//!
//! ```
//! use std::sync::Arc;
//! use bytes::Bytes;
//! use dual_core::Row;
//! use dual_http::DualHttp;
//! use dual_server::{CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, QueryStart, RowStream};
//! use http_body_util::{BodyExt, Full};
//! use hyper::service::Service;
//! use serde_json::{Value, json};
//!
//! /// `n` numbered rows.
//! struct Numbers;
//!
//! impl QueryExecutor for Numbers {
//!     fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
//!         let Some(n) = params["n"].as_u64() else {
//!             let error = ExecutorError::new("`n` must be an integer");
//!             return Box::pin(futures_util::stream::iter([Err(error)]));
//!         };
//!         start.started();
//!         let rows: Vec<Row> = (0..n).map(|i| json!({"id": i}).as_object().cloned().unwrap_or_default()).collect();
//!         Box::pin(futures_util::stream::iter([Ok(rows.into())]))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = DualResponseServer::builder()
//!     .base_url("https://api.example.com/resources")
//!     .executor("numbers", Numbers)
//!     .build()?;
//! let created = server.create_response(CreateResponse::new("numbers", json!({"n": 250}))).await?;
//!
//! let handler = DualHttp::builder(server).prefix("/resources").build();
//!
//! // POST /resources/{id}: the second page of 100 rows.
//! let request = http::Request::post(format!("/resources/{}", created.id))
//!     .header("content-type", "application/json")
//!     .body(Full::new(Bytes::from_static(br#"{"offset": 100, "limit": 100}"#)))?;
//! let response = handler.call(request).await?;
//! assert_eq!(response.status(), 200);
//! let page: Value = serde_json::from_slice(&response.into_body().collect().await?.to_bytes())?;
//! assert_eq!((page["returned_count"].as_u64(), page["next_offset"].as_u64()), (Some(100), Some(200)));
//!
//! // Errors are rendered, never returned: an unknown field is a 400 naming it.
//! let request = http::Request::post(format!("/resources/{}", created.id))
//!     .header("content-type", "application/json")
//!     .body(Full::new(Bytes::from_static(br#"{"page": 2}"#)))?;
//! let response = handler.call(request).await?;
//! assert_eq!(response.status(), 400);
//! let error: Value = serde_json::from_slice(&response.into_body().collect().await?.to_bytes())?;
//! assert_eq!(error["error"], "invalid_request");
//! assert!(error["message"].as_str().unwrap_or_default().contains("`page`"));
//! # Ok(()) }
//! ```

#[cfg(feature = "arrow")]
mod arrow;
mod auth;
mod body;
mod body_error;
mod coding;
#[cfg(feature = "compression")]
mod compress;
mod config;
mod cors;
mod csv;
mod encode;
mod execute;
mod export;
mod future;
mod handler;
mod link;
mod media;
pub mod metrics;
#[cfg(feature = "parquet")]
mod parquet;
mod parse;
mod query;
mod refine;
mod rejection;
mod render;
mod route;
#[cfg(feature = "tower")]
mod tower;
mod view;

pub use auth::{Anonymous, Authorize, CallerFromExtensions, OwnerFn};
pub use body::ResponseBody;
pub use body_error::BodyError;
pub use coding::ContentCoding;
pub use config::{DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, DualHttpBuilder, HttpConfig};
pub use cors::Cors;
pub use csv::CsvFormulas;
pub use future::ResponseFuture;
pub use handler::DualHttp;
pub use media::ExportFormat;
#[cfg(feature = "parquet")]
pub use parquet::DEFAULT_PARQUET_ROW_GROUP_ROWS;

/// The boxed error request bodies may fail with (`B::Error: Into<BoxError>`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
