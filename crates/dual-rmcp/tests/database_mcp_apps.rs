//! MCP Apps in `DatabaseMcp` (feature `apps`), through rmcp clients on an in-process pipe over a
//! real SQLite database: a client that negotiated `io.modelcontextprotocol/ui` gets the view on
//! `query`, the `ui://` resource, the app-only `dual_download_link` and the apps rendering of its
//! results (as tool results and as task results); every other client gets what it got before.
#![cfg(feature = "apps")]

mod common;

use common::{Fixture, args, fixture, orders_uri, text};
use dual_rmcp::DatabaseMcp;
use dual_rmcp::apps::{AppsOptions, DOWNLOAD_LINK_TOOL, EXTENSION_ID};
use dual_rmcp::dual_view::{MIME_TYPE, VIEW_URI};
use dual_rmcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents,
};
use dual_rmcp::rmcp::service::RunningService;
use dual_rmcp::rmcp::{ClientHandler, Peer, RoleClient, ServerHandler, ServiceExt};
use dual_rmcp::sql_tools::{describe_schema_tool, query_tool};
use dual_rmcp::version::{protocol_version, tools_list_for_version};
use serde_json::{Value, json};

/// What the apps rendering of a ready result adds with `AppsOptions::download_link(true)`.
const DOWNLOAD_LINE: &str = "Download every row as CSV";

impl Fixture {
    fn mcp(&self) -> DatabaseMcp {
        DatabaseMcp::new(
            self.server.clone(),
            self.db.schema().clone(),
            "sql",
            "Sales orders.",
        )
    }
}

fn has_resource_link(result: &CallToolResult) -> bool {
    result
        .content
        .iter()
        .any(|block| block.as_resource_link().is_some())
}

/// A client declaring the capabilities it was made with, in protocol `version`.
#[derive(Clone)]
struct Client {
    capabilities: ClientCapabilities,
    version: ProtocolVersion,
}

impl Client {
    /// A host that renders MCP Apps views (`extensions["io.modelcontextprotocol/ui"].mimeTypes`),
    /// with the tasks extension too when `tasks`.
    fn host(tasks: bool) -> Self {
        let mut capabilities = if tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION_ID.to_owned(), args(json!({"mimeTypes": [MIME_TYPE]})));
        Self {
            capabilities,
            version: ProtocolVersion::default(),
        }
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::new(self.capabilities.clone(), Implementation::new("host", "0"));
        config.protocol_version = self.version.clone();
        config
    }
}

/// `mcp` served on one end of an in-process pipe, and `client` on the other.
async fn connect<C: ClientHandler>(mcp: DatabaseMcp, client: C) -> RunningService<RoleClient, C> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = mcp.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client
        .serve(client_end)
        .await
        .unwrap_or_else(|e| panic!("client: {e}"))
}

async fn call(client: &Peer<RoleClient>, name: &'static str, arguments: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments)))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"))
}

async fn listed_resources(client: &Peer<RoleClient>) -> Vec<String> {
    client
        .list_resources(None)
        .await
        .unwrap_or_else(|e| panic!("resources/list: {e}"))
        .resources
        .into_iter()
        .map(|resource| resource.uri.clone())
        .collect()
}

/// The listed tools by name, as JSON.
async fn listed_tools(client: &Peer<RoleClient>) -> Vec<(String, Value)> {
    client
        .list_all_tools()
        .await
        .unwrap_or_else(|e| panic!("tools/list: {e}"))
        .into_iter()
        .map(|tool| {
            let json = serde_json::to_value(&tool).unwrap_or_default();
            (tool.name.into_owned(), json)
        })
        .collect()
}

