//! [`DatabaseMcp`]: a complete MCP server (rmcp's `ServerHandler`) for a database behind a
//! dual-response server: the tools `query` and `describe_schema`, the caller's results as
//! resources (`resources/list`, `resources/templates/list`, `resources/read`) and the prompts
//! `explore_result` and `answer_from_data`; a client that declares the tasks extension gets each
//! `query` as a durable task. Mount it with rmcp's transport of your choice.

use dual_core::mcp::RenderOptions;
use dual_server::DualResponseServer;
use dual_sql::SchemaCache;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::sql_tools::{
    DESCRIBE_SCHEMA_TOOL, QUERY_TOOL, call_describe_schema, call_query, describe_schema_tool, query_request,
    query_tool,
};
use crate::{DualTasks, Prompts, ResultSurface};

/// An MCP server for one database: `query` runs the executor registered for `kind` (the model's
/// SQL, e.g. `SqliteDb::sql_executor` or `PgDb::sql_executor`) and `describe_schema` reads
/// `schema`. Each caller's results are bound to the caller the HTTP layer authenticated
/// ([`caller_from_extensions`](crate::caller_from_extensions)). Cheap to clone: give rmcp's
/// session factory a clone per session (each clone has its own resource subscriptions).
#[derive(Debug)]
pub struct DatabaseMcp {
    server: DualResponseServer,
    schema: SchemaCache,
    kind: String,
    tools: Vec<Tool>,
    /// The results, their subscriptions and the prompts (this session's).
    surface: ResultSurface,
    /// `query` calls of clients that declare tasks, kept in the server's store.
    tasks: DualTasks,
    name: String,
}

/// A handler for another session: the same server, tools and prompts, and subscriptions of its
/// own (a session's subscriptions are never another session's).
impl Clone for DatabaseMcp {
    fn clone(&self) -> Self {
        Self {
            server: self.server.clone(),
            schema: self.schema.clone(),
            kind: self.kind.clone(),
            tools: self.tools.clone(),
            surface: self.surface.for_new_session(),
            tasks: self.tasks.clone(),
            name: self.name.clone(),
        }
    }
}

impl DatabaseMcp {
    /// The server of `kind` on `server`, with `schema`; `description` tells the model what the
    /// database holds (it opens the `query` tool's description).
    pub fn new(
        server: DualResponseServer,
        schema: SchemaCache,
        kind: impl Into<String>,
        description: &str,
    ) -> Self {
        Self {
            tasks: DualTasks::new(server.clone()),
            surface: ResultSurface::new(
                server.clone(),
                Prompts::new(QUERY_TOOL).schema_tool(DESCRIBE_SCHEMA_TOOL),
            ),
            server,
            schema,
            kind: kind.into(),
            tools: vec![query_tool(description), describe_schema_tool()],

            name: "dual-response".to_owned(),
        }
    }

    /// The name the server gives in `initialize` (`dual-response` by default).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

impl ServerHandler for DatabaseMcp {
    crate::result_surface_handlers!(surface: surface, tasks: tasks);

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Call describe_schema to see the tables and columns, then query with one read-only SQL \
                 statement. Each result gives a sample, the exact total count and a link to every row: \
                 report the count and point the user to the full result rather than listing rows.",
        )
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let version = crate::protocol_version(context.protocol_version().as_ref());
        Ok(crate::tools_list_for_version(&self.tools, version))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.as_ref();
        match request.name.as_ref() {
            QUERY_TOOL => {
                let caller = crate::caller_from_extensions(&context.extensions);
                let version = crate::protocol_version(context.protocol_version().as_ref());
                let options = RenderOptions::new(version);
                if crate::client_supports_tasks(&context) {
                    // A durable task, readable and cancellable on every instance (§9).
                    let request = match query_request(&self.kind, arguments, caller.owner_name()) {
                        Ok(request) => request,
                        Err(message) => return Ok(crate::error_result(message).into()),
                    };
                    let progress = crate::ProgressReporter::from_context(&context);
                    let task = self.tasks.spawn(caller, request, options, progress).await?;
                    return Ok(CallToolResponse::Task(task));
                }
                Ok(
                    call_query(&self.server, &self.kind, arguments, caller.owner_name(), &options)
                        .await
                        .into(),
                )
            }
            DESCRIBE_SCHEMA_TOOL => Ok(call_describe_schema(&self.schema, arguments).await.into()),
            other => Err(ErrorData::invalid_params(format!("unknown tool `{other}`"), None)),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.surface.list_resources(request, &context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.surface
            .read_resource(&request, &context)
            .await
            .map(Into::into)
    }
}
