//! `create_response` overhead beyond the executor's own time (issue 2 target: ≤ 10 µs median).
//!
//! Run: `cargo bench -p dual-server --bench create_response`. Compare the medians of
//! `executor_only` (the executor's whole stream, collected) and `create_response` (the same executor
//! behind the server, with a MemoryStore and a memory spool); the difference is the server's
//! overhead: registry lookup, id, the snapshot write, column inference, record, store save and
//! response.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::precomputed;
use criterion::{Criterion, criterion_group, criterion_main};
use dual_core::DualResponse;
use dual_server::{CreateResponse, DualResponseServer, QueryExecutor, QueryStart};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// Creates `iters` resources, timing each `create_response` together with `then` on its response;
/// each is deleted again outside the timed section, so the store stays at its steady-state size
/// instead of growing by hundreds of thousands of records during the run.
async fn timed_creates(
    server: DualResponseServer,
    params: Value,
    iters: u64,
    then: fn(DualResponse),
) -> Duration {
    let mut timed = Duration::ZERO;
    for _ in 0..iters {
        let request = CreateResponse::new("institutions", params.clone()).name("Institution Search Results");
        let start = Instant::now();
        let response = server.create_response(request).await.expect("created");
        let id = response.id;
        then(response);
        timed += start.elapsed();
        server
            .delete_resource(id, &dual_server::Caller::anonymous())
            .await
            .expect("deleted");
    }
    timed
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let executor = Arc::new(precomputed(847));
    let server = runtime.block_on(async {
        DualResponseServer::builder()
            .base_url("https://api.example.com/resources")
            .without_sweeper()
            .shared_executor("institutions", Arc::clone(&executor) as Arc<dyn QueryExecutor>)
            .build()
            .expect("server")
    });
    let params = json!({"state": "NJ", "control": "public"});

    let mut group = c.benchmark_group("create_response");
    group.bench_function("executor_only", |b| {
        b.to_async(&runtime).iter(|| async {
            let stream = Arc::clone(&executor).stream(params.clone(), QueryStart::detached());
            black_box(stream.collect::<Vec<_>>().await)
        });
    });
    group.bench_function("create_response", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            timed_creates(server.clone(), params.clone(), iters, |response| {
                black_box(response);
            })
        });
    });
    group.bench_function("create_response+tool_result_json", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            timed_creates(server.clone(), params.clone(), iters, |response| {
                black_box(serde_json::to_vec(&response.tool_result()).expect("json"));
            })
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
