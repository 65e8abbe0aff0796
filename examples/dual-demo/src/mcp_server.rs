//! The MCP side of the demo: an rmcp [`ServerHandler`] with the tools `query` and
//! `search_institutions`, and `resources/read` for the links they return.

use std::sync::Arc;

use dual_server::{Caller, CreateResponse, DualResponseServer};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation, JsonObject,
    ListResourceTemplatesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::sqlite::{INSTITUTIONS_KIND, SQL_KIND};

/// The read-only SQL tool.
pub const QUERY_TOOL: &str = "query";
/// The institution search tool.
pub const SEARCH_TOOL: &str = "search_institutions";

const INSTRUCTIONS: &str = "IPEDS-like data on US colleges. Tables: institutions(id, name, city, state, \
control, level, enrollment, founded) and degrees_awarded(id, institution_id, year, field, award_level, \
gender, count). Tool results carry a sample of rows and the total count; the application fetches the \
full result itself, so never page through rows in the conversation.";

/// The demo's MCP server: a cheap clone per session around one shared [`DualResponseServer`].
#[derive(Debug, Clone)]
pub struct DemoMcp {
    server: DualResponseServer,
    tools: Arc<Vec<Tool>>,
}

impl DemoMcp {
    /// Serves tools backed by `server` (which must have the `sql` and `institutions` kinds).
    #[must_use]
    pub fn new(server: DualResponseServer) -> Self {
        Self {
            server,
            tools: Arc::new(tools()),
        }
    }

    /// Runs tool `name`; the resource it creates belongs to `caller`'s owner, if any.
    async fn call(
        &self,
        name: &str,
        arguments: &JsonObject,
        caller: &Caller,
    ) -> Result<CallToolResult, ErrorData> {
        let request = match name {
            QUERY_TOOL => match query_request(arguments) {
                Ok(request) => request,
                Err(message) => return Ok(dual_rmcp::error_result(message)),
            },
            SEARCH_TOOL => {
                let mut params = arguments.clone();
                params.retain(|_, v| !v.is_null());
                CreateResponse::new(INSTITUTIONS_KIND, Value::Object(params))
                    .name("Institution Search Results")
            }
            other => return Err(ErrorData::invalid_params(format!("unknown tool `{other}`"), None)),
        };
        let request = match caller.owner_name() {
            Some(owner) => request.owner(owner),
            None => request,
        };
        Ok(match self.server.create_response(request).await {
            Ok(response) => dual_rmcp::to_call_tool_result(&response),
            Err(error) => dual_rmcp::server_error_result(&error),
        })
    }
}

fn query_request(arguments: &JsonObject) -> Result<CreateResponse, String> {
    let sql = arguments
        .get("sql")
        .and_then(Value::as_str)
        .ok_or("`sql` is required: one read-only SELECT statement")?;
    let mut request = CreateResponse::new(SQL_KIND, json!({ "sql": sql })).name("Query Results");
    match arguments.get("sample_size") {
        None | Some(Value::Null) => {}
        Some(size) => {
            let size = size
                .as_u64()
                .filter(|n| (1..=dual_server::MAX_SAMPLE_SIZE).contains(n))
                .ok_or("`sample_size` must be an integer between 1 and 1000")?;
            request = request.sample_size(size);
        }
    }
    Ok(request)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn tools() -> Vec<Tool> {
    let read_only = ToolAnnotations::new().read_only(true).destructive(false);
    let query = Tool::new(
        QUERY_TOOL,
        "Run one read-only SQL SELECT over the IPEDS-like SQLite database (tables institutions and \
         degrees_awarded). Returns a sample of the rows, the total count and the column types, plus a \
         link the application uses to fetch every row; SQL errors come back with SQLite's message.",
        object(json!({
            "type": "object",
            "properties": {
                "sql": {"type": "string", "description": "One SELECT (or WITH … SELECT) statement."},
                "sample_size": {"type": "integer", "minimum": 1, "maximum": 1000,
                                "description": "Sample rows to return (default 15)."}
            },
            "required": ["sql"],
            "additionalProperties": false
        })),
    )
    .with_raw_output_schema(dual_rmcp::output_schema())
    .annotate(read_only.clone());
    let search = Tool::new(
        SEARCH_TOOL,
        "Search institutions by state and control. Returns a sample, the total count and a link to \
         the full result.",
        object(json!({
            "type": "object",
            "properties": {
                "state": {"type": "string", "pattern": "^[A-Za-z]{2}$", "description": "Two-letter state code, e.g. NJ."},
                "control": {"type": "string", "enum": ["public", "private"]}
            },
            "additionalProperties": false
        })),
    )
    .with_raw_output_schema(dual_rmcp::output_schema())
    .annotate(read_only);
    vec![query, search]
}

impl ServerHandler for DemoMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("dual-demo", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let caller = dual_rmcp::caller_from_extensions(&context.extensions);
        self.call(&request.name, &arguments, &caller)
            .await
            .map(Into::into)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(dual_rmcp::resource_templates(&self.server))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = dual_rmcp::caller_from_extensions(&context.extensions);
        dual_rmcp::read_resource(&self.server, &caller, &request.uri)
            .await
            .map(Into::into)
    }
}
