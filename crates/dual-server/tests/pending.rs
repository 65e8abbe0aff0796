//! Long-running queries (docs/DESIGN.md §8): every status transition of a pending resource, cancel,
//! the time limit, and two instances sharing a store and a spool, one of which dies.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::{
    PageRequest, ResourceId,
    range::RowRange,
    status::{FailureCode, ResourceStatus},
};
use dual_server::dual_spool::{MemorySpool, Spool};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor, ServerErrorCode};
use dual_store::{MemoryStore, ResourceStore};
use dual_testkit::BreakableStore;
use dual_testkit::executor::{Numbers, row};
use dual_testkit::wait::done_within;
use serde_json::json;

/// A query whose rows come in two parts: `before` rows at once, then, once the gate opens, `after`
/// more rows.
fn gated(before: u64, after: u64) -> Arc<Numbers> {
    Arc::new(Numbers::new().steps([before, after]))
}

fn builder(executor: Arc<Numbers>) -> dual_server::DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("gated", executor)
        .pending_after(Duration::from_millis(100))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
}

/// A server of [`builder`] with nothing else set.
fn server(executor: &Arc<Numbers>) -> DualResponseServer {
    builder(Arc::clone(executor))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn create(server: &DualResponseServer) -> dual_core::DualResponse {
    server
        .create_response(CreateResponse::new("gated", json!({})).sample_size(5))
        .await
        .unwrap_or_else(|e| panic!("create_response: {e}"))
}

/// The page at `offset` of at most `limit` rows (the defaults if `None`) of the settled resource
/// `id`, read anonymously.
async fn settled_page(
    server: &DualResponseServer,
    id: ResourceId,
    offset: Option<u64>,
    limit: Option<u64>,
) -> dual_core::PageResponse {
    let request = PageRequest {
        offset,
        limit,
        ..PageRequest::default()
    };
    server
        .fetch_page(id, &Caller::anonymous(), &request)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Polls until `id` leaves `pending` (at most 5 s), returning its status.
async fn settled(server: &DualResponseServer, id: ResourceId) -> dual_core::ResourceRecord {
    common::record_once(server, id, |r| r.status != ResourceStatus::Pending, "pending").await
}

/// `id` reads as failed with `code` through `server`: its metadata says so, and a page is
/// `RESOURCE_FAILED`, retryable as `retryable`.
async fn assert_failed(server: &DualResponseServer, id: ResourceId, code: FailureCode, retryable: bool) {
    let anyone = Caller::anonymous();
    let metadata = server
        .metadata(id, &anyone)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(metadata.status, ResourceStatus::Failed);
    assert_eq!(
        metadata.error.map(|e| (e.code, e.retryable)),
        Some((code, retryable))
    );
    let error = server
        .fetch_page(id, &anyone, &PageRequest::default())
        .await
        .err();
    assert_eq!(
        error.as_ref().map(|e| e.code()),
        Some(ServerErrorCode::ResourceFailed)
    );
    assert_eq!(error.map(|e| e.is_retryable()), Some(retryable));
}

/// Waits (at most 2 s) until no stream of `executor` is alive.
async fn streams_dropped(executor: &Numbers) {
    for _ in 0..200 {
        if executor.alive() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the executor's stream is still alive");
}

#[tokio::test]
async fn a_fast_query_is_ready_at_once() {
    let executor = gated(20, 0);
    executor.open();
    let server = server(&executor);
    let response = create(&server).await;
    assert_eq!(
        (response.status, response.total_count),
        (ResourceStatus::Ready, 20)
    );
    let metadata = server
        .metadata(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (metadata.status, metadata.progress, metadata.error),
        (ResourceStatus::Ready, None, None)
    );
}

#[tokio::test]
async fn pending_then_ready() {
    let executor = gated(7, 93);
    let server = server(&executor);
    let anyone = Caller::anonymous();
    let response = create(&server).await;
    assert_eq!(response.status, ResourceStatus::Pending);
    assert_eq!(response.total_count, 7, "the rows so far");
    assert_eq!(
        response.sample.len(),
        5,
        "the sample, once that many rows arrived"
    );
    let tool = serde_json::to_value(response.tool_result()).unwrap_or_default();
    assert_eq!(tool["structuredContent"]["metadata"]["status"], "pending");
    let text = tool["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("still running"), "{text}");

    let metadata = server
        .metadata(response.id, &anyone)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(metadata.status, ResourceStatus::Pending);
    assert_eq!(metadata.progress.map(|p| p.rows), Some(7));
    let page = server
        .fetch_page(response.id, &anyone, &PageRequest::default())
        .await;
    let error = page
        .err()
        .unwrap_or_else(|| panic!("a page of a pending resource"));
    assert_eq!(error.code(), ServerErrorCode::NotReady);
    assert!(error.is_retryable() && error.retry_after().is_some());
    let export = server
        .stream_range(response.id, &anyone, None, RowRange::ALL)
        .await;
    assert_eq!(export.err().map(|e| e.code()), Some(ServerErrorCode::NotReady));

    executor.open();
    let record = settled(&server, response.id).await;
    assert_eq!(
        (record.status, record.total_count, record.lease_expires_at),
        (ResourceStatus::Ready, 100, None)
    );
    assert_eq!(record.sample.len(), 5);
    let page = settled_page(&server, response.id, Some(90), None).await;
    assert_eq!((page.returned_count, page.total_count), (10, 100));
    assert_eq!(page.data.last(), Some(&row(99)));
    let metadata = server
        .metadata(response.id, &anyone)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (metadata.status, metadata.progress),
        (ResourceStatus::Ready, None)
    );
    assert_eq!(executor.alive(), 0);
}

#[tokio::test]
async fn a_query_failing_in_the_background_fails_the_resource() {
    let executor = Arc::new(Numbers::new().steps([3]).then_fail());
    let server = server(&executor);
    let response = create(&server).await;
    assert_eq!(response.status, ResourceStatus::Pending);
    executor.open();
    let record = settled(&server, response.id).await;
    assert_eq!(record.status, ResourceStatus::Failed);
    let failure = record.failure.unwrap_or_else(|| panic!("a failure"));
    assert_eq!(failure.code, FailureCode::QueryExecutionFailed);
    assert!(
        failure.message.contains("no such column: nme"),
        "the model reads the executor's message"
    );
    assert_failed(&server, response.id, FailureCode::QueryExecutionFailed, false).await;
    let spool = server.spool().cloned().unwrap_or_else(|| panic!("a spool"));
    assert!(
        spool.manifest(response.id).await.is_err(),
        "a failed query's segments are removed"
    );
}

#[tokio::test]
async fn delete_cancels_a_pending_query_within_a_second() {
    let executor = gated(4, 10);
    let server = server(&executor);
    let response = create(&server).await;
    assert_eq!((response.status, executor.alive()), (ResourceStatus::Pending, 1));
    let started = std::time::Instant::now();
    server
        .delete_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    streams_dropped(&executor).await;
    done_within("the cancel", started, Duration::from_secs(1));
    let gone = server.get_resource(response.id, &Caller::anonymous()).await.err();
    assert_eq!(gone.map(|e| e.code()), Some(ServerErrorCode::ResourceNotFound));
    executor.open();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let spool = server.spool().cloned().unwrap_or_else(|| panic!("a spool"));
    let listed = spool.list().await.unwrap_or_default();
    assert!(
        listed.iter().all(|s| s.id != response.id),
        "no segments left: {listed:?}"
    );
}

#[tokio::test]
async fn the_time_limit_fails_a_pending_query() {
    let executor = gated(2, 10);
    let server = builder(Arc::clone(&executor))
        .query_time_limit(Duration::from_millis(300))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let response = create(&server).await;
    assert_eq!(response.status, ResourceStatus::Pending);
    let record = settled(&server, response.id).await;
    assert_eq!(record.status, ResourceStatus::Failed);
    assert_eq!(record.failure.map(|f| f.code), Some(FailureCode::QueryTimeout));
    streams_dropped(&executor).await;

    // Waiting for the end (no `pending_after`), the time limit is a creation error.
    let executor = gated(2, 10);
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("gated", Arc::clone(&executor) as Arc<dyn QueryExecutor>)
        .query_time_limit(Duration::from_millis(200))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let error = server
        .create_response(CreateResponse::new("gated", json!({})))
        .await
        .err();
    assert_eq!(error.map(|e| e.code()), Some(ServerErrorCode::QueryTimeout));
    streams_dropped(&executor).await;
}

/// Two instances share a store and a spool: B sees A's pending resource, its progress and its end.
#[tokio::test]
async fn another_instance_sees_progress_and_the_end() {
    across_instances(Arc::new(MemoryStore::new())).await;
}

/// The same across two instances sharing Redis.
#[cfg(feature = "services")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_instance_sees_progress_and_the_end_through_redis() {
    use dual_testkit::services::REDIS;
    let url = REDIS.require();
    let store = dual_store_redis::RedisStore::builder(url)
        .key_prefix(format!("dual-pending-test:{}:", ResourceId::new()))
        .connect()
        .await
        .unwrap_or_else(|e| REDIS.unreachable(e));
    across_instances(Arc::new(store)).await;
}

async fn across_instances(store: Arc<dyn ResourceStore>) {
    // The instances of this test share the store and, in this one process, the memory spool.
    let spool = Spool::new(dual_testkit::InProcessShared(
        MemorySpool::builder()
            .build()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    ));
    // An instance over `executor` sharing the store and the spool.
    let instance = |executor: Arc<Numbers>| {
        builder(executor)
            .shared_store(Arc::clone(&store))
            .spool(spool.clone())
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let executor = gated(6, 44);
    let a = instance(Arc::clone(&executor));
    let b = instance(gated(0, 0));
    let response = create(&a).await;
    let anyone = Caller::anonymous();
    let metadata = b
        .metadata(response.id, &anyone)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (metadata.status, metadata.progress.map(|p| p.rows)),
        (ResourceStatus::Pending, Some(6))
    );
    executor.open();
    let record = settled(&b, response.id).await;
    assert_eq!((record.status, record.total_count), (ResourceStatus::Ready, 50));
    let page = settled_page(&b, response.id, None, Some(50)).await;
    assert_eq!(
        page.data,
        (0..50).map(row).collect::<Vec<_>>(),
        "B serves the snapshot A wrote"
    );

    // DELETE through B cancels the query A runs, at A's next lease renewal.
    let executor = gated(3, 3);
    let a = instance(Arc::clone(&executor));
    let response = create(&a).await;
    assert_eq!(response.status, ResourceStatus::Pending);
    b.delete_resource(response.id, &anyone)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    streams_dropped(&executor).await;
}

/// The instance running a query dies (cut off from the store): once its lease lapses, the
/// resource reads as failed with the retryable `query_interrupted`, never pending forever.
#[tokio::test]
async fn a_dead_instance_leaves_a_failed_resource_once_its_lease_lapses() {
    let store: Arc<dyn ResourceStore> = Arc::new(MemoryStore::new());
    // The instances of this test share the store and, in this one process, the memory spool.
    let spool = Spool::new(dual_testkit::InProcessShared(
        MemorySpool::builder()
            .build()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    ));
    let severable = Arc::new(BreakableStore::wrapping(Arc::clone(&store), "instance A is gone"));
    let executor = gated(5, 5);
    let a = builder(Arc::clone(&executor))
        .shared_store(Arc::clone(&severable) as Arc<dyn ResourceStore>)
        .spool(spool.clone())
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let b = builder(gated(0, 0))
        .shared_store(Arc::clone(&store))
        .spool(spool)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let response = create(&a).await;
    assert_eq!(response.status, ResourceStatus::Pending);
    severable.set_broken(true);
    let anyone = Caller::anonymous();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let metadata = b
        .metadata(response.id, &anyone)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        metadata.status,
        ResourceStatus::Pending,
        "within the lease it is still pending"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_failed(&b, response.id, FailureCode::QueryInterrupted, true).await;
    // The failure is stored: a reader that knows nothing of leases sees it too.
    let stored = store
        .get(response.id, time::OffsetDateTime::now_utc())
        .await
        .ok()
        .and_then(|l| l.found());
    assert_eq!(stored.map(|r| r.status), Some(ResourceStatus::Failed));
    executor.open();
}
