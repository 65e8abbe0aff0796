//! The MCP side of the demo: an rmcp [`ServerHandler`] with the tools `query` and
//! `search_institutions`, and `resources/read` for the links they return.
//!
//! Long-running queries (docs/DESIGN.md §8): a client that declares the tasks extension gets a task
//! for every valid `tools/call` ([`dual_rmcp::DualTasks`]); `tasks/get` reports it, `tasks/cancel`
//! cancels the query, and a request with a progress token receives `notifications/progress` (rows
//! so far) while the query runs. Other clients get the tool result at once, `pending` when the query
//! outlives the server's `pending_after`, and read the status with `resources/read`; they receive
//! no progress notifications (the call returns within `pending_after`).
//!
//! MCP Apps (docs/DESIGN.md §4): a client that negotiated `io.modelcontextprotocol/ui` is listed
//! both tools with the result view attached, the view as a `ui://` resource and the app-only tool
//! `dual_download_link`, and gets tool results rendered as [`AppsOptions`] asks. Every other client
//! gets exactly what it got before the extension.

mod apps;
mod args;

use std::sync::Arc;

use dual_core::escape::log_error;
use dual_core::mcp::{ProtocolVersion, RenderOptions};
use dual_rmcp::apps::{
    AppsOptions, DOWNLOAD_LINK_TOOL, apps_tool_result, call_download_link, client_supports_apps, declare_apps,
};
use dual_rmcp::prompts::Prompts;
use dual_rmcp::subscriptions::SubscriptionOptions;
use dual_rmcp::tasks::{ProgressReporter, SpawnOptions, client_supports_tasks};
use dual_rmcp::tool_result::{
    ErrorResultOptions, error_result, output_schema, server_error_result, to_call_tool_result,
};
use dual_rmcp::version::{protocol_version, tools_list_for_version};
use dual_rmcp::{DualTasks, ResultSurface, caller_from_extensions};
use dual_server::{Caller, CreateResponse, DualResponseServer, ServerError};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, ErrorData,
    Implementation, JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// The read-only SQL tool.
pub const QUERY_TOOL: &str = "query";
/// The institution search tool.
pub const SEARCH_TOOL: &str = "search_institutions";

const INSTRUCTIONS: &str = "IPEDS-like data on US colleges. Tables: institutions(id, name, city, state, \
control, level, enrollment, founded) and degrees_awarded(id, institution_id, year, field, award_level, \
gender, count). Tool results carry a sample of rows and the total count; the application fetches the \
full result itself, so page through rows in the conversation (resources/read on the link with \
?offset=…&limit=…) only when the answer needs them.";

/// The demo's MCP server: a cheap clone per session around one shared [`DualResponseServer`].
#[derive(Debug, Clone)]
pub struct DemoMcp {
    server: DualResponseServer,
    tasks: DualTasks,
    tools: Arc<Vec<Tool>>,
    /// What an MCP Apps client is listed: the tools with the view, and the app-only tool.
    apps_tools: Arc<Vec<Tool>>,
    apps: AppsOptions,
    /// The results as resources, their subscriptions (this session's: one `DemoMcp` per session)
    /// and the prompts.
    surface: ResultSurface,
}

impl DemoMcp {
    /// Serves tools backed by `server` (which must have the `sql` and `institutions` kinds).
    #[must_use]
    pub fn new(server: DualResponseServer) -> Self {
        let mut tools = tools();
        if server.can_refine() {
            tools.push(dual_rmcp::refine_tool::refine_tool());
        }
        Self {
            tasks: DualTasks::new(server.clone()),
            apps_tools: Arc::new(apps::apps_tools(&tools)),
            tools: Arc::new(tools),
            apps: AppsOptions::new(),
            surface: ResultSurface::new(server.clone(), Prompts::new(QUERY_TOOL)),
            server,
        }
    }

