//! Refining a stored result (issue 46, item 5; figures in `docs/PERFORMANCE.md`): from the call of
//! `DualResponseServer::refine` to its answer (the refined result's exact count and sample), on the
//! demo's 269,000-row result and on 1,000,000 rows × 8 columns; and how much a refinement running
//! beside them slows the pages of another result.
//!
//! ```text
//! cargo bench -p dual-response-server --bench refine_bench      # about two minutes
//! BENCH_ROUNDS=9 BENCH_PAGE_SECS=5 cargo bench -p dual-response-server --bench refine_bench
//! ```
//!
//! Each refinement writes the parent's stored rows to a new temporary SQLite table and runs the SQL
//! there (dual-sqlite's `SqliteRefiner`), so the time is the whole of it: reading the snapshot,
//! loading, the query, the refined result's own snapshot. Each refined result is deleted after its
//! round. The pages are `POST /resources/{id}` of 100 rows of another result, one after the other on
//! one keep-alive connection for `BENCH_PAGE_SECS`, alone and then while refinements of the demo
//! result run back to back. A bench target without the test harness (the `--bench` flag cargo passes
//! is ignored).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_core::ResourceId;
use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve;
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, QueryStart, RowBatch, RowStream,
};
use dual_sqlite::SqliteRefiner;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

mod common;
use common::{BoxError, env_u64};

/// The demo's result the issue names: every row of `degrees_awarded`.
const DEMO_SQL: &str = "SELECT * FROM degrees_awarded";

/// The refinements timed on the demo result.
const DEMO_REFINEMENTS: [(&str, &str); 2] = [
    (
        "GROUP BY field, year",
        "SELECT field, year, COUNT(*) AS n, SUM(count) AS total FROM result GROUP BY field, year ORDER BY total DESC",
    ),
    (
        "filtered sort",
        "SELECT * FROM result WHERE year >= 2020 AND gender = 'women' ORDER BY count DESC, id",
    ),
];

/// The refinements timed on 1,000,000 × 8.
const WIDE_REFINEMENTS: [(&str, &str); 2] = [
    (
        "GROUP BY region",
        "SELECT region, COUNT(*) AS n, SUM(units) AS units, AVG(price) AS mean FROM result GROUP BY region ORDER BY n DESC",
    ),
    (
        "filtered sort",
        "SELECT * FROM result WHERE category = 'c-0042' ORDER BY price DESC, id",
    ),
];

const WIDE_ROWS: u64 = 1_000_000;

/// 1,000,000 rows of 8 columns: integers, reals, short and repeated text, booleans, dates.
struct Wide;

impl QueryExecutor for Wide {
    fn stream(self: Arc<Self>, _: Value, start: QueryStart) -> RowStream {
        start.started_with_count(WIDE_ROWS);
        let regions = [
            "north",
            "south",
            "east",
            "west",
            "centre",
            "islands",
            "coast",
            "mountains",
        ];
        let batches = (0..WIDE_ROWS).step_by(10_000).map(move |first| {
            Ok::<_, ExecutorError>(
                (first..WIDE_ROWS.min(first + 10_000))
                    .map(|i| {
                        let row = json!({
                            "id": i,
                            "region": regions[(i % 8) as usize],
                            "category": format!("c-{:04}", (i * 7) % 1000),
                            "units": (i * 31) % 997,
                            "price": ((i * 13) % 10_000) as f64 / 100.0,
                            "active": i % 3 != 0,
                            "day": format!("2026-{:02}-{:02}", 1 + i % 12, 1 + i % 28),
                            "label": format!("item {i}"),
                        });
                        row.as_object().cloned().unwrap_or_default()
                    })
                    .collect::<RowBatch>(),
            )
        });
        Box::pin(futures_util::stream::iter(batches))
    }
}

