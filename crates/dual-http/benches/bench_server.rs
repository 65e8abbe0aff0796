//! Benchmark helper for `docs/PERFORMANCE.md` (run by `crates/dual-http/benches/http.sh`), a bench
//! target without the test harness: `cargo bench -p dual-http --bench bench_server -- COMMAND …`.
//!
//! ```text
//! bench_server serve [SECONDS]   # serve a bare hyper server and the handler on 127.0.0.1, print their URLs
//! bench_server load URL [CONNECTIONS] [SECONDS] [POST_BODY]  # a small HTTP/1.1 load generator
//! bench_server export ROWS [FORMAT]   # export ROWS rows through /data in-process; print peak RSS
//! bench_server micro [ITERATIONS]     # per-request cost of each layer, in-process, no sockets
//! ```
//!
//! Without a command (a plain `cargo bench -p dual-http`) it runs `micro`. `BENCH_MICRO_ONLY=POST`
//! (or `GET`) runs only that method's handler loop of `micro`, for a profiler (e.g. `valgrind
//! --tool=callgrind --toggle-collect='*ResponseFuture*as*Future*poll*'`, which counts the
//! handler's instructions alone). The `--bench` flag cargo
//! passes is ignored.
//!
//! `serve` runs both servers on one runtime whose worker count is `BENCH_WORKERS` (default 1), so the
//! load tool gets the other core, and stops by itself after SECONDS (default 300). The bare server
//! answers every request with the same precomputed 100-row JSON body the handler's `POST` returns.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_core::Row;
use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer, LiveQuery, RowWindow};
use dual_testkit::executor::{Numbers, Stored};
use dual_testkit::serve::Loopback;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn row(i: u64) -> Row {
    let state = ["NJ", "NY", "PA", "CT"][usize::try_from(i % 4).unwrap_or_default()];
    let value = json!({
        "id": i,
        "name": format!("Institution {i}"),
        "state": state,
        "enrollment": (i * 7919) % 40_000,
        "public": i.is_multiple_of(2),
    });
    value.as_object().cloned().unwrap_or_default()
}

/// Kinds `synthetic` (computed rows, any count: exports) and `table` (10,000 stored rows: throughput).
fn server() -> Result<DualResponseServer, BoxError> {
    Ok(DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        // Rows computed on demand: the executor costs what generating a row costs, no storage. The
        // testkit's example executor (see examples/hyper_server.rs for how to write one).
        .executor("synthetic", Numbers::new().row(row))
        .executor("table", Stored::new((0..10_000).map(row).collect()))
        .build()?)
}

fn runtime() -> Result<tokio::runtime::Runtime, BoxError> {
    let workers = std::env::var("BENCH_WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(1);
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?)
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).filter(|arg| arg != "--bench").collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match arg(0) {
        Some("serve") => runtime()?.block_on(serve(arg(1).and_then(|s| s.parse().ok()).unwrap_or(300))),
        Some("load") => {
            let url = arg(1).ok_or("load needs a URL")?.to_owned();
            let connections = arg(2).and_then(|c| c.parse().ok()).unwrap_or(64);
            let seconds = arg(3).and_then(|s| s.parse().ok()).unwrap_or(10);
            let body = arg(4).map(str::to_owned);
            runtime()?.block_on(load(url, connections, Duration::from_secs(seconds), body))
        }
        Some("micro") | None => runtime()?.block_on(micro(arg(1).and_then(|n| n.parse().ok()).unwrap_or(20_000))),
        Some("export") => {
            let rows = arg(1).and_then(|r| r.parse().ok()).ok_or("export needs a row count")?;
            let accept = match arg(2).unwrap_or("ndjson") {
                "json" => "application/json",
                "csv" => "text/csv",
                _ => "application/x-ndjson",
            };
            runtime()?.block_on(export(rows, accept))
        }
        _ => Err("usage: bench_server serve [SECONDS] | load URL [CONNECTIONS] [SECONDS] [POST_BODY] | export ROWS [json|ndjson|csv] | micro [ITERATIONS]".into()),
    }
}

async fn serve(seconds: u64) -> Result<(), BoxError> {
    let server = server()?;
    let created = server
        .create_response(CreateResponse::new("table", Value::Null))
        .await?;
    let page = server
        .fetch_page(
            created.id,
            &dual_server::Caller::anonymous(),
            &dual_core::PageRequest::default(),
        )
        .await?;
    let bare_body = Bytes::from(serde_json::to_vec(&page)?);
    let handler = DualHttp::builder(server).prefix("/resources").build();

    // The testkit's loopback server (see examples/hyper_server.rs for serving the handler in production).
    let bare = Loopback::bind().await;
    let dual = Loopback::bind().await;
    println!("bare={}", bare.url("/"));
    println!("dual={}", dual.url(&format!("/resources/{}", created.id)));
    println!("body_bytes={}", bare_body.len());
    bare.serve(service_fn(move |_request| {
        let body = bare_body.clone();
        async move {
            let mut response = http::Response::new(Full::new(body));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            Ok::<_, Infallible>(response)
        }
    }));
    dual.serve(handler);
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    Ok(())
}

