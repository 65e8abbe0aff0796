//! The app-only tool `dual_download_link`: the view asks it for a capability URL (a download, or
//! the view as a REST page) and hands it to the host with `ui/download-file` (a host that offers it)
//! or `ui/open-link`.

use std::str::FromStr;
use std::sync::Arc;

use dual_core::page::parse_sort_param;
use dual_core::range::RowRange;
use dual_core::time::OffsetDateTime;
use dual_core::time::format_description::well_known::Rfc3339;
use dual_core::uri::parse_resource_uri;
use dual_core::{ResourceId, Sort};
use dual_server::{Caller, DownloadLink, DualResponseServer, LinkFormat, ServerError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::view::set_ui_field;
use crate::arguments::{echo, reject_unknown_arguments};
use crate::tool_result::{ErrorResultOptions, error_result, server_error_result};

/// The name of the app-only tool.
pub const DOWNLOAD_LINK_TOOL: &str = "dual_download_link";

/// The arguments the tool takes.
const ARGUMENTS: [&str; 4] = ["uri", "format", "sort", "view"];

/// The app-only tool `dual_download_link` (`_meta.ui.visibility: ["app"]`: the host hides it from
/// the model and lets the view call it). Input `{"uri": "resource://…", "format":
/// "csv"|"ndjson"|"json"|"arrow"|"parquet", "sort"?: "field[:asc|desc]", "view"?: bool}`; output
/// `{"url", "expires_at"}`. List it only to clients that
/// [negotiated the extension](super::client_supports_apps); [`call_download_link`] answers it.
#[must_use]
pub fn download_link_tool() -> Tool {
    let input = object(json!({
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "The resource URI of a tool result (resource://…)."},
            "format": {"type": "string", "enum": ["csv", "ndjson", "json", "arrow", "parquet"],
                       "description": "The download's format; required unless `view` is true."},
            "sort": {"type": "string", "description": "Sort the rows: field or field:asc|desc."},
            "view": {"type": "boolean",
                     "description": "Link the result view as a web page instead of a download (`format` is then ignored, and `sort` refused: the view sorts itself)."}
        },
        "required": ["uri"],
        "additionalProperties": false
    }));
    let output = object(json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The capability URL; it needs no Authorization header."},
            "expires_at": {"type": "string", "format": "date-time"}
        },
        "required": ["url", "expires_at"]
    }));
    let mut tool = Tool::new(
        DOWNLOAD_LINK_TOOL,
        "A short-lived link to download every row of a result (or to open it as a web page), for the \
         result view.",
        input,
    )
    .with_raw_output_schema(Arc::new(output))
    .annotate(ToolAnnotations::new().read_only(true).destructive(false));
    let mut meta = MetaObject::new();
    set_ui_field(&mut meta, "visibility", json!(["app"]));
    tool.meta = Some(meta);
    tool
}

/// Answers a `tools/call` of [`DOWNLOAD_LINK_TOOL`] with `arguments` for `caller` (the caller of
/// the MCP request: a view's calls carry its host's session): a data link from
/// [`DualResponseServer::download_link`] (the whole result, in `format`, sorted as asked) or with
/// `"view": true` a page link from [`DualResponseServer::view_link`]. The result holds the URL as
/// its text and `{"url", "expires_at"}` (RFC 3339) as `structuredContent`.
///
/// A wrong argument is an `isError` result naming the field; a URI that is not one of this
/// server's, an unknown or expired id, or another owner's id is `isError` "not found" (nothing
/// says whether it exists). Error texts are cut to the server's `max_error_text_bytes`.
pub async fn call_download_link(
    server: &DualResponseServer,
    caller: &Caller,
    arguments: &JsonObject,
) -> CallToolResult {
    let max_error = ErrorResultOptions::default().max_bytes(server.config().max_error_text_bytes);
    let request = match LinkRequest::parse(arguments, &server.config().uri_scheme) {
        Ok(request) => request,
        Err(message) => return error_result(message, &max_error),
    };
    let minted = match request.target {
        Target::View => server.view_link(request.id, caller).await,
        // The export's checks run before signing (a pending or failed resource, a sort on no
        // column), so a link is never dead on arrival.
        Target::Data { format, sort } => {
            server
                .download_link(request.id, caller, format, RowRange::ALL, sort)
                .await
        }
    };
    match minted {
        Ok(link) => link_result(&link),
        Err(error) => mint_error(&request.uri, error, &max_error),
    }
}

