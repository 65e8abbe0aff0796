//! Ready-made tools for a database executor crate (`dual-sqlite`, `dual-postgres`, `dual-mysql`;
//! feature `server`): `describe_schema` (its tables, columns, types and nullability, optionally one
//! table) and `query` (one read-only SQL statement and its parameters, answered as a dual response).
//! [`DatabaseMcp`](crate::DatabaseMcp) serves both.

use dual_core::mcp::RenderOptions;
use dual_server::{CreateResponse, DualResponseServer};
use dual_sql::SchemaCache;
use dual_sql::schema::{TableSchema, closest, did_you_mean};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::arguments::reject_unknown_arguments;
use crate::tool_result::{
    ErrorResultOptions, error_result, output_schema, server_error_result, to_call_tool_result,
};

/// The name of [`describe_schema_tool`].
pub const DESCRIBE_SCHEMA_TOOL: &str = "describe_schema";
/// The name of [`query_tool`].
pub const QUERY_TOOL: &str = "query";
/// Most bytes of a `describe_schema` answer listing every table with its columns; past it, the
/// answer lists the table names only and says to ask for one table.
pub const MAX_DESCRIBE_BYTES: usize = 256 * 1024;

pub(crate) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true).destructive(false)
}

/// The `describe_schema` tool: input `{"table"?: string}`.
#[must_use]
pub fn describe_schema_tool() -> Tool {
    Tool::new(
        DESCRIBE_SCHEMA_TOOL,
        "List the database's tables and views with their columns, types and nullability (or one \
         table's, given `table`). Call it before writing a query.",
        object(json!({
            "type": "object",
            "properties": {
                "table": {"type": "string", "description": "One table or view, with or without its schema."}
            },
            "additionalProperties": false
        })),
    )
    .annotate(read_only())
}

/// Answers [`describe_schema_tool`] from `schema` (described at most once per its TTL): every table
/// with its columns as JSON (text and `structuredContent`), only their names when that passes
/// [`MAX_DESCRIBE_BYTES`], or the one table asked for. An unknown table is an error naming the
/// closest tables; unknown arguments are errors.
pub async fn call_describe_schema(schema: &SchemaCache, arguments: Option<&JsonObject>) -> CallToolResult {
    let none = JsonObject::new();
    let arguments = arguments.unwrap_or(&none);
    if let Err(message) = reject_unknown_arguments(arguments, DESCRIBE_SCHEMA_TOOL, &["table"]) {
        return error_result(message, &ErrorResultOptions::default());
    }
    let table = match arguments.get("table") {
        None => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(_) => return error_result("`table` must be a string", &ErrorResultOptions::default()),
    };
    let tables = match schema.tables().await {
        Ok(tables) => tables,
        Err(error) => return error_result(error.message(), &ErrorResultOptions::default()),
    };
    let answer = match table {
        Some(name) => match tables.iter().find(|t| t.is_named(name)) {
            Some(found) => json!({"tables": [found]}),
            None => {
                let names = tables.iter().map(|t| t.name.as_str());
                return error_result(
                    format!(
                        "there is no table or view `{name}`.{}",
                        did_you_mean(&closest(name, names, 3))
                    ),
                    &ErrorResultOptions::default(),
                );
            }
        },
        None => whole(&tables),
    };
    let text = answer.to_string();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(answer);
    result
}

/// Every table with its columns, or only the names when that is too long.
fn whole(tables: &[TableSchema]) -> Value {
    let full = json!({"tables": tables});
    if full.to_string().len() <= MAX_DESCRIBE_BYTES {
        return full;
    }
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    json!({
        "table_names": names,
        "note": "too many columns to list at once: call describe_schema with `table` for each table you need",
    })
}

/// The `query` tool: input `{"sql": string, "params"?: array | object}`, output dual-core's output
/// schema. `description` says which database and tables it reads.
#[must_use]
pub fn query_tool(description: &str) -> Tool {
    Tool::new(
        QUERY_TOOL,
        format!(
            "{description} Runs one read-only SQL statement; returns a sample of the rows, the total \
             count and the column types, plus a link the application uses to fetch every row. Errors \
             come back with the database's message."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "sql": {"type": "string", "description": "One SELECT (or WITH … SELECT) statement."},
                "params": {
                    "description": "Values bound to the statement's parameters: an array for $1/?1, … (by position), or an object for :name (SQLite only).",
                    "type": ["array", "object"]
                }
            },
            "required": ["sql"],
            "additionalProperties": false
        })),
    )
    .with_raw_output_schema(output_schema())
    .annotate(read_only())
}

/// Answers [`query_tool`]: checks the arguments, runs the executor registered for `kind` on
/// `server` through `create_response` (bound to `owner` when given) and renders the dual response
/// with `options`; the executor's or the server's error as a tool error the model can act on.
pub async fn call_query(
    server: &DualResponseServer,
    kind: &str,
    arguments: Option<&JsonObject>,
    owner: Option<&str>,
    options: &RenderOptions,
) -> CallToolResult {
    let request = match query_request(kind, arguments, owner) {
        Ok(request) => request,
        Err(message) => return error_result(message, &ErrorResultOptions::default()),
    };
    match server.create_response(request).await {
        Ok(response) => to_call_tool_result(&response, options),
        Err(error) => server_error_result(&error, &ErrorResultOptions::default()),
    }
}

/// The request [`call_query`] runs for `arguments` (`sql` and `params`, checked strictly), bound
/// to `owner`; or the message naming what is wrong (answer it with [`error_result`]). Run the
/// request as a task with [`DualTasks::spawn`](crate::tasks::DualTasks::spawn).
///
/// # Errors
/// The message of wrong arguments.
pub fn query_request(
    kind: &str,
    arguments: Option<&JsonObject>,
    owner: Option<&str>,
) -> Result<CreateResponse, String> {
    let none = JsonObject::new();
    let arguments = arguments.unwrap_or(&none);
    reject_unknown_arguments(arguments, QUERY_TOOL, &["sql", "params"])?;
    let sql = match arguments.get("sql") {
        Some(Value::String(text)) => text.clone(),
        None => return Err("the argument `sql` (one SELECT statement) is required".to_owned()),
        Some(_) => return Err("`sql` must be a string holding one SELECT statement".to_owned()),
    };
    let params = match arguments.get("params") {
        None => Value::Null,
        Some(value @ (Value::Array(_) | Value::Object(_) | Value::Null)) => value.clone(),
        Some(_) => return Err("`params` must be an array or an object".to_owned()),
    };
    let request = CreateResponse::new(kind, json!({"sql": sql, "params": params}));
    Ok(match owner {
        Some(owner) => request.owner(owner),
        None => request,
    })
}
