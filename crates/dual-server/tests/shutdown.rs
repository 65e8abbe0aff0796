//! Graceful shutdown (docs/DESIGN.md §8, "Shutdown"): the snapshots of results already answered are
//! written to the end within the grace, those that cannot finish are stored as interrupted (retryable,
//! telling the model to run the query again), and new tool calls are refused.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::{
    ResourceId, ResourceRecord,
    status::{FailureCode, ResourceStatus},
};
use dual_server::{CreateResponse, DualResponseServer, ServerErrorCode};
use dual_store::{Lookup, MemoryStore, ResourceStore};
use dual_testkit::executor::Numbers;
use serde_json::json;

/// A counted result of 10 rows at once and 90 more once the gate opens: answered `ready` while it
/// is written.
fn gated() -> Arc<Numbers> {
    Arc::new(Numbers::new().counted().steps([10, 90]))
}

/// A server over `store` running `executor` as kind `gated`.
fn server(executor: &Arc<Numbers>, store: &Arc<MemoryStore>) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor(
            "gated",
            Arc::clone(executor) as Arc<dyn dual_server::QueryExecutor>,
        )
        .store(
            dual_testkit::BreakableStore::wrapping(Arc::clone(store) as Arc<dyn ResourceStore>, "unused")
                .keeping_open(),
        )
        .pending_after(Duration::from_millis(100))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `id`'s record as the store keeps it after the server shut down.
async fn stored(store: &MemoryStore, id: ResourceId) -> ResourceRecord {
    match store.get(id, time::OffsetDateTime::now_utc()).await {
        Ok(Lookup::Found(record)) => record,
        other => panic!("{id} is not in the store: {other:?}"),
    }
}

async fn answered(server: &DualResponseServer) -> dual_core::DualResponse {
    let response = common::created(server, CreateResponse::new("gated", json!({})).sample_size(5)).await;
    assert_eq!(
        (response.status, response.total_count),
        (ResourceStatus::Ready, 100),
        "answered with the count while the rest is written"
    );
    response
}

#[tokio::test]
async fn results_already_answered_are_written_to_the_end_within_the_grace() {
    let (executor, store) = (gated(), Arc::new(MemoryStore::new()));
    let server = server(&executor, &store);
    let response = answered(&server).await;
    // The rest arrives 300 ms into the shutdown, well within its grace.
    executor.open_later(Duration::from_millis(300), 1);
    server
        .shutdown_within(Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let record = stored(&store, response.id).await;
    assert_eq!(record.status, ResourceStatus::Ready, "{:?}", record.failure);
    assert_eq!((record.total_count, record.spooled_rows), (100, None));
    assert_eq!(executor.alive(), 0);
}

#[tokio::test]
async fn a_result_that_cannot_finish_in_time_is_stored_interrupted_and_retryable() {
    let (executor, store) = (gated(), Arc::new(MemoryStore::new()));
    let server = server(&executor, &store);
    let response = answered(&server).await;
    let started = std::time::Instant::now();
    server
        .shutdown_within(Duration::from_millis(200))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the grace bounds the shutdown"
    );
    let record = stored(&store, response.id).await;
    assert_eq!(record.status, ResourceStatus::Failed);
    let failure = record.failure.unwrap_or_else(|| panic!("a failure"));
    assert_eq!(failure.code, FailureCode::QueryInterrupted);
    assert!(failure.code.is_retryable());
    assert!(
        failure.message.contains("run the query again"),
        "{}",
        failure.message
    );
    assert_eq!(executor.alive(), 0, "the writer was stopped");
}

#[tokio::test]
async fn a_server_shutting_down_refuses_new_tool_calls_as_retryable() {
    let (executor, store) = (gated(), Arc::new(MemoryStore::new()));
    let server = server(&executor, &store);
    server
        .shutdown_within(Duration::ZERO)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = server
        .create_response(CreateResponse::new("gated", json!({})))
        .await
        .err()
        .unwrap_or_else(|| panic!("a tool call ran on a server that shut down"));
    assert_eq!(refused.code(), ServerErrorCode::Overloaded);
    assert!(refused.is_retryable());
}
