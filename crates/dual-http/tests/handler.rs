//! Handler-level behaviour beyond the suite: the prefix boundary, options, and one request through
//! every step of the handler.

mod common;
mod handle;

use handle::body_json;

use bytes::Bytes;
use dual_http::{Cors, DualHttp, OwnerFn};
use futures_util::StreamExt;
use http::request::Parts;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde_json::json;

#[tokio::test]
async fn paths_outside_the_prefix_are_the_apis_404() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 3})).await;
    let handler = DualHttp::builder(server).prefix("/resources").build();
    for path in [
        format!("/{id}"),
        format!("/resourcesx/{id}"),
        format!("/api/resources/{id}"),
        "/resources".to_owned(),
        "/".to_owned(),
        "*".to_owned(),
    ] {
        let response = handle::send(&handler, Request::get(path.as_str())).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body = body_json(response).await;
        assert_eq!(body["error"], "not_found", "{path}");
        assert_eq!(body["message"], dual_core::error::NOT_FOUND_MESSAGE);
    }
    let ok = handle::send(&handler, Request::get(format!("/resources/{id}"))).await;
    assert_eq!(ok.status(), StatusCode::OK);
    // An absolute-form URI (a proxy request) routes by its path.
    let absolute = handle::send(
        &handler,
        Request::get(format!("http://example.com/resources/{id}/data")),
    )
    .await;
    assert_eq!(absolute.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_body_limit_is_configurable() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 3})).await;
    let handler = DualHttp::builder(server).body_limit(16).build();
    assert_eq!(handler.config().body_limit(), 16);
    let send = |body: &'static str| {
        Request::post(format!("/{id}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .expect("request")
    };
    assert_eq!(
        handler.handle(send(r#"{"limit": 1}"#)).await.status(),
        StatusCode::OK
    );
    let response = handler.handle(send(r#"{"limit": 1}      "#)).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        body_json(response).await["message"]
            .as_str()
            .unwrap_or_default()
            .contains("16 bytes")
    );
}

#[tokio::test]
async fn an_export_request_is_parsed_executed_and_rendered_in_one_call() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 300})).await;
    let handler = DualHttp::builder(server.clone()).prefix("/r").build();

    // A sorted CSV export asking only for a coding the handler does not produce: identity.
    let response = handle::get(
        &handler,
        &format!("/r/{id}/data?sort=id:desc&offset=0"),
        &[(header::ACCEPT, "text/csv"), (header::ACCEPT_ENCODING, "br")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
    assert!(handle::content_type(&response).starts_with("text/csv"));
    assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(text.lines().count(), 301);
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("299,")));

    // A method the path does not take: 405 with the route's `Allow`, as JSON.
    let response = handle::send(&handler, Request::patch(format!("/r/{id}"))).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()[header::ALLOW], "GET, HEAD, POST, PUT, DELETE");
    assert_eq!(body_json(response).await["error"], "method_not_allowed");
}