/// The tool error for a link that could not be minted.
fn mint_error(uri: &str, error: ServerError, max_error: &ErrorResultOptions) -> CallToolResult {
    match error {
        ServerError::ResourceNotFound | ServerError::ResourceExpired => {
            error_result(format!("resource not found or expired: {}", echo(uri)), max_error)
        }
        ServerError::InvalidRequest(error) => error_result(error.to_string(), max_error),
        error => server_error_result(&error, max_error),
    }
}

/// The tool result of a minted link.
fn link_result(link: &DownloadLink) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(link.url.clone())]);
    result.structured_content = Some(json!({
        "url": link.url,
        "expires_at": rfc3339(link.expires_at),
    }));
    result
}

/// `at` in RFC 3339 (`2026-01-26T10:00:00Z`).
pub(super) fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_default()
}

/// What a call asks for.
#[derive(Debug)]
struct LinkRequest {
    uri: String,
    id: ResourceId,
    target: Target,
}

/// A download, or the view page.
#[derive(Debug)]
enum Target {
    Data { format: LinkFormat, sort: Option<Sort> },
    View,
}

impl LinkRequest {
    /// Checks every argument strictly; the error names the field and what it must be.
    fn parse(arguments: &JsonObject, scheme: &str) -> Result<Self, String> {
        reject_unknown_arguments(arguments, DOWNLOAD_LINK_TOOL, &ARGUMENTS)?;
        let uri = match arguments.get("uri") {
            Some(Value::String(uri)) => uri,
            None | Some(Value::Null) => {
                return Err("`uri` is required: the resource URI of a tool result (resource://…)".to_owned());
            }
            Some(_) => {
                return Err(
                    "`uri` must be a string: the resource URI of a tool result (resource://…)".to_owned(),
                );
            }
        };
        let id = parse_resource_uri(uri)
            .filter(|parsed| parsed.scheme == scheme && parsed.query.is_none() && !parsed.profile)
            .map(|parsed| parsed.id)
            .ok_or_else(|| {
                format!(
                    "`uri` must be the resource URI of a tool result, {scheme}://ID without a query; got `{}`",
                    echo(uri)
                )
            })?;
        let view = match arguments.get("view") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(view)) => *view,
            Some(_) => return Err("`view` must be a boolean".to_owned()),
        };
        if view {
            // The view page sorts itself and offers every format: neither applies to its link.
            if arguments.get("sort").is_some_and(|sort| !sort.is_null()) {
                return Err("`sort` does not apply with `view`: the view sorts the result itself".to_owned());
            }
            return Ok(Self {
                uri: uri.clone(),
                id,
                target: Target::View,
            });
        }
        let format = match arguments.get("format") {
            None | Some(Value::Null) => None,
            Some(Value::String(format)) => Some(LinkFormat::from_str(format).map_err(|_| {
                format!(
                    "`format` must be \"csv\", \"ndjson\", \"json\", \"arrow\" or \"parquet\"; got `{}`",
                    echo(format)
                )
            })?),
            Some(_) => {
                return Err(
                    "`format` must be a string: \"csv\", \"ndjson\", \"json\", \"arrow\" or \"parquet\""
                        .to_owned(),
                );
            }
        };
        let sort = match arguments.get("sort") {
            None | Some(Value::Null) => None,
            Some(Value::String(sort)) => Some(parse_sort_param(sort).map_err(|error| {
                format!(
                    "`sort` must be field or field:asc|desc ({error}); got `{}`",
                    echo(sort)
                )
            })?),
            Some(_) => return Err("`sort` must be a string: field or field:asc|desc".to_owned()),
        };
        let Some(format) = format else {
            return Err(
                "`format` is required unless `view` is true: \"csv\", \"ndjson\", \"json\", \"arrow\" or \"parquet\""
                    .to_owned(),
            );
        };
        let target = Target::Data { format, sort };
        Ok(Self {
            uri: uri.clone(),
            id,
            target,
        })
    }
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests;