    /// Runs task calls with `tasks` (share one between the sessions of a server, so that a
    /// `tasks/cancel` answered by any session stops a task of this instance at once).
    #[must_use]
    pub fn with_tasks(mut self, tasks: DualTasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Bounds this session's resource subscriptions as `options` asks (default:
    /// [`SubscriptionOptions::default`], 16 results polled every second).
    #[must_use]
    pub fn with_subscriptions(mut self, options: SubscriptionOptions) -> Self {
        self.surface = self.surface.subscription_options(options);
        self
    }

    /// Renders tool results for MCP Apps clients as `options` asks (default: [`AppsOptions::new`]).
    #[must_use]
    pub fn with_apps(mut self, options: AppsOptions) -> Self {
        self.apps = options;
        self
    }

    /// The request of tool `name` for `caller` (the resource belongs to its owner, if any), or the
    /// `isError` result naming the argument that is wrong; an unknown tool is an `invalid_params` error.
    ///
    /// Every `tools/call` goes through it; public so that the fuzz target `mcp_tool_args` (fuzz/ in the
    /// repository) drives the argument parsing without a session.
    ///
    /// # Errors
    ///
    /// [`ErrorData::invalid_params`] for a tool the demo does not have.
    pub fn request(
        &self,
        name: &str,
        arguments: &JsonObject,
        caller: &Caller,
    ) -> Result<Result<CreateResponse, CallToolResult>, ErrorData> {
        let max_error = self.server.config().max_error_text_bytes;
        let request = match name {
            QUERY_TOOL => args::query_request(arguments),
            SEARCH_TOOL => args::search_request(arguments),
            other => {
                let message = format!("unknown tool `{}`", dual_rmcp::arguments::echo(other));
                return Err(ErrorData::invalid_params(
                    dual_core::budget::cut_text(&message, max_error).into_owned(),
                    None,
                ));
            }
        };
        Ok(match request {
            Ok(request) => Ok(match caller.owner_name() {
                Some(owner) => request.owner(owner),
                None => request,
            }),
            Err(message) => Err(error_result(
                message,
                &ErrorResultOptions::default().max_bytes(max_error),
            )),
        })
    }

    /// Runs `request` and renders its result for `version` (and for an MCP Apps client when `apps`):
    /// `pending` when the query outlives the server's `pending_after`.
    async fn call(
        &self,
        request: CreateResponse,
        caller: &Caller,
        version: ProtocolVersion,
        apps: bool,
    ) -> CallToolResult {
        let render = RenderOptions::new(version);
        match self.server.create_response(request).await {
            Ok(response) if apps => {
                apps_tool_result(&self.server, caller, &response, &render, &self.apps).await
            }
            Ok(response) => to_call_tool_result(&response, &render),
            Err(error) => {
                log_failed_call(&error);
                let max_error = self.server.config().max_error_text_bytes;
                server_error_result(&error, &ErrorResultOptions::default().max_bytes(max_error))
            }
        }
    }
}

/// One log line for a tool call that failed: at `info` when the query was wrong (the model reads
/// the message and fixes it), at `warn` when the server could not serve it. The executor's message
/// may hold anything the SQL put there, so it is escaped.
fn log_failed_call(error: &ServerError) {
    let code = error.code().as_str();
    let detail = log_error(error);
    match error {
        ServerError::QueryExecutionFailed(_) | ServerError::CountExecutionFailed(_) => {
            tracing::info!(code, %detail, "tool call failed: the query failed");
        }
        _ => tracing::warn!(code, %detail, "tool call failed"),
    }
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
    .with_raw_output_schema(output_schema())
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
    .with_raw_output_schema(output_schema())
    .annotate(read_only);
    vec![query, search]
}

impl ServerHandler for DemoMcp {
    // Tasks on every instance (a cancel deletes the task's resource), subscriptions, prompts and
    // resource templates, as `DatabaseMcp` answers them.
    dual_rmcp::result_surface_handlers!(surface: surface, tasks: tasks);

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(declare_apps(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_tasks()
                .build(),
        ))
        .with_server_info(Implementation::new("dual-demo", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    /// Any tool by name, the app-only one included (rmcp checks `Mcp-Param-*` headers with it).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.apps_tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let version = protocol_version(context.protocol_version().as_ref());
        let tools = if client_supports_apps(&context) {
            &self.apps_tools
        } else {
            &self.tools
        };
        Ok(tools_list_for_version(tools, version))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let caller = caller_from_extensions(&context.extensions);
        let version = protocol_version(context.protocol_version().as_ref());
        let apps = client_supports_apps(&context);
        if apps && request.name == DOWNLOAD_LINK_TOOL {
            return Ok(call_download_link(&self.server, &caller, &arguments).await.into());
        }
        if request.name == dual_rmcp::refine_tool::REFINE_TOOL && self.server.can_refine() {
            let render = RenderOptions::new(version);
            let result = match dual_rmcp::refine_tool::refine(&self.server, Some(&arguments), &caller).await {
                Ok(response) if apps => {
                    apps_tool_result(&self.server, &caller, &response, &render, &self.apps).await
                }
                Ok(response) => to_call_tool_result(&response, &render),
                Err(result) => result,
            };
            return Ok(result.into());
        }
        let request = match self.request(&request.name, &arguments, &caller)? {
            Ok(request) => request,
            Err(invalid) => return Ok(invalid.into()),
        };
        if client_supports_tasks(&context) {
            let progress = ProgressReporter::from_context(&context);
            let mut options = SpawnOptions::new(RenderOptions::new(version));
            if apps {
                options = options.apps(self.apps);
            }
            let task = self.tasks.spawn(caller, request, &options, progress).await?;
            return Ok(CallToolResponse::Task(task));
        }
        Ok(self.call(request, &caller, version, apps).await.into())
    }

    /// The caller's live results, newest first, a page at a time; an MCP Apps client also gets the
    /// view, on the first page.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        dual_rmcp::apps::list_resources(&self.surface, request, &context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        dual_rmcp::apps::read_resource(&self.surface, &request, &context)
            .await
            .map(Into::into)
    }

    /// rmcp hands a standard request whose params do not parse (a `tools/call` whose `name` is a
    /// number, say) to this hook as a custom request; it is `-32602 invalid params`, not `-32601
    /// method not found`.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(dual_rmcp::protocol::custom_request_error(&request))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use dual_server::{ExecutorError, ServerError};
    use dual_testkit::logs::Logs;

    /// What SQLite says of a JSON path holding a newline and a screen clear.
    const HOSTILE: &str = "JSON path error near 'x\nFORGED\u{1b}[2J'";

    #[test]
    fn a_failed_tool_call_is_logged_on_one_line_without_escapes() {
        let (logs, _guard) = Logs::capture();
        for error in [
            ServerError::QueryExecutionFailed(ExecutorError::new(HOSTILE)),
            ServerError::CountExecutionFailed(ExecutorError::new(HOSTILE)),
            ServerError::Overloaded(ExecutorError::overloaded(HOSTILE, Duration::from_secs(1))),
        ] {
            super::log_failed_call(&error);
        }
        logs.assert_clean();
        let text = logs.text();
        assert_eq!(text.matches(r"near 'x\nFORGED\u{1b}[2J'").count(), 3, "{text}");
        assert_eq!(
            text.matches(" WARN ").count(),
            1,
            "overload is the server's problem: {text}"
        );
    }
}
