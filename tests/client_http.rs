//! dual-client against a real dual-http server on loopback: every client operation, through the
//! client's conformance suite, with and without a configured base URL.

mod support;

use dual_response::client::{ClientErrorCode, DualResponseClient, FetchAllOptions, FetchOptions};
use dual_response::server::CreateResponse;
use dual_testkit::client::Fixture;
use serde_json::json;

async fn fixture(server: &dual_response::server::DualResponseServer, n: u64) -> Fixture {
    let created = server
        .create_response(CreateResponse::new("rows", json!({ "n": n })).sample_size(5))
        .await
        .expect("created");
    Fixture {
        tool_result: serde_json::to_value(created.tool_result()).expect("serialises"),
        rows: (0..n).map(support::row).collect(),
        sort_field: "enrollment".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_suite_passes_against_dual_http() {
    let (server, base) = support::start().await;
    let plain = DualResponseClient::new();
    let based = DualResponseClient::builder()
        .base_url(&base)
        .build()
        .expect("client");
    for client in [plain, based] {
        dual_testkit::client::run(&client, || fixture(&server, 23)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_all_gets_every_row_in_order_with_progress() {
    let (server, _) = support::start().await;
    let fixture = fixture(&server, 5_003).await;
    let client = DualResponseClient::new();
    let parsed = client.parse(&fixture.tool_result).expect("a dual response");
    assert_eq!(parsed.total_count(), Some(5_003));
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&progress);
    let rows = parsed
        .fetch_all(FetchAllOptions::new().on_progress(move |fetched, total| {
            seen.lock()
                .map(|mut p| p.push((fetched, total)))
                .unwrap_or_default();
        }))
        .await
        .expect("fetched");
    assert_eq!(rows, fixture.rows);
    let progress = progress.lock().map(|p| p.clone()).unwrap_or_default();
    assert_eq!(progress.last(), Some(&(5_003, 5_003)));
    assert!(
        progress.windows(2).all(|w| w[0].0 < w[1].0),
        "progress only grows"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_and_deleted_resources_map_to_client_codes() {
    let (server, base) = support::start().await;
    // A resource whose expiry has passed but that no sweep has removed yet, saved straight into the store.
    let created = fixture(&server, 10).await;
    let id = created.tool_result["structuredContent"]["resource"]["uri"]
        .as_str()
        .and_then(dual_response::core::uri::parse_resource_uri)
        .map(|uri| uri.id)
        .expect("resource uri");
    let mut record = server
        .get_resource(id, &dual_response::server::Caller::anonymous())
        .await
        .expect("live");
    record.id = dual_response::core::ResourceId::new();
    record.expires_at = Some(server.clock().now() - time_second());
    server.store().save(&record).await.expect("saved");
    let expired = dual_response::core::DualResponse::from_record(record, "resource", &base);

    let client = DualResponseClient::new();
    let parsed = client
        .parse(&serde_json::to_value(expired.tool_result()).expect("json"))
        .expect("parsed");
    assert!(parsed.is_expired());
    let err = parsed.fetch(FetchOptions::new()).await.expect_err("expired");
    assert_eq!(err.code(), ClientErrorCode::ResourceExpired);
    assert_eq!(err.status().map(|s| s.as_u16()), Some(404));
    let err = parsed
        .fetch_all(FetchAllOptions::new())
        .await
        .expect_err("expired");
    assert_eq!(err.code(), ClientErrorCode::ResourceExpired);

    let parsed = client.parse(&created.tool_result).expect("parsed");
    parsed.delete().await.expect("deleted");
    let err = parsed.metadata().await.expect_err("gone");
    assert_eq!(err.code(), ClientErrorCode::ResourceNotFound);
}

fn time_second() -> dual_response::core::time::Duration {
    dual_response::core::time::Duration::seconds(1)
}
