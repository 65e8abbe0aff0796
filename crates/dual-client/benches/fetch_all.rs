//! Client-side cost of fetching a whole result, against the floor of parsing the same bytes in-process.
//!
//! The server here is the cheapest possible one: it streams row ranges of pre-serialised NDJSON
//! (`/data?offset&limit`, zero-copy slices) or pre-serialised pages from memory over loopback, so the
//! figures are the client's own cost. The floors: parsing the NDJSON in-process, and downloading its
//! raw bytes in one request and then parsing them. The target of `fetch_all` with parallelism 4 is at
//! most 1.5× the second. The end-to-end figure against a real `dual-http` server lives in
//! `docs/PERFORMANCE.md`.
//!
//! `cargo bench -p dual-client --bench fetch_all` (`DUAL_BENCH_ROWS` sets the row count, default 100,000).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dual_client::{DualResponseClient, FetchAllOptions, FetchStreamOptions, ParsedDualResponse, Row};
// Eight columns of mixed types, like a typical report row.
use dual_testkit::executor::wide_row as row;
use dual_testkit::serve::Loopback;
use futures_util::StreamExt;
use http::{Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use hyper::service::service_fn;
use serde_json::json;
use tokio::runtime::Runtime;

const ID: &str = "01JHF3K4Q5R6S7T8V9W0XYZABC";
const PAGE: usize = 500;

struct Data {
    ndjson: Bytes,
    /// Where each row's line starts in `ndjson`, and its length at the end.
    line_starts: Vec<usize>,
    pages: Vec<Bytes>,
}

impl Data {
    /// The bytes of rows `offset..offset + limit` (all rows without an offset); `None` past the end.
    fn range(&self, query: Option<&str>) -> Option<Bytes> {
        let rows = self.line_starts.len() - 1;
        let param = |name: &str| {
            query?
                .split('&')
                .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))?
                .parse::<usize>()
                .ok()
        };
        let offset = param("offset").unwrap_or(0);
        if offset > rows {
            return None;
        }
        let end = param("limit").map_or(rows, |l| offset.saturating_add(l).min(rows));
        Some(self.ndjson.slice(self.line_starts[offset]..self.line_starts[end]))
    }
}

fn data(rows: &[Row]) -> Data {
    let mut ndjson = Vec::new();
    let mut line_starts = vec![0];
    for row in rows {
        serde_json::to_writer(&mut ndjson, row).unwrap_or_default();
        ndjson.push(b'\n');
        line_starts.push(ndjson.len());
    }
    let total = rows.len() as u64;
    let pages = rows
        .chunks(PAGE)
        .enumerate()
        .map(|(i, chunk)| {
            let offset = (i * PAGE) as u64;
            let next = offset + chunk.len() as u64;
            let page = json!({
                "data": chunk, "total_count": total, "returned_count": chunk.len(), "offset": offset,
                "limit": PAGE, "has_next": next < total, "has_previous": offset > 0,
                "next_offset": (next < total).then_some(next),
            });
            Bytes::from(serde_json::to_vec(&page).unwrap_or_default())
        })
        .collect();
    Data {
        ndjson: Bytes::from(ndjson),
        line_starts,
        pages,
    }
}

