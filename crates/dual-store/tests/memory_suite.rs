//! `MemoryStore` passes the store conformance suite.

use std::sync::Arc;

use dual_store::{MemoryStore, ResourceStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_suite() {
    dual_testkit::store::run(|| async { MemoryStore::new() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cases_run_alone_through_a_trait_object() {
    let store: Arc<dyn ResourceStore> = Arc::new(MemoryStore::new());
    dual_testkit::store::round_trip_every_field(&*store).await;
    dual_testkit::store::expiry_boundary(&*store).await;
    // The concurrent cases take an `Arc`, so a store handle is shared with the spawned tasks.
    dual_testkit::store::concurrent_record_access(Arc::clone(&store)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_suite_also_runs_on_a_current_thread_runtime() {
    dual_testkit::store::run(|| async { MemoryStore::new() }).await;
}
