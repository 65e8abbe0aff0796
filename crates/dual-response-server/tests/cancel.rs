//! Cancellation and scheduling reach the database (docs/DESIGN.md §8), against the real binary: a
//! cheap tool call is answered at once beside runaway queries; with every background place held by
//! runaways, a further call is refused with the retryable `overloaded` naming the queue, and
//! `DELETE`, `tasks/cancel` and the time limit each free the places; and a burst of 50 concurrent
//! calls is never refused nor told "still running" and then failed.

mod support;

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, Implementation,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use support::http::Http;
use support::{Instance, LIMIT, SQL, TempDb, mcp, query, text_of, within};
use tokio::process::Command;

/// Counts forever: only a cancel or the time limit ends it.
const RUNAWAY: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
/// How soon the database must be free again after a cancel (plus the cheap call's own time).
const FREE_WITHIN: Duration = Duration::from_millis(1_000);
/// The background places the tests give the server (`--background-queue`): the runaways hold them.
const SLOTS: usize = 2;
/// The scheduler flags of the tests: one background slot, [`SLOTS`] places.
const PLACES: [&str; 4] = ["--background-slots", "1", "--background-queue", "2"];

/// Runs `test` within [`LIMIT`] against `dual-response serve` on the small dataset and an MCP session
/// with it (closed afterwards). The server's queries go pending after `pending_after_ms`, its tool
/// calls wait at most `db_wait_ms` for a connection, and it is given the flags `extra` too.
async fn with_demo(
    pending_after_ms: u64,
    db_wait_ms: u64,
    extra: &[&str],
    test: impl AsyncFnOnce(&Instance, &RunningService<RoleClient, ()>),
) {
    within(LIMIT, async {
        let db = TempDb::new();
        let mut command = Command::new(env!("CARGO_BIN_EXE_dual-response"));
        command
            .args(["serve", "--addr", "127.0.0.1:0", "--dataset"])
            .arg(db.path())
            .args(["--pending-after-ms", &pending_after_ms.to_string()])
            .args(["--db-wait-ms", &db_wait_ms.to_string()])
            .args(extra);
        let instance = Instance::launch(command).await;
        let mcp = mcp(&instance).await;
        test(&instance, &mcp).await;
        let _ = mcp.cancel().await;
    })
    .await;
}

/// The structured content of a tool result.
fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or_default()
}

/// The status a tool result gives (`ready` when it says none).
fn status_of(result: &CallToolResult) -> String {
    structured(result)["metadata"]["status"]
        .as_str()
        .unwrap_or("ready")
        .to_owned()
}

