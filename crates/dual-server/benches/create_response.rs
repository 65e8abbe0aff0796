//! `create_response` overhead beyond the executor's own time (issue 2 target: ≤ 10 µs median).
//!
//! Run: `cargo bench -p dual-server --bench create_response`. Compare the medians of
//! `executor_only` (count + sample fetch called directly, joined like the server does) and
//! `create_response` (the same executor behind the server, with a MemoryStore); the difference is
//! the server's overhead: registry lookup, id, column inference, record, store save and response.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dual_core::{Row, Sort};
use dual_server::{CreateResponse, DualResponseServer, ExecutorError, QueryExecutor};
use serde_json::{Value, json};

/// Returns clones of 15 precomputed five-column rows: the cheapest possible "query".
struct Fixed {
    rows: Vec<Row>,
}

#[async_trait::async_trait]
impl QueryExecutor for Fixed {
    async fn count(&self, _: &Value) -> Result<u64, ExecutorError> {
        Ok(847)
    }

    async fn fetch(
        &self,
        _: &Value,
        _: u64,
        limit: u64,
        _: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        Ok(self
            .rows
            .iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .cloned()
            .collect())
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let rows: Vec<Row> = (0..15)
        .map(|i| {
            json!({"id": i, "name": format!("College {i}"), "state": "NJ", "enrollment": i * 100, "public": true})
                .as_object()
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    let executor = Arc::new(Fixed { rows });
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
            let (count, rows) = tokio::join!(executor.count(&params), executor.fetch(&params, 0, 15, None));
            black_box((count, rows))
        });
    });
    // Each created resource is deleted again outside the timed section, so the store stays at its
    // steady-state size instead of growing by hundreds of thousands of records during the run.
    group.bench_function("create_response", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let server = server.clone();
            let params = params.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let request = CreateResponse::new("institutions", params.clone())
                        .name("Institution Search Results");
                    let start = Instant::now();
                    let response = black_box(server.create_response(request).await.expect("created"));
                    timed += start.elapsed();
                    server
                        .delete_resource(response.id, &dual_server::Caller::anonymous())
                        .await
                        .expect("deleted");
                }
                timed
            }
        });
    });
    group.bench_function("create_response+tool_result_json", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let server = server.clone();
            let params = params.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let request = CreateResponse::new("institutions", params.clone())
                        .name("Institution Search Results");
                    let start = Instant::now();
                    let response = server.create_response(request).await.expect("created");
                    black_box(serde_json::to_vec(&response.tool_result()).expect("json"));
                    timed += start.elapsed();
                    server
                        .delete_resource(response.id, &dual_server::Caller::anonymous())
                        .await
                        .expect("deleted");
                }
                timed
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
