//! What each store backend adds to `create_response` and `fetch_page` (issue 6).
//!
//! Run: `bash .ci/services && cargo bench -p dual-server --bench backends --features services` (the
//! bench needs Redis and PostgreSQL, so it is built only with the `services` feature). For each backend
//! (`MemoryStore`, `RedisStore`, `PostgresStore`) the bench builds a `DualResponseServer` around a cheap
//! in-memory executor (847 precomputed five-column rows, 15-row samples, 100-row pages), then times
//! every call of
//!
//! * `create_response`: the executor's stream (in memory) written to a memory spool as the snapshot,
//!   one store `save`;
//! * `fetch_page` of a 100-row page of an existing resource: one store `record_access`, which checks
//!   the caller and counts the access in one round trip (until issue 23 a `get` came first, two round
//!   trips), then the page read from the snapshot,
//!
//! first one call at a time on one task (latency: p50, p99, mean), then from 16 tasks at once
//! (throughput). The executor and server code are the same for every backend, so the difference of the
//! p50s to `MemoryStore` is the cost of the store round trip.
//!
//! A fourth row runs `PostgresStore` again with `synchronous_commit=off` for the bench's own sessions
//! (set through the connection's `options`, nothing changes on the server): both operations commit a
//! write, and the difference between the two PostgreSQL rows is the wait for the WAL flush to disk.
//!
//! Environment: `DUAL_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`), `DUAL_TEST_POSTGRES_URL`
//! (default `postgres://postgres@127.0.0.1:5432/test`), `DUAL_BENCH_CALLS` (timed calls per operation,
//! default 2,000, each phase after a tenth as many warm-up calls; without `--bench`, as in
//! `cargo test -p dual-server --benches --features services`, a smoke run of 32). The bench writes
//! only below a fresh key prefix `dual-bench:{random}:` and into fresh schemas `dual_bench_{random}*`,
//! and removes them when it ends (also when it panics).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::precomputed;
use dual_core::{PageRequest, ResourceId};
use dual_server::dual_spool::{MemorySpool, Spool};
use dual_server::{CreateResponse, DualResponseServer};
use dual_store::{MemoryStore, ResourceStore};
use dual_store_postgres::PostgresStore;
use dual_store_redis::RedisStore;
use dual_testkit::services::{POSTGRES, REDIS};
use dual_testkit::{InProcessShared, cleanup};
use serde_json::json;

/// Rows in the executor's result (its `count`).
const TOTAL: u64 = 847;
/// Rows per fetched page.
const PAGE: u64 = 100;
/// Untimed calls per operation before `calls` timed ones: a tenth as many.
fn warm_up(calls: usize) -> usize {
    calls / 10
}
/// Tasks of the concurrent run.
const TASKS: usize = 16;
/// The measured operations, as the tables name them.
const OPERATIONS: [&str; 2] = ["create_response", "fetch_page (100 rows)"];

/// The backends, in the order they are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Memory,
    Redis,
    Postgres,
    /// `PostgresStore` whose sessions commit without waiting for the WAL flush.
    PostgresAsyncCommit,
}

impl Backend {
    const ALL: [Self; 4] = [
        Self::Memory,
        Self::Redis,
        Self::Postgres,
        Self::PostgresAsyncCommit,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Memory => "MemoryStore",
            Self::Redis => "RedisStore",
            Self::Postgres => "PostgresStore",
            Self::PostgresAsyncCommit => "PostgresStore, synchronous_commit=off",
        }
    }
}

/// What the bench wrote to a shared service; removed on drop (also during a panic), nothing else is
/// touched.
#[derive(Debug)]
enum Cleanup {
    /// Every key below `prefix`.
    Redis { url: String, prefix: String },
    /// The schema and everything in it.
    Postgres { url: String, schema: String },
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let outcome = match self {
            Self::Redis { url, prefix } => cleanup::delete_redis_keys(url, prefix)
                .map(drop)
                .map_err(|e| e.to_string()),
            Self::Postgres { url, schema } => cleanup::drop_postgres_schema(url, schema),
        };
        if let Err(e) = outcome {
            eprintln!("could not remove what the bench wrote ({self:?}): {e}");
        }
    }
}

