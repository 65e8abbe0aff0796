//! The shared store conformance suite against a real Redis.

use crate::support::Namespace;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_store_passes_the_conformance_suite_and_refuses_calls_once_closed() {
    let namespace = Namespace::new();
    dual_testkit::store::run(|| namespace.store()).await;
    // Beyond what the trait asks of every store: once closed, this one refuses every call.
    dual_testkit::store::refuses_calls_once_closed(&namespace.store().await).await;
}
