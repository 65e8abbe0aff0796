//! The `refine` tool (feature `server`): SQL over a stored result, answered as a new dual response
//! without touching the database (docs/DESIGN.md §4, *Refining a result*). Listed by
//! [`DatabaseMcp`](crate::DatabaseMcp) when its server has a refine engine
//! ([`DualResponseServer::can_refine`]).

use dual_core::DualResponse;
use dual_core::mcp::RenderOptions;
use dual_core::uri::parse_resource_uri;
use dual_server::{Caller, DualResponseServer, REFINE_KIND};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::arguments::reject_unknown_arguments;
use crate::tool_result::{
    ErrorResultOptions, error_result, output_schema, server_error_result, to_call_tool_result,
};

/// The name of [`refine_tool`].
pub const REFINE_TOOL: &str = REFINE_KIND;

/// The `refine` tool: input `{"uri": string, "sql": string}`, output dual-core's output schema.
#[must_use]
pub fn refine_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "The resource URI of a result returned earlier (resource://…)."},
            "sql": {"type": "string", "description": "One SELECT reading that result as the table `result` (SQLite's SQL): filter, project, aggregate, sort, window, join `result` with itself."}
        },
        "required": ["uri", "sql"],
        "additionalProperties": false
    });
    Tool::new(
        REFINE_TOOL,
        "Ask a follow-up question of a result already returned, without querying the database again: \
         runs one SELECT over that result's complete stored rows as the table `result` and returns a \
         new result (a sample, the exact count and a link to every row). Use it for \"only these\", \
         \"now by …\", \"the top 10\" on the rows the person is looking at. Errors come back with the \
         engine's message and the columns of `result`.",
        crate::sql_tools::object(schema),
    )
    .with_raw_output_schema(output_schema())
    .annotate(ToolAnnotations::new().read_only(true).destructive(false))
}

/// The refinement `arguments` ask for, run for `caller`; the arguments' or the server's error as a
/// tool error the model can act on.
///
/// # Errors
/// The tool result to answer with: wrong arguments, or the server's error.
pub async fn refine(
    server: &DualResponseServer,
    arguments: Option<&JsonObject>,
    caller: &Caller,
) -> Result<DualResponse, CallToolResult> {
    let none = JsonObject::new();
    let arguments = arguments.unwrap_or(&none);
    let wrong = |message: String| error_result(message, &ErrorResultOptions::default());
    reject_unknown_arguments(arguments, REFINE_TOOL, &["uri", "sql"]).map_err(wrong)?;
    let uri = match arguments.get("uri") {
        Some(Value::String(uri)) => uri.as_str(),
        None => {
            return Err(wrong(
                "the argument `uri` (a result's resource URI) is required".to_owned(),
            ));
        }
        Some(_) => {
            return Err(wrong(
                "`uri` must be a string: a result's resource URI".to_owned(),
            ));
        }
    };
    let sql = match arguments.get("sql") {
        Some(Value::String(sql)) => sql.as_str(),
        None => {
            return Err(wrong(
                "the argument `sql` (one SELECT over `result`) is required".to_owned(),
            ));
        }
        Some(_) => {
            return Err(wrong(
                "`sql` must be a string holding one SELECT over `result`".to_owned(),
            ));
        }
    };
    let scheme = &server.config().uri_scheme;
    let id = match parse_resource_uri(uri) {
        Some(parsed) if parsed.scheme == scheme && !parsed.profile && parsed.query.is_none() => parsed.id,
        _ => {
            return Err(wrong(format!(
                "`uri` must be a result's URI as a tool returned it ({scheme}://…), not `{}`",
                dual_core::escape::display_safe(uri)
            )));
        }
    };
    server
        .refine(id, sql, caller)
        .await
        .map_err(|error| server_error_result(&error, &ErrorResultOptions::default()))
}

/// Answers [`refine_tool`]: [`refine`], rendered with `options`.
pub async fn call_refine(
    server: &DualResponseServer,
    arguments: Option<&JsonObject>,
    caller: &Caller,
    options: &RenderOptions,
) -> CallToolResult {
    match refine(server, arguments, caller).await {
        Ok(response) => to_call_tool_result(&response, options),
        Err(result) => result,
    }
}