/// Connects `backend`'s store, below a fresh prefix or schema for the shared ones.
async fn connect(backend: Backend, run: u64) -> (Arc<dyn ResourceStore>, Option<Cleanup>) {
    match backend {
        Backend::Memory => (Arc::new(MemoryStore::new()), None),
        Backend::Redis => {
            let url = REDIS.require();
            let prefix = format!("dual-bench:{run:016x}:");
            let cleanup = Cleanup::Redis {
                url: url.clone(),
                prefix: prefix.clone(),
            };
            let store = RedisStore::builder(url)
                .key_prefix(prefix)
                .connect()
                .await
                .unwrap_or_else(|e| REDIS.unreachable(e));
            (Arc::new(store), Some(cleanup))
        }
        Backend::Postgres | Backend::PostgresAsyncCommit => {
            let mut url = POSTGRES.require();
            let mut schema = format!("dual_bench_{run:016x}");
            if backend == Backend::PostgresAsyncCommit {
                let separator = if url.contains('?') { '&' } else { '?' };
                url.push(separator);
                url.push_str("options=-c%20synchronous_commit%3Doff");
                schema.push_str("_async");
            }
            let cleanup = Cleanup::Postgres {
                url: url.clone(),
                schema: schema.clone(),
            };
            let store = PostgresStore::builder(url)
                .schema(schema)
                .pool_size(TASKS)
                .connect()
                .await
                .unwrap_or_else(|e| POSTGRES.unreachable(e));
            (Arc::new(store), Some(cleanup))
        }
    }
}

/// Latency figures of one operation.
#[derive(Debug, Clone, Copy)]
struct Stats {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

impl Stats {
    /// Nearest-rank percentiles of `samples`.
    fn of(mut samples: Vec<Duration>) -> Self {
        assert!(!samples.is_empty(), "no samples");
        samples.sort_unstable();
        let rank = |p: usize| samples[(samples.len() * p).div_ceil(100).max(1) - 1];
        let total: Duration = samples.iter().sum();
        Self {
            p50: rank(50),
            p99: rank(99),
            mean: total / u32::try_from(samples.len()).unwrap_or(u32::MAX),
        }
    }
}

/// The figures of one backend.
#[derive(Debug)]
struct Report {
    backend: Backend,
    /// One call at a time: `create_response` and `fetch_page`, in the order of [`OPERATIONS`].
    sequential: [Stats; 2],
    /// Calls per second of `create_response` and `fetch_page` from [`TASKS`] tasks, with their latencies.
    concurrent: [(f64, Stats); 2],
}

fn create_request() -> CreateResponse {
    CreateResponse::new("institutions", json!({"state": "NJ", "control": "public"}))
        .name("Institution Search Results")
}

/// The `i`-th page request: 100 rows, cycling through the first eight pages.
fn page_request(i: usize) -> PageRequest {
    let pages = usize::try_from(TOTAL / PAGE).unwrap_or(1);
    PageRequest {
        offset: Some(u64::try_from(i % pages).unwrap_or(0) * PAGE),
        limit: Some(PAGE),
        sort: None,
    }
}

async fn timed_create(server: &DualResponseServer) -> (ResourceId, Duration) {
    let start = Instant::now();
    let response = server
        .create_response(create_request())
        .await
        .expect("create_response");
    (response.id, start.elapsed())
}

async fn timed_fetch(server: &DualResponseServer, id: ResourceId, i: usize) -> Duration {
    let start = Instant::now();
    let page = server
        .fetch_page(id, &dual_server::Caller::anonymous(), &page_request(i))
        .await
        .expect("fetch_page");
    let elapsed = start.elapsed();
    assert_eq!(page.returned_count, PAGE, "a full page");
    elapsed
}

/// One call at a time: creates `calls` resources, then fetches `calls` pages round-robin over them.
async fn sequential(server: &DualResponseServer, calls: usize) -> (Vec<ResourceId>, Stats, Stats) {
    for i in 0..warm_up(calls) {
        let (id, _) = timed_create(server).await;
        timed_fetch(server, id, i).await;
    }
    let mut ids = Vec::with_capacity(calls);
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let (id, elapsed) = timed_create(server).await;
        ids.push(id);
        samples.push(elapsed);
    }
    let create = Stats::of(samples);
    let mut samples = Vec::with_capacity(calls);
    for i in 0..calls {
        samples.push(timed_fetch(server, ids[i % ids.len()], i).await);
    }
    (ids, create, Stats::of(samples))
}

