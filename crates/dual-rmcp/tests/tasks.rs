//! Long-running tool calls over MCP (docs/DESIGN.md §8), an rmcp client and `DatabaseMcp` in this
//! process over an in-memory duplex pipe, its `query` tool running a gated executor: a client that
//! declares the tasks extension gets a task, follows it with `tasks/get` and progress notifications
//! and cancels it with `tasks/cancel`; a client without tasks gets the pending tool result and
//! follows it with `resources/read`.
#![cfg(feature = "server")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fixture, fixture};
use dual_rmcp::sql_tools::QUERY_TOOL;
use dual_server::{DualResponseServer, LiveQuery, QueryExecutor};
use dual_testkit::executor::Numbers;
use dual_testkit::wait::until;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, DetailedTask, GetTaskParams, Implementation, NumberOrString, ProgressNotificationParam,
    ProgressToken, ReadResourceRequestParams, RequestMetaObject, RequestParamsMeta, ResourceContents,
    TaskPayload, TaskStatus,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

/// The kind `DatabaseMcp`'s `query` runs.
const SQL_KIND: &str = "sql";

/// A query that yields `first` rows at once, then one batch of `batch` rows per
/// [`Numbers::open`], `batches` times.
fn gated(first: u64, batch: u64, batches: u64) -> Arc<Numbers> {
    let mut steps = vec![first];
    steps.extend(std::iter::repeat_n(batch, usize::try_from(batches).unwrap_or(0)));
    Arc::new(Numbers::new().steps(steps))
}

/// The rows of the query of `executor`.
async fn total(executor: &Numbers) -> u64 {
    executor.count(&Value::Null).await.expect("a count")
}

/// A client that records the progress notifications it receives; with `tasks`, it declares the
/// tasks extension.
#[derive(Clone, Default)]
struct Client {
    tasks: bool,
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().expect("not poisoned").push(params.progress);
    }
}

/// `DatabaseMcp` over a server running `executor` (as the `sql` kind, so the `query` tool runs
/// it), a client connected to it, and the database whose schema it describes.
async fn connect(
    executor: &Arc<Numbers>,
    client: Client,
) -> (DualResponseServer, RunningService<RoleClient, Client>, Fixture) {
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .shared_executor(SQL_KIND, Arc::clone(executor) as Arc<dyn QueryExecutor>)
        .pending_after(Duration::from_millis(50))
        .progress_interval(Duration::from_millis(20), Duration::from_secs(2))
        .build()
        .expect("valid configuration");
    let f = fixture("dual-rmcp-tasks-");
    let client = common::connect(f.database_mcp_on(&server), client).await;
    (server, client, f)
}

