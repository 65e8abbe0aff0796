//! [`DatabaseMcp`]: a complete MCP server (rmcp's `ServerHandler`) for a database behind a
//! dual-response server: the tools `query` and `describe_schema`, the caller's results as
//! resources (`resources/list`, `resources/templates/list`, `resources/read`) and the prompts
//! `explore_result` and `answer_from_data`; a client that declares the tasks extension gets each
//! `query` as a durable task. Mount it with rmcp's transport of your choice.
//!
//! MCP Apps (feature `apps`, docs/DESIGN.md §4): a client that negotiated
//! `io.modelcontextprotocol/ui` is listed `query` with the result view attached, the view as a
//! `ui://` resource and the app-only tool `dual_download_link`, and gets `query` results rendered
//! as [`AppsOptions`](crate::apps::AppsOptions) asks ([`DatabaseMcp::with_apps`]). Every other
//! client gets exactly what it gets without the feature.

#[cfg(feature = "apps")]
mod apps;

use dual_core::mcp::RenderOptions;
use dual_server::DualResponseServer;
use dual_sql::SchemaCache;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorData, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};

#[cfg(feature = "apps")]
use crate::apps::{AppsOptions, DOWNLOAD_LINK_TOOL, call_download_link, client_supports_apps};
use crate::prompts::Prompts;
use crate::sql_tools::{
    DESCRIBE_SCHEMA_TOOL, QUERY_TOOL, call_describe_schema, call_query, describe_schema_tool, query_request,
    query_tool,
};
use crate::subscriptions::SubscriptionOptions;
use crate::tasks::{DualTasks, ProgressReporter, SpawnOptions, client_supports_tasks};
use crate::tool_result::{ErrorResultOptions, error_result};
use crate::version::{protocol_version, tools_list_for_version};
use crate::{ResultSurface, caller_from_extensions};

/// An MCP server for one database: `query` runs the executor registered for `kind` (the model's
/// SQL, e.g. `SqliteDb::sql_executor` or `PgDb::sql_executor`) and `describe_schema` reads
/// `schema`. Each caller's results are bound to the caller the HTTP layer authenticated
/// ([`caller_from_extensions`]). With the feature `apps`, a client that negotiated MCP Apps also
/// gets the result view ([`DatabaseMcp::with_apps`]). Cheap to clone: give rmcp's
/// session factory a clone per session (each clone has its own resource subscriptions).
#[derive(Debug)]
pub struct DatabaseMcp {
    server: DualResponseServer,
    schema: SchemaCache,
    kind: String,
    tools: Vec<Tool>,
    /// What a client that negotiated MCP Apps is listed, and how its results are rendered.
    #[cfg(feature = "apps")]
    apps: apps::Apps,
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
            #[cfg(feature = "apps")]
            apps: self.apps.clone(),
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
        let mut tools = vec![query_tool(description), describe_schema_tool()];
        if server.can_refine() {
            tools.push(crate::refine_tool::refine_tool());
        }
        Self {
            tasks: DualTasks::new(server.clone()),
            surface: ResultSurface::new(
                server.clone(),
                Prompts::new(QUERY_TOOL).schema_tool(DESCRIBE_SCHEMA_TOOL),
            ),
            server,
            schema,
            kind: kind.into(),
            #[cfg(feature = "apps")]
            apps: apps::Apps::new(&tools),
            tools,
            name: "dual-response".to_owned(),
        }
    }

    /// The name the server gives in `initialize` (`dual-response` by default).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Bounds each session's resource subscriptions as `options` asks (default
    /// [`SubscriptionOptions::default`]: 16 results a session, each read from the store every
    /// second). Every clone (one per session) starts with no subscription and these bounds.
    #[must_use]
    pub fn with_subscriptions(mut self, options: SubscriptionOptions) -> Self {
        self.surface = self.surface.subscription_options(options);
        self
    }

    /// Renders `query` results for clients that negotiated MCP Apps as `options` asks (feature
    /// `apps`; default [`AppsOptions::new`]: no `resource_link` block, no download link line).
    ///
    /// Whatever the options, such a client (`io.modelcontextprotocol/ui` with the view's MIME type,
    /// protocol 2025-06-18 or later) is listed `query` with the result view attached
    /// (`_meta.ui.resourceUri`), the view as a `ui://` resource and the app-only tool
    /// `dual_download_link`; every other client gets exactly what it gets without the feature.
    #[cfg(feature = "apps")]
    #[must_use]
    pub fn with_apps(mut self, options: AppsOptions) -> Self {
        self.apps.options = options;
        self
    }

    /// Every tool this server answers, the app-only one included.
    #[cfg(feature = "apps")]
    fn all_tools(&self) -> &[Tool] {
        &self.apps.tools
    }

    /// Every tool this server answers.
    #[cfg(not(feature = "apps"))]
    fn all_tools(&self) -> &[Tool] {
        &self.tools
    }
}

