//! Every operation against the in-test contract server, with and without the `/data` export.

use dual_client::{FetchAllOptions, FetchOptions, FetchStreamOptions, Sort, SortOrder};

use futures_util::StreamExt;

use crate::support::fake::{FakeConfig, FakeServer, rows};
use crate::support::{builder, client, fetch_all_reporting, serve};

#[tokio::test]
async fn conformance_suite_with_export() {
    let server = FakeServer::start(FakeConfig::default()).await;
    let client = client();
    dual_testkit::client::run(&client, || async { server.fixture(23) }).await;
    let log = server.log();
    assert!(
        log.iter().any(|l| l.starts_with("GET ") && l.contains("/data")),
        "the export was used"
    );
}

#[tokio::test]
async fn conformance_suite_without_export_falls_back_to_pages() {
    let server = FakeServer::start(FakeConfig::without_export()).await;
    let client = client();
    dual_testkit::client::run(&client, || async { server.fixture(23) }).await;
}

#[tokio::test]
async fn conformance_suite_through_a_base_url() {
    let server = FakeServer::start(FakeConfig::default()).await;
    let client = builder().base_url(&server.base_url).build().expect("client");
    dual_testkit::client::run(&client, || async {
        let mut fixture = server.fixture(9);
        // Point the result's URL elsewhere: the base URL must win.
        fixture.tool_result["structuredContent"]["resource"]["url"] =
            serde_json::json!("http://192.0.2.1/nowhere/x");
        fixture.tool_result["content"] = serde_json::json!([]);
        fixture
    })
    .await;
}

#[tokio::test]
async fn fetch_all_of_a_small_result_is_one_range_request() {
    let all = rows(1234);
    let (server, parsed) = serve(FakeConfig::with_chunk_bytes(3), "Export", all.clone()).await;
    let (fetched, progress) = fetch_all_reporting(&parsed, FetchAllOptions::new().batch_size(500)).await;
    assert_eq!(fetched, all);
    assert_eq!(progress, [(500, 1234), (1000, 1234), (1234, 1234)]);
    let log = server.log();
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].starts_with("GET /resources/") && log[0].ends_with("/data?offset=0&limit=1235"),
        "one range of every row, and one more to catch extra rows: {log:?}"
    );
}

#[tokio::test]
async fn fetch_all_without_export_fetches_pages_in_parallel_in_order() {
    let all = rows(1001);
    let (server, parsed) = serve(FakeConfig::without_export(), "Pages", all.clone()).await;
    let options = FetchAllOptions::new().batch_size(100).parallelism(4);
    let (fetched, progress) = fetch_all_reporting(&parsed, options).await;
    assert_eq!(fetched, all, "every row, in order");
    assert_eq!(progress.len(), 11);
    assert_eq!(progress.last(), Some(&(1001, 1001)));
    let log = server.log();
    // One probe of /data, then 11 pages.
    assert_eq!(log.iter().filter(|l| l.contains("/data")).count(), 1, "{log:?}");
    assert_eq!(
        log.iter().filter(|l| l.starts_with("POST ")).count(),
        11,
        "{log:?}"
    );
}

#[tokio::test]
async fn pages_cut_to_a_byte_cap_still_yield_every_row_once_in_parallel() {
    // Short rows first, longer ones later: pages hold fewer rows as the offsets grow, so planned
    // pages both overlap and leave gaps.
    let all = rows(3_000);
    let config = FakeConfig {
        page_bytes: Some(3_000),
        ..FakeConfig::without_export()
    };
    let (server, parsed) = serve(config, "Capped pages", all.clone()).await;
    let options = FetchAllOptions::new().batch_size(500).parallelism(4);
    let fetched = parsed.fetch_all(options).await.expect("fetch_all");
    assert_eq!(fetched, all, "every row once, in order");
    let posts = server.log().iter().filter(|l| l.starts_with("POST ")).count();
    assert!(posts > 3_000 / 500, "the cap cut the pages: {posts} requests");
}

#[tokio::test]
async fn huge_batch_sizes_are_clamped_to_the_page_limit() {
    let all = rows(250);
    let (_server, parsed) = serve(FakeConfig::without_export(), "Big batch", all.clone()).await;
    // A batch larger than the contract's maximum page limit is clamped to it, not rejected.
    let fetched = parsed
        .fetch_all(FetchAllOptions::new().batch_size(1_000_000))
        .await
        .expect("fetch_all");
    assert_eq!(fetched, all);
}

