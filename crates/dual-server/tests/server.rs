//! DualResponseServer behaviour: creation, paging, pin/delete, errors.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::{Column, ColumnType, PageRequest, Sort, SortOrder};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, QueryExecutor, RowBatch,
    ServerBuildError, ServerError, ServerErrorCode,
};
use futures_util::StreamExt;
use serde_json::json;

fn server() -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("https://api.example.com/resources/")
        .shared_executor("institutions", common::shared() as Arc<dyn QueryExecutor>)
        .build()
        .expect("valid configuration")
}

fn institutions(n: u64) -> CreateResponse {
    CreateResponse::new("institutions", json!({ "n": n }))
}

/// The id of a new resource over `n` rows.
async fn created(server: &DualResponseServer, n: u64) -> dual_core::ResourceId {
    server.create_response(institutions(n)).await.expect("created").id
}

/// The page `request` asks for of `id`, read anonymously; `what` names it if it fails.
async fn page(
    server: &DualResponseServer,
    id: dual_core::ResourceId,
    request: PageRequest,
    what: &str,
) -> dual_core::PageResponse {
    server
        .fetch_page(id, &Caller::anonymous(), &request)
        .await
        .expect(what)
}

#[tokio::test]
async fn create_response_builds_the_dual_response_and_stores_the_query() {
    let anyone = Caller::anonymous();
    let server = server();
    let response = server
        .create_response(
            institutions(847)
                .name("Institution Search Results")
                .metadata(json!({"q": 1})),
        )
        .await
        .expect("created");
    assert_eq!(response.total_count, 847);
    assert_eq!(response.sample.len(), 15);
    assert_eq!(response.sample[3], common::row(3));
    assert_eq!(response.uri, format!("resource://{}", response.id));
    assert_eq!(
        response.url,
        format!("https://api.example.com/resources/{}", response.id)
    );
    assert_eq!(
        response.columns,
        [
            Column::new("id", ColumnType::Integer),
            Column::new("name", ColumnType::String),
            Column::new("enrollment", ColumnType::Integer),
            Column::new("public", ColumnType::Boolean)
        ]
    );
    let expires = response.expires_at.expect("expires");
    assert_eq!(expires - response.executed_at, time::Duration::minutes(15));

    let record = server.get_resource(response.id, &anyone).await.expect("stored");
    assert_eq!(record.query.kind, "institutions");
    assert_eq!(record.query.params, json!({"n": 847}));
    assert_eq!(record.name, "Institution Search Results");
    assert_eq!(record.metadata, json!({"q": 1}));
    assert_eq!(record.access_count, 0, "get_resource does not count");
    assert_eq!(record.sample[..], response.sample[..]);
}

#[tokio::test]
async fn per_call_options_override_defaults() {
    let server = server();
    let columns = vec![dual_core::Column::new("id", ColumnType::Number)];
    let response = server
        .create_response(
            institutions(5)
                .sample_size(2)
                .expiration(Duration::from_secs(60))
                .columns(columns.clone()),
        )
        .await
        .expect("created");
    assert_eq!(response.sample.len(), 2);
    assert_eq!(response.columns, columns);
    assert_eq!(
        response.expires_at.map(|e| e - response.executed_at),
        Some(time::Duration::seconds(60))
    );
    let small = server.create_response(institutions(3)).await.expect("created");
    assert_eq!((small.total_count, small.sample.len()), (3, 3));
    let empty = server.create_response(institutions(0)).await.expect("created");
    assert_eq!(
        (empty.total_count, empty.sample.len(), empty.columns.len()),
        (0, 0, 0)
    );
}

