//! The conformance suite through every adapter: the handler as a hyper `Service` (with and without a
//! prefix), as a `tower::Service`, and nested in an axum `Router`.

use std::time::Duration;

use dual_testkit::http::{HyperTarget, TowerTarget};

/// Generous: the suite is a few hundred in-memory requests.
const BUDGET: Duration = Duration::from_secs(120);

async fn bounded(run: impl Future<Output = Vec<&'static str>>) -> Vec<&'static str> {
    match tokio::time::timeout(BUDGET, run).await {
        Ok(passed) => passed,
        Err(_) => panic!("the suite did not finish within {BUDGET:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hyper_service_under_a_prefix() {
    let passed = bounded(dual_testkit::http::run("/resources", |b| {
        HyperTarget(b.prefix("/resources").build())
    }))
    .await;
    assert!(passed.len() >= 25, "{passed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hyper_service_at_the_root() {
    bounded(dual_testkit::http::run("", |b| HyperTarget(b.build()))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hyper_service_under_a_nested_prefix_given_sloppily() {
    bounded(dual_testkit::http::run("/api/v1/resources", |b| {
        HyperTarget(b.prefix("api/v1/resources/").build())
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_service() {
    bounded(dual_testkit::http::run("/resources", |b| {
        TowerTarget(b.prefix("/resources").build())
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axum_nest_service() {
    bounded(dual_testkit::http::run("/resources", |b| {
        TowerTarget(axum::Router::new().nest_service("/resources", b.build()))
    }))
    .await;
}
