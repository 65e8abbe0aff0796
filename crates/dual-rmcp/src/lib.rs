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
//! * [`protocol_version`], [`tool_for_version`], [`tools_list_for_version`],
//!   [`resource_template_for_version`] — the negotiated version of a request, and tools (one, or a
//!   whole `tools/list` answer) and templates stripped of the fields that version does not define
//!   (rmcp sends every field it has, whatever was negotiated).
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
//!   tool call as a durable MCP task kept in the server's store (`tasks/get`, `tasks/update` and
//!   `tasks/cancel` on any instance, for the task's owner only; cancelling deletes the resource and
//!   so stops the query) for clients that [declare tasks](client_supports_tasks);
//!   [`failure_result`] is the tool error of a failed query. [`read_resource`] answers a pending or
//!   failed resource with its status instead of a page.
//! * `server` feature, MCP across instances (docs/DESIGN.md §9): [`read_resource_for`] adds the
//!   2026-07-28 caching hints (`ttlMs`, `cacheScope`); [`list_resources`] answers `resources/list`
//!   with the caller's results, newest first, cursor-paged; [`Prompts`] serves `explore_result`
//!   and `answer_from_data`; [`Subscriptions`] serves `resources/subscribe` (sessions) and
//!   `subscriptions/listen` (2026-07-28), told of changes made on any instance; [`ResultSurface`]
//!   bundles all of it (and the template and `resources/read`) for a handler to delegate to. Feature
//!   `streamable-http`: [`StoreSessions`], rmcp's `SessionStore` over the server's store, so any
//!   instance restores a session of a client before 2026-07-28.
//! * `apps` feature, MCP Apps (`io.modelcontextprotocol/ui`, docs/DESIGN.md §4): the result view of
//!   the `dual-view` crate for hosts that render it. [`client_supports_apps`] (and the pure
//!   [`capabilities_support_apps`] / [`apps_negotiated`]) tells whether a request's client
//!   negotiated the extension; [`declare_apps`] declares it in the server's capabilities. For those
//!   clients only: [`with_view`] puts `_meta.ui.resourceUri` on a tool, [`view_resource`] is the
//!   `ui://` entry of `resources/list` and [`read_view`] its `resources/read`, [`download_link_tool`]
//!   is the app-only tool `dual_download_link` that [`call_download_link`] answers with a capability
//!   URL (no `Authorization` header needed), and [`apps_tool_result`] renders a tool result as
//!   [`AppsOptions`] asks (by default without the `resource_link` block,
//!   anthropics/claude-ai-mcp#753). Every other client gets exactly what it gets without the
//!   feature.
//! * `server` feature, a database behind the server (`dual-sqlite`, `dual-postgres`):
//!   [`describe_schema_tool`] / [`call_describe_schema`] list its tables, columns, types and
//!   nullability from a `SchemaCache`, and [`query_tool`] / [`call_query`] run one read-only SQL
//!   statement with its parameters as a dual response; [`DatabaseMcp`] is the whole MCP server
//!   (both tools, the results as resources, subscriptions and prompts) to mount with rmcp's
//!   transport.
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
//!
//! With the `apps` feature, the surface a client that negotiated MCP Apps gets:
//!
//! ```
//! # #[cfg(feature = "apps")] {
//! use dual_core::mcp::ProtocolVersion;
//! use dual_rmcp::dual_view::{MIME_TYPE, VIEW_URI};
//! use rmcp::model::{ClientCapabilities, JsonObject, ResourceContents, Tool};
//!
//! let host: ClientCapabilities = serde_json::from_value(serde_json::json!({
//!     "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
//! }))
//! .expect("capabilities");
//! assert!(dual_rmcp::apps_negotiated(Some(&host), ProtocolVersion::V2025_11_25));
//! assert!(!dual_rmcp::apps_negotiated(Some(&ClientCapabilities::default()), ProtocolVersion::V2025_11_25));
//!
//! let tool = dual_rmcp::with_view(Tool::new("query", "Run read-only SQL", JsonObject::new()));
//! let meta = serde_json::to_value(&tool.meta).unwrap_or_default();
//! assert_eq!(meta["ui"]["resourceUri"], VIEW_URI);
//! assert_eq!(dual_rmcp::view_resource().mime_type.as_deref(), Some(MIME_TYPE));
//! let read = dual_rmcp::read_view(VIEW_URI).expect("the view");
//! assert!(matches!(&read.contents[0], ResourceContents::TextResourceContents { text, .. }
//!     if text.starts_with("<!doctype html>")));
//! let app_only = serde_json::to_value(dual_rmcp::download_link_tool()).unwrap_or_default();
//! assert_eq!(app_only["_meta"]["ui"]["visibility"], serde_json::json!(["app"]));
//! # }
//! ```