/// The resource id of a tool result (the last segment of its URL).
fn id_of(result: &CallToolResult) -> String {
    let url = structured(result)["resource"]["url"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    url.rsplit('/').next().unwrap_or_default().to_owned()
}

/// The metadata of resource `id` once it is no longer pending (polled every 20 ms).
async fn settled(http: &Http, id: &str) -> Value {
    loop {
        let reply = http
            .send(
                http.request(http::Method::GET, &format!("/resources/{id}"), None),
                "",
            )
            .await;
        let body = reply.json();
        if body["status"] != "pending" {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Fills every background place with a pending runaway query, returning their ids.
async fn saturate(mcp: &RunningService<RoleClient, ()>) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..SLOTS {
        let result = query(mcp, RUNAWAY).await;
        assert_eq!(status_of(&result), "pending", "{}", text_of(&result));
        ids.push(id_of(&result));
    }
    ids
}

/// A cheap tool call fails with the retryable `overloaded` now, naming the queue: the places are
/// really held.
async fn assert_saturated(mcp: &RunningService<RoleClient, ()>) {
    let result = query(mcp, SQL).await;
    assert_eq!(result.is_error, Some(true), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(
        text.contains("busy") && text.contains("background_queue"),
        "{text}"
    );
}

/// A cheap tool call succeeds, ready, within [`FREE_WITHIN`].
async fn assert_free(mcp: &RunningService<RoleClient, ()>, what: &str) {
    let started = Instant::now();
    let result = query(mcp, SQL).await;
    let elapsed = started.elapsed();
    assert_eq!(result.is_error, Some(false), "{what}: {}", text_of(&result));
    assert_eq!(status_of(&result), "ready", "{what}");
    assert!(elapsed < FREE_WITHIN, "{what}: the call took {elapsed:?}");
}

/// `DELETE`s every resource of `ids` through `instance`'s REST API, each answered 204.
async fn delete_all(instance: &Instance, ids: &[String]) {
    let http = Http::new(instance.addr());
    for id in ids {
        let reply = http
            .send(
                http.request(http::Method::DELETE, &format!("/resources/{id}"), None),
                "",
            )
            .await;
        assert_eq!(reply.status, 204, "{}", reply.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_interrupts_pending_queries_and_frees_their_places() {
    with_demo(200, 1500, &PLACES, async |instance, mcp| {
        let ids = saturate(mcp).await;
        assert_saturated(mcp).await;
        delete_all(instance, &ids).await;
        assert_free(mcp, "after DELETE").await;
    })
    .await;
}

/// A client that declares the tasks extension: every tool call is a task.
#[derive(Clone, Default)]
struct TaskClient;

impl ClientHandler for TaskClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("cancel-test", "0"),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_cancel_interrupts_the_query_and_frees_its_place() {
    with_demo(200, 1500, &PLACES, async |instance, plain| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tasks = TaskClient
            .serve(StreamableHttpClientTransport::from_uri(instance.mcp_url()))
            .await
            .expect("a tasks client connects");
        let mut task_ids = Vec::new();
        for _ in 0..SLOTS {
            let call = CallToolRequestParams::new("query")
                .with_arguments(json!({"sql": RUNAWAY}).as_object().cloned().unwrap_or_default());
            match tasks.call_tool_once(call).await.expect("tools/call") {
                CallToolResponse::Task(created) => task_ids.push(created.task.task_id),
                other => panic!("expected a task, got {other:?}"),
            }
        }
        // Both tasks hold their background places: a further call finds none.
        let started = Instant::now();
        loop {
            let result = query(plain, SQL).await;
            if result.is_error == Some(true) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the tasks never took the places"
            );
        }
        for task_id in task_ids {
            tasks
                .cancel_task(CancelTaskParams::new(task_id))
                .await
                .expect("tasks/cancel");
        }
        // The task deletes its resource as it ends: allow it that moment.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_free(plain, "after tasks/cancel").await;
        let _ = tasks.cancel().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_limit_interrupts_pending_queries_and_frees_their_places() {
    let one_second_limit = ["--query-time-limit-secs", "1"];
    with_demo(
        200,
        1500,
        &[&one_second_limit[..], &PLACES[..]].concat(),
        async |instance, mcp| {
            let ids = saturate(mcp).await;
            let http = Http::new(instance.addr());
            for id in &ids {
                let body = within(Duration::from_secs(5), settled(&http, id)).await;
                assert_eq!(body["status"], "failed", "{body}");
                // The server's limit, or SQLite's own per-statement limit of the same length, whichever
                // fires first: both end the query and free its connection.
                let code = body["error"]["code"].as_str().unwrap_or_default();
                assert!(
                    ["query_timeout", "query_execution_failed"].contains(&code),
                    "{body}"
                );
            }
            assert_free(mcp, "after the time limit").await;
        },
    )
    .await;
}

/// The 50 concurrent calls of the report, over one export slot and a short wait: the snapshots of
/// answers already given never take the connections of the calls after them, so none is refused,
/// and none is told "still running" and then fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_concurrent_calls_is_never_refused_nor_pending_then_failed() {
    with_demo(100, 1000, &["--export-slots", "1"], async |instance, mcp| {
        // A few hundred milliseconds of SQLite each.
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) \
                   SELECT count(*) AS n FROM c";
        let calls = (0..50).map(|_| query(mcp, sql));
        let results = futures_util::future::join_all(calls).await;
        let http = Http::new(instance.addr());
        let mut pending = 0;
        for result in &results {
            let text = text_of(result);
            assert_eq!(result.is_error, Some(false), "no call is refused: {text}");
            let status = status_of(result);
            if status == "pending" {
                let body = within(Duration::from_secs(60), settled(&http, &id_of(result))).await;
                assert_eq!(body["status"], "ready", "a pending call ended {body}");
                pending += 1;
            } else {
                assert_eq!(status, "ready", "{text}");
            }
        }
        eprintln!("50 calls ran ({pending} of them pending first), none refused");
    })
    .await;
}

/// A cheap tool call is answered at once while runaway queries are written in the background.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cheap_call_is_answered_beside_runaway_queries() {
    with_demo(200, 1500, &[], async |instance, mcp| {
        let ids = saturate(mcp).await;
        for _ in 0..3 {
            assert_free(mcp, "beside two runaway queries").await;
        }
        delete_all(instance, &ids).await;
    })
    .await;
}
