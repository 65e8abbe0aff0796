//! Glue between the MCP *Dual Response* pattern and the official Rust MCP SDK, [`rmcp`].
//!
//! `dual-core` renders a dual response as framework-free JSON; this crate maps it to rmcp's types so an
//! rmcp server returns it from a tool and declares its output schema, serves `resources/read` for the
//! `resource://{id}` links it hands out, and so an rmcp client recognises it in a `CallToolResult`.
//!
//! * [`to_call_tool_result_with`] — a [`DualResponse`](dual_core::DualResponse) as a `CallToolResult`
//!   for the client's protocol version: the summary text and the sample as a compact table (many
//!   clients show the model only `content`), then from 2025-06-18 on a `resource_link` and
//!   `structuredContent`; earlier versions get the text blocks only. [`to_call_tool_result`] renders
//!   for the newest version; [`TextFormat::Json`](dual_core::mcp::TextFormat::Json) puts the
//!   `structuredContent` JSON in the text block instead of the table.
//! * [`protocol_version`], [`tool_for_version`], [`resource_template_for_version`] — the negotiated
//!   version of a request, and tools and templates stripped of the fields that version does not
//!   define (rmcp sends every field it has, whatever was negotiated).
//! * [`output_schema`] — dual-core's output schema as the `Arc<JsonObject>` a [`Tool`](rmcp::model::Tool)
//!   declares.
//! * [`error_result`] / [`server_error_result`] — an `isError: true` result whose text the model reads
//!   to correct its call (a SQL error, say).
//! * `server` feature (default): [`resource_templates`] for `resources/templates/list` and
//!   [`read_resource`] for `resources/read`, which returns one JSON page — the same fields as the REST
//!   page — addressed in the URI by the template `resource://{id}{?offset,limit,sort}`, e.g.
//!   `resource://{id}?offset=100&limit=100&sort=enrollment:desc`.
//! * `server` feature, long-running queries (docs/DESIGN.md §8): [`wait_for_result`] waits for a
//!   `pending` resource to be ready or failed, reporting the rows so far; [`ProgressReporter`]
//!   sends them as `notifications/progress` for a request's progress token; [`DualTasks`] runs a
//!   tool call as an MCP task on rmcp's `TaskManager` (`tasks/get`, and `tasks/cancel`, which
//!   deletes the pending resource and so stops the query) for clients that
//!   [declare tasks](client_supports_tasks); [`failure_result`] is the tool error of a failed query.
//!   [`read_resource`] answers a pending or failed resource with its status instead of a page.
//! * `client` feature: [`parse_call_tool_result`] turns a `CallToolResult` into dual-client's
//!   `ParsedDualResponse`.
//!
//! ```
//! use dual_core::{Column, ColumnType, DualResponse, ResourceId};
//! use rmcp::model::Tool;
//!
//! let tool = Tool::new("query", "Run read-only SQL", rmcp::model::JsonObject::new())
//!     .with_raw_output_schema(dual_rmcp::output_schema());
//! assert_eq!(tool.output_schema.as_ref().map(|s| s["type"].clone()), Some("object".into()));
//!
//! let response = DualResponse {
//!     id: ResourceId::new(),
//!     uri: "resource://x".into(),
//!     url: "http://127.0.0.1:8080/resources/x".into(),
//!     name: "Query Results".into(),
//!     sample: Vec::new().into(),
//!     total_count: 0,
//!     columns: vec![Column::new("id", ColumnType::Integer)],
//!     executed_at: dual_core::time::OffsetDateTime::UNIX_EPOCH,
//!     expires_at: None,
//!     status: dual_core::status::ResourceStatus::Ready,
//! };
//! let result = dual_rmcp::to_call_tool_result(&response);
//! assert_eq!(result.is_error, Some(false));
//! assert_eq!(result.content.len(), 3);
//! assert!(result.structured_content.is_some());
//! ```

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "server")]
mod progress;
#[cfg(feature = "server")]
mod resources;
mod schema;
#[cfg(feature = "server")]
mod tasks;
mod tool_result;
mod version;
#[cfg(feature = "server")]
mod wait;

#[cfg(feature = "client")]
pub use client::parse_call_tool_result;
#[cfg(feature = "server")]
pub use progress::ProgressReporter;
#[cfg(feature = "server")]
pub use resources::{
    RESOURCE_TEMPLATE_NAME, caller_from_extensions, read_resource, resource_template, resource_templates,
};
pub use schema::output_schema;
#[cfg(feature = "server")]
pub use tasks::{DualTasks, client_supports_tasks};
pub use tool_result::{error_result, error_result_within, to_call_tool_result, to_call_tool_result_with};
#[cfg(feature = "server")]
pub use tool_result::{
    failure_result, failure_result_within, server_error_result, server_error_result_within,
};
pub use version::{protocol_version, resource_template_for_version, tool_for_version};
#[cfg(feature = "server")]
pub use wait::{DEFAULT_POLL_INTERVAL, WaitError, WaitOptions, wait_for_result};

/// Re-exported so users name the same rmcp version.
pub use rmcp;
