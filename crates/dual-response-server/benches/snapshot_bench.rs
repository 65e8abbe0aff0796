//! Snapshots on the demo's 269,000-row query, each figure side by side with its floor in one run
//! (issue 10; figures in `docs/PERFORMANCE.md`).
//!
//! ```text
//! cargo bench -p dual-response-server --bench snapshot_bench            # everything, about 2 minutes
//! cargo bench -p dual-response-server --bench snapshot_bench -- rss     # only the 1M × 8 memory run
//! ```
//!
//! A bench target without the test harness (it uses the testkit, so it is no example to copy); the
//! `--bench` flag cargo passes is ignored.
//!
//! * `POST /{id}` pages of 100 rows at offset 0 and 200,000 against a bare hyper server answering the
//!   same bytes (requests/s; the servers on one worker thread, the load generator on another),
//!   through the demo's whole stack and through dual-http's handler alone on a hyper connection;
//! * the full JSON export with curl against the same bytes served from memory by a bare hyper server;
//! * `create_response` (snapshot included) against the executor's own single pass (count + scan +
//!   encode);
//! * `fetch_all` with parallelism 4 against downloading the NDJSON export and parsing it in-process;
//! * a 1,000,000 × 8 snapshot under a 64 MiB spool budget: peak RSS of a child process.
//!
//! `BENCH_SECONDS` (default 5) sets the length of each load run, `BENCH_CONNECTIONS` (default 32) the
//! load generator's connections, `BENCH_PAGE_ROUNDS` (default 3) the rounds of the page figures (each
//! a run of the demo and of the handler between two bare runs; medians of the ratios),
//! `BENCH_ROUNDS` (default 5) the timed rounds of the other figures;
//! `BENCH_ONLY=pages` stops after the page figures (for profiling them).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_client::{DualResponseClient, FetchAllOptions};
use dual_core::Row;
use dual_http::DualHttp;
use dual_response_server::ipeds::dataset::{self, DatasetSize};
use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve::{self, ServeOptions};
use dual_server::dual_spool::{MemorySpool, Spool};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor, QueryStart};
use dual_sqlite::SqliteDb;
use dual_testkit::executor::Numbers;
use dual_testkit::serve::Loopback;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

mod common;
use common::{BoxError, env_u64, median};

const SQL: &str = "SELECT * FROM degrees_awarded";
/// The frame size of the in-memory download, as the export's.
const FRAME: usize = 32 * 1024;