#[tokio::test]
async fn executor_errors_keep_the_message_and_code() {
    // Live: a snapshot runs one stream, never `count`, so only the live path has COUNT_EXECUTION_FAILED.
    let server = DualResponseServer::builder()
        .base_url("https://api.example.com/resources/")
        .shared_executor("institutions", common::shared() as Arc<dyn QueryExecutor>)
        .without_snapshots()
        .build()
        .expect("valid configuration");
    let err = server
        .create_response(CreateResponse::new("institutions", json!({"n": 1, "fail": true})))
        .await;
    let err = err.expect_err("fetch fails");
    assert_eq!(err.code(), ServerErrorCode::QueryExecutionFailed);
    // Display says what failed; the executor's message is the source.
    assert_eq!(err.to_string(), "query execution failed");
    let message = dual_core::error::Report::new(&err).to_string();
    assert!(message.contains("syntax error"), "{message}");

    let err = server
        .create_response(CreateResponse::new(
            "institutions",
            json!({"n": 1, "fail_count": true}),
        ))
        .await
        .expect_err("count fails");
    assert_eq!(err.code(), ServerErrorCode::CountExecutionFailed);
    let message = dual_core::error::Report::new(&err).to_string();
    assert!(message.contains("no such table"), "{message}");

    let err = server
        .create_response(CreateResponse::new("nope", json!({})))
        .await
        .expect_err("unknown kind");
    assert_eq!(err.code(), ServerErrorCode::UnknownQueryKind);
    assert_eq!(err.code().as_str(), "UNKNOWN_QUERY_KIND");

    for bad in [
        institutions(1).sample_size(0),
        institutions(1).sample_size(1001),
        institutions(1).expiration(Duration::ZERO),
    ] {
        let err = server.create_response(bad).await.expect_err("invalid option");
        assert_eq!(err.code(), ServerErrorCode::InvalidRequest);
    }
    assert!(
        server
            .store()
            .find_expired(server.clock().now() + time::Duration::days(1), 10)
            .await
            .expect("store")
            .is_empty()
    );
}

#[tokio::test]
async fn pages_are_exact_and_count_accesses() {
    let anyone = Caller::anonymous();
    let server = server();
    let id = created(&server, 250).await;
    let first = page(&server, id, PageRequest::default(), "page").await;
    assert_eq!((first.offset, first.limit, first.returned_count), (0, 100, 100));
    assert!(first.has_next && !first.has_previous);
    assert_eq!(first.next_offset, Some(100));
    assert_eq!(first.data[0], common::row(0));

    let last = page(
        &server,
        id,
        PageRequest {
            offset: Some(200),
            limit: Some(50),
            sort: None,
        },
        "page",
    )
    .await;
    assert_eq!(
        (last.returned_count, last.has_next, last.next_offset),
        (50, false, None)
    );
    assert!(last.has_previous);
    assert_eq!(last.total_count, 250);

    let beyond = page(
        &server,
        id,
        PageRequest {
            offset: Some(1_000),
            limit: None,
            sort: None,
        },
        "page",
    )
    .await;
    assert_eq!((beyond.returned_count, beyond.has_next), (0, false));

    let sorted = page(
        &server,
        id,
        PageRequest {
            offset: None,
            limit: Some(3),
            sort: Some(Sort::new("enrollment", SortOrder::Desc)),
        },
        "sorted",
    )
    .await;
    let e: Vec<u64> = sorted
        .data
        .iter()
        .filter_map(|r| r["enrollment"].as_u64())
        .collect();
    assert!(e.windows(2).all(|w| w[0] >= w[1]), "{e:?}");

    let meta = server.metadata(id, &anyone).await.expect("metadata");
    assert_eq!(meta.access_count, 5, "four pages and this metadata read");
    assert!(meta.last_accessed_at.is_some());
}