impl ServerHandler for DatabaseMcp {
    crate::result_surface_handlers!(surface: surface, tasks: tasks);

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_tasks()
            .build();
        #[cfg(feature = "apps")]
        let capabilities = crate::apps::declare_apps(capabilities);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Call describe_schema to see the tables and columns, then query with one read-only SQL \
                 statement. Each result gives a sample, the exact total count and a link to every row: \
                 report the count and point the user to the full result rather than listing rows.",
            )
    }

    /// Any tool by name, the app-only one included (rmcp checks `Mcp-Param-*` headers with it).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.all_tools().iter().find(|tool| tool.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let version = protocol_version(context.protocol_version().as_ref());
        #[cfg(feature = "apps")]
        if client_supports_apps(&context) {
            return Ok(tools_list_for_version(&self.apps.tools, version));
        }
        Ok(tools_list_for_version(&self.tools, version))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.as_ref();
        let caller = caller_from_extensions(&context.extensions);
        // `Some` for a client that negotiated MCP Apps.
        #[cfg(feature = "apps")]
        let apps = client_supports_apps(&context).then_some(self.apps.options);
        match request.name.as_ref() {
            QUERY_TOOL => {
                let version = protocol_version(context.protocol_version().as_ref());
                let options = RenderOptions::new(version);
                if client_supports_tasks(&context) {
                    // A durable task, readable and cancellable on every instance (§9).
                    let request = match query_request(&self.kind, arguments, caller.owner_name()) {
                        Ok(request) => request,
                        Err(message) => {
                            return Ok(error_result(message, &ErrorResultOptions::default()).into());
                        }
                    };
                    let progress = ProgressReporter::from_context(&context);
                    let spawn = SpawnOptions::new(options);
                    #[cfg(feature = "apps")]
                    let spawn = match apps {
                        Some(apps) => spawn.apps(apps),
                        None => spawn,
                    };
                    let task = self.tasks.spawn(caller, request, &spawn, progress).await?;
                    return Ok(CallToolResponse::Task(task));
                }
                #[cfg(feature = "apps")]
                if let Some(apps) = apps {
                    let result =
                        apps::call_query(&self.server, &self.kind, arguments, &caller, &options, &apps).await;
                    return Ok(result.into());
                }
                Ok(
                    call_query(&self.server, &self.kind, arguments, caller.owner_name(), &options)
                        .await
                        .into(),
                )
            }
            crate::refine_tool::REFINE_TOOL if self.server.can_refine() => {
                let version = protocol_version(context.protocol_version().as_ref());
                let options = RenderOptions::new(version);
                #[cfg(feature = "apps")]
                if let Some(apps) = apps {
                    return Ok(
                        apps::call_refine(&self.server, arguments, &caller, &options, &apps)
                            .await
                            .into(),
                    );
                }
                Ok(
                    crate::refine_tool::call_refine(&self.server, arguments, &caller, &options)
                        .await
                        .into(),
                )
            }
            DESCRIBE_SCHEMA_TOOL => {
                let mut result = call_describe_schema(&self.schema, arguments).await;
                // `structuredContent` arrived with 2025-06-18: an older client gets the same JSON as
                // text only, not a field its version does not define.
                if !protocol_version(context.protocol_version().as_ref()).has_structured_content() {
                    result.structured_content = None;
                }
                Ok(result.into())
            }
            // The app-only tool, for the view of a client that negotiated MCP Apps.
            #[cfg(feature = "apps")]
            DOWNLOAD_LINK_TOOL if apps.is_some() => {
                let arguments = arguments.cloned().unwrap_or_default();
                Ok(call_download_link(&self.server, &caller, &arguments).await.into())
            }
            other => Err(ErrorData::invalid_params(format!("unknown tool `{other}`"), None)),
        }
    }

    /// The caller's live results, newest first, a page at a time; a client that negotiated MCP
    /// Apps also gets the view, on the first page.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        #[cfg(feature = "apps")]
        {
            crate::apps::list_resources(&self.surface, request, &context).await
        }
        #[cfg(not(feature = "apps"))]
        {
            self.surface.list_resources(request, &context).await
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        #[cfg(feature = "apps")]
        let read = crate::apps::read_resource(&self.surface, &request, &context).await;
        #[cfg(not(feature = "apps"))]
        let read = self.surface.read_resource(&request, &context).await;
        read.map(Into::into)
    }

    /// rmcp passes a standard request whose params do not parse to this hook as a custom request:
    /// it is `-32602 invalid params` ([`crate::protocol`]), not `-32601 method not found`.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(crate::protocol::custom_request_error(&request))
    }
}