fn main() -> Result<(), BoxError> {
    match std::env::args().skip(1).find(|arg| arg != "--bench").as_deref() {
        Some("rss-child") => return rss_child(),
        Some("rss") => return rss(),
        Some(other) => return Err(format!("unknown argument {other:?}: expected nothing or `rss`").into()),
        None => {}
    }
    // The servers get one worker thread, the load generator and clients another.
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let clients = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let path = dataset::default_path();
    dataset::ensure(&path, DatasetSize::DEFAULT)?;
    let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    options.max_connections = 1_024;
    let running = servers.block_on(serve::start_on(&options, &path))?;
    let base = format!("http://{}/resources", running.addr);
    println!("dataset {} — `{SQL}`", path.display());
    println!("load average {}", common::load_average().unwrap_or_default());

    // create_response against the executor's single pass.
    let db = SqliteDb::open(&path, 4, Duration::from_secs(300))?;
    let executor: Arc<dyn QueryExecutor> = Arc::new(db.sql_executor());
    let params = json!({ "sql": SQL });
    let rounds = env_u64("BENCH_ROUNDS", 5);
    let floor = median(rounds, || servers.block_on(single_pass(&executor, &params)))?;
    let server = running.server.clone();
    let create = median(rounds, || {
        servers.block_on(async {
            let started = Instant::now();
            let response = server
                .create_response(CreateResponse::new(SQL_KIND, params.clone()))
                .await?;
            // The answer comes at the first sample; the figure is the whole snapshot written.
            common::spooled(&server, response.id).await?;
            let elapsed = started.elapsed();
            server.delete_resource(response.id, &Caller::anonymous()).await?;
            Ok::<_, BoxError>(elapsed)
        })
    })?;
    let response = servers.block_on(server.create_response(CreateResponse::new(SQL_KIND, params.clone())))?;
    // Pages past the rows spooled so far would be 409 `not_ready`: the page figures read the whole snapshot.
    servers.block_on(common::spooled(&server, response.id))?;
    let total = response.total_count;
    let url = format!("{base}/{}", response.id);
    let anyone = Caller::anonymous();
    let metadata = servers.block_on(server.metadata(response.id, &anyone))?;
    println!("{total} rows, consistency {}", metadata.consistency);
    println!();
    println!("| figure | dual-response | floor | ratio | target |");
    println!("|---|---:|---:|---:|---:|");
    row_ms(
        "`create_response`, snapshot included",
        create,
        "executor single pass (scan + JSON)",
        floor,
        1.3,
    );

    // Pages against a bare hyper server answering the same bytes: through the demo's whole stack
    // (router, guard, timed IO, metrics), and through dual-http's handler alone on a hyper
    // connection (what a user who mounts it on raw hyper serves).
    let seconds = env_u64("BENCH_SECONDS", 5);
    let connections = usize::try_from(env_u64("BENCH_CONNECTIONS", 32)).unwrap_or(32);
    let page_rounds = env_u64("BENCH_PAGE_ROUNDS", 3).max(1);
    let handler = servers.block_on(async {
        let loopback = Loopback::bind().await;
        let addr = loopback.addr();
        loopback.serve(DualHttp::builder(server.clone()).build());
        addr
    });
    let handler_url = format!("http://{handler}/{}", response.id);
    for offset in [0u64, 200_000] {
        let body = format!("{{\"offset\":{offset},\"limit\":100}}");
        let page = clients.block_on(post(&url, &body))?;
        if clients.block_on(post(&handler_url, &body))? != page {
            return Err("the handler alone answers other bytes than the demo".into());
        }
        let bare = servers.block_on(bare_server(page.clone(), false))?;
        let bare_url = format!("http://{bare}/");
        let load = |target: &str| clients.block_on(load(target, connections, seconds, Some(&body)));
        // Rounds of bare, demo, handler alone, bare, …: each ratio is against the mean of the bare
        // runs just before and just after it, so a machine that slows down or speeds up between
        // rounds moves both sides; the figures are the medians over the rounds.
        let mut before = load(&bare_url)?;
        let (mut bares, mut demo, mut alone) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..page_rounds {
            let (dual, handler) = (load(&url)?, load(&handler_url)?);
            let after = load(&bare_url)?;
            let bare_rps = (before + after) / 2.0;
            bares.push(bare_rps);
            demo.push((dual, dual / bare_rps));
            alone.push((handler, handler / bare_rps));
            before = after;
        }
        let bare_rps = median_f64(bares.clone());
        for (what, runs) in [("demo stack", demo), ("dual-http alone", alone)] {
            let ratios: Vec<f64> = runs.iter().map(|(_, ratio)| 100.0 * ratio).collect();
            let rps = median_f64(runs.iter().map(|(rps, _)| *rps).collect());
            println!(
                "| `POST` 100 rows at offset {offset} ({} B), {what} | {rps:.0} req/s | {bare_rps:.0} req/s (rounds {}) | {:.0}% (rounds {}) | ≥ 80% |",
                page.len(),
                list(&bares, ""),
                median_f64(ratios.clone()),
                list(&ratios, "%"),
            );
        }
    }

    if std::env::var("BENCH_ONLY").as_deref() == Ok("pages") {
        servers.block_on(running.shutdown());
        return Ok(());
    }

    // The full JSON export with curl against the same bytes from memory.
    let export_url = format!("{url}/data");
    let exported = clients.block_on(get(&export_url, "application/json"))?;
    let bare = servers.block_on(bare_server(exported.clone(), true))?;
    let memory_url = format!("http://{bare}/");
    let curl_export = median(rounds, || curl(&export_url))?;
    let curl_memory = median(rounds, || curl(&memory_url))?;
    row_ms(
        &format!(
            "full JSON export with curl ({:.1} MB)",
            exported.len() as f64 / 1e6
        ),
        curl_export,
        "same bytes from memory, same stack",
        curl_memory,
        2.0,
    );

    // fetch_all against downloading the NDJSON export and parsing it.
    let client = DualResponseClient::new();
    let parsed = client.resource(&url)?;
    let fetch_all = median(rounds, || {
        clients.block_on(async {
            let started = Instant::now();
            let rows = parsed.fetch_all(FetchAllOptions::new().parallelism(4)).await?;
            let elapsed = started.elapsed();
            if rows.len() as u64 != total {
                return Err(format!("fetch_all returned {} of {total} rows", rows.len()).into());
            }
            Ok::<_, BoxError>(elapsed)
        })
    })?;
    let download = median(rounds, || {
        clients.block_on(async {
            let started = Instant::now();
            let bytes = get(&export_url, "application/x-ndjson").await?;
            let rows = bytes
                .split(|b| *b == b'\n')
                .filter(|line| !line.is_empty())
                .map(serde_json::from_slice::<Row>)
                .collect::<Result<Vec<_>, _>>()?;
            let elapsed = started.elapsed();
            if rows.len() as u64 != total {
                return Err(format!("the download held {} of {total} rows", rows.len()).into());
            }
            Ok::<_, BoxError>(elapsed)
        })
    })?;
    row_ms(
        "`fetch_all`, parallelism 4",
        fetch_all,
        "one NDJSON download + parse in-process",
        download,
        1.5,
    );
    servers.block_on(running.shutdown());
    println!();
    rss()
}

