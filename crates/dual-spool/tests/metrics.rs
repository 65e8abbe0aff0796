//! The memory spool's bytes per tier and its budget, as `dual_spool::metrics` reports them, read
//! back with dual-testkit's `Captured` recorder.

use dual_core::ResourceId;
use dual_testkit::metrics::Captured;

use dual_spool::metrics::{SPOOL_BYTES, SPOOL_LIMIT_BYTES, describe};
use dual_spool::{MemorySpool, SpoolBackend};

const MEMORY: &[(&str, &str)] = &[("tier", "memory")];
const DISK: &[(&str, &str)] = &[("tier", "disk")];

#[tokio::test]
async fn bytes_per_tier_follow_puts_deletes_and_close() {
    let captured = Captured::new();
    let _local = captured.local();
    describe();
    let spool = MemorySpool::builder()
        .memory_budget(10)
        .build()
        .await
        .expect("spool");
    assert_eq!(captured.gauge(SPOOL_LIMIT_BYTES, MEMORY), Some(10.0));
    let (a, b) = (ResourceId::new(), ResourceId::new());
    spool.put_segment(a, 0, vec![1; 6].into()).await.expect("put");
    // Over the budget: spilled whole.
    spool.put_segment(a, 1, vec![2; 7].into()).await.expect("put");
    spool.put_segment(b, 0, vec![3; 4].into()).await.expect("put");
    assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(10.0));
    assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(7.0));
    // An index stored again replaces the old segment (this one spills: the budget is full).
    spool.put_segment(b, 0, vec![3; 2].into()).await.expect("put");
    assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(6.0));
    assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(9.0));
    spool.delete(a).await.expect("delete");
    assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(0.0));
    assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(2.0));
    spool.close().await.expect("close");
    assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(0.0));
    assert!(captured.description(SPOOL_BYTES).is_some());
}

#[tokio::test]
async fn a_dropped_spool_gives_its_bytes_back() {
    let captured = Captured::new();
    let _local = captured.local();
    let spool = MemorySpool::builder()
        .memory_budget(4)
        .build()
        .await
        .expect("spool");
    let id = ResourceId::new();
    spool.put_segment(id, 0, vec![1; 3].into()).await.expect("put");
    spool.put_segment(id, 1, vec![1; 3].into()).await.expect("put");
    drop(spool);
    assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(0.0));
    assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(0.0));
}

#[test]
fn a_cap_is_reported_with_one_call() {
    let captured = Captured::new();
    let _local = captured.local();
    dual_spool::metrics::limit(dual_spool::metrics::Tier::Disk, 1 << 30);
    dual_spool::metrics::limit(dual_spool::metrics::Tier::Total, 2 << 30);
    assert_eq!(
        captured.gauge(SPOOL_LIMIT_BYTES, DISK),
        Some(f64::from(1u32 << 30))
    );
    assert_eq!(
        captured.gauge(SPOOL_LIMIT_BYTES, &[("tier", "total")]),
        Some(2.0 * f64::from(1u32 << 30))
    );
}
