//! Shared fixtures: the testkit's example executor over generated rows.
#![allow(dead_code, unused_imports, unreachable_pub, missing_docs)]

use std::sync::Arc;

use dual_core::{DualResponse, ResourceId, ResourceRecord, Row, Sort, range::RowRange};
use dual_server::{Caller, CreateResponse, DualResponseServer, ServerError, ServerErrorCode};
use dual_testkit::executor::Numbers;
pub use dual_testkit::executor::row;
use futures_util::StreamExt;

/// Rows `{id, name, enrollment, public}` for `0..n` (`params.n`); `params.fail` makes `fetch` fail,
/// `params.fail_count` makes `count` fail.
pub fn shared() -> Arc<Numbers> {
    Arc::new(Numbers::new())
}

/// The code of `result`'s error; panics naming `what` if it succeeded.
pub fn error_code<T>(result: Result<T, ServerError>, what: &str) -> ServerErrorCode {
    result.map(|_| ()).expect_err(what).code()
}

/// Kind `blobs`: `params.n` rows `{"i": i, "blob": …}` whose `blob` is `params.bytes` long.
pub fn blobs() -> dual_testkit::executor::Paged {
    dual_testkit::executor::Paged::new(|params, i| {
        let bytes = usize::try_from(params["bytes"].as_u64().unwrap_or(0)).unwrap_or(0);
        dual_testkit::executor::object(serde_json::json!({"i": i, "blob": "x".repeat(bytes)}))
    })
}

/// Rows `range` of resource `id` in the order of `sort`, streamed for an anonymous caller.
pub async fn export(
    server: &DualResponseServer,
    id: ResourceId,
    sort: Option<Sort>,
    range: RowRange,
) -> Vec<Row> {
    let (_, stream) = server
        .stream_range(id, &Caller::anonymous(), sort, range)
        .await
        .expect("export");
    let batches: Vec<_> = stream.collect().await;
    batches
        .into_iter()
        .flat_map(|batch| batch.and_then(dual_server::RowBatch::into_rows).expect("batch"))
        .collect()
}

/// Polls `id`'s record every 10 ms until `done` holds for it (at most 5 s), returning it; panics
/// saying `id` is still `what` after 5 s.
pub async fn record_once(
    server: &DualResponseServer,
    id: ResourceId,
    done: impl Fn(&ResourceRecord) -> bool,
    what: &str,
) -> ResourceRecord {
    for _ in 0..500 {
        let record = server
            .get_resource(id, &Caller::anonymous())
            .await
            .unwrap_or_else(|e| panic!("get: {e}"));
        if done(&record) {
            return record;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{id} still {what} after 5 s");
}

/// What `server` answers to `request`; panics if it fails.
pub async fn created(server: &DualResponseServer, request: CreateResponse) -> DualResponse {
    server
        .create_response(request)
        .await
        .unwrap_or_else(|e| panic!("created: {e}"))
}
