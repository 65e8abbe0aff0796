//! MCP Apps (`io.modelcontextprotocol/ui`, stable since 2026-01-26; feature `apps`): the
//! negotiation, and what a server sends to the clients that negotiated it — docs/DESIGN.md §4.
//!
//! A client negotiated the extension when its `initialize` capabilities (or, from 2026-07-28 on,
//! the request's) declare `extensions["io.modelcontextprotocol/ui"].mimeTypes` holding
//! [`dual_view::MIME_TYPE`], in a protocol version that defines `_meta` on tools (2025-06-18 on).
//! Only those clients get `_meta.ui`, the `ui://` resource, the app-only tool and the apps
//! rendering of a tool result; every other client gets exactly what it got without the feature.

mod download;
mod render;
mod surface;
mod view;

use dual_core::mcp::ProtocolVersion;
use rmcp::model::{ClientCapabilities, ExtensionCapabilities, JsonObject, ServerCapabilities};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

pub use download::{DOWNLOAD_LINK_TOOL, call_download_link, download_link_tool};
pub use render::{AppsOptions, apps_tool_result};
pub use surface::{list_resources, read_resource};
pub use view::{VIEW_NAME, read_view, view_resource, with_view};

/// The extension's identifier, the key in the `extensions` capability maps.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The legacy flat `_meta` key naming a tool's view, which hosts written before `_meta.ui` read.
pub const RESOURCE_URI_META_KEY: &str = "ui/resourceUri";

/// Whether `capabilities` declare the extension with the view's MIME type
/// (`extensions["io.modelcontextprotocol/ui"].mimeTypes` holds `text/html;profile=mcp-app`).
///
/// The pure half of [`client_supports_apps`], which also checks the protocol version.
#[must_use]
pub fn capabilities_support_apps(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .and_then(|extensions| extensions.get(EXTENSION_ID))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(dual_view::MIME_TYPE)))
}

/// Whether a client with `capabilities` that negotiated `version` gets the apps surface: it
/// declared the extension ([`capabilities_support_apps`]) and `version` defines `_meta` on tools
/// (2025-06-18 on; [`tool_for_version`](crate::version::tool_for_version) strips it before), so that the
/// app-only tool never reaches a model that cannot be told it is app-only.
#[must_use]
pub fn apps_negotiated(capabilities: Option<&ClientCapabilities>, version: ProtocolVersion) -> bool {
    // `_meta` on tools arrived with titles and output schemas (2025-06-18).
    version.has_titles() && capabilities.is_some_and(capabilities_support_apps)
}

/// Whether the client of `context` negotiated MCP Apps: [`apps_negotiated`] with the request's
/// capabilities (its `_meta` from 2026-07-28 on, else the session's `initialize`) and version.
#[must_use]
pub fn client_supports_apps(context: &RequestContext<RoleServer>) -> bool {
    let version = crate::version::protocol_version(context.protocol_version().as_ref());
    apps_negotiated(context.client_capabilities().as_ref(), version)
}

/// `capabilities` with the extension declared (`extensions["io.modelcontextprotocol/ui"] = {}`),
/// beside whatever extensions they already declare (tasks, say).
///
/// ```
/// use rmcp::model::ServerCapabilities;
///
/// let capabilities = dual_rmcp::apps::declare_apps(
///     ServerCapabilities::builder().enable_tools().enable_resources().enable_tasks().build(),
/// );
/// let json = serde_json::to_value(&capabilities).unwrap_or_default();
/// assert_eq!(json["extensions"][dual_rmcp::apps::EXTENSION_ID], serde_json::json!({}));
/// assert!(json["extensions"]["io.modelcontextprotocol/tasks"].is_object());
/// ```
#[must_use]
pub fn declare_apps(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    capabilities
        .extensions
        .get_or_insert_with(ExtensionCapabilities::new)
        .insert(EXTENSION_ID.to_owned(), JsonObject::new());
    capabilities
}

#[cfg(test)]
mod tests;