#[tokio::test]
async fn fetch_stream_holds_one_batch_at_a_time() {
    let all = rows(1000);
    let (_server, parsed) = serve(FakeConfig::default(), "Stream", all.clone()).await;
    let mut stream = parsed.fetch_stream(FetchStreamOptions::new(64));
    drop(parsed); // the stream owns what it needs
    let mut sizes = Vec::new();
    let mut got = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch.expect("batch");
        sizes.push(batch.len());
        got.extend(batch);
    }
    assert_eq!(got, all);
    assert!(sizes[..sizes.len() - 1].iter().all(|s| *s == 64), "{sizes:?}");
    assert_eq!(sizes.last(), Some(&(1000 % 64)));
}

#[tokio::test]
async fn expired_resources_are_resource_expired_everywhere() {
    for export in [true, false] {
        let server = FakeServer::start(FakeConfig {
            export,
            ..FakeConfig::default()
        })
        .await;
        let (id, result) = server.create("Old", rows(10));
        server.expire(id);
        let parsed = client().parse_strict(&result).expect("parses");
        let errors = [
            parsed.fetch(FetchOptions::new()).await.err(),
            parsed.metadata().await.err(),
            parsed.fetch_all(FetchAllOptions::new()).await.err(),
            parsed
                .fetch_stream(FetchStreamOptions::default())
                .next()
                .await
                .and_then(Result::err),
        ];
        for error in errors {
            let error = error.expect("an error");
            assert!(error.is_expired(), "{error}");
            assert_eq!(error.code().as_str(), "RESOURCE_EXPIRED");
            assert_eq!(error.status(), Some(http::StatusCode::NOT_FOUND));
            assert_eq!(
                error.server_error().map(|b| b.error),
                Some(dual_core::error::ErrorCode::Expired)
            );
        }
        if export {
            // The export's own `expired` answer is final: no page is tried after it (the one POST is
            // the `fetch` above).
            let log = server.log();
            assert_eq!(log.iter().filter(|l| l.starts_with("POST")).count(), 1, "{log:?}");
        }
    }
}

#[tokio::test]
async fn invalid_requests_are_fetch_errors_with_status_400() {
    let (_server, parsed) = serve(FakeConfig::default(), "Bad", rows(10)).await;
    let error = parsed
        .fetch(FetchOptions::new().sort(Sort::new("no_such_column", SortOrder::Asc)))
        .await
        .expect_err("unknown sort field");
    assert_eq!(error.code().as_str(), "FETCH_ERROR");
    assert_eq!(error.status(), Some(http::StatusCode::BAD_REQUEST));
    assert!(!error.is_retryable());
    assert!(error.message().contains("sort.field"), "{error}");
    let error = parsed
        .fetch_all(FetchAllOptions::new().sort(Sort::new("no_such_column", SortOrder::Asc)))
        .await
        .expect_err("unknown sort field on the export");
    assert_eq!(error.status(), Some(http::StatusCode::BAD_REQUEST));
}

#[tokio::test]
async fn lone_link_learns_its_count_from_metadata() {
    let server = FakeServer::start(FakeConfig::default()).await;
    let (id, _) = server.create("Linked", rows(12));
    let client = builder().base_url(&server.base_url).build().expect("client");
    let link =
        serde_json::json!({"type": "resource_link", "uri": format!("resource://{id}"), "name": "Linked"});
    let mut parsed = client.parse_strict(&link).expect("parses with a base URL");
    assert_eq!(parsed.total_count(), None);
    let (all, progress) = fetch_all_reporting(&parsed, FetchAllOptions::new().batch_size(5)).await;
    assert_eq!(all, rows(12));
    assert_eq!(progress, [(5, 12), (10, 12), (12, 12)]);
    parsed.load_metadata().await.expect("metadata");
    assert_eq!(parsed.total_count(), Some(12));
    assert_eq!(parsed.columns().len(), 4);
    assert!(parsed.expires_at().is_some());
}

#[tokio::test]
async fn clones_share_one_connection_pool() {
    let server = FakeServer::start(FakeConfig::default()).await;
    let (_, result) = server.create("Pool", rows(10));
    let client = client();
    let a = client.parse_strict(&result).expect("parses");
    let b = client.clone().parse_strict(&result).expect("parses");
    for _ in 0..3 {
        a.fetch(FetchOptions::new().limit(2)).await.expect("a");
        b.fetch(FetchOptions::new().limit(2)).await.expect("b");
    }
    assert_eq!(server.log().len(), 6);
    assert_eq!(
        server.connections(),
        1,
        "one pooled connection served both clones"
    );
}
