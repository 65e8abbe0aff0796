//! The ready-made `describe_schema` and `query` tools over a real SQLite database (dual-sqlite).
#![cfg(feature = "server")]

mod common;

use common::{args, fixture, orders_uri, text};
use dual_core::mcp::RenderOptions;
use dual_rmcp::rmcp::model::GetPromptRequestParams;
use dual_rmcp::rmcp::{Peer, RoleClient};
use dual_rmcp::sql_tools::{call_describe_schema, call_query, describe_schema_tool, query_tool};
use serde_json::{Value, json};

/// The names of the tools and of the prompts the server lists.
async fn listed_names(client: &Peer<RoleClient>) -> (Vec<String>, Vec<String>) {
    let tools = client
        .list_all_tools()
        .await
        .unwrap_or_else(|e| panic!("tools/list: {e}"));
    let prompts = client
        .list_all_prompts()
        .await
        .unwrap_or_else(|e| panic!("prompts/list: {e}"));
    (
        tools.into_iter().map(|t| t.name.into_owned()).collect(),
        prompts.into_iter().map(|p| p.name).collect(),
    )
}

/// The messages of prompt `name` with `arguments`, as JSON text.
async fn prompt_text(client: &Peer<RoleClient>, name: &str, arguments: Value) -> String {
    let prompt = client
        .get_prompt(GetPromptRequestParams::new(name).with_arguments(args(arguments)))
        .await
        .unwrap_or_else(|e| panic!("prompts/get {name}: {e}"));
    serde_json::to_string(&prompt.messages).unwrap_or_default()
}

#[tokio::test]
async fn describe_schema_lists_tables_or_one_and_names_close_ones() {
    let f = fixture("dual-rmcp-sql-tools-");
    assert_eq!(describe_schema_tool().name, "describe_schema");
    let all = call_describe_schema(f.db.schema(), None).await;
    assert_eq!(all.is_error, Some(false));
    let structured = all.structured_content.clone().unwrap_or_default();
    let names: Vec<&str> = structured["tables"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["big_orders", "orders"]);
    assert_eq!(
        structured["tables"][1]["columns"][1],
        json!({"name": "region", "data_type": "TEXT", "nullable": false})
    );
    assert_eq!(structured["tables"][0]["kind"], "view");
    assert_eq!(serde_json::from_str::<Value>(&text(&all)).ok(), Some(structured));

    let one = call_describe_schema(f.db.schema(), Some(&args(json!({"table": "ORDERS"})))).await;
    assert_eq!(
        one.structured_content
            .map(|s| s["tables"].as_array().map(Vec::len)),
        Some(Some(1))
    );
    let unknown = call_describe_schema(f.db.schema(), Some(&args(json!({"table": "order"})))).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).starts_with("there is no table or view `order`. Did you mean `orders`"),
        "{}",
        text(&unknown)
    );
    let bad = call_describe_schema(f.db.schema(), Some(&args(json!({"tabel": "orders"})))).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("`tabel`"));
}

#[tokio::test]
async fn query_answers_a_dual_response_or_an_error_the_model_can_fix() {
    let f = fixture("dual-rmcp-sql-tools-");
    let tool = query_tool("Sales orders (table orders).");
    assert_eq!(tool.name, "query");
    assert!(tool.output_schema.is_some());
    let options = RenderOptions::default();
    let query =
        async |arguments: Value| call_query(&f.server, "sql", Some(&args(arguments)), None, &options).await;
    let ok = query(json!({"sql": "SELECT * FROM orders WHERE region = ?1", "params": ["EU"]})).await;
    assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
    assert_eq!(
        ok.structured_content
            .map(|s| s["metadata"]["total_count"].clone()),
        Some(json!(2))
    );
    let misspelled = query(json!({"sql": "SELECT regoin FROM orders"})).await;
    assert_eq!(misspelled.is_error, Some(true));
    assert!(
        text(&misspelled).contains("Did you mean `region`?"),
        "{}",
        text(&misspelled)
    );
    for bad in [
        json!({"sql": "DELETE FROM orders"}),
        json!({}),
        json!({"sql": 1}),
        json!({"sql": "SELECT 1", "limit": 5}),
        json!({"sql": "SELECT 1", "params": "x"}),
    ] {
        let result = query(bad.clone()).await;
        assert_eq!(result.is_error, Some(true), "{bad}");
    }
}

