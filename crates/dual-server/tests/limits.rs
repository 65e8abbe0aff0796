//! The limits `create_response` enforces: sample bytes (whole rows only), live resources, and the
//! retryable `OVERLOADED` of an executor without capacity.

mod common;

use std::time::Duration;

use dual_core::{DualResponse, PageRequest, Row};
use dual_server::{Caller, CreateResponse, DualResponseServer, ExecutorError, ServerErrorCode};
use serde_json::{Value, json};

/// `params.busy` makes every call answer `overloaded`.
fn busy(params: &Value) -> Result<(), ExecutorError> {
    if params["busy"].as_bool() == Some(true) {
        return Err(ExecutorError::overloaded(
            "no database connection free within 50 ms",
            Duration::from_secs(2),
        ));
    }
    Ok(())
}

fn builder() -> dual_server::DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor(
            "blobs",
            common::blobs()
                .count(|params| busy(params).map(|()| params["n"].as_u64().unwrap_or(0)))
                .check(|params, _, _| busy(params)),
        )
}

/// A server whose samples hold at most `max_sample_bytes`, and the resource it created over `n` rows
/// of a `bytes`-long blob each.
async fn sample_of(max_sample_bytes: usize, n: u64, bytes: u64) -> (DualResponseServer, DualResponse) {
    let server = builder()
        .max_sample_bytes(max_sample_bytes)
        .build()
        .expect("server");
    let response = server
        .create_response(CreateResponse::new("blobs", json!({"n": n, "bytes": bytes})))
        .await
        .expect("created");
    (server, response)
}

fn row_bytes(row: &Row) -> usize {
    serde_json::to_vec(row).map(|v| v.len()).unwrap_or(0)
}

#[tokio::test]
async fn the_sample_keeps_as_many_whole_rows_as_fit_in_the_byte_limit() {
    let (server, response) = sample_of(10_000, 40, 1_000).await;
    assert_eq!(response.total_count, 40, "the count is always there");
    let kept = response.sample.len();
    // The rows go out twice (the table and `structuredContent`; the JSON text format: twice JSON).
    assert!(
        (2..5).contains(&kept),
        "kept {kept} rows of about 1 KB under 10,000 bytes for the whole result"
    );
    assert!(
        response.max_rendered_bytes() <= 10_000,
        "{} bytes",
        response.max_rendered_bytes()
    );
    let used: usize = response.sample.iter().map(|r| row_bytes(r) + 1).sum();
    assert!(used <= 5_000, "{used} bytes");
    assert!(
        response
            .sample
            .iter()
            .all(|r| r["blob"].as_str().map(str::len) == Some(1_000)),
        "no value is cut"
    );
    let result = serde_json::to_value(response.tool_result()).expect("json");
    assert_eq!(
        result["structuredContent"]["metadata"]["sample_count"],
        json!(kept)
    );
    let summary = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        summary.contains("40") && summary.contains(&kept.to_string()),
        "{summary}"
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn a_first_row_over_the_limit_leaves_an_empty_sample_but_keeps_count_and_link() {
    let (server, response) = sample_of(1_000, 3, 5_000).await;
    assert_eq!((response.total_count, response.sample.len()), (3, 0));
    let page = server
        .fetch_page(response.id, &Caller::anonymous(), &PageRequest::default())
        .await
        .expect("every row is still served");
    assert_eq!(page.returned_count, 3);
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn at_the_resource_cap_creation_fails_retryably_and_evicts_nothing() {
    let server = builder().max_resources(3).build().expect("server");
    let create = || server.create_response(CreateResponse::new("blobs", json!({"n": 1})));
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create().await.expect("under the cap").id);
    }
    let full = create().await.expect_err("at the cap");
    assert_eq!(full.code(), ServerErrorCode::TooManyResources);
    assert!(full.is_retryable());
    assert!(full.to_string().contains('3'), "{full}");
    for id in &ids {
        assert!(
            server.get_resource(*id, &Caller::anonymous()).await.is_ok(),
            "nothing evicted"
        );
    }
    server
        .delete_resource(ids[0], &Caller::anonymous())
        .await
        .expect("deleted");
    create().await.expect("deleting frees room");
    server.shutdown().await.expect("shutdown");
}

#[tokio::test(start_paused = true)]
async fn expiry_frees_room_under_the_resource_cap() {
    let server = builder()
        .max_resources(2)
        .clock(dual_store::Clock::tokio())
        .build()
        .expect("server");
    let create = |secs| {
        server.create_response(
            CreateResponse::new("blobs", json!({"n": 1})).expiration(Duration::from_secs(secs)),
        )
    };
    create(10).await.expect("first");
    create(1_000).await.expect("second");
    assert_eq!(
        create(10).await.map(|_| ()).expect_err("full").code(),
        ServerErrorCode::TooManyResources
    );
    tokio::time::advance(Duration::from_secs(11)).await;
    create(10)
        .await
        .expect("the expired one no longer counts, even before a purge");
    server.shutdown().await.expect("shutdown");
}

#[test]
fn a_zero_resource_cap_is_refused() {
    let error = builder()
        .max_resources(0)
        .without_sweeper()
        .build()
        .map(|_| ())
        .expect_err("refused");
    assert!(error.to_string().contains("max_resources"), "{error}");
}

#[tokio::test]
async fn an_executor_without_capacity_is_a_retryable_overloaded_error() {
    let server = builder().build().expect("server");
    let error = server
        .create_response(CreateResponse::new("blobs", json!({"n": 1, "busy": true})))
        .await
        .map(|_| ())
        .expect_err("busy");
    assert_eq!(error.code(), ServerErrorCode::Overloaded);
    assert!(error.is_retryable());
    assert_eq!(error.retry_after(), Some(Duration::from_secs(2)));
    server.shutdown().await.expect("shutdown");
}