fn query_call() -> CallToolRequestParams {
    CallToolRequestParams::new(QUERY_TOOL).with_arguments(
        json!({"sql": "SELECT id FROM slow"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

async fn task_state(client: &RunningService<RoleClient, Client>, task_id: &str) -> DetailedTask {
    client
        .peer()
        .get_task(GetTaskParams::new(task_id.to_owned()))
        .await
        .expect("tasks/get")
        .task
}

/// Polls `tasks/get` until the task is terminal (at most 10 s).
async fn terminal(client: &RunningService<RoleClient, Client>, task_id: &str) -> DetailedTask {
    for _ in 0..1000 {
        let task = task_state(client, task_id).await;
        if task.status().is_terminal() {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {task_id} still not terminal after 10 s");
}

fn read_text(result: &rmcp::model::ReadResourceResult) -> Value {
    match result.contents.as_slice() {
        [ResourceContents::TextResourceContents { text, .. }] => serde_json::from_str(text).expect("JSON"),
        other => panic!("expected one text content, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_reports_progress_and_ends_with_the_dual_response() {
    let batches = 3;
    let executor = gated(3, 10, batches);
    let client = Client {
        tasks: true,
        ..Client::default()
    };
    let progress = Arc::clone(&client.progress);
    let (_server, client, _f) = connect(&executor, client).await;

    let mut call = query_call();
    call.set_meta(RequestMetaObject::with_progress_token(ProgressToken(
        NumberOrString::String("rows".into()),
    )));
    let created = match client.call_tool_once(call).await.expect("tools/call") {
        CallToolResponse::Task(created) => created,
        other => panic!("expected a task, got {other:?}"),
    };
    let task_id = created.task.task_id.clone();
    assert_eq!(created.task.status, TaskStatus::Working);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let working = task_state(&client, &task_id).await;
    assert_eq!(working.status(), TaskStatus::Working);
    assert!(executor.alive() == 1, "the query runs while the task works");

    for _ in 0..batches {
        executor.open();
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let done = terminal(&client, &task_id).await;
    let TaskPayload::Completed { result } = done.payload else {
        panic!("expected a completed task, got {done:?}");
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result)).expect("a tool result");
    assert_eq!(result.is_error, Some(false));
    let structured = result.structured_content.expect("structuredContent");
    assert!(
        structured["metadata"].get("status").is_none(),
        "ready: no status, as for a fast query"
    );
    assert_eq!(structured["metadata"]["total_count"], total(&executor).await);
    assert!(
        structured["resource"]["uri"]
            .as_str()
            .is_some_and(|uri| uri.starts_with("resource://"))
    );

    let progress = progress.lock().expect("not poisoned").clone();
    assert!(progress.len() >= 2, "progress notifications: {progress:?}");
    assert!(progress.windows(2).all(|pair| pair[0] < pair[1]), "{progress:?}");
    // Rows so far, never past the total; the last one may be the total itself when the writer's
    // final progress goes out just before the task completes.
    assert!(progress.iter().all(|rows| *rows <= 33.0), "{progress:?}");
    client.cancel().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_task_stops_the_query_and_deletes_the_resource() {
    let executor = gated(2, 1, 1);
    let (server, client, _f) = connect(
        &executor,
        Client {
            tasks: true,
            ..Client::default()
        },
    )
    .await;
    let created = match client.call_tool_once(query_call()).await.expect("tools/call") {
        CallToolResponse::Task(created) => created,
        other => panic!("expected a task, got {other:?}"),
    };
    let task_id = created.task.task_id.clone();
    let live = async || {
        server
            .store()
            .live_count(server.clock().now())
            .await
            .expect("store")
    };
    until("the pending resource is stored", async || live().await == 1).await;
    assert_eq!(executor.alive(), 1);

    client
        .peer()
        .cancel_task(CancelTaskParams::new(task_id.clone()))
        .await
        .expect("tasks/cancel");
    let done = terminal(&client, &task_id).await;
    assert_eq!(done.status(), TaskStatus::Cancelled);
    until("the executor's stream is dropped", async || executor.alive() == 0).await;
    assert_eq!(live().await, 0, "the resource is gone");
    client.cancel().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tasks_the_tool_result_is_pending_and_resources_read_follows_it() {
    let executor = gated(4, 6, 1);
    let (_server, client, _f) = connect(&executor, Client::default()).await;
    let result = client.call_tool(query_call()).await.expect("tools/call");
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(structured["metadata"]["status"], "pending");
    assert_eq!(structured["metadata"]["total_count"], 4);
    let uri = structured["resource"]["uri"].as_str().expect("uri").to_owned();

    let read = client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .expect("resources/read");
    let status = read_text(&read);
    assert_eq!(status["status"], "pending", "{status}");
    assert!(
        status["rows_so_far"].as_u64().is_some_and(|rows| rows >= 4),
        "{status}"
    );

    executor.open();
    let mut page = Value::Null;
    until("the resource is ready", async || {
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .expect("resources/read");
        page = read_text(&read);
        page.get("status").is_none()
    })
    .await;
    assert_eq!(page["total_count"], total(&executor).await, "{page}");
    assert_eq!(page["data"].as_array().map(Vec::len), Some(10), "{page}");
    client.cancel().await.expect("closed");
}
