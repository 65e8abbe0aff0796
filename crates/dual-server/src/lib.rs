//! The server side of the MCP *Dual Response* pattern: [`DualResponseServer`].
//!
//! Register an executor per query kind, call [`DualResponseServer::create_response`] from your MCP
//! tool handler and return its tool result to the model; the resource it stores (the query as data,
//! never a closure) is then served page by page or as one stream — mount `dual-http`'s handler for the
//! REST API. A background sweeper purges expired resources; [`DualResponseServer::shutdown`] stops it
//! and closes the store.
//!
//! Depend on this crate when you write an MCP server; host applications want `dual-client` instead.
//!
//! ```
//! use std::sync::Arc;
//! use dual_core::Row;
//! use dual_server::{CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, QueryStart, RowStream};
//! use serde_json::{Value, json};
//!
//! /// `n` numbered rows.
//! struct Numbers;
//!
//! impl QueryExecutor for Numbers {
//!     // The one required method: the whole result, once (the server keeps it as a snapshot).
//!     fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
//!         let Some(n) = params["n"].as_u64() else {
//!             let error = ExecutorError::new("`n` must be a non-negative integer");
//!             return Box::pin(futures_util::stream::iter([Err(error)]));
//!         };
//!         start.started();
//!         let rows: Vec<Row> = (0..n)
//!             .map(|i| json!({"id": i, "label": format!("row {i}")}).as_object().cloned().unwrap_or_default())
//!             .collect();
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
//!
//! let response = server
//!     .create_response(CreateResponse::new("numbers", json!({"n": 847})).name("Numbers"))
//!     .await?;
//! assert_eq!((response.total_count, response.sample.len()), (847, 15));
//!
//! // What the MCP tool returns to the model:
//! let tool_result = serde_json::to_value(response.tool_result())?;
//! assert_eq!(tool_result["structuredContent"]["resource"]["url"],
//!            format!("https://api.example.com/resources/{}", response.id));
//!
//! // What the REST API serves from it:
//! let anyone = dual_server::Caller::anonymous();
//! let page = server.fetch_page(response.id, &anyone, &dual_core::PageRequest::default()).await?;
//! assert_eq!((page.returned_count, page.next_offset), (100, Some(100)));
//! server.shutdown().await?;
//! # Ok(()) }
//! ```

mod access;
mod batch;
mod builder;
mod caller;
mod cancel;
mod config;
mod create;
mod creation;
mod encoded;
mod error;
mod executor;
mod executor_error;
mod export_check;
mod inner;
mod link_minting;
pub mod links;
mod live;
pub mod metrics;
mod owners;
mod pace;
mod profile;
mod profiling;
mod progress;
mod quota;
mod refine;
mod refine_engine;
mod registry;
mod renewal;
mod row_writer;
mod run;
mod runs;
mod sample;
mod scheduler;
mod server;
mod signal;
mod snapshot;
mod sorted;
mod source;
mod start;
mod stored_rows;
mod sweeper;
mod tasks;
mod typed;
mod window;

pub use batch::{JsonRows, RowBatch, RowStream};
pub use builder::DualResponseServerBuilder;
pub use caller::Caller;
pub use cancel::CancelOnDrop;
pub use config::{
    DEFAULT_CLEANUP_INTERVAL, DEFAULT_EXPIRATION, DEFAULT_MAX_ERROR_TEXT_BYTES, DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_RESOURCES, DEFAULT_MAX_SAMPLE_BYTES, DEFAULT_PENDING_AFTER,
    DEFAULT_PROGRESS_INTERVAL, DEFAULT_QUERY_LEASE, DEFAULT_QUERY_TIME_LIMIT, DEFAULT_SAMPLE_SIZE,
    DEFAULT_SHUTDOWN_GRACE, DEFAULT_SNAPSHOT_MAX_BYTES, DEFAULT_SORT_CACHE_BYTES, DEFAULT_SPOOL_WAIT,
    MAX_SAMPLE_SIZE, MAX_SPOOL_WAIT, ServerConfig,
};
pub use config::{
    DEFAULT_SORT_CONCURRENCY, DEFAULT_SORT_MAX_BYTES, DEFAULT_SORT_MAX_ROWS, DEFAULT_SORT_MEMORY_BYTES,
    DEFAULT_SORT_WAIT, SortLimits,
};
pub use create::CreateResponse;
pub use creation::DEFAULT_RESOURCE_NAME;
pub use encoded::{EncodedPage, PageFreshness};
pub use error::{
    InvalidRequest, NOT_READY_RETRY_AFTER, ServerBuildError, ServerError, ServerErrorCode, SpoolFailed,
    StoreFailed,
};
pub use executor::{
    DEFAULT_STREAM_BATCH, LiveQuery, QueryExecutor, paged_range_stream, paged_stream, take_rows,
};
pub use executor_error::ExecutorError;
pub use links::{DEFAULT_LINK_LIFETIME, DownloadLink, LinkFormat, LinkKey, MAX_LINK_LIFETIME};
pub use owners::{
    DEFAULT_OWNER_MAX_BYTES, DEFAULT_OWNER_MAX_PINS, DEFAULT_OWNER_MAX_QUERIES, DEFAULT_OWNER_MAX_RESOURCES,
    OwnerQuotas,
};
pub use pace::{Pace, Paused};
pub use quota::{QUOTA_RETRY_AFTER, Quota};
pub use refine_engine::{MAX_REFINE_SQL_BYTES, REFINE_KIND, RefineEngine, RefineInput};
pub use row_writer::{JsonColumns, JsonRowWriter};
pub use scheduler::{
    DEFAULT_BACKGROUND_QUEUE, DEFAULT_BACKGROUND_SLOTS, DEFAULT_FOREGROUND_SLOTS, SCHEDULER_RETRY_AFTER,
    SchedulerLimits,
};
pub use server::DualResponseServer;
pub use sorted::SORT_RETRY_AFTER;
pub use start::{QueryStart, Started};
pub use typed::{Typed, TypedExecutor};
pub use window::RowWindow;

pub use dual_core;
pub use dual_spool;
pub use dual_store;
