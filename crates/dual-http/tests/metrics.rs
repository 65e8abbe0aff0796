//! Requests by route, method and status and rejections by code, as `dual_http::metrics` reports
//! them, read back with dual-testkit's `Captured` recorder.

use bytes::Bytes;
use dual_http::DualHttp;
use dual_http::metrics::{REJECTIONS_TOTAL, REQUESTS_TOTAL};
use dual_server::{CreateResponse, DualResponseServer};
use dual_testkit::executor::Numbers;
use dual_testkit::metrics::Captured;
use http::Request;
use http_body_util::Full;
use serde_json::json;

fn labels<'a>(route: &'a str, method: &'a str, status: &'a str) -> [(&'static str, &'a str); 3] {
    [("route", route), ("method", method), ("status", status)]
}

async fn send(handler: &DualHttp, method: &str, path: &str, body: &'static str) -> u16 {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap_or_else(|e| panic!("{e}"));
    handler.handle(request).await.status().as_u16()
}

#[tokio::test]
async fn requests_are_counted_by_route_method_and_status() {
    let captured = Captured::new();
    let _local = captured.local();
    dual_http::metrics::describe();
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("numbers", Numbers::new())
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let id = server
        .create_response(CreateResponse::new("numbers", json!({"n": 20})))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .id;
    let handler = DualHttp::builder(server).prefix("/resources").build();
    let item = format!("/resources/{id}");
    let missing = format!("/resources/{}", dual_core::ResourceId::new());
    assert_eq!(send(&handler, "POST", &item, "{}").await, 200);
    assert_eq!(send(&handler, "POST", &item, r#"{"limit": 5}"#).await, 200);
    assert_eq!(send(&handler, "GET", &format!("{item}/data"), "").await, 200);
    assert_eq!(send(&handler, "GET", &missing, "").await, 404);
    assert_eq!(send(&handler, "GET", "/elsewhere/x", "").await, 404);
    assert_eq!(send(&handler, "BREW", &item, "").await, 405);
    assert_eq!(send(&handler, "POST", &item, r#"{"page": 2}"#).await, 400);
    assert_eq!(send(&handler, "DELETE", &item, "").await, 204);

    for (expected, route, method, status) in [
        (2, "item", "POST", "200"),
        (1, "data", "GET", "200"),
        (1, "item", "GET", "404"),
        (1, "none", "GET", "404"),
        (1, "item", "other", "405"),
        (1, "item", "POST", "400"),
        (1, "item", "DELETE", "204"),
    ] {
        let labels = labels(route, method, status);
        assert_eq!(captured.counter(REQUESTS_TOTAL, &labels), expected, "{labels:?}");
    }
    for (expected, code) in [
        (2, "not_found"),
        (1, "method_not_allowed"),
        (1, "invalid_request"),
        (0, "overloaded"),
    ] {
        assert_eq!(
            captured.counter(REJECTIONS_TOTAL, &[("code", code)]),
            expected,
            "{code}"
        );
    }
    // No label ever carries the id or the path.
    assert!(
        captured
            .series()
            .iter()
            .all(|series| !series.contains(&id.to_string()))
    );
    assert!(captured.description(REQUESTS_TOTAL).is_some());
}
