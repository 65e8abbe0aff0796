//! A state never goes back from `failed` (issue 41, item 4): a resource a reader turned failed because
//! its lease lapsed (its instance too busy to renew it) stays failed, and its query stops, instead of
//! being renewed or stored `ready` by the instance that comes back to it.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::status::{FailureCode, QueryFailure, ResourceStatus};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_store::{Clock, MemoryStore, ResourceStore};
use dual_testkit::executor::Numbers;
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn a_resource_failed_after_its_lease_lapsed_stays_failed_and_its_query_stops() {
    let executor = Arc::new(Numbers::new().counted().steps([10, 90]));
    let store = Arc::new(MemoryStore::new());
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .clock(Clock::tokio())
        .shared_executor("gated", Arc::clone(&executor) as Arc<dyn QueryExecutor>)
        .shared_store(Arc::clone(&store) as Arc<dyn ResourceStore>)
        .pending_after(Duration::from_millis(100))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let response = common::created(&server, CreateResponse::new("gated", json!({})).sample_size(5)).await;
    assert_eq!(
        response.status,
        ResourceStatus::Ready,
        "answered while it is written"
    );
    assert_eq!(executor.alive(), 1);

    // What a reader does once the lease has lapsed: the record is stored failed.
    let mut record = server
        .get_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    record.status = ResourceStatus::Failed;
    record.failure = Some(QueryFailure::new(
        FailureCode::QueryInterrupted,
        "run the query again",
    ));
    record.lease_expires_at = None;
    record.spooled_rows = None;
    assert!(store.update_query(&record).await.unwrap_or(false));
    // The instance comes back after its lease (400 ms) lapsed: its next renewal finds the failure.
    tokio::time::advance(Duration::from_secs(1)).await;
    for _ in 0..200 {
        if executor.alive() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let after = server
        .get_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(after.status, ResourceStatus::Failed, "{after:?}");
    assert_eq!(after.failure.map(|f| f.code), Some(FailureCode::QueryInterrupted));
    assert_eq!(executor.alive(), 0, "the query stopped");
}
