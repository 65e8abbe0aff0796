use std::time::Duration;

use dual_server::{CreateResponse, DualResponseServer};
use dual_testkit::executor::Numbers;
use serde_json::{Value, json};

use super::*;
use crate::apps::tests::{server_builder, text};

fn arguments(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

/// The error text of parsing `value`, or an empty string when it parses.
fn parse_error(value: Value) -> String {
    LinkRequest::parse(&arguments(value), "resource")
        .err()
        .unwrap_or_default()
}

const URI: &str = "resource://01ARZ3NDEKTSV4RRFFQ69G5FAV";

#[test]
fn every_wrong_argument_is_named() {
    for (value, start) in [
        (json!({}), "`uri` is required"),
        (json!({"uri": 5, "format": "csv"}), "`uri` must be a string"),
        (
            json!({"uri": "resource://nope", "format": "csv"}),
            "`uri` must be the resource URI",
        ),
        (
            json!({"uri": format!("{URI}?offset=5"), "format": "csv"}),
            "`uri` must be the resource URI",
        ),
        (
            json!({"uri": URI.replace("resource", "other"), "format": "csv"}),
            "`uri` must be the resource URI",
        ),
        (json!({"uri": URI}), "`format` is required unless `view` is true"),
        (json!({"uri": URI, "format": "xml"}), "`format` must be \"csv\""),
        (json!({"uri": URI, "format": 1}), "`format` must be a string"),
        (
            json!({"uri": URI, "format": "csv", "sort": ""}),
            "`sort` must be field",
        ),
        (
            json!({"uri": URI, "format": "csv", "sort": "a:sideways"}),
            "`sort` must be field",
        ),
        (
            json!({"uri": URI, "format": "csv", "sort": 3}),
            "`sort` must be a string",
        ),
        (json!({"uri": URI, "view": "yes"}), "`view` must be a boolean"),
        (
            json!({"uri": URI, "view": true, "sort": "id"}),
            "`sort` does not apply with `view`",
        ),
        (
            json!({"uri": URI, "format": "csv", "limit": 5}),
            "unknown argument `limit`",
        ),
    ] {
        let error = parse_error(value.clone());
        assert!(error.starts_with(start), "{value}: {error}");
    }
    assert!(
        parse_error(json!({"uri": URI, "format": "csv", "a": 1, "b": 2}))
            .starts_with("unknown arguments `a`, `b`")
    );
}

#[test]
fn valid_arguments_parse() {
    for value in [
        json!({"uri": URI, "format": "csv"}),
        json!({"uri": URI, "format": "ndjson", "sort": "id:desc", "view": false}),
        json!({"uri": URI, "format": "arrow", "sort": null, "view": null}),
        json!({"uri": URI, "view": true}),
        json!({"uri": URI, "view": true, "format": "json"}),
        // The view link ignores `format`, whatever it holds.
        json!({"uri": URI, "view": true, "format": "xml"}),
    ] {
        assert_eq!(parse_error(value.clone()), "", "{value}");
    }
    let request = LinkRequest::parse(
        &arguments(json!({"uri": URI, "format": "csv", "sort": "id:desc"})),
        "resource",
    )
    .expect("valid");
    match request.target {
        Target::Data { format, sort } => {
            assert_eq!(format, LinkFormat::Csv);
            assert_eq!(
                sort.map(|s| (s.field, s.order.as_str())),
                Some(("id".to_owned(), "desc"))
            );
        }
        Target::View => panic!("a data link was asked for"),
    }
}

#[test]
fn huge_arguments_are_not_echoed_whole() {
    let long = "x".repeat(1 << 20);
    for value in [
        json!({"uri": long.clone(), "format": "csv"}),
        json!({"uri": URI, "format": long.clone()}),
        json!({long.clone(): 1, "uri": URI}),
    ] {
        let error = parse_error(value);
        assert!(
            error.len() < 1_000 && error.contains("bytes in all]"),
            "{} bytes",
            error.len()
        );
    }
}

fn server() -> DualResponseServer {
    server_builder()
        .max_error_text_bytes(256)
        .build()
        .expect("valid configuration")
}

#[tokio::test]
async fn links_are_minted_for_the_owner_only() {
    let server = server();
    let created = server
        .create_response(
            CreateResponse::new("numbers", json!({"n": 10}))
                .owner("alice")
                .expiration(Duration::from_secs(60)),
        )
        .await
        .expect("created");
    let alice = Caller::owner("alice");
    let base = format!("http://127.0.0.1:1/resources/{}", created.id);
    let data = call_download_link(
        &server,
        &alice,
        &arguments(json!({"uri": created.uri, "format": "ndjson", "sort": "id:desc"})),
    )
    .await;
    assert_eq!(data.is_error, Some(false), "{}", text(&data));
    let url = text(&data);
    assert!(
        url.starts_with(&format!("{base}/data?format=ndjson&sort=id:desc&expires=")),
        "{url}"
    );
    let structured = data.structured_content.clone().unwrap_or_default();
    assert_eq!(structured["url"], url.as_str());
    let expires_at = structured["expires_at"].as_str().unwrap_or_default();
    assert!(
        OffsetDateTime::parse(expires_at, &Rfc3339).is_ok(),
        "{expires_at}"
    );
    let unsorted = call_download_link(
        &server,
        &alice,
        &arguments(json!({"uri": created.uri, "format": "csv", "sort": "nope"})),
    )
    .await;
    assert_eq!(unsorted.is_error, Some(true));
    assert!(
        text(&unsorted).contains("`sort.field` must be one of the resource's columns; `nope` is not"),
        "{}",
        text(&unsorted)
    );
    let view = call_download_link(
        &server,
        &alice,
        &arguments(json!({"uri": created.uri, "view": true})),
    )
    .await;
    assert!(
        text(&view).starts_with(&format!("{base}/view?expires=")),
        "{}",
        text(&view)
    );
    // Another owner, an anonymous caller, an unknown id: all the same "not found".
    let unknown = format!("resource://{}", ResourceId::new());
    for (caller, uri) in [
        (Caller::owner("mallory"), created.uri.as_str()),
        (Caller::anonymous(), created.uri.as_str()),
        (alice.clone(), unknown.as_str()),
    ] {
        for extra in [json!({"format": "csv"}), json!({"view": true})] {
            let mut args = arguments(extra);
            args.insert("uri".to_owned(), json!(uri));
            let result = call_download_link(&server, &caller, &args).await;
            assert_eq!(result.is_error, Some(true));
            assert_eq!(text(&result), format!("resource not found or expired: {uri}"));
            assert!(result.structured_content.is_none());
        }
    }
}

#[tokio::test]
async fn argument_errors_are_cut_to_the_servers_cap() {
    let server = server();
    let mut args = arguments(json!({"uri": URI}));
    for i in 0..50 {
        args.insert(format!("{i}{}", "k".repeat(500)), Value::Null);
    }
    let result = call_download_link(&server, &Caller::anonymous(), &args).await;
    assert_eq!(result.is_error, Some(true));
    let said = text(&result);
    assert!(said.len() <= 256, "{} bytes", said.len());
    assert!(said.starts_with("unknown arguments"), "{said}");
}

#[tokio::test]
async fn a_pending_resource_is_not_ready_whatever_the_sort() {
    // The gated executor holds its rows until opened: the resource stays pending, with no columns
    // yet, and a link to it would only fail when opened.
    let executor = std::sync::Arc::new(Numbers::new().steps([1, 1]));
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .shared_executor(
            "gated",
            std::sync::Arc::clone(&executor) as std::sync::Arc<dyn dual_server::QueryExecutor>,
        )
        .pending_after(Duration::from_millis(20))
        .without_sweeper()
        .build()
        .expect("valid configuration");
    let created = server
        .create_response(CreateResponse::new("gated", json!({})))
        .await
        .expect("created");
    assert_eq!(created.status, dual_core::status::ResourceStatus::Pending);
    for arguments_ in [
        json!({"uri": created.uri, "format": "csv"}),
        json!({"uri": created.uri, "format": "csv", "sort": "id:desc"}),
    ] {
        let result = call_download_link(&server, &Caller::anonymous(), &arguments(arguments_.clone())).await;
        assert_eq!(result.is_error, Some(true), "{arguments_}");
        let said = text(&result).to_lowercase();
        assert!(
            said.contains("not ready") || said.contains("still running"),
            "{arguments_}: {said}"
        );
        assert!(!said.contains("column"), "{arguments_}: {said}");
    }
    executor.open();
    executor.open();
}