async fn serve(data: Arc<Data>, export: bool) -> String {
    let loopback = Loopback::bind().await;
    let base = loopback.url("/resources");
    let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
        let data = Arc::clone(&data);
        async move {
            let is_export = req.uri().path().ends_with("/data");
            let body: BoxBody<Bytes, Infallible> = if is_export && export {
                let Some(bytes) = data.range(req.uri().query()) else {
                    let mut response = Response::new(Full::new(Bytes::new()).boxed());
                    *response.status_mut() = StatusCode::BAD_REQUEST;
                    return Ok::<_, Infallible>(response);
                };
                // 64 KiB frames, zero-copy slices of the pre-serialised export.
                let frames: Vec<Result<Frame<Bytes>, Infallible>> = (0..bytes.len())
                    .step_by(64 * 1024)
                    .map(|at| {
                        let end = (at + 64 * 1024).min(bytes.len());
                        Ok(Frame::data(bytes.slice(at..end)))
                    })
                    .collect();
                BodyExt::boxed(StreamBody::new(futures_util::stream::iter(frames)))
            } else if req.method() == Method::POST {
                let body = req
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let offset = request["offset"].as_u64().unwrap_or(0) as usize;
                Full::new(data.pages.get(offset / PAGE).cloned().unwrap_or_default()).boxed()
            } else {
                let mut response = Response::new(Full::new(Bytes::new()).boxed());
                *response.status_mut() = StatusCode::NOT_FOUND;
                return Ok::<_, Infallible>(response);
            };
            let mut response = Response::new(body);
            let content_type = if is_export {
                "application/x-ndjson"
            } else {
                "application/json"
            };
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static(content_type),
            );
            Ok(response)
        }
    });
    loopback.serve(service);
    base
}

fn parsed(base: &str, total: usize) -> ParsedDualResponse {
    let result = json!({
        "results": [],
        "resource": {"uri": format!("resource://{ID}"), "url": format!("{base}/{ID}"), "name": "Bench",
                     "mimeType": "application/json"},
        "metadata": {"total_count": total, "sample_count": 0, "executed_at": "2026-01-15T10:30:00Z"}
    });
    DualResponseClient::new().parse_strict(&result).expect("parses")
}

fn bench(c: &mut Criterion) {
    let n: u64 = std::env::var("DUAL_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rows: Vec<Row> = (0..n).map(row).collect();
    let data = Arc::new(data(&rows));
    drop(rows);
    let runtime = Runtime::new().expect("runtime");
    let export_base = runtime.block_on(serve(Arc::clone(&data), true));
    let with_export = parsed(&export_base, n as usize);
    let raw = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let export_uri: http::Uri = format!("{export_base}/{ID}/data").parse().expect("uri");
    let without_export = parsed(&runtime.block_on(serve(Arc::clone(&data), false)), n as usize);

    let mut group = c.benchmark_group("fetch_all");
    group.sample_size(10).throughput(Throughput::Elements(n));
    group.bench_function("floor: parse the NDJSON in-process", |b| {
        b.iter(|| {
            data.ndjson
                .split(|b| *b == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| serde_json::from_slice::<Row>(line).unwrap_or_default())
                .collect::<Vec<_>>()
        });
    });
    group.bench_function("floor: download the NDJSON, then parse it in-process", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = raw.get(export_uri.clone()).await.expect("response");
                let bytes = response.into_body().collect().await.expect("body").to_bytes();
                bytes
                    .split(|b| *b == b'\n')
                    .filter(|line| !line.is_empty())
                    .map(|line| serde_json::from_slice::<Row>(line).unwrap_or_default())
                    .collect::<Vec<_>>()
            })
        });
    });
    for parallelism in [1, 4] {
        group.bench_function(format!("ranges of the export, parallelism {parallelism}"), |b| {
            b.iter(|| {
                runtime
                    .block_on(with_export.fetch_all(FetchAllOptions::new().parallelism(parallelism)))
                    .map(|r| r.len())
                    .expect("fetch_all")
            });
        });
    }
    group.bench_function("pages of 500, 4 at once", |b| {
        b.iter(|| {
            runtime
                .block_on(without_export.fetch_all(FetchAllOptions::new()))
                .map(|r| r.len())
                .expect("fetch_all")
        });
    });
    group.bench_function("fetch_stream, batches of 500", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut stream = with_export.fetch_stream(FetchStreamOptions::new(500));
                let mut count = 0;
                while let Some(batch) = stream.next().await {
                    count += batch.map(|b| b.len()).unwrap_or_default();
                }
                count
            })
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