#[tokio::test]
async fn an_apps_client_gets_the_view_the_app_only_tool_and_apps_tool_results() {
    let f = fixture("dual-rmcp-database-apps-");
    let mcp = f.mcp().with_apps(AppsOptions::new().download_link(true));
    // rmcp finds every tool by name, the app-only one too (for the `Mcp-Param-*` headers).
    for name in ["query", "describe_schema", DOWNLOAD_LINK_TOOL] {
        assert!(ServerHandler::get_tool(&mcp, name).is_some(), "{name}");
    }
    let client = connect(mcp, Client::host(false)).await;
    let declared =
        serde_json::to_value(client.peer_info().map(|info| info.capabilities.clone())).unwrap_or_default();
    assert_eq!(declared["extensions"][EXTENSION_ID], json!({}), "{declared}");

    // `query` carries the view; `describe_schema` returns no result to show; the app-only tool last.
    let tools = listed_tools(&client).await;
    let names: Vec<&str> = tools.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["query", "describe_schema", DOWNLOAD_LINK_TOOL]);
    assert_eq!(
        tools[0].1["_meta"]["ui"]["resourceUri"], VIEW_URI,
        "{}",
        tools[0].1
    );
    assert_eq!(tools[0].1["_meta"]["ui/resourceUri"], VIEW_URI, "{}", tools[0].1);
    assert!(tools[1].1.get("_meta").is_none(), "{}", tools[1].1);
    assert_eq!(
        tools[2].1["_meta"]["ui"]["visibility"],
        json!(["app"]),
        "{}",
        tools[2].1
    );

    // The view is a resource, listed first and read with its MIME type.
    assert_eq!(listed_resources(&client).await, [VIEW_URI]);
    let view = client
        .read_resource(ReadResourceRequestParams::new(VIEW_URI))
        .await
        .unwrap_or_else(|e| panic!("resources/read {VIEW_URI}: {e}"));
    match &view.contents[..] {
        [ResourceContents::TextResourceContents { text, mime_type, .. }] => {
            assert!(text.starts_with("<!doctype html>"));
            assert_eq!(mime_type.as_deref(), Some(MIME_TYPE));
        }
        other => panic!("expected the view's HTML, got {other:?}"),
    }

    // The apps rendering: no resource_link block, and the download line asked for.
    let result = call(
        &client,
        "query",
        json!({"sql": "SELECT * FROM orders ORDER BY id"}),
    )
    .await;
    let uri = orders_uri(&result);
    assert!(!has_resource_link(&result), "{result:?}");
    assert!(text(&result).contains(DOWNLOAD_LINE), "{}", text(&result));
    assert_eq!(listed_resources(&client).await, [VIEW_URI, uri.as_str()]);
    let page = client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
    assert!(
        serde_json::to_string(&page)
            .unwrap_or_default()
            .contains("\\\"total_count\\\":3")
    );

    // The view asks the app-only tool for links to the result.
    let link = call(&client, DOWNLOAD_LINK_TOOL, json!({"uri": uri, "format": "csv"})).await;
    assert_eq!(link.is_error, Some(false), "{}", text(&link));
    let url = link.structured_content.unwrap_or_default()["url"].clone();
    assert!(
        url.as_str()
            .is_some_and(|url| url.contains("/data?format=csv&expires=")),
        "{url}"
    );
    let page = call(&client, DOWNLOAD_LINK_TOOL, json!({"uri": uri, "view": true})).await;
    assert_eq!(page.is_error, Some(false), "{}", text(&page));
    let unknown = call(
        &client,
        DOWNLOAD_LINK_TOOL,
        json!({"uri": "resource://00000000000000000000000000000000", "format": "csv"}),
    )
    .await;
    assert_eq!(unknown.is_error, Some(true), "{}", text(&unknown));

    // describe_schema answers as before.
    let schema = call(&client, "describe_schema", json!({"table": "orders"})).await;
    assert_eq!(
        schema.structured_content.map(|s| s["tables"][0]["name"].clone()),
        Some(json!("orders"))
    );
    drop(client);
}

