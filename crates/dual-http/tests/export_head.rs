//! `HEAD /{id}/data`: the export's headers from the checks alone; no export runs and no access is
//! counted.

mod common;
mod handle;

use std::sync::Arc;

use dual_core::status::ResourceStatus;
use dual_http::{DualHttp, OwnerFn};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_testkit::executor::Numbers;
use handle::{bytes, send};
use http::request::Parts;
use http::{HeaderMap, Request, StatusCode, header};
use serde_json::json;

/// A live server (every export runs the executor) over `numbers`, kind `numbers`.
fn live(numbers: &Arc<Numbers>) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_executor("numbers", Arc::clone(numbers) as Arc<dyn QueryExecutor>)
        .without_sweeper()
        .without_snapshots()
        .build()
        .expect("valid configuration")
}

async fn access_count(server: &DualResponseServer, id: dual_core::ResourceId) -> u64 {
    server
        .get_resource(id, &Caller::anonymous())
        .await
        .expect("live record")
        .access_count
}

/// The headers that describe an export (everything but the connection's own).
fn export_headers(headers: &HeaderMap) -> Vec<(String, Vec<String>)> {
    [
        header::CONTENT_TYPE,
        header::CONTENT_ENCODING,
        header::CONTENT_LENGTH,
        header::VARY,
        header::CACHE_CONTROL,
        header::X_CONTENT_TYPE_OPTIONS,
    ]
    .iter()
    .map(|name| {
        let values = headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap_or_default().to_owned())
            .collect();
        (name.to_string(), values)
    })
    .collect()
}

#[tokio::test]
async fn head_sends_the_gets_headers_without_running_the_export_or_counting_an_access() {
    let numbers = Arc::new(common::numbers());
    let server = live(&numbers);
    let id = common::create(&server, json!({"n": 5_000})).await;
    let handler = DualHttp::new(server.clone());
    let accesses = access_count(&server, id).await;
    let mut negotiations = vec![
        vec![],
        vec![(header::ACCEPT, "text/csv")],
        vec![
            (header::ACCEPT, "application/x-ndjson"),
            (header::ACCEPT_ENCODING, "gzip"),
        ],
    ];
    if cfg!(feature = "compression") {
        negotiations.push(vec![
            (header::ACCEPT, "text/csv"),
            (header::ACCEPT_ENCODING, "zstd"),
        ]);
    }
    for (done, headers) in negotiations.iter().enumerate() {
        let fetches = numbers.fetches();
        let mut head = Request::head(format!("/{id}/data?sort=id:desc&offset=10&limit=100"));
        for (name, value) in headers {
            head = head.header(name, *value);
        }
        let response = send(&handler, head).await;
        assert_eq!(response.status(), StatusCode::OK, "{headers:?}");
        let head_headers = export_headers(response.headers());
        assert!(bytes(response).await.is_empty(), "HEAD has no body");
        assert_eq!(numbers.fetches(), fetches, "{headers:?}: no export ran");
        assert_eq!(numbers.alive(), 0, "no executor stream was opened");
        assert_eq!(
            access_count(&server, id).await,
            accesses + done as u64,
            "{headers:?}: no access counted"
        );

        let get = handle::get(
            &handler,
            &format!("/{id}/data?sort=id:desc&offset=10&limit=100"),
            headers,
        )
        .await;
        assert_eq!(get.status(), StatusCode::OK);
        assert_eq!(
            head_headers,
            export_headers(get.headers()),
            "{headers:?}: HEAD answers like GET"
        );
        assert!(!bytes(get).await.is_empty());
    }
    assert_eq!(
        access_count(&server, id).await,
        accesses + negotiations.len() as u64,
        "each GET counts"
    );
}

#[tokio::test]
async fn head_runs_every_check_of_the_get() {
    #[derive(Clone)]
    struct Principal(String);

    let numbers = Arc::new(common::numbers());
    let server = live(&numbers);
    let id = common::create(&server, json!({"n": 20})).await;
    let owned = server
        .create_response(CreateResponse::new("numbers", json!({"n": 20})).owner("tenant-7"))
        .await
        .expect("created")
        .id;
    let expired = common::expired_copy(&server, id).await;
    let pending = common::copy_with_status(&server, id, ResourceStatus::Pending).await;
    let failed = common::copy_with_status(&server, id, ResourceStatus::Failed).await;
    let handler = DualHttp::builder(server.clone())
        .authorize(OwnerFn(|parts: &Parts| {
            parts.extensions.get::<Principal>().map(|p| p.0.clone())
        }))
        .build();
    let unknown = dual_core::ResourceId::new();
    let cases = [
        (format!("/{unknown}/data"), None, StatusCode::NOT_FOUND),
        (format!("/{owned}/data"), None, StatusCode::NOT_FOUND),
        (format!("/{owned}/data"), Some("tenant-8"), StatusCode::NOT_FOUND),
        (format!("/{owned}/data"), Some("tenant-7"), StatusCode::OK),
        (format!("/{expired}/data"), None, StatusCode::NOT_FOUND),
        (format!("/{pending}/data"), None, StatusCode::CONFLICT),
        (format!("/{failed}/data"), None, StatusCode::INTERNAL_SERVER_ERROR),
        (format!("/{id}/data?sort=nope:asc"), None, StatusCode::BAD_REQUEST),
        (format!("/{id}/data?offset=21"), None, StatusCode::BAD_REQUEST),
        (format!("/{id}/data?offset=20"), None, StatusCode::OK),
    ];
    let fetches = numbers.fetches();
    for (uri, principal, status) in cases {
        let request = |method: http::Method| {
            let mut request = Request::builder().method(method).uri(&uri);
            if let Some(p) = principal {
                request = request.extension(Principal(p.to_owned()));
            }
            request
        };
        let head = send(&handler, request(http::Method::HEAD)).await;
        let get = send(&handler, request(http::Method::GET)).await;
        assert_eq!(head.status(), status, "HEAD {uri} as {principal:?}");
        assert_eq!(get.status(), status, "GET {uri} as {principal:?}");
        assert_eq!(
            head.headers().get(header::RETRY_AFTER),
            get.headers().get(header::RETRY_AFTER),
            "{uri}"
        );
        assert!(bytes(head).await.is_empty());
    }
    // Only the two GETs that answered 200 asked the executor for rows (the empty range none).
    assert!(numbers.fetches() > fetches);
    let owned_accesses = server
        .get_resource(owned, &Caller::owner("tenant-7"))
        .await
        .expect("live record")
        .access_count;
    assert_eq!(owned_accesses, 1, "the owner's GET counted, its HEAD did not");
}