#[tokio::test]
async fn invalid_page_requests_name_the_field() {
    let anyone = Caller::anonymous();
    let server = server();
    let id = created(&server, 10).await;
    let cases = [
        (
            PageRequest {
                offset: None,
                limit: Some(0),
                sort: None,
            },
            "limit",
        ),
        (
            PageRequest {
                offset: None,
                limit: Some(10_001),
                sort: None,
            },
            "limit",
        ),
        (
            PageRequest {
                offset: None,
                limit: None,
                sort: Some(Sort::new("password", SortOrder::Asc)),
            },
            "sort.field",
        ),
    ];
    for (request, field) in cases {
        match server.fetch_page(id, &anyone, &request).await {
            Err(ServerError::InvalidRequest(e)) => assert_eq!(e.field(), Some(field)),
            other => panic!("expected invalid request for {field}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn unknown_pinned_and_deleted_resources() {
    let anyone = Caller::anonymous();
    let server = server();
    let unknown = dual_core::ResourceId::new();
    assert_eq!(
        common::error_code(server.get_resource(unknown, &anyone).await, "unknown"),
        ServerErrorCode::ResourceNotFound
    );
    assert_eq!(
        common::error_code(
            server.fetch_page(unknown, &anyone, &PageRequest::default()).await,
            "x"
        ),
        ServerErrorCode::ResourceNotFound
    );

    let id = created(&server, 10).await;
    let pinned = server.pin_resource(id, &anyone).await.expect("pinned");
    assert_eq!(pinned.expires_at, None);
    assert_eq!(server.metadata(id, &anyone).await.expect("meta").expires_at, None);

    server.delete_resource(id, &anyone).await.expect("deleted");
    assert_eq!(
        common::error_code(server.delete_resource(id, &anyone).await, "gone"),
        ServerErrorCode::ResourceNotFound
    );
    assert_eq!(
        common::error_code(server.get_resource(id, &anyone).await, "gone"),
        ServerErrorCode::ResourceNotFound
    );
}

#[tokio::test]
async fn stream_rows_yields_every_row_in_order() {
    let anyone = Caller::anonymous();
    let server = server();
    let id = server
        .create_response(institutions(2_345))
        .await
        .expect("created")
        .id;
    let (_, mut stream) = server.stream_rows(id, &anyone, None).await.expect("stream");
    let mut ids = Vec::new();
    while let Some(batch) = stream.next().await {
        ids.extend(
            batch
                .and_then(RowBatch::into_rows)
                .expect("batch")
                .iter()
                .filter_map(|r| r["id"].as_u64()),
        );
    }
    assert_eq!(ids, (0..2_345).collect::<Vec<_>>());

    let (_, sorted) = server
        .stream_rows(id, &anyone, Some(Sort::new("id", SortOrder::Desc)))
        .await
        .expect("stream");
    let batches: Vec<_> = sorted.collect().await;
    let first = batches
        .into_iter()
        .next()
        .and_then(|b| b.and_then(RowBatch::into_rows).ok())
        .and_then(|b| b.into_iter().next())
        .and_then(|r| r["id"].as_u64());
    assert_eq!(first, Some(2_344));

    let err = server
        .stream_rows(id, &anyone, Some(Sort::new("nope", SortOrder::Asc)))
        .await
        .map(|_| ())
        .expect_err("bad sort");
    assert_eq!(err.code(), ServerErrorCode::InvalidRequest);
}

#[tokio::test]
async fn builder_validates_configuration() {
    let err = DualResponseServer::builder().build().expect_err("no base url");
    assert_eq!(err, ServerBuildError::MissingBaseUrl);
    let err = DualResponseServer::builder()
        .base_url("localhost:8080")
        .build()
        .expect_err("relative");
    assert!(matches!(err, ServerBuildError::InvalidBaseUrl(_)));
    // Each option set out of range, and the option the error names.
    type Configure = fn(DualResponseServerBuilder) -> DualResponseServerBuilder;
    let invalid: [(&str, Configure); 3] = [
        ("default_sample_size", |b| b.default_sample_size(0)),
        ("default_page_limit", |b| {
            b.max_page_limit(10).default_page_limit(11)
        }),
        ("uri_scheme", |b| b.uri_scheme("no scheme")),
    ];
    for (option, configure) in invalid {
        let err = configure(DualResponseServer::builder().base_url("http://h/r"))
            .build()
            .err();
        assert!(
            matches!(err, Some(ServerBuildError::InvalidOption { option: named, .. }) if named == option),
            "{option}: {err:?}"
        );
    }

    let custom = DualResponseServer::builder()
        .base_url("http://h/r")
        .uri_scheme("report")
        .shared_executor("institutions", common::shared() as Arc<dyn QueryExecutor>)
        .build()
        .expect("valid");
    let response = custom.create_response(institutions(1)).await.expect("created");
    assert!(response.uri.starts_with("report://"));
    assert_eq!(custom.kinds(), ["institutions"]);
}

#[test]
fn sweeper_needs_a_runtime_unless_disabled() {
    let err = DualResponseServer::builder()
        .base_url("http://h/r")
        .build()
        .expect_err("no runtime");
    assert_eq!(err, ServerBuildError::NoRuntime);
    assert!(
        DualResponseServer::builder()
            .base_url("http://h/r")
            .without_sweeper()
            .build()
            .is_ok()
    );
}
