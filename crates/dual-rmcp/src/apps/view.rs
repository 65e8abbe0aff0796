//! The view as an MCP Apps resource, and the `_meta.ui` that attaches it to a tool.

use dual_view::{MIME_TYPE, VIEW_HTML, VIEW_URI};
use rmcp::model::{JsonObject, MetaObject, ReadResourceResult, Resource, ResourceContents, Tool};
use serde_json::{Value, json};

use super::RESOURCE_URI_META_KEY;

/// The name [`view_resource`] lists the view under.
pub const VIEW_NAME: &str = "dual-response-result-view";

/// The view's entry for `resources/list`: `uri` [`VIEW_URI`], `mimeType` [`MIME_TYPE`], its size and
/// `_meta.ui.prefersBorder`.
#[must_use]
pub fn view_resource() -> Resource {
    Resource::new(VIEW_URI, VIEW_NAME)
        .with_title("Result view")
        .with_description(
            "Every row of a dual-response tool result: scroll, jump, sort, download as CSV or NDJSON.",
        )
        .with_mime_type(MIME_TYPE)
        .with_size(u64::try_from(VIEW_HTML.len()).unwrap_or(u64::MAX))
        .with_meta(ui_meta(json!({"prefersBorder": true})))
}

/// Answers `resources/read` for [`VIEW_URI`]: the HTML with `mimeType` [`MIME_TYPE`] and
/// `_meta.ui` = `{csp: {}, prefersBorder: true, permissions: {clipboardWrite: {}}}` (the view
/// loads nothing from the network: the spec's restrictive default CSP fits it). `None` for any
/// other URI: pass those on to [`read_resource`](crate::resources::read_resource).
#[must_use]
pub fn read_view(uri: &str) -> Option<ReadResourceResult> {
    (uri == VIEW_URI).then(|| {
        let meta = ui_meta(json!({
            "csp": {},
            "prefersBorder": true,
            "permissions": {"clipboardWrite": {}},
        }));
        ReadResourceResult::new(vec![
            ResourceContents::text(VIEW_HTML, VIEW_URI)
                .with_mime_type(MIME_TYPE)
                .with_meta(meta),
        ])
    })
}

/// `tool` with the view attached: `_meta.ui.resourceUri` = [`VIEW_URI`] (other `_meta.ui` fields
/// kept) and the legacy flat key `_meta["ui/resourceUri"]`. List it so only to clients that
/// [negotiated the extension](super::client_supports_apps).
#[must_use]
pub fn with_view(mut tool: Tool) -> Tool {
    let meta = tool.meta.get_or_insert_with(MetaObject::new);
    set_ui_field(meta, "resourceUri", Value::from(VIEW_URI));
    meta.0
        .insert(RESOURCE_URI_META_KEY.to_owned(), Value::from(VIEW_URI));
    tool
}

/// Sets `_meta.ui.{key}` of `meta`, keeping the other fields of `_meta.ui` (made an object if it is
/// missing or is not one).
pub(super) fn set_ui_field(meta: &mut MetaObject, key: &str, value: Value) {
    let mut ui = match meta.0.remove("ui") {
        Some(Value::Object(ui)) => ui,
        _ => JsonObject::new(),
    };
    ui.insert(key.to_owned(), value);
    meta.0.insert("ui".to_owned(), Value::Object(ui));
}

/// `{"ui": ui}` as a `_meta` object.
fn ui_meta(ui: Value) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.0.insert("ui".to_owned(), ui);
    meta
}
