//! Cheap requests while sorted orders of a big snapshot are derived (issue 21; figures in
//! `docs/PERFORMANCE.md`).
//!
//! ```text
//! cargo run --release -p dual-response-server --example sort_bench
//! ```
//!
//! Each scenario runs in a child process of its own (so each peak RSS is its own): `dual-demo
//! serve`'s server on two worker threads, a 1,000,000-row snapshot with two 200-character string
//! columns (`wide`, `wide2`, about 430 MB of rows), then four `POST /{id}` pages sorted by four
//! different orders (`wide` and `wide2`, ascending and descending: no cached order to share) sent at
//! once, while a prober on a thread of its own sends a cheap request every 20 ms (alternately
//! `GET /{id}` and an unsorted `POST /{id}` of 100 rows). It prints the cheap requests' median and
//! maximum latency during the sorts, each sort's status and time, and the peak RSS of the sorts
//! (the peak is reset after the snapshot is written).
//!
//! Scenarios: the defaults (2 derivation slots, 5 s wait, 512 MiB of sort memory), and four slots
//! with 2 GiB so that all four sorts run at once. `SORT_BENCH_ROWS` (default 1,000,000) and
//! `SORT_BENCH_WIDTH` (random bytes per string, hex-encoded: default 100, so 200 characters)
//! change the snapshot.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_response_server::ipeds::dataset::{self, DatasetSize};
use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve::{self, ServeOptions};
use dual_server::CreateResponse;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// Time between two cheap requests.
const PROBE_EVERY: Duration = Duration::from_millis(20);

/// One scenario: its name and sort limits.
struct Scenario {
    name: &'static str,
    concurrency: usize,
    memory_mb: u64,
    wait: Duration,
}

const SCENARIOS: [Scenario; 2] = [
    Scenario {
        name: "defaults: 2 slots, 5 s wait, 512 MiB",
        concurrency: dual_server::DEFAULT_SORT_CONCURRENCY,
        memory_mb: dual_server::DEFAULT_SORT_MEMORY_BYTES >> 20,
        wait: dual_server::DEFAULT_SORT_WAIT,
    },
    Scenario {
        name: "4 slots, 5 s wait, 2 GiB: four sorts at once",
        concurrency: 4,
        memory_mb: 2_048,
        wait: dual_server::DEFAULT_SORT_WAIT,
    },
];

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("child") {
        let index: usize = args.next().ok_or("child needs a scenario")?.parse()?;
        let scenario = SCENARIOS.get(index).ok_or("no such scenario")?;
        return child(scenario);
    }
    let exe = std::env::current_exe()?;
    for index in 0..SCENARIOS.len() {
        let status = std::process::Command::new(&exe)
            .args(["child", &index.to_string()])
            .status()?;
        if !status.success() {
            return Err(format!("scenario {index} failed: {status}").into());
        }
    }
    Ok(())
}

