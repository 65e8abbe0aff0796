//! An export that fails before its first row is an error response (the head waits for the first
//! rows), through the handler and over a real socket; once rows went out a failure still breaks the
//! transfer (`e2e.rs`, `arrow.rs`).

mod common;
mod handle;

use std::time::Duration;

use bytes::Bytes;
use dual_http::DualHttp;
use dual_testkit::executor::SECRET;
use handle::{body_json, content_type, get};
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

const FORMATS: [&str; 3] = ["application/json", "application/x-ndjson", "text/csv"];

#[tokio::test]
async fn an_executor_failing_before_the_first_row_is_500_query_failed() {
    let server = common::live_server();
    let id = common::create(&server, json!({"n": 50, "fail_stream_at": 0})).await;
    let handler = DualHttp::new(server);
    for accept in FORMATS {
        for query in ["", "?sort=score:desc"] {
            let response = get(
                &handler,
                &format!("/{id}/data{query}"),
                &[(header::ACCEPT, accept)],
            )
            .await;
            assert_eq!(
                response.status(),
                StatusCode::INTERNAL_SERVER_ERROR,
                "{accept} {query}"
            );
            assert_eq!(content_type(&response), "application/json");
            assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
            let body = body_json(response).await;
            assert_eq!(body["error"], "query_failed", "{accept}");
            assert_eq!(body["retryable"], false);
            assert!(!body.to_string().contains(SECRET), "no internals: {body}");
        }
    }
}

#[tokio::test]
async fn an_executor_without_capacity_before_the_first_row_is_503_with_retry_after() {
    let server = common::live_server();
    let id = common::create(&server, json!({"n": 30, "busy_after_sample": true})).await;
    let handler = DualHttp::new(server);
    for accept in FORMATS {
        let response = get(&handler, &format!("/{id}/data"), &[(header::ACCEPT, accept)]).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{accept}");
        assert_eq!(response.headers()[header::RETRY_AFTER], "3");
        assert_eq!(body_json(response).await["error"], "overloaded");
    }
}

#[cfg(feature = "arrow")]
#[tokio::test]
async fn an_arrow_export_whose_first_row_does_not_fit_is_500_not_a_cut_connection() {
    const ARROW: &str = "application/vnd.apache.arrow.stream";
    let server = common::typed::server();
    let id = common::typed::create(&server, json!({"n": 100, "bad_at": 40})).await;
    let handler = DualHttp::new(server);
    for query in ["", "?offset=40", "?offset=39&limit=2"] {
        let response = get(
            &handler,
            &format!("/{id}/data{query}"),
            &[(header::ACCEPT, ARROW)],
        )
        .await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR, "{query}");
        assert_eq!(body_json(response).await["error"], "query_failed");
    }
    // The rows before it export as ever, and the other formats carry the value as it is.
    let response = get(
        &handler,
        &format!("/{id}/data?limit=40"),
        &[(header::ACCEPT, ARROW)],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = get(&handler, &format!("/{id}/data?offset=40"), &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_wire_a_failure_before_the_first_row_is_an_http_error_response() {
    let server = common::live_server();
    let failing = common::create(&server, json!({"n": 50, "fail_stream_at": 0})).await;
    let (addr, task) = common::serve(DualHttp::new(server)).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut cases = Vec::new();
    for accept in FORMATS {
        cases.push((format!("http://{addr}/{failing}/data"), accept));
    }
    #[cfg(feature = "arrow")]
    let typed_task = {
        let typed = common::typed::server();
        let bad = common::typed::create(&typed, json!({"n": 10, "bad_at": 0})).await;
        let (typed_addr, typed_task) = common::serve(DualHttp::new(typed)).await;
        cases.push((
            format!("http://{typed_addr}/{bad}/data"),
            "application/vnd.apache.arrow.stream",
        ));
        typed_task
    };
    for (url, accept) in cases {
        let request = Request::get(&url)
            .header(header::ACCEPT, accept)
            .body(Full::default())
            .expect("request");
        let response = tokio::time::timeout(Duration::from_secs(30), client.request(request))
            .await
            .expect("answered in time")
            .unwrap_or_else(|e| panic!("{accept}: a response, not a closed connection: {e}"));
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR, "{accept}");
        let body = response
            .into_body()
            .collect()
            .await
            .expect("a whole body")
            .to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(body["error"], "query_failed", "{accept}");
    }
    task.abort();
    #[cfg(feature = "arrow")]
    typed_task.abort();
}
