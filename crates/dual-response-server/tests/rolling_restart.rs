//! A rolling restart of the real binary (issue 41, item 6): two `dual-response serve` processes share a
//! Redis store and an S3 spool; a tool call is answered by A while its snapshot is still being
//! written, and A gets SIGTERM at once, as a deploy does. A finishes writing what it announced (into
//! the shared spool) within `--shutdown-grace-secs`, exits 0, and B serves every row. With a grace too
//! short, or after `kill -9`, the result reads `query_interrupted` on B (after the lease, for the
//! crash): retryable, telling the model to run the query again, never "could not be executed".
#![cfg(feature = "services")]

mod support;

use std::time::Duration;

use bytes::Bytes;
use dual_testkit::services::S3;
use http::{Method, StatusCode};
use serde_json::Value;
use support::Backend;
use support::export::{BIG_ROWS, big_sql};
use support::http::Http;
use support::shared_spool::{Shared, with_bucket};

/// Calls `query` with [`big_sql`] on `instance` and returns the id and the answer's metadata.
async fn announce(instance: &support::Instance) -> (String, Value) {
    let mcp = support::mcp(instance).await;
    let result = support::query(&mcp, &big_sql()).await;
    assert_eq!(result.is_error, Some(false), "{}", support::text_of(&result));
    let _ = mcp.cancel().await;
    let structured = result.structured_content.expect("structuredContent");
    let url = structured["resource"]["url"].as_str().expect("a resource URL");
    let id = url.rsplit('/').next().unwrap_or_default().to_owned();
    (id, structured["metadata"].clone())
}

async fn metadata(http: &Http, id: &str) -> Value {
    let reply = http
        .send(
            http.request(Method::GET, &format!("/resources/{id}"), None),
            Bytes::new(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    serde_json::from_slice(&reply.body).expect("JSON")
}

async fn finishes_what_was_announced(shared: Shared) {
    let endpoint = S3.url();
    let (mut a, b) = tokio::join!(
        shared.instance(&endpoint, &["--shutdown-grace-secs", "60"]),
        shared.instance(&endpoint, &[])
    );
    let (id, announced) = announce(&a).await;
    assert_eq!(announced["total_count"], BIG_ROWS, "{announced}");
    a.signal("TERM");
    let status = a.exit_status(Duration::from_secs(90)).await;
    assert!(status.success(), "{status:?}\n{}", a.log());

    let http_b = Http::new(b.addr());
    let seen = metadata(&http_b, &id).await;
    assert_eq!(seen["status"], "ready", "{seen}");
    assert_eq!(seen["total_count"], BIG_ROWS, "{seen}");
    assert!(
        seen.get("spooled_rows").is_none_or(Value::is_null),
        "every row written: {seen}"
    );
    let export = http_b
        .send(
            http_b.request(Method::GET, &format!("/resources/{id}/data?format=ndjson"), None),
            Bytes::new(),
        )
        .await;
    assert_eq!(export.status, StatusCode::OK, "{}", export.text());
    let lines = export
        .body
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .count();
    assert_eq!(lines as u64, BIG_ROWS, "B serves every announced row");
}

async fn interrupts_what_cannot_finish(shared: Shared) {
    let endpoint = S3.url();
    let (mut a, b) = tokio::join!(
        shared.instance(&endpoint, &["--shutdown-grace-secs", "0"]),
        shared.instance(&endpoint, &[])
    );
    let (id, _) = announce(&a).await;
    a.signal("TERM");
    let status = a.exit_status(Duration::from_secs(30)).await;
    assert!(status.success(), "{status:?}\n{}", a.log());
    assert_interrupted_on(&b, &id, Duration::ZERO).await;
}

async fn a_crash_reads_interrupted_after_the_lease(shared: Shared) {
    let endpoint = S3.url();
    let (a, b) = tokio::join!(shared.instance(&endpoint, &[]), shared.instance(&endpoint, &[]));
    let (id, _) = announce(&a).await;
    a.kill().await;
    // The library's lease (15 s) must lapse before B calls the result interrupted.
    assert_interrupted_on(&b, &id, Duration::from_secs(30)).await;
}

/// Asserts that `b` reads resource `id` as `query_interrupted` (retryable, "run the query again"),
/// looking for at most `within`; returns early when the snapshot was written before its writer
/// stopped (nothing was interrupted).
async fn assert_interrupted_on(b: &support::Instance, id: &str, within: Duration) {
    let http_b = Http::new(b.addr());
    let started = std::time::Instant::now();
    let seen = loop {
        let seen = metadata(&http_b, id).await;
        if seen["status"] == "ready" && seen.get("spooled_rows").is_none_or(Value::is_null) {
            // The snapshot was written before its writer stopped: nothing was interrupted.
            return;
        }
        if seen["status"] == "failed" || started.elapsed() >= within {
            break seen;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(seen["status"], "failed", "{seen}");
    assert_eq!(seen["error"]["code"], "query_interrupted", "{seen}");
    assert_eq!(seen["error"]["retryable"], true, "{seen}");
    let page = http_b
        .send(
            http_b.request(Method::GET, &format!("/resources/{id}/data"), None),
            Bytes::new(),
        )
        .await;
    let text = page.text();
    assert!(text.contains("run the query again"), "{text}");
    assert!(!text.contains("could not be executed"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_announced_snapshot_into_the_shared_spool() {
    with_bucket(Backend::Redis, finishes_what_was_announced).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_no_grace_leaves_a_retryable_interrupted_result() {
    with_bucket(Backend::Redis, interrupts_what_cannot_finish).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_leaves_a_retryable_interrupted_result_once_the_lease_lapses() {
    with_bucket(Backend::Redis, a_crash_reads_interrupted_after_the_lease).await;
}
