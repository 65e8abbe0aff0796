//! What the server reports through the `metrics` facade (docs/METRICS.md), read back with
//! dual-testkit's `Captured` recorder on the test's thread.

use std::sync::Arc;
use std::time::Duration;

use dual_core::{PageRequest, ResourceId, Sort, SortOrder, status::ResourceStatus};
use dual_server::metrics::{
    LIVE_RESOURCES, LIVE_RESOURCES_LIMIT, QUERIES_PENDING, QUERIES_RUNNING, QUERIES_WAITING, SORTS_IN_FLIGHT,
    SORTS_TOTAL, SWEEPS_TOTAL, SWEPT_TOTAL,
};
use dual_server::{Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, QueryExecutor};
use dual_store::{Clock, MemoryStore, ResourceStore};
use dual_testkit::BreakableStore;
use dual_testkit::executor::Numbers;
use dual_testkit::metrics::Captured;
use serde_json::json;

fn builder(executor: Arc<Numbers>) -> DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .clock(Clock::tokio())
        .shared_executor("numbers", executor as Arc<dyn QueryExecutor>)
}

fn build(builder: DualResponseServerBuilder) -> DualResponseServer {
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

async fn create(server: &DualResponseServer, params: serde_json::Value, expiration: Duration) -> ResourceId {
    server
        .create_response(CreateResponse::new("numbers", params).expiration(expiration))
        .await
        .unwrap_or_else(|e| panic!("create_response: {e}"))
        .id
}

/// Lets the spawned tasks run (paused time: no real waiting).
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_pending_query_is_running_and_pending_until_it_ends() {
    let captured = Captured::new();
    let _local = captured.local();
    dual_server::metrics::describe();
    assert_eq!(captured.gauge(QUERIES_RUNNING, &[]), Some(0.0), "shown at zero");
    let executor = Arc::new(Numbers::new().steps([5, 5]));
    let server = build(
        builder(Arc::clone(&executor))
            .pending_after(Duration::from_millis(100))
            .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
            .without_sweeper(),
    );
    let response = server
        .create_response(CreateResponse::new("numbers", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status, ResourceStatus::Pending);
    assert_eq!(captured.gauge(QUERIES_RUNNING, &[]), Some(1.0));
    assert_eq!(captured.gauge(QUERIES_PENDING, &[]), Some(1.0));

    executor.open();
    for _ in 0..100 {
        if captured.gauge(QUERIES_PENDING, &[]) == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(captured.gauge(QUERIES_PENDING, &[]), Some(0.0));
    assert_eq!(captured.gauge(QUERIES_RUNNING, &[]), Some(0.0));
    let record = server
        .get_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(record.status, ResourceStatus::Ready);
}

#[tokio::test(start_paused = true)]
async fn a_deleted_pending_query_leaves_the_gauges() {
    let captured = Captured::new();
    let _local = captured.local();
    let executor = Arc::new(Numbers::new().steps([5, 5]));
    let server = build(
        builder(Arc::clone(&executor))
            .pending_after(Duration::from_millis(100))
            .without_sweeper(),
    );
    let response = server
        .create_response(CreateResponse::new("numbers", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(captured.gauge(QUERIES_PENDING, &[]), Some(1.0));
    server
        .delete_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    settle().await;
    assert_eq!(captured.gauge(QUERIES_PENDING, &[]), Some(0.0));
    assert_eq!(captured.gauge(QUERIES_RUNNING, &[]), Some(0.0));
}

#[tokio::test]
async fn sorts_are_counted_once_per_derivation() {
    let captured = Captured::new();
    let _local = captured.local();
    let server = build(builder(Arc::new(Numbers::new())).without_sweeper());
    let id = create(&server, json!({"n": 50}), Duration::from_secs(60)).await;
    let sorted = PageRequest {
        sort: Some(Sort::new("id", SortOrder::Desc)),
        ..PageRequest::default()
    };
    for _ in 0..2 {
        let page = server
            .fetch_page(id, &Caller::anonymous(), &sorted)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.data.first().and_then(|row| row.get("id")), Some(&json!(49)));
    }
    assert_eq!(captured.counter(SORTS_TOTAL, &[]), 1, "the second page is cached");
    assert_eq!(captured.gauge(SORTS_IN_FLIGHT, &[]), Some(0.0));
    assert_eq!(captured.gauge(QUERIES_RUNNING, &[]), Some(0.0));
}

#[tokio::test(start_paused = true)]
async fn sweeps_count_what_they_removed_and_the_live_resources() {
    let captured = Captured::new();
    let _local = captured.local();
    let server = build(
        builder(Arc::new(Numbers::new()))
            .store(MemoryStore::new())
            .max_resources(10)
            .cleanup_interval(Duration::from_secs(60)),
    );
    assert_eq!(captured.gauge(LIVE_RESOURCES_LIMIT, &[]), Some(10.0));
    create(&server, json!({"n": 5}), Duration::from_secs(30)).await;
    create(&server, json!({"n": 5}), Duration::from_secs(3600)).await;
    tokio::time::advance(Duration::from_secs(61)).await;
    settle().await;
    assert_eq!(captured.counter(SWEEPS_TOTAL, &[("outcome", "ok")]), 1);
    assert_eq!(captured.counter(SWEPT_TOTAL, &[("what", "expired")]), 1);
    assert_eq!(captured.counter(SWEPT_TOTAL, &[("what", "orphans")]), 0);
    assert_eq!(captured.gauge(LIVE_RESOURCES, &[]), Some(1.0));
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(start_paused = true)]
async fn a_failed_sweep_is_counted_as_failed() {
    let captured = Captured::new();
    let _local = captured.local();
    let store = Arc::new(BreakableStore::new("the store is down"));
    let server = build(
        builder(Arc::new(Numbers::new()))
            .shared_store(Arc::clone(&store) as Arc<dyn ResourceStore>)
            .without_snapshots()
            .cleanup_interval(Duration::from_secs(60)),
    );
    store.set_broken(true);
    tokio::time::advance(Duration::from_secs(61)).await;
    settle().await;
    assert_eq!(captured.counter(SWEEPS_TOTAL, &[("outcome", "failed")]), 1);
    assert_eq!(captured.counter(SWEEPS_TOTAL, &[("outcome", "ok")]), 0);
    assert_eq!(
        captured.gauge(LIVE_RESOURCES, &[]),
        None,
        "no count while the store is down"
    );
    drop(server);
}

#[test]
fn executors_report_their_waits() {
    let captured = Captured::new();
    let _local = captured.local();
    let first = dual_server::metrics::query_waiting();
    let second = dual_server::metrics::query_waiting();
    assert_eq!(captured.gauge(QUERIES_WAITING, &[]), Some(2.0));
    drop(first);
    assert_eq!(captured.gauge(QUERIES_WAITING, &[]), Some(1.0));
    drop(second);
    assert_eq!(captured.gauge(QUERIES_WAITING, &[]), Some(0.0));
}

#[tokio::test(start_paused = true)]
async fn the_scheduler_reports_its_work_by_class_and_its_refusals() {
    use dual_server::metrics::{
        SCHEDULER_ADMITTED_TOTAL, SCHEDULER_PLACES, SCHEDULER_REFUSED_TOTAL, SCHEDULER_RUNNING,
    };
    let captured = Captured::new();
    let _local = captured.local();
    dual_server::metrics::describe();
    let background = [("class", "background")];
    assert_eq!(
        captured.gauge(SCHEDULER_RUNNING, &background),
        Some(0.0),
        "shown at zero"
    );
    let executor = Arc::new(Numbers::new().steps([5, 5]));
    let server = build(
        builder(Arc::clone(&executor))
            .pending_after(Duration::from_millis(100))
            .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
            .scheduler_limits(dual_server::SchedulerLimits::default().background_queue(1))
            .without_sweeper(),
    );
    let pending = server
        .create_response(CreateResponse::new("numbers", json!({})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pending.status, ResourceStatus::Pending);
    settle().await;
    assert_eq!(captured.gauge(SCHEDULER_PLACES, &[]), Some(1.0));
    assert_eq!(
        captured.gauge(SCHEDULER_RUNNING, &background),
        Some(1.0),
        "written in the background"
    );
    let admitted = [
        ("class", "foreground"),
        ("owner", "anonymous"),
        ("how", "at_once"),
    ];
    assert_eq!(captured.counter(SCHEDULER_ADMITTED_TOTAL, &admitted), 1);

    let refused = server
        .create_response(CreateResponse::new("numbers", json!({})))
        .await;
    assert!(refused.is_err(), "the one background place is held");
    let refusals = [("class", "background"), ("owner", "anonymous")];
    assert_eq!(captured.counter(SCHEDULER_REFUSED_TOTAL, &refusals), 1);

    executor.open();
    for _ in 0..100 {
        if captured.gauge(SCHEDULER_PLACES, &[]) == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        captured.gauge(SCHEDULER_PLACES, &[]),
        Some(0.0),
        "the place was given back"
    );
    assert_eq!(captured.gauge(SCHEDULER_RUNNING, &background), Some(0.0));
}
