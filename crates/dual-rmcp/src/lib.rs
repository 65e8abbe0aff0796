//! Glue between the MCP *Dual Response* pattern and the official Rust MCP SDK, [`rmcp`].
//!
//! `dual-core` renders a dual response as framework-free JSON; this crate maps it to rmcp's types so an
//! rmcp server returns it from a tool and declares its output schema, serves `resources/read` for the
//! `resource://{id}` links it hands out, and so an rmcp client recognises it in a `CallToolResult`.
//!
//! At the root, what a server reaches first (feature `server`, the default): [`DatabaseMcp`], the
//! whole MCP server of a database (the tools `query` and `describe_schema`, the results as
//! resources, subscriptions, prompts and durable tasks) to mount with rmcp's transport;
//! [`ResultSurface`], everything a server of dual-response results answers besides its tools
//! (`resources/*`, subscriptions, prompts), for a handler to delegate to, and
//! [`result_surface_handlers!`] writing that delegation; [`DualTasks`], tool calls as durable MCP
//! tasks; [`caller_from_extensions`], the caller the HTTP layer authenticated. The rest is grouped
//! by concept:
//!
//! * [`tool_result`] — a [`DualResponse`](dual_core::DualResponse) as a `CallToolResult` rendered for
//!   the client's protocol version ([`to_call_tool_result`](tool_result::to_call_tool_result): the
//!   summary text and the sample as a compact table, then from 2025-06-18 on a `resource_link` and
//!   `structuredContent`), the [`output_schema`](tool_result::output_schema) a tool declares, and the
//!   `isError: true` results whose text the model reads to correct its call, cut as
//!   [`ErrorResultOptions`](tool_result::ErrorResultOptions) asks.
//! * [`version`] — the negotiated version of a request, and tools (one, or a whole `tools/list`
//!   answer) and templates stripped of the fields that version does not define (rmcp sends every
//!   field it has, whatever was negotiated).
//! * [`arguments`] — strict tool arguments: unknown ones refused by name.
//! * [`resources`] (`server`) — `resources/templates/list`, `resources/list` (the caller's results,
//!   newest first, cursor-paged) and `resources/read`, which returns one JSON page — the same fields
//!   as the REST page — addressed in the URI by the template `resource://{id}{?offset,limit,sort}`,
//!   e.g. `resource://{id}?offset=100&limit=100&sort=enrollment:desc`, with the 2026-07-28 caching
//!   hints when [`ReadOptions`](resources::ReadOptions) names that version; a pending or failed
//!   resource reads as its status.
//! * [`wait`] and [`tasks`] (`server`), long-running queries (docs/DESIGN.md §8):
//!   [`wait_for_result`](wait::wait_for_result) waits for a `pending` resource to be ready or failed;
//!   [`ProgressReporter`](tasks::ProgressReporter) sends the rows so far as `notifications/progress`;
//!   [`DualTasks`] runs a tool call as a durable MCP task kept in the server's store (`tasks/get`,
//!   `tasks/update` and `tasks/cancel` on any instance, for the task's owner only; cancelling
//!   deletes the resource and so stops the query) for clients that
//!   [declare tasks](tasks::client_supports_tasks).
//! * [`prompts`] and [`subscriptions`] (`server`), MCP across instances (docs/DESIGN.md §9):
//!   `explore_result` and `answer_from_data`; `resources/subscribe` (sessions) and
//!   `subscriptions/listen` (2026-07-28), told of changes made on any instance. [`sessions`]
//!   (feature `streamable-http`): rmcp's `SessionStore` over the server's store, so any instance
//!   restores a session of a client before 2026-07-28.
//! * [`sql_tools`] (`server`) — for a database behind the server (`dual-sqlite`, `dual-postgres`,
//!   `dual-mysql`): `describe_schema` lists its tables, columns, types and nullability from a
//!   `SchemaCache`, and `query` runs one read-only SQL statement with its parameters as a dual
//!   response.
//! * [`apps`] (feature `apps`), MCP Apps (`io.modelcontextprotocol/ui`, docs/DESIGN.md §4): the
//!   result view of the `dual-view` crate for hosts that render it — the negotiation, `_meta.ui` on
//!   a tool, the `ui://` resource, the app-only tool `dual_download_link` answered with a capability
//!   URL, and tool results rendered as [`AppsOptions`](apps::AppsOptions) asks (by default without
//!   the `resource_link` block, anthropics/claude-ai-mcp#753). Every other client gets exactly what
//!   it gets without the feature.
//! * [`client`] (feature `client`) — a `CallToolResult` as dual-client's `ParsedDualResponse`.
//!
//! ```
//! use dual_core::mcp::{ProtocolVersion, RenderOptions};
//! use dual_core::{Column, ColumnType, DualResponse, ResourceId};
//! use dual_rmcp::tool_result::{output_schema, to_call_tool_result};
//! use rmcp::model::Tool;
//!
//! let tool = Tool::new("query", "Run read-only SQL", rmcp::model::JsonObject::new())
//!     .with_raw_output_schema(output_schema());
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
//!     profile: dual_core::mcp::ResponseProfile::None,
//! };
//! // The newest protocol version: summary, table, resource_link and structuredContent.
//! let result = to_call_tool_result(&response, &RenderOptions::default());
//! assert_eq!(result.is_error, Some(false));
//! assert_eq!(result.content.len(), 3);
//! assert!(result.structured_content.is_some());
//! // A client of 2025-03-26: the two text blocks only.
//! let old = to_call_tool_result(&response, &RenderOptions::new(ProtocolVersion::V2025_03_26));
//! assert_eq!(old.content.len(), 2);
//! assert!(old.structured_content.is_none());
//! ```
//!
//! With the `apps` feature, the surface a client that negotiated MCP Apps gets:
//!
//! ```
//! # #[cfg(feature = "apps")] {
//! use dual_core::mcp::ProtocolVersion;
//! use dual_rmcp::apps;
//! use dual_rmcp::dual_view::{MIME_TYPE, VIEW_URI};
//! use rmcp::model::{ClientCapabilities, JsonObject, ResourceContents, Tool};
//!
//! let host: ClientCapabilities = serde_json::from_value(serde_json::json!({
//!     "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
//! }))
//! .expect("capabilities");
//! assert!(apps::apps_negotiated(Some(&host), ProtocolVersion::V2025_11_25));
//! assert!(!apps::apps_negotiated(Some(&ClientCapabilities::default()), ProtocolVersion::V2025_11_25));
//!
//! let tool = apps::with_view(Tool::new("query", "Run read-only SQL", JsonObject::new()));
//! let meta = serde_json::to_value(&tool.meta).unwrap_or_default();
//! assert_eq!(meta["ui"]["resourceUri"], VIEW_URI);
//! assert_eq!(apps::view_resource().mime_type.as_deref(), Some(MIME_TYPE));
//! let read = apps::read_view(VIEW_URI).expect("the view");
//! assert!(matches!(&read.contents[0], ResourceContents::TextResourceContents { text, .. }
//!     if text.starts_with("<!doctype html>")));
//! let app_only = serde_json::to_value(apps::download_link_tool()).unwrap_or_default();
//! assert_eq!(app_only["_meta"]["ui"]["visibility"], serde_json::json!(["app"]));
//! # }
//! ```