#[tokio::test]
async fn cors_any_with_credentials_echoes_the_origin() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 3})).await;
    let handler = DualHttp::builder(server)
        .cors(Cors::any().allow_credentials(true))
        .build();
    let response = handle::send(
        &handler,
        Request::get(format!("/{id}")).header(header::ORIGIN, "https://a.example"),
    )
    .await;
    assert_eq!(
        response.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://a.example"
    );
    assert_eq!(
        response.headers()[header::ACCESS_CONTROL_ALLOW_CREDENTIALS],
        "true"
    );
    let without = DualHttp::builder(common::server()).cors(Cors::any()).build();
    let response = handle::send(
        &without,
        Request::options(format!("/{id}"))
            .header(header::ORIGIN, "https://a.example")
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "PUT"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(response.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
}

#[tokio::test]
async fn owner_fn_reads_a_principal_an_upstream_middleware_stored() {
    #[derive(Clone)]
    struct Principal(String);

    let server = common::server();
    let id = server
        .create_response(dual_server::CreateResponse::new("numbers", json!({"n": 3})).owner("tenant-7"))
        .await
        .expect("created")
        .id;
    let handler = DualHttp::builder(server)
        .authorize(OwnerFn(|parts: &Parts| {
            parts.extensions.get::<Principal>().map(|p| p.0.clone())
        }))
        .build();
    let request = |principal: Option<&str>| {
        let mut request = Request::builder().method(Method::GET).uri(format!("/{id}"));
        if let Some(p) = principal {
            request = request.extension(Principal(p.to_owned()));
        }
        request
    };
    assert_eq!(
        handle::send(&handler, request(Some("tenant-7"))).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        handle::send(&handler, request(Some("tenant-8"))).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        handle::send(&handler, request(None)).await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn an_executor_without_capacity_is_503_overloaded_with_retry_after() {
    // Live: a snapshot never asks the executor again.
    let server = common::live_server();
    // The sample (15 rows) is fetched; every later page or export finds the executor busy.
    let id = common::create(&server, json!({"n": 30, "busy_after_sample": true})).await;
    let handler = DualHttp::builder(server).prefix("/resources").build();
    let page = handle::send(&handler, Request::post(format!("/resources/{id}"))).await;
    assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(page.headers()[header::RETRY_AFTER], "2", "1.5 s rounds up");
    let body = body_json(page).await;
    assert_eq!(
        (body["error"].as_str(), body["retryable"].as_bool()),
        (Some("overloaded"), Some(true))
    );
    assert!(
        !body["message"].as_str().unwrap_or_default().contains("database"),
        "no internals: {body}"
    );
    let export = handle::send(&handler, Request::get(format!("/resources/{id}/data"))).await;
    assert_eq!(export.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(export.headers()[header::RETRY_AFTER], "3");
    assert_eq!(body_json(export).await["error"], "overloaded");
}

#[tokio::test(start_paused = true)]
async fn a_body_that_never_arrives_in_full_is_408_after_the_body_timeout() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 3})).await;
    let handler = DualHttp::builder(server)
        .prefix("/resources")
        .body_timeout(std::time::Duration::from_secs(5))
        .build();
    // Half a body, then nothing: the client stalls mid-request.
    let half = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(http_body::Frame::data(
        Bytes::from_static(b"{\"offset\":"),
    ))])
    .chain(futures_util::stream::pending());
    let request = Request::post(format!("/resources/{id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(http_body_util::StreamBody::new(half))
        .expect("request");
    let started = tokio::time::Instant::now();
    let response = handler.handle(request).await;
    assert_eq!(started.elapsed(), std::time::Duration::from_secs(5));
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    let body = body_json(response).await;
    assert_eq!(
        (body["error"].as_str(), body["retryable"].as_bool()),
        (Some("request_timeout"), Some(false))
    );
}

#[tokio::test]
async fn a_spool_outage_is_503_storage_error_and_never_shows_the_spool() {
    let backend = dual_testkit::BreakableSpool::new(dual_spool::MemorySpool::new().expect("spool"));
    let server = dual_server::DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .executor("numbers", common::numbers())
        .spool(dual_spool::Spool::new(backend.clone()))
        .without_sweeper()
        .build()
        .expect("valid configuration");
    let id = common::create(&server, json!({"n": 30})).await;
    let handler = DualHttp::new(server);
    backend.break_storage();
    for request in [
        Request::post(format!("/{id}")),
        Request::get(format!("/{id}/data")),
        Request::get(format!("/{id}/data?sort=id:desc")),
    ] {
        let response = handle::send(&handler, request).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(response.headers().contains_key(header::RETRY_AFTER));
        let body = body_json(response).await;
        assert_eq!(
            (body["error"].as_str(), body["retryable"].as_bool()),
            (Some("storage_error"), Some(true))
        );
        assert!(
            !body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("switched off"),
            "no internals: {body}"
        );
    }
    backend.restore();
    let response = handle::send(&handler, Request::get(format!("/{id}"))).await;
    assert_eq!(body_json(response).await["consistency"], "snapshot");
}