fn main() -> Result<(), BoxError> {
    let (runtime, path) = common::runtime_and_dataset()?;
    let rounds = env_u64("BENCH_ROUNDS", 5).max(1);
    let page_secs = env_u64("BENCH_PAGE_SECS", 4).max(1);
    let running = runtime.block_on(serve::start_on(&common::serve_options(), &path))?;
    let server = running.server.clone();
    let caller = Caller::anonymous();

    let demo = runtime
        .block_on(server.create_response(CreateResponse::new(SQL_KIND, json!({ "sql": DEMO_SQL }))))?;
    runtime.block_on(common::spooled(&server, demo.id))?;
    println!(
        "the demo result `{DEMO_SQL}`: {} rows, a snapshot",
        demo.total_count
    );
    println!();
    println!("| refinement | rows | median from the call to the answer ({rounds} rounds; min–max) |");
    println!("|---|---:|---:|");
    for (name, sql) in DEMO_REFINEMENTS {
        let (rows, times) = runtime.block_on(time_refinements(&server, demo.id, sql, rounds))?;
        print_row(&format!("demo, {name}"), rows, &times);
    }

    let wide_server = runtime.block_on(async {
        DualResponseServer::builder()
            .base_url("http://localhost/resources")
            .executor("wide", Wide)
            .snapshot_max_bytes(4 << 30)
            .refine_engine(SqliteRefiner::default())
            .build()
    })?;
    let wide = runtime.block_on(wide_server.create_response(CreateResponse::new("wide", json!({}))))?;
    runtime.block_on(common::spooled(&wide_server, wide.id))?;
    for (name, sql) in WIDE_REFINEMENTS {
        let (rows, times) = runtime.block_on(time_refinements(&wide_server, wide.id, sql, rounds))?;
        print_row(&format!("1,000,000 × 8, {name}"), rows, &times);
    }
    drop(wide_server);

    // Pages of another result, alone and beside refinements of the demo result.
    let other = runtime.block_on(server.create_response(CreateResponse::new(
        SQL_KIND,
        json!({ "sql": "SELECT * FROM institutions" }),
    )))?;
    runtime.block_on(common::spooled(&server, other.id))?;
    let url = format!("http://{}/resources/{}", running.addr, other.id);
    let alone = runtime.block_on(pages_for(&url, Duration::from_secs(page_secs)))?;
    let busy = Arc::new(AtomicBool::new(true));
    let refining = {
        let (server, busy, caller) = (server.clone(), Arc::clone(&busy), caller.clone());
        runtime.spawn(async move {
            let mut done = 0u64;
            while busy.load(Ordering::Relaxed) {
                if let Ok(refined) = server.refine(demo.id, DEMO_REFINEMENTS[0].1, &caller).await {
                    let _ = server.delete_resource(refined.id, &caller).await;
                    done += 1;
                }
            }
            done
        })
    };
    let beside = runtime.block_on(pages_for(&url, Duration::from_secs(page_secs)))?;
    busy.store(false, Ordering::Relaxed);
    let refinements = runtime.block_on(refining)?;
    println!();
    println!("| `POST /resources/{{id}}`, 100 rows, one connection, {page_secs} s | pages/s | ratio |");
    println!("|---|---:|---:|");
    println!("| alone | {alone:.0} | 100% |");
    println!(
        "| beside refinements of the demo result ({refinements} done meanwhile) | {beside:.0} | **{:.0}%** |",
        100.0 * beside / alone
    );
    common::print_load_at_end();
    Ok(())
}

/// `rounds` refinements of `parent` with `sql` after one warm-up: the refined row count and each
/// round's time from the call to the answer. Each refined result is deleted after its round.
async fn time_refinements(
    server: &DualResponseServer,
    parent: ResourceId,
    sql: &str,
    rounds: u64,
) -> Result<(u64, Vec<Duration>), BoxError> {
    let caller = Caller::anonymous();
    let mut times = Vec::new();
    let mut rows = 0;
    for round in 0..=rounds {
        let start = Instant::now();
        let refined = server.refine(parent, sql, &caller).await?;
        let time = start.elapsed();
        rows = refined.total_count;
        // The answer can come before the refined snapshot is stored: let it finish before the next round.
        common::spooled(server, refined.id).await?;
        server.delete_resource(refined.id, &caller).await?;
        if round > 0 {
            times.push(time);
        }
    }
    times.sort();
    Ok((rows, times))
}

fn print_row(name: &str, rows: u64, times: &[Duration]) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "| {name} | {rows} | **{:.0} ms** ({:.0}–{:.0}) |",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
}

/// Pages per second of `POST url` `{"offset":0,"limit":100}` one after the other on one keep-alive
/// connection for `time`.
async fn pages_for(url: &str, time: Duration) -> Result<f64, BoxError> {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let body = Bytes::from_static(br#"{"offset":0,"limit":100}"#);
    let start = Instant::now();
    let mut pages = 0u64;
    while start.elapsed() < time {
        let request = hyper::Request::post(url)
            .header("content-type", "application/json")
            .body(Full::new(body.clone()))?;
        let response = client.request(request).await?;
        if !response.status().is_success() {
            return Err(format!("a page answered {}", response.status()).into());
        }
        std::hint::black_box(response.into_body().collect().await?.to_bytes());
        pages += 1;
    }
    Ok(pages as f64 / start.elapsed().as_secs_f64())
}
