//! MCP Apps in [`DatabaseMcp`](super::DatabaseMcp) (feature `apps`, docs/DESIGN.md §4): what a
//! client that negotiated `io.modelcontextprotocol/ui` gets beside what every client gets.

use dual_core::mcp::RenderOptions;
use dual_server::{Caller, DualResponseServer};
use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::apps::{AppsOptions, apps_tool_result, download_link_tool, with_view};
use crate::refine_tool::REFINE_TOOL;
use crate::sql_tools::{QUERY_TOOL, query_request};
use crate::tool_result::{ErrorResultOptions, error_result, server_error_result};

/// The apps surface of one server: its tools as an apps client is listed them, and the options
/// its `query` results are rendered with.
#[derive(Debug, Clone)]
pub(super) struct Apps {
    /// `query` with the view attached, the other tools as they are, then `dual_download_link`.
    pub(super) tools: Vec<Tool>,
    /// How `query` results are rendered for an apps client.
    pub(super) options: AppsOptions,
}

impl Apps {
    /// The apps surface over `tools` (those every client is listed), rendering with the default
    /// [`AppsOptions`]. Only `query` and `refine` return results, so only they carry the view.
    pub(super) fn new(tools: &[Tool]) -> Self {
        let tools = tools
            .iter()
            .cloned()
            .map(|tool| {
                if tool.name == QUERY_TOOL || tool.name == REFINE_TOOL {
                    with_view(tool)
                } else {
                    tool
                }
            })
            .chain([download_link_tool()])
            .collect();
        Self {
            tools,
            options: AppsOptions::new(),
        }
    }
}

/// `query` for an apps client, outside a task: as [`call_query`](crate::sql_tools::call_query),
/// the ready response rendered by [`apps_tool_result`] for `caller`.
pub(super) async fn call_query(
    server: &DualResponseServer,
    kind: &str,
    arguments: Option<&JsonObject>,
    caller: &Caller,
    render: &RenderOptions,
    options: &AppsOptions,
) -> CallToolResult {
    let request = match query_request(kind, arguments, caller.owner_name()) {
        Ok(request) => request,
        Err(message) => return error_result(message, &ErrorResultOptions::default()),
    };
    match server.create_response(request).await {
        Ok(response) => apps_tool_result(server, caller, &response, render, options).await,
        Err(error) => server_error_result(&error, &ErrorResultOptions::default()),
    }
}

/// `refine` for an apps client: as [`call_refine`](crate::refine_tool::call_refine), the response
/// rendered by [`apps_tool_result`] for `caller`.
pub(super) async fn call_refine(
    server: &DualResponseServer,
    arguments: Option<&JsonObject>,
    caller: &Caller,
    render: &RenderOptions,
    options: &AppsOptions,
) -> CallToolResult {
    match crate::refine_tool::refine(server, arguments, caller).await {
        Ok(response) => apps_tool_result(server, caller, &response, render, options).await,
        Err(result) => result,
    }
}
