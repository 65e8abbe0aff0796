//! Long-running queries (docs/DESIGN.md §8) against a real `DualResponseServer` and `dual-http` on
//! loopback: a query held at a gate leaves its resource `pending`; `fetch` says `NOT_READY`,
//! `wait_ready` waits (or times out), `fetch_all` and `fetch_stream` wait by themselves, and a failed
//! query is `QUERY_FAILED` with its code. `Retry-After` is checked against a scripted server.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dual_client::{
    ClientErrorCode, DualResponseClient, FailureCode, FetchAllOptions, FetchOptions, FetchStreamOptions,
    ParsedDualResponse, ResourceStatus, Row, WaitOptions,
};
use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer};
use dual_testkit::executor::{Numbers, row};
use dual_testkit::serve::Loopback;
use futures_util::TryStreamExt;
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::client;
use crate::support::raw::{RawServer, json as json_reply, response};

/// A query whose rows come in steps: the first at once, each further one once the gate opens.
fn gated(steps: &[u64]) -> Arc<Numbers> {
    Arc::new(Numbers::new().steps(steps))
}

/// `first` rows at once, then, once the gate opens, a failure.
fn failing(first: u64) -> Arc<Numbers> {
    Arc::new(Numbers::new().steps([first]).then_fail())
}

fn rows(n: u64) -> Vec<Row> {
    (0..n).map(row).collect()
}

/// A server whose `gated` query is `executor`, pending after 100 ms, and its REST API under
/// `/resources` on 127.0.0.1.
async fn start(executor: Arc<Numbers>) -> DualResponseServer {
    let loopback = Loopback::bind().await;
    let base = loopback.url("/resources");
    let server = DualResponseServer::builder()
        .base_url(&base)
        .shared_executor("gated", executor)
        .pending_after(Duration::from_millis(100))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
        .build()
        .expect("valid configuration");
    loopback.serve(DualHttp::builder(server.clone()).prefix("/resources").build());
    server
}

/// Runs the `gated` query and returns its tool result.
async fn create(server: &DualResponseServer) -> Value {
    let response = server
        .create_response(CreateResponse::new("gated", json!({})).sample_size(5))
        .await
        .expect("created");
    serde_json::to_value(response.tool_result()).expect("serialises")
}

/// A server, and a pending resource of `executor` parsed from its tool result.
async fn pending(executor: &Arc<Numbers>) -> (DualResponseServer, ParsedDualResponse) {
    let server = start(Arc::clone(executor)).await;
    let parsed = client().parse_strict(&create(&server).await).expect("parses");
    assert_eq!(parsed.status(), ResourceStatus::Pending);
    (server, parsed)
}

