//! Handler-level behaviour beyond the suite: the prefix boundary, options, and the public
//! parse → execute → render pipeline an adapter of another stack would call.

mod common;

use bytes::Bytes;
use dual_http::{
    ApiRequest, ApiResponse, ContentCoding, Cors, DualHttp, ExportFormat, OwnerFn, Rejection, execute,
    parse_request, render,
};
use futures_util::StreamExt;
use http::request::Parts;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Full};
use serde_json::{Value, json};

async fn body_json(response: http::Response<dual_http::ResponseBody>) -> Value {
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice(&bytes).expect("JSON")
}

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
        let request = Request::get(path.as_str())
            .body(Empty::<Bytes>::new())
            .expect("request");
        let response = handler.handle(request).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body = body_json(response).await;
        assert_eq!(body["error"], "not_found", "{path}");
        assert_eq!(body["message"], dual_core::NOT_FOUND_MESSAGE);
    }
    let ok = handler
        .handle(
            Request::get(format!("/resources/{id}"))
                .body(Empty::<Bytes>::new())
                .expect("request"),
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    // An absolute-form URI (a proxy request) routes by its path.
    let absolute = handler
        .handle(
            Request::get(format!("http://example.com/resources/{id}/data"))
                .body(Empty::<Bytes>::new())
                .expect("request"),
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
async fn an_adapter_can_call_parse_execute_render_itself() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 300})).await;
    let handler = DualHttp::builder(server.clone()).prefix("/r").build();
    let config = handler.config();

    let (parts, body) = Request::get(format!("/r/{id}/data?sort=id:desc&offset=0"))
        .header(header::ACCEPT, "text/csv")
        .header(header::ACCEPT_ENCODING, "br")
        .body(Empty::<Bytes>::new())
        .expect("request")
        .into_parts();
    let parsed = parse_request(config, &parts, body).await.expect("parses");
    assert_eq!(
        parsed,
        ApiRequest::Export {
            id,
            sort: Some(dual_core::Sort::new("id", dual_core::SortOrder::Desc)),
            range: dual_core::RowRange::ALL,
            format: ExportFormat::Csv,
            encoding: ContentCoding::Identity,
        }
    );
    let outcome = execute(&server, config, &parts, parsed).await;
    let ApiResponse::Export(export) = &outcome else {
        panic!("an export: {outcome:?}")
    };
    assert_eq!(export.format(), ExportFormat::Csv);
    let response = render(config, &parts, outcome);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(text.lines().count(), 301);
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("299,")));

    // Rejections come out of parse with their status; render logs and shapes them.
    let (parts, body) = Request::patch(format!("/r/{id}"))
        .body(Empty::<Bytes>::new())
        .expect("request")
        .into_parts();
    let rejection = parse_request(config, &parts, body).await.expect_err("405");
    assert!(matches!(rejection, Rejection::MethodNotAllowed { .. }));
    assert_eq!(rejection.status(), StatusCode::METHOD_NOT_ALLOWED);
    let response = render(config, &parts, ApiResponse::Error(rejection));
    assert_eq!(response.headers()[header::ALLOW], "GET, HEAD, POST, PUT, DELETE");
}

#[tokio::test]
async fn cors_any_with_credentials_echoes_the_origin() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 3})).await;
    let handler = DualHttp::builder(server)
        .cors(Cors::any().allow_credentials(true))
        .build();
    let response = handler
        .handle(
            Request::get(format!("/{id}"))
                .header(header::ORIGIN, "https://a.example")
                .body(Empty::<Bytes>::new())
                .expect("request"),
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
    let response = without
        .handle(
            Request::options(format!("/{id}"))
                .header(header::ORIGIN, "https://a.example")
                .header(header::ACCESS_CONTROL_REQUEST_METHOD, "PUT")
                .body(Empty::<Bytes>::new())
                .expect("request"),
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
        request.body(Empty::<Bytes>::new()).expect("request")
    };
    assert_eq!(
        handler.handle(request(Some("tenant-7"))).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        handler.handle(request(Some("tenant-8"))).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        handler.handle(request(None)).await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn an_executor_without_capacity_is_503_overloaded_with_retry_after() {
    // Live: a snapshot never asks the executor again.
    let server = common::live_server();
    // The sample (15 rows) is fetched; every later page or export finds the executor busy.
    let id = common::create(&server, json!({"n": 30, "busy_after_create": true})).await;
    let handler = DualHttp::builder(server).prefix("/resources").build();
    let page = handler
        .handle(
            Request::post(format!("/resources/{id}"))
                .body(Empty::<Bytes>::new())
                .expect("request"),
        )
        .await;
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
    let export = handler
        .handle(
            Request::get(format!("/resources/{id}/data"))
                .body(Empty::<Bytes>::new())
                .expect("request"),
        )
        .await;
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
        Request::post(format!("/{id}")).body(Empty::<Bytes>::new()),
        Request::get(format!("/{id}/data")).body(Empty::<Bytes>::new()),
        Request::get(format!("/{id}/data?sort=id:desc")).body(Empty::<Bytes>::new()),
    ] {
        let response = handler.handle(request.expect("request")).await;
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
    let response = handler
        .handle(
            Request::get(format!("/{id}"))
                .body(Empty::<Bytes>::new())
                .expect("request"),
        )
        .await;
    assert_eq!(body_json(response).await["consistency"], "snapshot");
}