#[cfg(feature = "apps")]
pub mod apps;
pub mod arguments;
#[cfg(feature = "server")]
mod caller;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
mod database_mcp;
#[cfg(feature = "server")]
mod handlers;
#[cfg(feature = "server")]
pub mod prompts;
pub mod protocol;
#[cfg(feature = "server")]
pub mod refine_tool;
#[cfg(feature = "server")]
pub mod resources;
#[cfg(feature = "streamable-http")]
pub mod sessions;
#[cfg(feature = "server")]
pub mod sql_tools;
#[cfg(feature = "server")]
pub mod subscriptions;
#[cfg(feature = "server")]
mod surface;
#[cfg(feature = "server")]
pub mod tasks;
pub mod tool_result;
pub mod version;
#[cfg(feature = "server")]
pub mod wait;

#[cfg(feature = "server")]
pub use caller::caller_from_extensions;
#[cfg(feature = "server")]
pub use database_mcp::DatabaseMcp;
#[cfg(feature = "server")]
pub use surface::ResultSurface;
#[cfg(feature = "server")]
pub use tasks::DualTasks;

/// Re-exported (feature `apps`) so users name the view the server lists.
#[cfg(feature = "apps")]
pub use dual_view;
/// Re-exported so users name the same rmcp version.
pub use rmcp;
