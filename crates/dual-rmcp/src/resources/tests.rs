use std::time::Duration;

use dual_core::{PageResponse, ResourceId};
use dual_server::{CreateResponse, DualResponseServer};
use dual_store::Clock;
use dual_testkit::executor::Numbers;
use rmcp::model::{ErrorCode, ResourceContents};
use serde_json::{Value, json};

use super::*;

fn server(scheme: &str) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .uri_scheme(scheme)
        .clock(Clock::tokio())
        .without_sweeper()
        .executor("numbers", Numbers::new())
        .build()
        .expect("valid configuration")
}

async fn create(server: &DualResponseServer, n: u64) -> dual_core::DualResponse {
    server
        .create_response(CreateResponse::new("numbers", json!({"n": n})).expiration(Duration::from_secs(60)))
        .await
        .expect("created")
}

fn page_of(result: &ReadResourceResult) -> (String, PageResponse) {
    match result.contents.as_slice() {
        [
            ResourceContents::TextResourceContents {
                uri, text, mime_type, ..
            },
        ] => {
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            (uri.clone(), serde_json::from_str(text).expect("a JSON page"))
        }
        other => panic!("expected one text content, got {other:?}"),
    }
}

/// Reads `uri` anonymously, which must succeed, and the page it holds.
async fn read_page(server: &DualResponseServer, uri: &str) -> PageResponse {
    let result = read_resource(server, &Caller::anonymous(), uri, &ReadOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    page_of(&result).1
}

#[test]
fn template_uses_the_servers_scheme() {
    let listed = resource_templates(&server("dualres"));
    assert_eq!(listed.resource_templates.len(), 1);
    let template = &listed.resource_templates[0];
    assert_eq!(template.uri_template, "dualres://{id}{?offset,limit,sort}");
    assert_eq!(template.mime_type.as_deref(), Some("application/json"));
    let value = serde_json::to_value(&listed).unwrap_or_default();
    assert_eq!(
        value["resourceTemplates"][0]["uriTemplate"],
        "dualres://{id}{?offset,limit,sort}"
    );
}

/// RFC 6570 level-3 expansion of `{scheme}://{id}{?offset,limit,sort}`: undefined variables are
/// left out, values are percent-encoded outside the unreserved set (so `:` becomes `%3A`).
fn expand(template: &str, id: &str, query: &[(&str, &str)]) -> String {
    let encode = |value: &str| {
        value
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    char::from(b).to_string()
                }
                other => format!("%{other:02X}"),
            })
            .collect::<String>()
    };
    let (head, _) = template.split_once("{?").expect("a query expansion");
    let mut uri = head.replace("{id}", &encode(id));
    for (i, (name, value)) in query.iter().enumerate() {
        uri.push(if i == 0 { '?' } else { '&' });
        uri.push_str(&format!("{name}={}", encode(value)));
    }
    uri
}