/// The 1,000,000 × 8 run in a child process, so that its peak RSS is its own.
fn rss() -> Result<(), BoxError> {
    let exe = std::env::current_exe()?;
    let status = std::process::Command::new(exe).arg("rss-child").status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the rss run failed: {status}").into())
    }
}

/// Snapshots 1,000,000 rows of 8 columns under a 64 MiB spool budget, exports them back, and prints
/// the peak RSS.
fn rss_child() -> Result<(), BoxError> {
    const ROWS: u64 = 1_000_000;
    const BUDGET_MB: u64 = 64;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let before = dual_testkit::memory::mib(dual_testkit::memory::peak_rss_kib());
        let spool = MemorySpool::builder().memory_budget_mb(BUDGET_MB).build().await?;
        let server = DualResponseServer::builder()
            .base_url("http://127.0.0.1/resources")
            // `n` synthetic rows of 8 columns, computed on demand: the testkit's example executor.
            .executor("wide", Numbers::new().row(wide_row))
            .spool(Spool::new(spool))
            .build()?;
        let started = Instant::now();
        let response = server
            .create_response(CreateResponse::new("wide", json!({ "n": ROWS })))
            .await?;
        let created = started.elapsed();
        let after_create = dual_testkit::memory::mib(dual_testkit::memory::peak_rss_kib());
        let started = Instant::now();
        let (_, mut stream) = server
            .export_range(
                response.id,
                &Caller::anonymous(),
                None,
                dual_core::range::RowRange::ALL,
            )
            .await?;
        let (mut rows, mut bytes) = (0u64, 0u64);
        while let Some(batch) = stream.next().await {
            if let dual_server::RowBatch::Json(batch) = batch? {
                rows += batch.len() as u64;
                bytes += batch.iter().map(|row| row.len() as u64).sum::<u64>();
            }
        }
        let exported = started.elapsed();
        if rows != ROWS || response.total_count != ROWS {
            return Err(format!("snapshot of {} rows exported {rows}", response.total_count).into());
        }
        let peak = dual_testkit::memory::mib(dual_testkit::memory::peak_rss_kib());
        println!(
            "| 1,000,000 × 8 snapshot ({:.0} MB of rows), spool budget {BUDGET_MB} MiB | figure |",
            bytes as f64 / 1e6
        );
        println!("|---|---:|");
        println!("| peak RSS before | {before:.1} MiB |");
        println!(
            "| peak RSS after `create_response` ({:.2} s) | {after_create:.1} MiB |",
            created.as_secs_f64()
        );
        println!(
            "| peak RSS after exporting it back ({:.2} s) | {peak:.1} MiB |",
            exported.as_secs_f64()
        );
        println!("| target: budget + 64 MiB | {} MiB |", BUDGET_MB + 64);
        server.shutdown().await?;
        Ok(())
    })
}

fn wide_row(i: u64) -> Row {
    let state = ["NJ", "NY", "PA", "CT"][usize::try_from(i % 4).unwrap_or_default()];
    let value = json!({
        "id": i,
        "name": format!("Institution {i}"),
        "state": state,
        "year": 2000 + i % 25,
        "degrees": (i * 7919) % 40_000,
        "share": (i % 1000) as f64 / 1000.0,
        "public": i.is_multiple_of(3),
        "opened": format!("19{:02}-0{}-1{}", i % 100, 1 + i % 9, i % 10),
    });
    value.as_object().cloned().unwrap_or_default()
}

/// The executor's own single pass, as the snapshot runs it: the count, then every row streamed and
/// encoded as JSON.
async fn single_pass(executor: &Arc<dyn QueryExecutor>, params: &Value) -> Result<Duration, BoxError> {
    let started = Instant::now();
    let mut stream = Arc::clone(executor).stream(params.clone(), QueryStart::detached());
    let mut buffer = Vec::with_capacity(512);
    while let Some(batch) = stream.next().await {
        for row in batch?.into_rows()? {
            buffer.clear();
            serde_json::to_writer(&mut buffer, &row)?;
        }
    }
    Ok(started.elapsed())
}

