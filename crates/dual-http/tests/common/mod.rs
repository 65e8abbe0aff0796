//! Shared fixtures of the integration tests: a cheap arithmetic executor and a loopback server.
#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod typed;

use std::net::SocketAddr;
use std::sync::Arc;

use dual_core::{ResourceId, Row, Sort, SortOrder};
use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, RowStream};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;
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

/// Kind `numbers`: rows `0..n` computed, never stored, so 100k-row exports cost no memory here.
/// Sorts by `id` (either order); `fail_stream_at` makes the export fail after that many rows,
/// `fail_fetch_over` makes `fetch` fail when asked for rows beyond it.
#[derive(Debug, Default)]
pub struct Numbers;

fn n(params: &Value) -> u64 {
    params["n"].as_u64().unwrap_or(0)
}

/// The id at position `i` of the result.
fn id_at(i: u64, n: u64, sort: Option<&Sort>) -> u64 {
    match sort {
        Some(s) if s.field == "id" && s.order == SortOrder::Desc => n - 1 - i,
        _ => i,
    }
}

#[async_trait::async_trait]
impl QueryExecutor for Numbers {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        Ok(n(params))
    }

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let n = n(params);
        if params["busy_after_create"].as_bool() == Some(true) && limit != 15 {
            return Err(ExecutorError::overloaded(
                "no database connection within 2000 ms",
                std::time::Duration::from_millis(1500),
            ));
        }
        if params["fail_fetch_over"]
            .as_u64()
            .is_some_and(|k| offset.saturating_add(limit) > k)
        {
            return Err(ExecutorError::new("syntax error near SELECT * FROM secret"));
        }
        Ok((offset.min(n)..n.min(offset.saturating_add(limit)))
            .map(|i| row(id_at(i, n, sort)))
            .collect())
    }

    fn stream(self: Arc<Self>, params: Value, sort: Option<Sort>) -> RowStream {
        let n = n(&params);
        let fail_at = params["fail_stream_at"].as_u64();
        if params["busy_after_create"].as_bool() == Some(true) {
            let busy =
                ExecutorError::overloaded("no export slot within 2000 ms", std::time::Duration::from_secs(3));
            return Box::pin(futures_util::stream::iter([Err(busy)]));
        }
        Box::pin(futures_util::stream::unfold(Some(0u64), move |next| {
            let sort = sort.clone();
            async move {
                let start = next?;
                if fail_at.is_some_and(|k| start >= k) {
                    return Some((Err(ExecutorError::new("cursor died: SELECT * FROM secret")), None));
                }
                if start >= n {
                    return None;
                }
                let end = n.min(start + 1000).min(fail_at.unwrap_or(u64::MAX));
                let rows = (start..end).map(|i| row(id_at(i, n, sort.as_ref()))).collect();
                Some((Ok(rows), Some(end)))
            }
        }))
    }
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
    DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_store(store)
        .executor("numbers", Numbers)
        .without_sweeper()
        .without_snapshots()
        .build()
        .expect("valid configuration")
}

pub fn server_with(store: Arc<FlakyStore>) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_store(store)
        .executor("numbers", Numbers)
        .without_sweeper()
        .build()
        .expect("valid configuration")
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
    status: dual_core::ResourceStatus,
) -> ResourceId {
    let mut record = server
        .get_resource(id, &dual_server::Caller::anonymous())
        .await
        .expect("live record");
    record.id = ResourceId::new();
    record.status = status;
    record.lease_expires_at = Some(server.clock().now() + dual_core::time::Duration::hours(1));
    if status == dual_core::ResourceStatus::Failed {
        record.lease_expires_at = None;
        record.failure = Some(dual_core::QueryFailure::new(
            dual_core::FailureCode::QueryTimeout,
            "ran past the time limit",
        ));
    }
    server.store().save(&record).await.expect("saved");
    record.id
}

pub async fn create(server: &DualResponseServer, params: Value) -> dual_core::ResourceId {
    server
        .create_response(CreateResponse::new("numbers", params))
        .await
        .expect("created")
        .id
}

/// Serves `handler` on 127.0.0.1 (a free port) with hyper-util's auto server until the task is
/// aborted.
pub async fn serve(handler: DualHttp) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let handler = handler.clone();
            tokio::spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    (addr, task)
}