#[tokio::test]
async fn every_expansion_of_the_template_is_honoured() {
    let server = server("resource");
    let response = create(&server, 30).await;
    let template = resource_template(&server).uri_template;
    let id = response.id.to_string();
    for (query, expected) in [
        (vec![], (0, 30, 30, Some(0))),
        (vec![("limit", "5")], (0, 5, 5, Some(0))),
        (vec![("offset", "10"), ("limit", "5")], (10, 5, 5, Some(10))),
        (
            vec![("offset", "0"), ("limit", "2"), ("sort", "id:desc")],
            (0, 2, 2, Some(29)),
        ),
    ] {
        let uri = expand(&template, &id, &query);
        let page = read_page(&server, &uri).await;
        let first = page.data.first().and_then(|row| row["id"].as_u64());
        assert_eq!(
            (
                page.offset,
                page.limit.min(page.total_count),
                page.returned_count,
                first
            ),
            expected,
            "{uri}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn caching_hints_only_for_a_client_of_2026_07_28() {
    let server = server("resource");
    let response = create(&server, 5).await;
    let caller = Caller::anonymous();
    let plain = read_resource(&server, &caller, &response.uri, &ReadOptions::default())
        .await
        .expect("readable");
    assert_eq!((plain.ttl_ms, plain.cache_scope), (None, None));
    let latest = ReadOptions::default().version(ProtocolVersion::V2026_07_28);
    let hinted = read_resource(&server, &caller, &response.uri, &latest)
        .await
        .expect("readable");
    assert!(
        hinted.ttl_ms.is_some_and(|ttl| ttl > 50_000 && ttl <= 60_000),
        "fresh until it expires: {:?}",
        hinted.ttl_ms
    );
    assert_eq!(hinted.cache_scope, Some(rmcp::model::CacheScope::Public));
    assert_eq!(page_of(&hinted), page_of(&plain), "the same page");
}

#[tokio::test]
async fn reads_the_first_page_with_the_rest_fields() {
    let server = server("resource");
    let response = create(&server, 250).await;
    let result = read_resource(
        &server,
        &Caller::anonymous(),
        &response.uri,
        &ReadOptions::default(),
    )
    .await
    .expect("readable");
    let (uri, page) = page_of(&result);
    assert_eq!(uri, response.uri);
    assert_eq!((page.offset, page.limit, page.returned_count), (0, 100, 100));
    assert_eq!(
        (page.total_count, page.has_next, page.has_previous),
        (250, true, false)
    );
    assert_eq!(page.next_offset, Some(100));
    let text = serde_json::to_value(&result).unwrap_or_default();
    let fields: Value =
        serde_json::from_str(text["contents"][0]["text"].as_str().unwrap_or_default()).unwrap_or_default();
    for field in [
        "data",
        "total_count",
        "returned_count",
        "offset",
        "limit",
        "has_next",
        "has_previous",
        "next_offset",
    ] {
        assert!(fields.get(field).is_some(), "missing {field}");
    }
}

#[tokio::test]
async fn pages_and_sort_are_addressed_in_the_uri() {
    let server = server("resource");
    let response = create(&server, 250).await;
    let page = read_page(&server, &format!("{}?offset=200&limit=100", response.uri)).await;
    assert_eq!(
        (page.offset, page.returned_count, page.has_next),
        (200, 50, false)
    );
    assert_eq!(page.next_offset, None);
    assert_eq!(page.data[0]["id"], 200);

    let page = read_page(&server, &format!("{}?limit=2&sort=id%3Adesc", response.uri)).await;
    assert_eq!(
        page.data.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(),
        [json!(249), json!(248)]
    );
}

#[tokio::test]
async fn unknown_malformed_and_foreign_uris_are_not_found() {
    let server = server("resource");
    let response = create(&server, 3).await;
    for uri in [
        format!("resource://{}", ResourceId::new()),
        "resource://not-a-ulid".to_owned(),
        "resource:/x".to_owned(),
        format!("other://{}", response.id),
        String::new(),
    ] {
        let error = read_resource(&server, &Caller::anonymous(), &uri, &ReadOptions::default())
            .await
            .expect_err(&uri);
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND, "{uri}");
    }
}

#[tokio::test]
async fn expired_resources_are_not_found() {
    tokio::time::pause();
    let server = server("resource");
    let response = create(&server, 3).await;
    assert!(
        read_resource(
            &server,
            &Caller::anonymous(),
            &response.uri,
            &ReadOptions::default()
        )
        .await
        .is_ok()
    );
    tokio::time::advance(Duration::from_secs(61)).await;
    let error = read_resource(
        &server,
        &Caller::anonymous(),
        &response.uri,
        &ReadOptions::default(),
    )
    .await
    .expect_err("expired");
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn bad_page_parameters_are_invalid_params_naming_the_field() {
    let server = server("resource");
    let response = create(&server, 3).await;
    for (query, field) in [
        ("offset=-1", "offset"),
        ("limit=0", "limit"),
        ("limit=100000", "limit"),
        ("sort=nope", "sort.field"),
        ("sort=id:sideways", "sort.order"),
        ("page=2", "page"),
    ] {
        let error = read_resource(
            &server,
            &Caller::anonymous(),
            &format!("{}?{query}", response.uri),
            &ReadOptions::default(),
        )
        .await
        .expect_err(query);
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{query}");
        assert_eq!(
            error.data.as_ref().map(|d| d["field"].clone()),
            Some(json!(field)),
            "{query}"
        );
    }
}

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("a%20b+c%3a"), "a b c:");
    assert_eq!(percent_decode("100%"), "100%");
    assert_eq!(percent_decode("%zz"), "%zz");
}