/// A hyper server answering every request with `body`, in frames of [`FRAME`] bytes when `framed`.
async fn bare_server(body: Bytes, framed: bool) -> Result<SocketAddr, BoxError> {
    let loopback = Loopback::bind().await;
    let addr = loopback.addr();
    let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let body = body.clone();
        async move {
            // Read the request body, as the handler does.
            let _ = request.into_body().collect().await;
            let frames: Vec<Result<Frame<Bytes>, Infallible>> = if framed {
                (0..body.len())
                    .step_by(FRAME)
                    .map(|at| Ok(Frame::data(body.slice(at..(at + FRAME).min(body.len())))))
                    .collect()
            } else {
                vec![Ok(Frame::data(body))]
            };
            let body = BodyExt::boxed(StreamBody::new(futures_util::stream::iter(frames)));
            let mut response = http::Response::new(body);
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            Ok::<_, Infallible>(response)
        }
    });
    loopback.serve(service);
    Ok(addr)
}

/// `connections` keep-alive connections sending requests back to back for `seconds`: requests/s.
async fn load(url: &str, connections: usize, seconds: u64, body: Option<&str>) -> Result<f64, BoxError> {
    let uri: http::Uri = url.parse()?;
    let authority = uri.authority().ok_or("URL without host")?.to_string();
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let done = Arc::new(AtomicU64::new(0));
    let duration = Duration::from_secs(seconds);
    let deadline = Instant::now() + duration;
    let body = body.map(|b| Bytes::from(b.to_owned()));
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (authority, path, body, done) =
            (authority.clone(), path.clone(), body.clone(), Arc::clone(&done));
        tasks.push(tokio::spawn(async move {
            let stream = TcpStream::connect(&authority).await?;
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(connection);
            while Instant::now() < deadline {
                let request = http::Request::builder()
                    .method(if body.is_some() { "POST" } else { "GET" })
                    .uri(path.as_str())
                    .header(http::header::HOST, authority.as_str())
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Full::new(body.clone().unwrap_or_default()))?;
                let response = sender.send_request(request).await?;
                if !response.status().is_success() {
                    return Err(format!("load: {}", response.status()).into());
                }
                response.into_body().collect().await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<_, BoxError>(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / duration.as_secs_f64())
}

async fn post(url: &str, body: &str) -> Result<Bytes, BoxError> {
    request(url, "POST", "application/json", Bytes::from(body.to_owned())).await
}

async fn get(url: &str, accept: &str) -> Result<Bytes, BoxError> {
    request(url, "GET", accept, Bytes::new()).await
}

/// One request on a fresh connection: the response body.
async fn request(url: &str, method: &str, accept: &str, body: Bytes) -> Result<Bytes, BoxError> {
    let uri: http::Uri = url.parse()?;
    let authority = uri.authority().ok_or("URL without host")?.to_string();
    let stream = TcpStream::connect(&authority).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = http::Request::builder()
        .method(method)
        .uri(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(http::header::HOST, authority.as_str())
        .header(http::header::ACCEPT, accept)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body))?;
    let response = sender.send_request(request).await?;
    if !response.status().is_success() {
        return Err(format!("{method} {url}: {}", response.status()).into());
    }
    Ok(response.into_body().collect().await?.to_bytes())
}

/// `curl` downloading `url` to /dev/null: its total time.
fn curl(url: &str) -> Result<Duration, BoxError> {
    let output = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{time_total}", url])
        .output()?;
    if !output.status.success() {
        return Err(format!("curl {url}: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    let secs: f64 = String::from_utf8_lossy(&output.stdout).trim().parse()?;
    Ok(Duration::from_secs_f64(secs))
}

/// The median of `values` (the upper one of an even count); 0 for none.
fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// `values` as `a, b, c`, each rounded and followed by `unit`.
fn list(values: &[f64], unit: &str) -> String {
    values
        .iter()
        .map(|value| format!("{value:.0}{unit}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn row_ms(what: &str, ours: Duration, floor_what: &str, floor: Duration, target: f64) {
    println!(
        "| {what} | {:.0} ms | {floor_what}: {:.0} ms | {:.2}× | ≤ {target}× |",
        ours.as_secs_f64() * 1e3,
        floor.as_secs_f64() * 1e3,
        ours.as_secs_f64() / floor.as_secs_f64()
    );
}
