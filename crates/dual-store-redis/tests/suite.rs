//! The shared store conformance suite against a real Redis (`DUAL_TEST_REDIS_URL`, feature `services`).
#![cfg(feature = "services")]

mod support;

use dual_testkit::store as suite;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_store_passes_the_conformance_suite() {
    let namespace = support::Namespace::new();
    suite::run(|| namespace.store()).await;
}
