use std::sync::{Arc, Mutex};

use dual_server::{CreateResponse, QueryExecutor};
use dual_testkit::executor::Numbers;
use rmcp::model::{ReadResourceResult, ResourceContents};
use serde_json::{Value, json};

use super::*;
use crate::resources::{ReadOptions, read_resource};

/// A server whose kind `gated` is `executor`, pending after 50 ms.
fn builder(executor: &Arc<Numbers>) -> dual_server::DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("gated", Arc::clone(executor) as Arc<dyn QueryExecutor>)
        .pending_after(Duration::from_millis(50))
}

fn server(executor: &Arc<Numbers>) -> DualResponseServer {
    builder(executor)
        .progress_interval(Duration::from_millis(20), Duration::from_millis(400))
        .build()
        .expect("valid configuration")
}

async fn pending(server: &DualResponseServer) -> DualResponse {
    let response = server
        .create_response(CreateResponse::new("gated", json!({})).sample_size(5))
        .await
        .expect("created");
    assert_eq!(response.status, ResourceStatus::Pending);
    response
}

/// A waiter running in a task of its own.
type Waiting = tokio::task::JoinHandle<Result<DualResponse, WaitError>>;

/// Waits for `response` from a task of its own; the row counts it reports, as they come.
fn spawn_wait(server: &DualResponseServer, response: DualResponse) -> (Waiting, Arc<Mutex<Vec<u64>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let waiting = tokio::spawn({
        let (server, seen) = (server.clone(), Arc::clone(&seen));
        async move {
            wait_for_result(&server, &Caller::anonymous(), response, &fast(), |rows| {
                seen.lock().expect("not poisoned").push(rows);
                async {}
            })
            .await
        }
    });
    (waiting, seen)
}

fn fast() -> WaitOptions {
    WaitOptions::default().poll_interval(Duration::from_millis(10))
}

fn text_of(result: &ReadResourceResult) -> Value {
    match result.contents.as_slice() {
        [ResourceContents::TextResourceContents { text, .. }] => serde_json::from_str(text).expect("JSON"),
        other => panic!("expected one text content, got {other:?}"),
    }
}

#[tokio::test]
async fn waits_until_ready_and_reports_growing_row_counts() {
    let executor = Arc::new(Numbers::new().steps([3, 10, 10, 10]));
    let server = server(&executor);
    let response = pending(&server).await;
    let (waiting, seen) = spawn_wait(&server, response);
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        executor.open();
    }
    let ready = waiting.await.expect("joined").expect("ready");
    assert_eq!((ready.status, ready.total_count), (ResourceStatus::Ready, 33));
    let seen = seen.lock().expect("not poisoned").clone();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen.windows(2).all(|pair| pair[0] < pair[1]), "{seen:?}");
    assert!(seen.iter().all(|rows| *rows <= 33), "{seen:?}");
}

#[tokio::test]
async fn a_run_of_this_instance_is_followed_in_memory_not_by_polling_the_store() {
    let executor = Arc::new(Numbers::new().steps([3, 10, 10, 10]));
    let store = Arc::new(dual_testkit::BreakableStore::new("not broken here"));
    let server = builder(&executor)
        .shared_store(Arc::clone(&store) as Arc<dyn dual_server::dual_store::ResourceStore>)
        // The run writes its progress to the store rarely: a waiter polling the store would not see it.
        .progress_interval(Duration::from_secs(5), Duration::from_secs(30))
        .build()
        .expect("valid configuration");
    let response = pending(&server).await;
    let before = store.calls();
    let (waiting, seen) = spawn_wait(&server, response);
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        executor.open();
    }
    let ready = waiting.await.expect("joined").expect("ready");
    assert_eq!(ready.total_count, 33);
    let seen = seen.lock().expect("not poisoned").clone();
    assert!(
        seen.len() >= 3,
        "each batch reported as it came, from memory: {seen:?}"
    );
    // The first read, the final one, and the run's own final update: a waiter polling every 10 ms
    // for 300 ms would have made about 30.
    let calls = store.calls() - before;
    assert!(calls <= 4, "{calls} store calls while waiting");
}

#[tokio::test]
async fn a_failed_query_is_an_error_for_the_model_and_reads_as_failed() {
    let executor = Arc::new(Numbers::new().steps([2]).then_fail());
    let server = server(&executor);
    let caller = Caller::anonymous();
    let response = pending(&server).await;
    let uri = response.uri.clone();

    let read = read_resource(&server, &caller, &uri, &ReadOptions::default())
        .await
        .expect("a status, not an error");
    let status = text_of(&read);
    assert_eq!(status["status"], "pending");
    assert_eq!(status["rows_so_far"], 2);

    executor.open();
    let error = wait_for_result(&server, &caller, response, &fast(), |_| async {})
        .await
        .expect_err("failed");
    assert!(
        matches!(&error, WaitError::Failed { failure } if failure.code == FailureCode::QueryExecutionFailed)
    );
    let result = error.tool_result(&ErrorResultOptions::default());
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(text.contains("no such column: nme"), "{text}");
    let cut = error.tool_result(&ErrorResultOptions::default().max_bytes(60));
    let cut = cut.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(cut.len() <= 60 && cut.ends_with("bytes in all]"), "{cut}");

    let status = text_of(
        &read_resource(&server, &caller, &uri, &ReadOptions::default())
            .await
            .expect("a status"),
    );
    assert_eq!(status["status"], "failed");
    assert_eq!(status["error"]["code"], "query_execution_failed");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no such column: nme"),
        "{status}"
    );
}

#[tokio::test]
async fn gives_up_after_the_timeout_and_a_deleted_resource_is_an_error() {
    let executor = Arc::new(Numbers::new().steps([1, 1]));
    let server = server(&executor);
    let caller = Caller::anonymous();
    let response = pending(&server).await;
    let id = response.id;
    let error = wait_for_result(
        &server,
        &caller,
        response.clone(),
        &fast().timeout(Duration::from_millis(60)),
        |_| async {},
    )
    .await
    .expect_err("timed out");
    assert!(matches!(error, WaitError::TimedOut { .. }), "{error}");
    assert_eq!(
        error.tool_result(&ErrorResultOptions::default()).is_error,
        Some(true)
    );

    server.delete_resource(id, &caller).await.expect("deleted");
    let error = wait_for_result(&server, &caller, response, &fast(), |_| async {})
        .await
        .expect_err("gone");
    assert!(
        matches!(&error, WaitError::Server(read) if read.is_not_found()),
        "{error}"
    );
    assert_eq!(error.to_string(), "reading the resource failed");
    let source = std::error::Error::source(&error).map(ToString::to_string);
    assert_eq!(
        source.as_deref(),
        Some("resource not found"),
        "the server's error is the source"
    );
    for _ in 0..100 {
        if executor.alive() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the executor's stream outlived the deletion");
}

#[test]
fn the_default_timeout_covers_the_time_limit_and_the_lease() {
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .query_time_limit(Duration::from_secs(30))
        .without_sweeper()
        .build()
        .expect("valid configuration");
    let timeout = WaitOptions::default().timeout_for(&server);
    assert!(
        timeout > Duration::from_secs(30) + server.config().query_lease,
        "{timeout:?}"
    );
    assert_eq!(
        WaitOptions::default()
            .timeout(Duration::from_secs(1))
            .timeout_for(&server),
        Duration::from_secs(1)
    );
}