/// `connections` keep-alive connections sending requests back to back for `duration`.
async fn load(
    url: String,
    connections: usize,
    duration: Duration,
    body: Option<String>,
) -> Result<(), BoxError> {
    let uri: http::Uri = url.parse()?;
    let authority = uri.authority().ok_or("URL without host")?.to_string();
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (authority, path, body) = (authority.clone(), path.clone(), body.clone());
        let (done, errors) = (Arc::clone(&done), Arc::clone(&errors));
        tasks.push(tokio::spawn(async move {
            let Ok(stream) = TcpStream::connect(&authority).await else {
                errors.fetch_add(1, Ordering::Relaxed);
                return;
            };
            let Ok((mut sender, connection)) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
            else {
                errors.fetch_add(1, Ordering::Relaxed);
                return;
            };
            tokio::spawn(connection);
            while Instant::now() < deadline {
                let mut request = http::Request::builder()
                    .uri(path.as_str())
                    .header(http::header::HOST, authority.as_str());
                let payload = match &body {
                    Some(body) => {
                        request = request
                            .method("POST")
                            .header(http::header::CONTENT_TYPE, "application/json");
                        Bytes::from(body.clone())
                    }
                    None => Bytes::new(),
                };
                let Ok(request) = request.body(Full::new(payload)) else {
                    break;
                };
                let ok = match sender.send_request(request).await {
                    Ok(response) => {
                        response.status().is_success() && response.into_body().collect().await.is_ok()
                    }
                    Err(_) => false,
                };
                if ok {
                    done.fetch_add(1, Ordering::Relaxed);
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let done = done.load(Ordering::Relaxed);
    println!(
        "requests={done} errors={} seconds={} rps={:.0}",
        errors.load(Ordering::Relaxed),
        duration.as_secs(),
        done as f64 / duration.as_secs_f64()
    );
    Ok(())
}

/// Exports `rows` rows through `/data` over loopback inside this process, reading and discarding the
/// body, and prints the process's peak RSS (`VmHWM`).
async fn export(rows: u64, accept: &str) -> Result<(), BoxError> {
    let server = server()?;
    let created = server
        .create_response(CreateResponse::new("synthetic", json!({"n": rows})))
        .await?;
    let handler = DualHttp::new(server);
    let loopback = Loopback::bind().await;
    let addr = loopback.addr();
    loopback.serve(handler);
    let before = dual_testkit::memory::peak_rss_kib();
    let started = Instant::now();
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = http::Request::get(format!("/{}/data", created.id))
        .header(http::header::HOST, addr.to_string())
        .header(http::header::ACCEPT, accept)
        .body(Full::new(Bytes::new()))?;
    let mut body = sender.send_request(request).await?.into_body();
    let mut bytes = 0u64;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            bytes += data.len() as u64;
        }
    }
    println!(
        "rows={rows} accept={accept} bytes={bytes} seconds={:.2} peak_rss_before_kib={} peak_rss_kib={}",
        started.elapsed().as_secs_f64(),
        before,
        dual_testkit::memory::peak_rss_kib()
    );
    Ok(())
}

/// Evaluates `$op` `$iterations` times (keeping its value from the optimizer) and prints the
/// time of one, in microseconds, after `$label`.
macro_rules! per_call {
    ($iterations:expr, $label:expr, $op:expr) => {{
        let started = Instant::now();
        for _ in 0..$iterations {
            std::hint::black_box($op);
        }
        let micros = started.elapsed().as_secs_f64() * 1e6 / f64::from($iterations);
        println!("{:<28} {micros:>8.2} µs", $label);
    }};
}

/// Per-request cost of each layer, in-process, no sockets: where the handler's time goes.
async fn micro(iterations: u32) -> Result<(), BoxError> {
    use hyper::service::Service;
    let server = server()?;
    let created = server
        .create_response(CreateResponse::new("table", Value::Null))
        .await?;
    let id = created.id;
    let request = dual_core::PageRequest::default();
    let handler = DualHttp::new(server.clone());
    let executor = Stored::new((0..10_000).map(row).collect());
    let params = Value::Null;
    let anonymous = dual_server::Caller::anonymous();
    per_call!(
        iterations,
        "executor fetch (101 rows)",
        executor.fetch(&params, RowWindow::new(0, 101)).await?
    );
    per_call!(
        iterations,
        "store get (record clone)",
        server.get_resource(id, &anonymous).await?
    );
    let page = server.fetch_page(id, &anonymous, &request).await?;
    per_call!(iterations, "serialize page", serde_json::to_vec(&page)?);
    per_call!(
        iterations,
        "server.fetch_page",
        server.fetch_page(id, &anonymous, &request).await?
    );
    let encoded = || server.fetch_page_encoded(id, &anonymous, &request);
    per_call!(
        iterations,
        "fetch_page_encoded + to_json",
        encoded().await?.to_json()?
    );
    per_call!(
        iterations,
        "fetch_page_encoded + into_json_parts",
        encoded().await?.into_json_parts()?
    );
    // The page request a client sends (the socket bench's body), and a metadata read.
    let page_body = Bytes::from_static(br#"{"offset":0,"limit":100}"#);
    let only = std::env::var("BENCH_MICRO_ONLY").ok();
    for (method, body) in [(http::Method::POST, page_body), (http::Method::GET, Bytes::new())] {
        if only.as_deref().is_some_and(|only| only != method.as_str()) {
            continue;
        }
        per_call!(iterations, format!("handler {method} (no socket)"), {
            let request = http::Request::builder()
                .method(method.clone())
                .uri(format!("/{id}"))
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Full::new(body.clone()))?;
            let response = handler.call(request).await?;
            if response.status() != http::StatusCode::OK {
                return Err(format!("handler {method}: {}", response.status()).into());
            }
            response.into_body().collect().await?.to_bytes()
        });
    }
    Ok(())
}