/// Fast polls, so the tests take little longer than their gates.
fn fast() -> WaitOptions {
    WaitOptions::new().poll_interval(Duration::from_millis(10), Duration::from_millis(40))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_resource_is_not_ready_then_waited_for() {
    let executor = gated(&[7, 20, 73]);
    let (_server, mut parsed) = pending(&executor).await;
    assert_eq!(parsed.total_count(), Some(7), "the rows so far");
    assert_eq!(parsed.sample(), &rows(5)[..]);

    // `fetch` does not block: NOT_READY at once.
    let started = Instant::now();
    let error = parsed.fetch(FetchOptions::new()).await.expect_err("not ready");
    assert!(started.elapsed() < Duration::from_millis(900), "fetch waited");
    assert_eq!(error.code(), ClientErrorCode::NotReady);
    assert_eq!(error.code().as_str(), "NOT_READY");
    assert_eq!(error.status(), Some(StatusCode::CONFLICT));
    assert!(error.is_retryable(), "{error:?}");

    // A wait shorter than the gate times out.
    let started = Instant::now();
    let error = parsed
        .wait_ready(fast().timeout(Duration::from_millis(300)))
        .await
        .expect_err("still pending");
    let waited = started.elapsed();
    assert_eq!(error.code(), ClientErrorCode::Timeout, "{error:?}");
    assert!(error.message().contains("7 rows so far"), "{error}");
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    assert_eq!(parsed.status(), ResourceStatus::Pending);

    // Open the gate twice, 400 ms apart: the rows so far grow, then the resource is ready.
    executor.open_later(Duration::from_millis(400), 2);
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&progress);
    let metadata = parsed
        .wait_ready(fast().on_progress(move |rows, elapsed| {
            sink.lock().expect("progress lock").push((rows, elapsed));
        }))
        .await
        .expect("ready");
    assert_eq!(
        (metadata.status, metadata.total_count),
        (ResourceStatus::Ready, 100)
    );
    assert_eq!(metadata.error, None);
    assert_eq!(parsed.status(), ResourceStatus::Ready);
    assert_eq!(parsed.total_count(), Some(100), "the final count");
    let progress = progress.lock().expect("progress lock").clone();
    let counts: Vec<u64> = progress.iter().map(|(rows, _)| *rows).collect();
    assert!(
        counts.windows(2).all(|w| w[0] <= w[1]),
        "rows only grow: {counts:?}"
    );
    assert_eq!(counts.first(), Some(&7), "{counts:?}");
    assert!(counts.contains(&27), "the second step was seen: {counts:?}");
    assert!(
        progress.windows(2).all(|w| w[0].1 <= w[1].1),
        "the elapsed time only grows"
    );

    // Ready now: pages work, and waiting again costs one request.
    let page = parsed.fetch(FetchOptions::new().limit(10)).await.expect("a page");
    assert_eq!((page.total_count, page.data), (100, rows(10)));
    let again = parsed.wait_ready(fast()).await.expect("ready");
    assert_eq!(again.total_count, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_all_waits_for_a_pending_resource() {
    let executor = gated(&[7, 1_993]);
    let (_server, parsed) = pending(&executor).await;
    executor.open_later(Duration::from_millis(300), 1);
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&progress);
    let started = Instant::now();
    let all = parsed
        .fetch_all(
            FetchAllOptions::new()
                .range_rows(300)
                .on_progress(move |done, total| sink.lock().expect("progress lock").push((done, total))),
        )
        .await
        .expect("every row");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(all, rows(2_000), "every row, in order");
    let progress = progress.lock().expect("progress lock").clone();
    assert_eq!(
        progress.last(),
        Some(&(2_000, 2_000)),
        "the ready count, not the rows so far"
    );
    assert!(progress.iter().all(|(_, total)| *total == 2_000), "{progress:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_stream_waits_for_a_pending_resource() {
    let executor = gated(&[7, 993]);
    let (_server, parsed) = pending(&executor).await;
    executor.open_later(Duration::from_millis(300), 1);
    let batches: Vec<Vec<Row>> = parsed
        .fetch_stream(FetchStreamOptions::new(64))
        .try_collect()
        .await
        .expect("every batch");
    assert!(batches.iter().all(|b| b.len() <= 64));
    assert_eq!(batches.concat(), rows(1_000), "every row, in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_query_is_query_failed_with_its_code() {
    let executor = failing(7);
    let (_server, mut parsed) = pending(&executor).await;
    executor.open_later(Duration::from_millis(200), 1);
    let error = parsed.wait_ready(fast()).await.expect_err("failed");
    let check = |error: &dual_client::ClientError, what: &str| {
        assert_eq!(error.code(), ClientErrorCode::QueryFailed, "{what}: {error:?}");
        assert_eq!(error.code().as_str(), "QUERY_FAILED");
        assert_eq!(
            error.failure_code(),
            Some(FailureCode::QueryExecutionFailed),
            "{what}"
        );
        assert_eq!(error.failure().map(|f| f.retryable), Some(false), "{what}");
        assert!(!error.is_retryable(), "{what}");
        assert!(
            !error.to_string().contains("nme"),
            "{what}: the executor's message stays with the model: {error}"
        );
    };
    check(&error, "wait_ready");
    assert_eq!(
        parsed.status(),
        ResourceStatus::Pending,
        "unchanged by a failed wait"
    );
    let error = parsed
        .fetch_all(FetchAllOptions::new())
        .await
        .expect_err("failed");
    check(&error, "fetch_all");
    let error = parsed
        .fetch_stream(FetchStreamOptions::default())
        .try_collect::<Vec<_>>()
        .await
        .expect_err("failed");
    check(&error, "fetch_stream");
    // One page: 500 `query_failed`, explained by the metadata.
    let error = parsed.fetch(FetchOptions::new()).await.expect_err("failed");
    check(&error, "fetch");
    assert_eq!(error.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_not_ready_answer_is_asked_again_after_retry_after_within_the_wait() {
    let executor = gated(&[7, 93]);
    let server = start(Arc::clone(&executor)).await;
    // A result that says nothing of a status, with the final count: as from an older server, or a
    // resource known to be ready elsewhere. fetch_all then asks for the rows at once.
    let mut result = create(&server).await;
    let metadata = &mut result["structuredContent"]["metadata"];
    metadata.as_object_mut().expect("metadata").remove("status");
    metadata["total_count"] = json!(100);
    let parsed = client().parse_strict(&result).expect("parses");
    assert_eq!(parsed.status(), ResourceStatus::Ready);

    // Bounded by the wait timeout.
    let started = Instant::now();
    let error = parsed
        .fetch_all(FetchAllOptions::new().wait_timeout(Duration::from_millis(500)))
        .await
        .expect_err("still running");
    assert_eq!(error.code(), ClientErrorCode::Timeout, "{error:?}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(3),
        "{waited:?}"
    );

    // Asked again after `Retry-After: 1` until the query ends.
    executor.open_later(Duration::from_millis(200), 1);
    let started = Instant::now();
    let all = parsed.fetch_all(FetchAllOptions::new()).await.expect("every row");
    assert_eq!(all, rows(100));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(4),
        "Retry-After: 1 honoured: {waited:?}"
    );
    let batches: Vec<Vec<Row>> = parsed
        .fetch_stream(FetchStreamOptions::new(30))
        .try_collect()
        .await
        .expect("every batch");
    assert_eq!(batches.concat(), rows(100));
}

const PENDING_METADATA: &str = r#"{"id":"01J0000000000000000000000A","name":"Scripted","status":"pending",
"total_count":3,"columns":[],"created_at":"2026-01-15T10:30:00Z","expires_at":null,"access_count":1,
"last_accessed_at":null,"metadata":null,"consistency":"snapshot","progress":{"rows":3,"elapsed_ms":1500}}"#;

#[tokio::test]
async fn wait_ready_honours_retry_after() {
    let server = RawServer::start(|n, _| {
        if n == 0 {
            response(
                "200 OK",
                &[("Retry-After", "1"), ("Content-Type", "application/json")],
                PENDING_METADATA,
            )
        } else {
            json_reply(
                "200 OK",
                &PENDING_METADATA
                    .replace(r#""pending""#, r#""ready""#)
                    .replace(r#","progress":{"rows":3,"elapsed_ms":1500}"#, ""),
            )
        }
    })
    .await;
    let mut parsed = DualResponseClient::new()
        .parse_strict(&server.tool_result())
        .expect("parses");
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&progress);
    let started = Instant::now();
    let metadata = parsed
        .wait_ready(fast().on_progress(move |rows, elapsed| {
            sink.lock().expect("progress lock").push((rows, elapsed));
        }))
        .await
        .expect("ready");
    let waited = started.elapsed();
    assert_eq!(metadata.status, ResourceStatus::Ready);
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(3),
        "a 10 ms poll interval, but Retry-After: 1: {waited:?}"
    );
    assert_eq!(server.hits(), 2);
    assert_eq!(
        *progress.lock().expect("progress lock"),
        [(3, Duration::from_millis(1500))],
        "the server's rows and elapsed time"
    );
    assert_eq!(parsed.total_count(), Some(3));
}

#[tokio::test]
async fn wait_ready_backs_off_between_polls() {
    let server = RawServer::start(|_, _| json_reply("200 OK", PENDING_METADATA)).await;
    let mut parsed = DualResponseClient::new()
        .parse_strict(&server.tool_result())
        .expect("parses");
    let error = parsed
        .wait_ready(
            WaitOptions::new()
                .poll_interval(Duration::from_millis(20), Duration::from_millis(80))
                .timeout(Duration::from_millis(500)),
        )
        .await
        .expect_err("times out");
    assert!(error.is_timeout(), "{error:?}");
    // Polls at 0, 20, 60, 140, 220, 300, 380, 460 ms: 8, where a fixed 20 ms would make 25.
    let hits = server.hits();
    assert!((5..=10).contains(&hits), "{hits} polls");
}

/// docs/DESIGN.md §8: `DELETE` of a pending resource cancels its query — the executor's stream is
/// dropped (and with it a database connection) within a second — and the resource is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_over_rest_cancels_a_pending_query_within_a_second() {
    let executor = gated(&[5, 5]);
    let (_server, parsed) = pending(&executor).await;
    // The test, the server's registry and the running query's stream hold the executor.
    assert_eq!(Arc::strong_count(&executor), 3, "the query is running");
    parsed.delete().await.expect("DELETE answers 204");
    dual_testkit::wait::until_within(
        "the end of the query's stream",
        Duration::from_secs(1),
        async || Arc::strong_count(&executor) <= 2,
    )
    .await;
    let gone = parsed.metadata().await.expect_err("the resource is gone");
    assert_eq!(
        gone.code(),
        dual_client::ClientErrorCode::ResourceNotFound,
        "{gone}"
    );
}
