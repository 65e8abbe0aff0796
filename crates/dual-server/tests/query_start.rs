//! Waiting for capacity is not running (docs/DESIGN.md §8): `pending_after` counts from the moment
//! the executor says its query started ([`QueryStart`]); a query that never gets capacity is the
//! retryable `OVERLOADED`, never a pending resource; and a background query failing for lack of
//! capacity fails its resource with the retryable `overloaded` code.

use std::sync::Arc;
use std::time::Duration;

use dual_core::Row;
use dual_core::status::{FailureCode, ResourceStatus};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, QueryStart, RowStream,
    ServerErrorCode,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// An executor with `capacity` connections: a query waits at most `wait` for one (then
/// `overloaded`), signals its start once it has one, runs for `run_for`, then yields three rows — or,
/// with params `{"busy_later": true}`, fails `overloaded` instead (a capacity error after the start).
struct Capacity {
    capacity: Arc<Semaphore>,
    wait: Duration,
    run_for: Duration,
}

impl Capacity {
    fn new(connections: usize, wait: Duration, run_for: Duration) -> Arc<Self> {
        Arc::new(Self {
            capacity: Arc::new(Semaphore::new(connections)),
            wait,
            run_for,
        })
    }
}

fn rows() -> Vec<Row> {
    (0..3)
        .filter_map(|i| json!({ "i": i }).as_object().cloned())
        .collect()
}

/// Snapshots only: no live paging.
impl QueryExecutor for Capacity {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let busy_later = params["busy_later"].as_bool().unwrap_or(false);
        Box::pin(futures_util::stream::once(async move {
            let busy =
                || ExecutorError::overloaded("no connection within the wait limit", Duration::from_secs(1));
            let permit = tokio::time::timeout(self.wait, Arc::clone(&self.capacity).acquire_owned()).await;
            let Ok(Ok(_permit)) = permit else {
                return Err(busy());
            };
            start.started();
            tokio::time::sleep(self.run_for).await;
            if busy_later {
                Err(busy())
            } else {
                Ok(rows().into())
            }
        }))
    }
}

fn server(executor: &Arc<Capacity>) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("capacity", Arc::clone(executor) as Arc<dyn QueryExecutor>)
        .pending_after(Duration::from_millis(100))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn create(
    server: &DualResponseServer,
    params: Value,
) -> Result<dual_core::DualResponse, dual_server::ServerError> {
    server
        .create_response(CreateResponse::new("capacity", params))
        .await
}

#[tokio::test(start_paused = true)]
async fn a_query_without_capacity_is_overloaded_not_pending() {
    let executor = Capacity::new(0, Duration::from_millis(500), Duration::ZERO);
    let server = server(&executor);
    let started = tokio::time::Instant::now();
    let error = create(&server, json!({})).await.err();
    assert_eq!(
        error.as_ref().map(|e| e.code()),
        Some(ServerErrorCode::Overloaded),
        "{error:?}"
    );
    assert_eq!(error.as_ref().map(|e| e.is_retryable()), Some(true));
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "answered after the executor's wait"
    );
}

#[tokio::test(start_paused = true)]
async fn pending_after_counts_from_the_start_of_the_query() {
    // The connection comes after 300 ms (past `pending_after`); the query then takes 50 ms.
    let executor = Capacity::new(0, Duration::from_secs(1), Duration::from_millis(50));
    let capacity = Arc::clone(&executor.capacity);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        capacity.add_permits(1);
    });
    let waiting = server(&executor);
    let response = create(&waiting, json!({}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (response.status, response.total_count),
        (ResourceStatus::Ready, 3)
    );

    // A query that runs past `pending_after` once started is pending, as before.
    let executor = Capacity::new(1, Duration::from_secs(1), Duration::from_secs(2));
    let server = server(&executor);
    let response = create(&server, json!({})).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status, ResourceStatus::Pending);
}

#[tokio::test(start_paused = true)]
async fn a_pending_query_failing_for_capacity_fails_retryable_overloaded() {
    let executor = Capacity::new(1, Duration::from_secs(1), Duration::from_millis(300));
    let server = server(&executor);
    let response = create(&server, json!({"busy_later": true}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status, ResourceStatus::Pending);
    let anyone = Caller::anonymous();
    for _ in 0..100 {
        let record = server
            .get_resource(response.id, &anyone)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if record.status != ResourceStatus::Pending {
            let failure = record.failure.unwrap_or_else(|| panic!("a failure"));
            assert_eq!(failure.code, FailureCode::Overloaded, "{}", failure.message);
            assert!(failure.code.is_retryable());
            let metadata = server
                .metadata(response.id, &anyone)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                metadata.error.map(|e| (e.code, e.retryable)),
                Some((FailureCode::Overloaded, true))
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("still pending after 5 s");
}