fn child(scenario: &Scenario) -> Result<(), BoxError> {
    let rows = env_u64("SORT_BENCH_ROWS", 1_000_000);
    let width = env_u64("SORT_BENCH_WIDTH", 100);
    // The server as `dual-response serve` runs it on this 2-core machine: two async workers.
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let dir = std::env::temp_dir().join(format!("dual-sort-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("small.sqlite");
    dataset::ensure(&db, DatasetSize::SMALL)?;
    let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    options.spool_dir = Some(dir.join("spool"));
    options.sort_concurrency = scenario.concurrency;
    options.sort_memory_mb = scenario.memory_mb;
    options.sort_wait = scenario.wait;
    let running = servers.block_on(serve::start_on(&options, &db))?;
    let base = format!("http://{}/resources", running.addr);
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
         SELECT i, hex(randomblob({width})) AS wide, hex(randomblob({width})) AS wide2 FROM n"
    );
    let started = Instant::now();
    let response = servers.block_on(
        running
            .server
            .create_response(CreateResponse::new(SQL_KIND, json!({ "sql": sql }))),
    )?;
    let url = format!("{base}/{}", response.id);
    println!(
        "\n## {}\n\nsnapshot of {} rows (two {}-character strings each) written in {:.1} s; RSS now {:.0} MiB",
        scenario.name,
        response.total_count,
        width * 2,
        started.elapsed().as_secs_f64(),
        dual_testkit::memory::mib(dual_testkit::memory::rss_kib())
    );
    if let Err(error) = dual_testkit::memory::reset_peak_rss() {
        eprintln!("cannot reset the peak RSS ({error}): it includes writing the snapshot");
    }

    let clients = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    // Warm the connection pool and the handler.
    clients.block_on(send(&client, Method::GET, &url, None))?;

    let sorting = Arc::new(AtomicBool::new(true));
    let prober = {
        let (url, sorting) = (url.clone(), Arc::clone(&sorting));
        std::thread::spawn(move || -> Result<Vec<Duration>, BoxError> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            // A client of this runtime: its connections' tasks must run where it is driven.
            runtime.block_on(async {
                let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
                let mut latencies = Vec::new();
                let mut ticks = tokio::time::interval(PROBE_EVERY);
                let page = json!({ "limit": 100 }).to_string();
                while sorting.load(Ordering::Acquire) {
                    ticks.tick().await;
                    let started = Instant::now();
                    let status = if latencies.len() % 2 == 0 {
                        send(&client, Method::GET, &url, None).await?
                    } else {
                        send(&client, Method::POST, &url, Some(page.clone())).await?
                    };
                    latencies.push(started.elapsed());
                    if status != StatusCode::OK {
                        return Err(format!("cheap request answered {status}").into());
                    }
                }
                Ok(latencies)
            })
        })
    };
    let sorts = [
        ("wide", "asc"),
        ("wide", "desc"),
        ("wide2", "asc"),
        ("wide2", "desc"),
    ];
    let started = Instant::now();
    let outcomes = clients.block_on(futures_util::future::join_all(sorts.iter().map(
        |(field, order)| {
            let (client, url) = (client.clone(), url.clone());
            let body = json!({ "limit": 10, "sort": { "field": field, "order": order } }).to_string();
            async move {
                let started = Instant::now();
                let status = send(&client, Method::POST, &url, Some(body)).await;
                (status, started.elapsed())
            }
        },
    )));
    let all_sorts = started.elapsed();
    sorting.store(false, Ordering::Release);
    let mut latencies = prober.join().map_err(|_| "the prober panicked")??;
    let peak = dual_testkit::memory::mib(dual_testkit::memory::peak_rss_kib());
    let after = dual_testkit::memory::mib(dual_testkit::memory::rss_kib());
    latencies.sort();
    let median = latencies.get(latencies.len() / 2).copied().unwrap_or_default();
    let max = latencies.last().copied().unwrap_or_default();

    println!("\n| figure | value |\n|---|---:|");
    for ((field, order), (status, took)) in sorts.iter().zip(&outcomes) {
        let status = status
            .as_ref()
            .map_or_else(|e| e.to_string(), ToString::to_string);
        println!(
            "| sort by `{field}` {order} | {status} in {:.2} s |",
            took.as_secs_f64()
        );
    }
    println!("| all four answered | {:.2} s |", all_sorts.as_secs_f64());
    println!(
        "| cheap requests during the sorts ({}) median / max | {:.1} ms / {:.1} ms |",
        latencies.len(),
        median.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    println!("| peak RSS during the sorts | {peak:.0} MiB |");
    println!("| RSS after them | {after:.0} MiB |");

    servers.block_on(running.shutdown());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Sends one request and reads its whole body; the status.
async fn send(
    client: &HttpClient,
    method: Method,
    url: &str,
    body: Option<String>,
) -> Result<StatusCode, BoxError> {
    let mut request = Request::builder().method(method).uri(url);
    if body.is_some() {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    let request = request.body(Full::new(Bytes::from(body.unwrap_or_default())))?;
    let response = client.request(request).await?;
    let status = response.status();
    response.into_body().collect().await?;
    Ok(status)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