#[tokio::test]
async fn an_apps_client_gets_the_default_apps_rendering_without_with_apps() {
    let f = fixture("dual-rmcp-database-apps-");
    let client = connect(f.mcp(), Client::host(false)).await;
    let result = call(&client, "query", json!({"sql": "SELECT * FROM orders"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(!has_resource_link(&result), "{result:?}");
    assert!(!text(&result).contains(DOWNLOAD_LINE), "{}", text(&result));
    // Wrong arguments are still an isError result.
    let bad = call(&client, "query", json!({"sql": 7})).await;
    assert_eq!(bad.is_error, Some(true));
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_client_that_declares_tasks_gets_the_apps_rendering_as_the_task_result() {
    let f = fixture("dual-rmcp-database-apps-");
    let mcp = f.mcp().with_apps(AppsOptions::new().download_link(true));
    let client = connect(mcp, Client::host(true)).await;
    let (_, done) = common::orders_as_a_task(client.peer()).await;
    let result = &done["result"];
    assert_eq!(
        result["structuredContent"]["metadata"]["total_count"], 3,
        "{done}"
    );
    let content = result["content"].as_array().cloned().unwrap_or_default();
    assert!(
        content.iter().all(|block| block["type"] != "resource_link"),
        "{done}"
    );
    assert!(
        content[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(DOWNLOAD_LINE)),
        "{done}"
    );
    drop(client);
}

/// What a client without the extension (or in a version before `_meta` on tools) gets: exactly
/// the two tools, no view, no app-only tool, tool results with their `resource_link` block.
async fn assert_no_apps<C: ClientHandler>(client: &RunningService<RoleClient, C>) {
    let tools = listed_tools(client).await;
    let names: Vec<&str> = tools.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["query", "describe_schema"]);
    for (name, tool) in &tools {
        assert!(tool.get("_meta").is_none(), "{name}: {tool}");
    }
    // The very tools a server without MCP Apps lists in this version.
    let version = protocol_version(
        client
            .peer_info()
            .map(|info| info.protocol_version.clone())
            .as_ref(),
    );
    let before = tools_list_for_version(&[query_tool("Sales orders."), describe_schema_tool()], version);
    let before: Vec<Value> = before
        .tools
        .iter()
        .map(|tool| serde_json::to_value(tool).unwrap_or_default())
        .collect();
    let listed: Vec<Value> = tools.into_iter().map(|(_, tool)| tool).collect();
    assert_eq!(listed, before);
    assert!(listed_resources(client).await.is_empty());
    let view = client
        .read_resource(ReadResourceRequestParams::new(VIEW_URI))
        .await;
    assert!(view.is_err(), "the view is no resource of theirs: {view:?}");

    let result = call(client, "query", json!({"sql": "SELECT * FROM orders"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(!text(&result).contains(DOWNLOAD_LINE), "{}", text(&result));
    let uri = result
        .content
        .iter()
        .find_map(|block| block.as_resource_link().map(|link| link.uri.clone()));
    let structured = result.structured_content.clone().unwrap_or_default();
    match structured.get("resource") {
        // From 2025-06-18 on: the resource_link block beside structuredContent.
        Some(resource) => assert_eq!(uri.as_deref(), resource["uri"].as_str(), "{result:?}"),
        None => assert!(uri.is_none(), "{result:?}"),
    }
    // (A wrong URI would be an isError result of the tool: an error is the tool being unknown.)
    let link = client
        .call_tool(
            CallToolRequestParams::new(DOWNLOAD_LINK_TOOL)
                .with_arguments(args(json!({"uri": "resource://x", "format": "csv"}))),
        )
        .await;
    assert!(link.is_err(), "the app-only tool is unknown to them: {link:?}");
}

#[tokio::test]
async fn a_client_without_the_extension_gets_exactly_what_it_got_before() {
    let f = fixture("dual-rmcp-database-apps-");
    let mcp = f.mcp().with_apps(AppsOptions::new().download_link(true));
    let client = connect(mcp, ()).await;
    assert_no_apps(&client).await;
    let result = call(&client, "query", json!({"sql": "SELECT * FROM orders"})).await;
    assert!(has_resource_link(&result), "{result:?}");
    drop(client);
}

#[tokio::test]
async fn a_host_in_a_version_without_meta_on_tools_gets_no_apps() {
    let f = fixture("dual-rmcp-database-apps-");
    let mut host = Client::host(false);
    host.version = ProtocolVersion::V_2025_03_26;
    let client = connect(f.mcp(), host).await;
    assert_no_apps(&client).await;
    drop(client);
}