#[cfg(feature = "apps")]
mod apps;
mod arguments;
#[cfg(feature = "client")]
mod client;
#[cfg(feature = "server")]
mod database_mcp;
#[cfg(feature = "server")]
mod handlers;
#[cfg(feature = "server")]
mod listing;
#[cfg(feature = "server")]
mod progress;
#[cfg(feature = "server")]
mod prompts;
pub mod protocol;
#[cfg(feature = "server")]
mod resources;
mod schema;
#[cfg(feature = "streamable-http")]
mod sessions;
#[cfg(feature = "server")]
mod sql_tools;
#[cfg(feature = "server")]
mod subscriptions;
#[cfg(feature = "server")]
mod surface;
#[cfg(feature = "server")]
mod tasks;
mod tool_result;
mod version;
#[cfg(feature = "server")]
mod wait;

#[cfg(feature = "apps")]
pub use apps::{
    AppsOptions, DOWNLOAD_LINK_TOOL, EXTENSION_ID, RESOURCE_URI_META_KEY, VIEW_NAME, apps_negotiated,
    apps_tool_result, call_download_link, capabilities_support_apps, client_supports_apps, declare_apps,
    download_link_tool, read_view, view_resource, with_view,
};
pub use arguments::{MAX_ECHO_BYTES, echo, reject_unknown_arguments};
#[cfg(feature = "client")]
pub use client::parse_call_tool_result;
#[cfg(feature = "server")]
pub use database_mcp::DatabaseMcp;
#[cfg(feature = "server")]
pub use listing::{DEFAULT_LIST_PAGE_SIZE, MAX_LIST_PAGE_SIZE, list_resources};
#[cfg(feature = "server")]
pub use progress::ProgressReporter;
#[cfg(feature = "server")]
pub use prompts::{ANSWER_FROM_DATA_PROMPT, EXPLORE_RESULT_PROMPT, MAX_PROMPT_ARGUMENT_BYTES, Prompts};
#[cfg(feature = "server")]
pub use resources::{
    PINNED_TTL, RESOURCE_TEMPLATE_NAME, caller_from_extensions, read_resource, read_resource_for,
    resource_template, resource_templates,
};
pub use schema::output_schema;
#[cfg(feature = "streamable-http")]
pub use sessions::{DEFAULT_SESSION_TTL, StoreSessions};
#[cfg(feature = "server")]
pub use sql_tools::{
    DESCRIBE_SCHEMA_TOOL, MAX_DESCRIBE_BYTES, QUERY_TOOL, call_describe_schema, call_query,
    describe_schema_tool, query_request, query_tool,
};
#[cfg(feature = "server")]
pub use subscriptions::{
    DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_SUBSCRIPTION_POLL, SubscriptionOptions, Subscriptions,
};
#[cfg(feature = "server")]
pub use surface::ResultSurface;
#[cfg(feature = "server")]
pub use tasks::{DEFAULT_TASK_POLL_INTERVAL, DualTasks, TASK_RETENTION_MARGIN, client_supports_tasks};
pub use tool_result::{error_result, error_result_within, to_call_tool_result, to_call_tool_result_with};
#[cfg(feature = "server")]
pub use tool_result::{
    failure_result, failure_result_within, server_error_result, server_error_result_within,
};
pub use version::{
    protocol_version, resource_template_for_version, tool_for_version, tools_list_for_version,
};
#[cfg(feature = "server")]
pub use wait::{DEFAULT_POLL_INTERVAL, ReadFailed, WaitError, WaitOptions, wait_for_result};

/// Re-exported (feature `apps`) so users name the view the server lists.
#[cfg(feature = "apps")]
pub use dual_view;
/// Re-exported so users name the same rmcp version.
pub use rmcp;
