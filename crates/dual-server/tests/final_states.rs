//! A state never goes back from `failed` (issue 41, item 4): a resource a reader turned failed because
//! its lease lapsed (its instance too busy to renew it) stays failed, and its query stops, instead of
//! being renewed or stored `ready` by the instance that comes back to it; and a lease lapses only when
//! its instance is gone, never while it recounts a result live.

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

/// Numbers whose live count takes [`SlowRecount::DELAY`]: a result over the snapshot cap is recounted
/// live after its answer, for longer than the lease.
struct SlowRecount(Arc<Numbers>);

impl SlowRecount {
    const DELAY: Duration = Duration::from_secs(3);
}

impl QueryExecutor for SlowRecount {
    fn stream(
        self: Arc<Self>,
        params: serde_json::Value,
        start: dual_server::QueryStart,
    ) -> dual_server::RowStream {
        Arc::clone(&self.0).stream(params, start)
    }

    fn live(&self) -> Option<&dyn dual_server::LiveQuery> {
        Some(self)
    }
}

#[async_trait::async_trait]
impl dual_server::LiveQuery for SlowRecount {
    async fn count(&self, params: &serde_json::Value) -> Result<u64, dual_server::ExecutorError> {
        tokio::time::sleep(Self::DELAY).await;
        let live = self.0.live().unwrap_or_else(|| panic!("Numbers pages live"));
        live.count(params).await
    }

    async fn fetch(
        &self,
        params: &serde_json::Value,
        window: dual_server::RowWindow<'_>,
    ) -> Result<Vec<dual_core::Row>, dual_server::ExecutorError> {
        let live = self.0.live().unwrap_or_else(|| panic!("Numbers pages live"));
        live.fetch(params, window).await
    }
}

/// A result over the snapshot cap is recounted live after its answer; the recount renews the lease,
/// so a reader meanwhile sees it running (never `query_interrupted` while its instance is alive),
/// and it ends `ready`, live, with its count.
#[tokio::test(start_paused = true)]
async fn a_live_recount_renews_the_lease_until_it_ends() {
    // 20 rows at once, the rest (past the cap) once the test opens the gate after the answer.
    let numbers = Arc::new(Numbers::new().steps([20, 2_000]));
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .clock(Clock::tokio())
        .shared_executor(
            "slow",
            Arc::new(SlowRecount(Arc::clone(&numbers))) as Arc<dyn QueryExecutor>,
        )
        .snapshot_max_bytes(4_096)
        .pending_after(Duration::from_millis(100))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let response = common::created(&server, CreateResponse::new("slow", json!({}))).await;
    assert_eq!(response.status, ResourceStatus::Pending);
    numbers.open();
    let anyone = Caller::anonymous();
    let started = tokio::time::Instant::now();
    let record = loop {
        let record = server
            .get_resource(response.id, &anyone)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(
            record.status,
            ResourceStatus::Failed,
            "failed while its instance recounted it: {:?}",
            record.failure
        );
        if record.status == ResourceStatus::Ready && record.spooled_rows.is_none() {
            break record;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never ended: {record:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        started.elapsed() >= SlowRecount::DELAY,
        "the recount ran ({:?})",
        started.elapsed()
    );
    assert_eq!(record.total_count, 2_020);
    assert_eq!(record.consistency, dual_core::consistency::Consistency::Live);
}