/// The whole server, through an rmcp client on an in-process pipe: the two tools listed, a query
/// answered as a dual response, its result read back as a resource, the schema described.
#[tokio::test]
async fn database_mcp_serves_both_tools_and_the_results_to_an_mcp_client() {
    use dual_rmcp::DatabaseMcp;
    use dual_rmcp::rmcp::ServiceExt;
    use dual_rmcp::rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};

    let f = fixture("dual-rmcp-sql-tools-");
    let mcp = DatabaseMcp::new(f.server.clone(), f.db.schema().clone(), "sql", "Sales orders.");
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(async move {
        let running = mcp.serve(server_end).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string()).map(drop)
    });
    let client = ().serve(client_end).await.unwrap_or_else(|e| panic!("client: {e}"));
    let (tools, prompts) = listed_names(&client).await;
    assert_eq!(tools, ["query", "describe_schema"]);
    // The prompts guide a read-only workflow over the results.
    assert_eq!(prompts, ["explore_result", "answer_from_data"]);

    let result = client
        .call_tool(
            CallToolRequestParams::new("query")
                .with_arguments(args(json!({"sql": "SELECT * FROM orders ORDER BY id"}))),
        )
        .await
        .unwrap_or_else(|e| panic!("tools/call: {e}"));
    let uri = orders_uri(&result);
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
    let page = serde_json::to_value(&read).unwrap_or_default();
    assert!(page.to_string().contains("\\\"total_count\\\":3"), "{page}");

    let schema = client
        .call_tool(
            CallToolRequestParams::new("describe_schema").with_arguments(args(json!({"table": "orders"}))),
        )
        .await
        .unwrap_or_else(|e| panic!("tools/call: {e}"));
    assert_eq!(
        schema.structured_content.map(|s| s["tables"][0]["name"].clone()),
        Some(json!("orders"))
    );
    // The result is listed, and the prompts explain it.
    let listed = client
        .list_resources(None)
        .await
        .unwrap_or_else(|e| panic!("resources/list: {e}"));
    let listed_uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(listed_uris, [uri.as_str()]);
    for (name, arguments, expected) in [
        ("explore_result", json!({"uri": uri}), ["3 rows", "sort="]),
        (
            "answer_from_data",
            json!({"question": "Which customer ordered most?"}),
            ["describe_schema", "never write"],
        ),
    ] {
        let messages = prompt_text(&client, name, arguments).await;
        assert!(
            expected.iter().all(|part| messages.contains(part)),
            "{name}: {messages}"
        );
    }

    let unknown = client.call_tool(CallToolRequestParams::new("drop_tables")).await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error");
    drop(client);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), served).await;
}

/// A client that declares the tasks extension.
#[derive(Clone)]
struct TaskClient;

impl dual_rmcp::rmcp::ClientHandler for TaskClient {
    fn get_info(&self) -> dual_rmcp::rmcp::model::ClientConfig {
        dual_rmcp::rmcp::model::ClientConfig::new(
            dual_rmcp::rmcp::model::ClientCapabilities::builder()
                .enable_tasks()
                .build(),
            dual_rmcp::rmcp::model::Implementation::new("tasks", "0"),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_mcp_runs_query_as_a_durable_task_for_a_client_that_declares_tasks() {
    use dual_rmcp::DatabaseMcp;
    use dual_rmcp::rmcp::ServiceExt;
    use dual_rmcp::rmcp::model::{CallToolRequestParams, CallToolResponse};

    let f = fixture("dual-rmcp-sql-tools-");
    let mcp = DatabaseMcp::new(f.server.clone(), f.db.schema().clone(), "sql", "Sales orders.");
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = mcp.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = TaskClient
        .serve(client_end)
        .await
        .unwrap_or_else(|e| panic!("client: {e}"));
    let (task_id, done) = common::orders_as_a_task(client.peer()).await;
    assert_eq!(task_id.len(), 32);
    assert_eq!(
        done["result"]["structuredContent"]["metadata"]["total_count"], 3,
        "{done}"
    );
    // Wrong arguments are an immediate isError result, not a task.
    let bad = CallToolRequestParams::new("query").with_arguments(args(json!({"sql": 7})));
    match client.call_tool_once(bad).await.unwrap_or_else(|e| panic!("{e}")) {
        CallToolResponse::Complete(result) => assert_eq!(result.is_error, Some(true)),
        other => panic!("expected an isError result, got {other:?}"),
    }
    drop(client);
}
