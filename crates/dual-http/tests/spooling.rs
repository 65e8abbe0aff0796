//! A resource whose snapshot is still being written, over REST: its metadata shows the rows spooled so
//! far, a page inside them is served at once, a page past them waits `spool_wait` and is then 409
//! `not_ready` with `Retry-After`, and an export streams every row once the writer is let through.

mod common;
mod handle;

use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer, QueryExecutor};
use dual_spool::{MemorySpool, SegmentLimits, Spool};
use dual_testkit::executor::Numbers;
use handle::{body_json, bytes, send};
use http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

const BASE: &str = "http://127.0.0.1/resources";
/// Rows the executor yields at once (two stored segments of [`SEGMENT_ROWS`]); the rest waits for the gate.
const FIRST: u64 = 20;
const SEGMENT_ROWS: u32 = 10;
const TOTAL: u64 = 1_000;
const SPOOL_WAIT: Duration = Duration::from_millis(300);

struct Fixture {
    executor: Arc<Numbers>,
    handler: DualHttp,
    id: String,
}

/// A server whose executor counts (so the tool call answers at once) and then stops after [`FIRST`]
/// rows until the test opens its gate; the tool call is made.
async fn fixture() -> Fixture {
    let executor = Arc::new(
        common::numbers()
            .steps([FIRST, TOTAL - FIRST])
            .counted()
            .batch(u64::from(SEGMENT_ROWS)),
    );
    let backend = MemorySpool::new().expect("memory spool");
    let spool = Spool::new(dual_testkit::InProcessShared(backend)).with_segment_limits(SegmentLimits {
        bytes: 1 << 20,
        rows: SEGMENT_ROWS,
    });
    let server = DualResponseServer::builder()
        .base_url(BASE)
        .shared_executor("gated", Arc::clone(&executor) as Arc<dyn QueryExecutor>)
        .spool(spool)
        .spool_wait(SPOOL_WAIT)
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
        .without_sweeper()
        .build()
        .expect("server");
    let created = tokio::time::timeout(
        Duration::from_secs(5),
        server.create_response(CreateResponse::new("gated", json!({})).sample_size(5)),
    )
    .await
    .expect("the tool call answered before the whole result was written")
    .expect("create_response");
    assert_eq!(created.total_count, TOTAL);
    let handler = DualHttp::builder(server).prefix("/resources").build();
    Fixture {
        executor,
        handler,
        id: created.id.to_string(),
    }
}

async fn page(fixture: &Fixture, offset: u64, limit: u64) -> http::Response<dual_http::ResponseBody> {
    let body = json!({ "offset": offset, "limit": limit }).to_string();
    fixture
        .handler
        .handle(
            Request::builder()
                .method(Method::POST)
                .uri(format!("{BASE}/{}", fixture.id))
                .header(header::CONTENT_TYPE, "application/json")
                .body(body)
                .expect("request"),
        )
        .await
}

async fn metadata(fixture: &Fixture) -> Value {
    let response = send(&fixture.handler, Request::get(format!("{BASE}/{}", fixture.id))).await;
    assert_eq!(response.status(), StatusCode::OK);
    body_json(response).await
}

fn ids(page: &Value) -> Vec<u64> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|row| row["id"].as_u64().expect("id"))
        .collect()
}

#[tokio::test]
async fn metadata_shows_the_spooled_rows_and_pages_past_them_are_409_not_ready_with_retry_after() {
    let fixture = fixture().await;
    // The writer stores the first two segments right after the answer: wait for them (bounded).
    let mut meta = metadata(&fixture).await;
    for _ in 0..200 {
        if meta["spooled_rows"] == FIRST {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        meta = metadata(&fixture).await;
    }
    assert_eq!(meta["status"], "ready", "{meta}");
    assert_eq!(meta["total_count"], TOTAL, "{meta}");
    assert_eq!(meta["spooled_rows"], FIRST, "two segments are stored: {meta}");

    let inside = page(&fixture, 5, 10).await;
    assert_eq!(inside.status(), StatusCode::OK);
    let inside = body_json(inside).await;
    assert_eq!(
        ids(&inside),
        (5..15).collect::<Vec<_>>(),
        "served from the stored rows"
    );
    assert_eq!(inside["total_count"], TOTAL, "{inside}");

    let started = Instant::now();
    let past = page(&fixture, 0, 100).await;
    assert!(
        started.elapsed() >= SPOOL_WAIT,
        "it waited spool_wait for the writer first"
    );
    assert_eq!(past.status(), StatusCode::CONFLICT);
    let retry_after = past
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("Retry-After in whole seconds");
    assert!(retry_after >= 1, "Retry-After {retry_after}");
    let body = body_json(past).await;
    assert_eq!(body["error"], "not_ready", "{body}");
    assert_eq!(body["retryable"], true, "{body}");

    fixture.executor.open();
    let every = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let response = page(&fixture, 900, 100).await;
            if response.status() == StatusCode::OK {
                return body_json(response).await;
            }
            assert_eq!(
                response.status(),
                StatusCode::CONFLICT,
                "only not_ready while it spools"
            );
        }
    })
    .await
    .expect("the snapshot is written once the gate opens");
    assert_eq!(ids(&every), (900..1_000).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_export_started_while_spooling_ends_with_every_row_the_count_promised() {
    let fixture = fixture().await;
    let export = send(
        &fixture.handler,
        Request::get(format!("{BASE}/{}/data", fixture.id)).header(header::ACCEPT, "application/x-ndjson"),
    )
    .await;
    assert_eq!(
        export.status(),
        StatusCode::OK,
        "the export starts before the writer ends"
    );
    fixture.executor.open();
    let body = tokio::time::timeout(Duration::from_secs(10), bytes(export))
        .await
        .expect("the export ends once the writer does");
    let ids: Vec<u64> = body
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice::<Value>(line).expect("NDJSON")["id"]
                .as_u64()
                .expect("id")
        })
        .collect();
    assert_eq!(ids, (0..TOTAL).collect::<Vec<_>>(), "every row once, in order");

    // The export ends with its last row; the writer's outcome is stored right after it.
    let mut meta = metadata(&fixture).await;
    for _ in 0..100 {
        if meta.get("spooled_rows").is_none_or(Value::is_null) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        meta = metadata(&fixture).await;
    }
    assert!(
        meta.get("spooled_rows").is_none_or(Value::is_null),
        "complete within a second of the export's end: {meta}"
    );
}