/// [`TASKS`] tasks, each making `calls / TASKS` calls: creates, then fetches of pages of `ids` (each
/// task its own resources, so no two tasks count accesses on the same record).
async fn concurrent(server: &DualResponseServer, ids: &[ResourceId], calls: usize) -> [(f64, Stats); 2] {
    let per_task = calls.div_ceil(TASKS);
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(async move {
                let mut samples = Vec::with_capacity(per_task);
                for _ in 0..per_task {
                    samples.push(timed_create(&server).await.1);
                }
                samples
            })
        })
        .collect();
    let create = collect(tasks, started).await;
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let server = server.clone();
            let mut mine: Vec<ResourceId> = ids.iter().copied().skip(task).step_by(TASKS).collect();
            if mine.is_empty() {
                // Fewer resources than tasks: share them.
                mine = ids.to_vec();
            }
            tokio::spawn(async move {
                let mut samples = Vec::with_capacity(per_task);
                for i in 0..per_task {
                    samples.push(timed_fetch(&server, mine[i % mine.len()], i).await);
                }
                samples
            })
        })
        .collect();
    let fetch = collect(tasks, started).await;
    [create, fetch]
}

async fn collect(tasks: Vec<tokio::task::JoinHandle<Vec<Duration>>>, started: Instant) -> (f64, Stats) {
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await.expect("bench task"));
    }
    let elapsed = started.elapsed();
    let per_second = samples.len() as f64 / elapsed.as_secs_f64();
    (per_second, Stats::of(samples))
}

async fn measure(backend: Backend, calls: usize, run: u64) -> Report {
    let (store, cleanup) = connect(backend, run).await;
    let server = DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .without_sweeper()
        .shared_store(store)
        // One instance: its memory spool is as shared as a shared store needs.
        .spool(Spool::new(InProcessShared(MemorySpool::new().expect("spool"))))
        .executor("institutions", precomputed(TOTAL))
        .build()
        .expect("server");
    let (ids, create, fetch) = sequential(&server, calls).await;
    let concurrent = concurrent(&server, &ids, calls).await;
    server.shutdown().await.expect("shutdown");
    drop(cleanup);
    Report {
        backend,
        sequential: [create, fetch],
        concurrent,
    }
}

/// `d` in µs, or in ms from 1 ms on.
fn micros(d: Duration) -> String {
    if d >= Duration::from_millis(1) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    }
}

fn print_tables(reports: &[Report], calls: usize) {
    let warm_up = warm_up(calls);
    println!("\n### Latency, one call at a time ({calls} timed calls each, after {warm_up} warm-up calls)\n");
    println!("| backend | operation | p50 | p99 | mean | added p50 over MemoryStore |");
    println!("|---|---|---:|---:|---:|---:|");
    let memory = reports.iter().find(|r| r.backend == Backend::Memory);
    for (index, operation) in OPERATIONS.into_iter().enumerate() {
        for report in reports {
            let stats = report.sequential[index];
            let added = match memory {
                Some(memory) if report.backend != Backend::Memory => {
                    let base = memory.sequential[index].p50;
                    match stats.p50.checked_sub(base) {
                        Some(added) => format!("+{}", micros(added)),
                        None => format!("−{}", micros(base - stats.p50)),
                    }
                }
                _ => "—".to_owned(),
            };
            println!(
                "| {} | {operation} | {} | {} | {} | {added} |",
                report.backend.name(),
                micros(stats.p50),
                micros(stats.p99),
                micros(stats.mean),
            );
        }
    }
    println!("\n### Throughput, {TASKS} concurrent tasks ({calls} calls per operation)\n");
    println!("| backend | operation | calls/s | p50 | p99 |");
    println!("|---|---|---:|---:|---:|");
    for (index, operation) in OPERATIONS.into_iter().enumerate() {
        for report in reports {
            let (per_second, stats) = report.concurrent[index];
            println!(
                "| {} | {operation} | {per_second:.0} | {} | {} |",
                report.backend.name(),
                micros(stats.p50),
                micros(stats.p99),
            );
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) a short smoke run checks
    // that every backend works.
    let default_calls = if std::env::args().any(|arg| arg == "--bench") {
        2_000
    } else {
        2 * TASKS
    };
    let calls: usize = std::env::var("DUAL_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default_calls);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let run = fastrand::u64(..);
    let mut reports = Vec::new();
    for backend in Backend::ALL {
        let started = Instant::now();
        // Measured on a worker thread, where a server's request handlers run.
        let report = runtime
            .block_on(runtime.spawn(measure(backend, calls, run)))
            .expect("bench task");
        eprintln!(
            "{}: done in {:.1} s",
            backend.name(),
            started.elapsed().as_secs_f64()
        );
        reports.push(report);
    }
    print_tables(&reports, calls);
}
