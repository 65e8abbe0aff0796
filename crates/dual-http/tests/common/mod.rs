//! Shared fixtures of the integration tests: a cheap arithmetic executor and a loopback server.
#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod refine;
pub mod typed;

use std::net::SocketAddr;
use std::sync::Arc;

use dual_core::{ResourceId, Row};
use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer, DualResponseServerBuilder};
use dual_testkit::executor;
use dual_testkit::serve::Loopback;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// Row `i`: a few types, one string that needs CSV quoting, one nested value, one null.
pub fn row(i: u64) -> Row {
    let value = json!({
        "id": i,
        "name": format!("Name {i}, \"quoted\""),
        "score": (i * 7919) % 1000,
        "ratio": i as f64 / 4.0,
        "active": i.is_multiple_of(3),
        "tags": {"k": i % 5},
        "note": if i.is_multiple_of(2) { Value::Null } else { json!("odd") },
    });
    value.as_object().cloned().unwrap_or_default()
}

/// Kind `numbers`: the testkit's [`executor::Numbers`] over [`row`] (its failure switches, sorted by
/// any column, rows computed, never stored, so 100k-row exports cost no memory here).
pub fn numbers() -> executor::Numbers {
    executor::Numbers::new().row(row)
}

pub fn server() -> DualResponseServer {
    server_with(Arc::new(flaky_store()))
}

/// A server without snapshots: pages and exports re-execute the query (the live path).
pub fn live_server() -> DualResponseServer {
    live_server_with(Arc::new(flaky_store()))
}

/// [`live_server`] on `store`.
pub fn live_server_with(store: Arc<FlakyStore>) -> DualResponseServer {
    builder_with(store)
        .without_snapshots()
        .build()
        .expect("valid configuration")
}

pub fn server_with(store: Arc<FlakyStore>) -> DualResponseServer {
    builder_with(store).build().expect("valid configuration")
}

/// What every server of these tests starts from: kind `numbers` on `store`, no sweeper, and a tool
/// call that waits for the end of its query (these tests read each result whole right after it was
/// created; the pending path has tests of its own).
pub fn builder_with(store: Arc<FlakyStore>) -> DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_store(store)
        .executor("numbers", numbers())
        .without_sweeper()
        .wait_for_end()
}

/// A store that fails while broken, with an internal-looking message that must never reach a client.
pub type FlakyStore = dual_testkit::BreakableStore;

/// A working [`FlakyStore`].
pub fn flaky_store() -> FlakyStore {
    FlakyStore::new("postgres://10.0.0.7:5432 refused")
}

/// Stores a copy of `id`'s record under a new id, already expired; returns the new id.
pub async fn expired_copy(server: &DualResponseServer, id: ResourceId) -> ResourceId {
    let mut record = server
        .get_resource(id, &dual_server::Caller::anonymous())
        .await
        .expect("live record");
    record.id = ResourceId::new();
    record.expires_at = Some(server.clock().now() - dual_core::time::Duration::minutes(1));
    server.store().save(&record).await.expect("saved");
    record.id
}

/// A copy of `id` saved as `pending` (its lease far ahead) or `failed` (`query_timeout`), as a
/// long-running query leaves it.
pub async fn copy_with_status(
    server: &DualResponseServer,
    id: ResourceId,
    status: dual_core::status::ResourceStatus,
) -> ResourceId {
    let mut record = server
        .get_resource(id, &dual_server::Caller::anonymous())
        .await
        .expect("live record");
    record.id = ResourceId::new();
    record.status = status;
    record.lease_expires_at = Some(server.clock().now() + dual_core::time::Duration::hours(1));
    if status == dual_core::status::ResourceStatus::Failed {
        record.lease_expires_at = None;
        record.failure = Some(dual_core::status::QueryFailure::new(
            dual_core::status::FailureCode::QueryTimeout,
            "ran past the time limit",
        ));
    }
    server.store().save(&record).await.expect("saved");
    record.id
}

/// Creates a resource of kind `numbers` with `params`: its id.
pub async fn create(server: &DualResponseServer, params: Value) -> dual_core::ResourceId {
    create_of(server, "numbers", params).await
}

/// Creates a resource of `kind` with `params`: its id.
pub async fn create_of(server: &DualResponseServer, kind: &str, params: Value) -> dual_core::ResourceId {
    server
        .create_response(CreateResponse::new(kind, params))
        .await
        .expect("created")
        .id
}

/// Serves `handler` on 127.0.0.1 (a free port) until the task is aborted.
pub async fn serve(handler: DualHttp) -> (SocketAddr, JoinHandle<()>) {
    let loopback = Loopback::bind().await;
    let addr = loopback.addr();
    (addr, loopback.serve(handler))
}
