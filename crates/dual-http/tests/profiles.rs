//! `GET /{id}/profile`: the column profile of a snapshot (docs/DESIGN.md §4, §5), owner-checked and
//! counted like a page, readable with a read link; `no_profile` for a live result, the page's
//! answers for pending, failed, expired and unknown ones; only `GET` and `HEAD`.

mod common;
mod handle;

use std::sync::Arc;

use dual_core::status::ResourceStatus;
use dual_http::{Authorize, DualHttp};
use dual_server::{Caller, CreateResponse};
use handle::{body_json, content_type, get, send};
use http::{Method, Request, StatusCode};
use serde_json::json;

/// `X-Tenant: name` is the caller.
#[derive(Debug, Clone)]
struct Tenant;

impl Authorize for Tenant {
    fn caller(&self, parts: &http::request::Parts) -> Caller {
        Caller::from_owner(parts.headers.get("x-tenant").and_then(|v| v.to_str().ok()))
    }
}

#[tokio::test]
async fn a_snapshot_s_profile_is_its_rows_profiled_as_json() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 40})).await;
    let handler = DualHttp::new(server);
    let response = get(&handler, &format!("/{id}/profile"), &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(content_type(&response), "application/json");
    assert_eq!(
        response
            .headers()
            .get(http::header::CACHE_CONTROL)
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    let profile = body_json(response).await;
    assert_eq!(
        (profile["rows"].as_u64(), profile["complete"].as_bool()),
        (Some(40), Some(true))
    );
    let names: Vec<&str> = profile["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["id", "name", "score", "ratio", "active", "tags", "note"]);
    let note = &profile["columns"][6];
    assert_eq!(
        (
            note["nulls"].as_u64(),
            note["count"].as_u64(),
            note["distinct"].as_u64()
        ),
        (Some(20), Some(20), Some(1))
    );
    let tags = &profile["columns"][5];
    assert_eq!(tags["type"], "json");
    assert_eq!(profile["columns"][0]["max"], 39);

    let head = send(
        &handler,
        Request::builder()
            .method(Method::HEAD)
            .uri(format!("/{id}/profile")),
    )
    .await;
    assert_eq!(head.status(), StatusCode::OK);
    assert!(handle::bytes(head).await.is_empty());
    for method in [Method::POST, Method::PUT, Method::DELETE] {
        let refused = send(
            &handler,
            Request::builder()
                .method(method.clone())
                .uri(format!("/{id}/profile")),
        )
        .await;
        assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(
            refused
                .headers()
                .get(http::header::ALLOW)
                .and_then(|v| v.to_str().ok()),
            Some("GET, HEAD")
        );
    }
    let with_query = get(&handler, &format!("/{id}/profile?offset=3"), &[]).await;
    assert_eq!(with_query.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn another_owner_gets_the_unknown_id_s_404_and_a_read_link_reads_it() {
    let server = common::server();
    let id = server
        .create_response(CreateResponse::new("numbers", json!({"n": 5})).owner("alice"))
        .await
        .expect("created")
        .id;
    let handler = DualHttp::builder(server.clone()).authorize(Tenant).build();
    let alice = get(
        &handler,
        &format!("/{id}/profile"),
        &[(http::header::HeaderName::from_static("x-tenant"), "alice")],
    )
    .await;
    assert_eq!(alice.status(), StatusCode::OK);
    let unknown = body_json(
        get(
            &handler,
            &format!("/{}/profile", dual_core::ResourceId::new()),
            &[],
        )
        .await,
    )
    .await;
    for tenant in ["mallory", ""] {
        let response = get(
            &handler,
            &format!("/{id}/profile"),
            &[(http::header::HeaderName::from_static("x-tenant"), tenant)],
        )
        .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{tenant:?}");
        assert_eq!(
            body_json(response).await,
            unknown,
            "exactly the unknown id's answer"
        );
    }
    let link = server
        .view_link(id, &Caller::owner("alice"))
        .await
        .expect("minted");
    let query = &link.url[link.url.find("expires=").expect("expires")..];
    let linked = get(&handler, &format!("/{id}/profile?{query}"), &[]).await;
    assert_eq!(linked.status(), StatusCode::OK);
    assert_eq!(body_json(linked).await["rows"], 5);
}

#[tokio::test]
async fn live_pending_failed_and_expired_results_answer_as_they_must() {
    let live = common::live_server();
    let id = common::create(&live, json!({"n": 5})).await;
    let response = get(&DualHttp::new(live), &format!("/{id}/profile"), &[]).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body = body_json(response).await;
    assert_eq!(body["error"], "no_profile");
    assert!(
        body["message"].as_str().is_some_and(|m| m.contains("live")),
        "{body}"
    );

    let server = common::server();
    let id = common::create(&server, json!({"n": 5})).await;
    let pending = common::copy_with_status(&server, id, ResourceStatus::Pending).await;
    let failed = common::copy_with_status(&server, id, ResourceStatus::Failed).await;
    let expired = common::expired_copy(&server, id).await;
    let handler = DualHttp::new(server);
    let answer = |id| {
        let handler = handler.clone();
        async move {
            let response = get(&handler, &format!("/{id}/profile"), &[]).await;
            (response.status(), body_json(response).await["error"].clone())
        }
    };
    assert_eq!(answer(pending).await, (StatusCode::CONFLICT, json!("not_ready")));
    assert_eq!(
        answer(failed).await,
        (StatusCode::INTERNAL_SERVER_ERROR, json!("query_failed"))
    );
    assert_eq!(answer(expired).await, (StatusCode::NOT_FOUND, json!("expired")));
}

#[tokio::test]
async fn a_store_outage_is_a_retryable_503_without_internals() {
    let store = Arc::new(common::flaky_store());
    let server = common::server_with(Arc::clone(&store));
    let id = common::create(&server, json!({"n": 5})).await;
    let handler = DualHttp::new(server);
    store.set_broken(true);
    let response = get(&handler, &format!("/{id}/profile"), &[]).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = body_json(response).await;
    assert_eq!(
        (body["error"].clone(), body["retryable"].clone()),
        (json!("storage_error"), json!(true))
    );
    assert!(!body.to_string().contains("10.0.0.7"), "{body}");
}