/// Row `i` with a value of 0 to 4,999 bytes, varying from row to row.
fn varied_row(i: u64) -> dual_core::Row {
    let width = usize::try_from((i * 7919) % 5_000).unwrap_or(0);
    json!({"id": i, "v": "x".repeat(width)})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// Row `i`, 50 KB wide for row 3.
fn one_huge_row(i: u64) -> dual_core::Row {
    let width = if i == 3 { 50_000 } else { 10 };
    json!({"id": i, "v": "x".repeat(width)})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn capped_server(max_read_bytes: usize, numbers: Numbers, snapshots: bool) -> DualResponseServer {
    let builder = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .clock(Clock::tokio())
        .without_sweeper()
        .max_read_bytes(max_read_bytes)
        .executor("numbers", numbers);
    let builder = if snapshots {
        builder
    } else {
        builder.without_snapshots()
    };
    builder.build().expect("valid configuration")
}

#[tokio::test]
async fn read_text_is_cut_to_whole_rows_and_next_offset_reaches_every_row() {
    const CAP: usize = 20_000;
    for snapshots in [true, false] {
        let server = capped_server(CAP, Numbers::new().row(varied_row), snapshots);
        let response = create(&server, 300).await;
        let mut seen = Vec::new();
        let mut offset = Some(0);
        let mut reads = 0;
        while let Some(at) = offset {
            let uri = format!("{}?offset={at}&limit=1000", response.uri);
            let result = read_resource(&server, &Caller::anonymous(), &uri, &ReadOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
            let text = match result.contents.as_slice() {
                [ResourceContents::TextResourceContents { text, .. }] => text.clone(),
                other => panic!("{other:?}"),
            };
            assert!(text.len() <= CAP, "{} bytes > {CAP}", text.len());
            let page: PageResponse = serde_json::from_str(&text).expect("a page");
            assert_eq!(page.returned_count, page.data.len() as u64);
            assert!(page.returned_count < 1000, "the cap, not the limit, cut the page");
            seen.extend(page.data.iter().filter_map(|row| row["id"].as_u64()));
            assert_eq!(page.has_next, page.next_offset.is_some());
            offset = page.next_offset;
            reads += 1;
        }
        assert_eq!(seen, (0..300).collect::<Vec<_>>(), "snapshots {snapshots}");
        assert!(reads > 1);
    }
}

#[tokio::test]
async fn a_row_alone_over_the_read_cap_is_an_error_naming_the_next_offset() {
    for snapshots in [true, false] {
        let server = capped_server(4_096, Numbers::new().row(one_huge_row), snapshots);
        let response = create(&server, 10).await;
        let page = read_page(&server, &format!("{}?limit=10", response.uri)).await;
        assert_eq!(
            (page.returned_count, page.next_offset),
            (3, Some(3)),
            "cut before the huge row"
        );
        let error = read_resource(
            &server,
            &Caller::anonymous(),
            &format!("{}?offset=3", response.uri),
            &ReadOptions::default(),
        )
        .await
        .expect_err("row 3 alone passes the cap");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("offset 4"), "{}", error.message);
        assert_eq!(
            error.data.as_ref().map(|d| d["next_offset"].clone()),
            Some(json!(4))
        );
        let after = read_page(&server, &format!("{}?offset=4", response.uri)).await;
        assert_eq!((after.offset, after.returned_count), (4, 6));
    }
}

#[tokio::test]
async fn errors_do_not_echo_a_huge_uri() {
    let server = server("resource");
    let response = create(&server, 5).await;
    let long = format!("{}?{}", response.uri, "&".repeat(1 << 20));
    let error = read_resource(&server, &Caller::anonymous(), &long, &ReadOptions::default())
        .await
        .expect_err("too long");
    let bytes = serde_json::to_vec(&error).unwrap_or_default().len();
    assert!(bytes < 8 * 1024, "{bytes} bytes of error");
    let unknown = format!("{}?{}=1", response.uri, "k".repeat(3_000));
    let error = read_resource(&server, &Caller::anonymous(), &unknown, &ReadOptions::default())
        .await
        .expect_err("unknown parameter");
    assert!(serde_json::to_vec(&error).unwrap_or_default().len() < 8 * 1024);
}

/// The JSON text of a one-content read.
fn text_of(result: &ReadResourceResult) -> Value {
    match result.contents.as_slice() {
        [ResourceContents::TextResourceContents { text, .. }] => serde_json::from_str(text).expect("JSON"),
        other => panic!("expected one text content, got {other:?}"),
    }
}

#[tokio::test]
async fn the_profile_uri_reads_the_column_profile_owner_checked() {
    let server = server("resource");
    let response = create(&server, 30).await;
    let uri = format!("{}/profile", response.uri);
    let read = read_resource(&server, &Caller::anonymous(), &uri, &ReadOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    let profile = text_of(&read);
    assert_eq!(
        (profile["rows"].as_u64(), profile["complete"].as_bool()),
        (Some(30), Some(true))
    );
    assert_eq!(profile["columns"][0]["name"], "id");
    assert_eq!(profile["columns"][0]["max"], 29);

    let owned = server
        .create_response(CreateResponse::new("numbers", json!({"n": 3})).owner("alice"))
        .await
        .expect("created");
    let uri = format!("{}/profile", owned.uri);
    let stranger = read_resource(&server, &Caller::owner("mallory"), &uri, &ReadOptions::default()).await;
    assert_eq!(
        stranger.map(|_| ()).map_err(|e| e.code),
        Err(ErrorCode::RESOURCE_NOT_FOUND)
    );
    let queried = read_resource(
        &server,
        &Caller::anonymous(),
        &format!("{}/profile?offset=1", response.uri),
        &ReadOptions::default(),
    )
    .await;
    assert_eq!(
        queried.map(|_| ()).map_err(|e| e.code),
        Err(ErrorCode::INVALID_PARAMS)
    );
}

#[tokio::test]
async fn a_live_result_s_profile_says_there_is_none() {
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .without_sweeper()
        .without_snapshots()
        .executor("numbers", Numbers::new())
        .build()
        .expect("valid configuration");
    let response = create(&server, 5).await;
    let uri = format!("{}/profile", response.uri);
    let read = read_resource(&server, &Caller::anonymous(), &uri, &ReadOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    let status = text_of(&read);
    assert_eq!(status["status"], "no_profile");
    assert!(
        status["message"].as_str().is_some_and(|m| m.contains("live")),
        "{status}"
    );
}
