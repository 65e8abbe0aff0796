//! `POST /{id}/query`: SQL over a stored result, answered by a new result (docs/DESIGN.md §4,
//! *Refining a result*, and §5): 201 with the refined result and its `Location`, which reads like any
//! result; exactly `{"sql"}` as the body; the parent authorized like a page (another owner's is the
//! unknown id's 404, a pending one 409 `not_ready`), never by a link; 409 `not_refinable` without
//! stored rows or an engine; only `POST`.

mod common;
mod handle;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::refine::{FAILED, PassThrough, REFUSED};
use dual_core::ResourceId;
use dual_core::status::ResourceStatus;
use dual_http::{Authorize, Cors, DualHttp, ResponseBody};
use dual_server::{Caller, CreateResponse, DualResponseServer};
use handle::{body_json, content_type, get, send};
use http::{HeaderName, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use serde_json::{Value, json};

const BASE: &str = "http://127.0.0.1/resources";
const SELECT: &str = r#"{"sql": "SELECT * FROM result"}"#;

/// `X-Tenant: name` is the caller.
#[derive(Debug, Clone)]
struct Tenant;

impl Authorize for Tenant {
    fn caller(&self, parts: &http::request::Parts) -> Caller {
        Caller::from_owner(parts.headers.get("x-tenant").and_then(|v| v.to_str().ok()))
    }
}

fn tenant(name: &'static str) -> (HeaderName, &'static str) {
    (HeaderName::from_static("x-tenant"), name)
}

/// A server with snapshots and the test's refine engine, waiting for the end of each query.
fn server() -> DualResponseServer {
    common::builder_with(Arc::new(common::flaky_store()))
        .refine_engine(PassThrough)
        .build()
        .expect("valid configuration")
}

/// The handler of `server` under `/resources` (so a `Location` path is a request path), asking
/// [`Tenant`].
fn handler(server: &DualResponseServer) -> DualHttp {
    DualHttp::builder(server.clone())
        .prefix("/resources")
        .authorize(Tenant)
        .build()
}

/// `POST uri` with `body` (declared JSON when not empty) and `headers`.
async fn post(
    handler: &DualHttp,
    uri: &str,
    body: &'static str,
    headers: &[(HeaderName, &str)],
) -> Response<ResponseBody> {
    let mut request = Request::post(uri);
    if !body.is_empty() {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    handler
        .handle(
            request
                .body(Full::new(Bytes::from_static(body.as_bytes())))
                .expect("request"),
        )
        .await
}

async fn created(server: &DualResponseServer, owner: Option<&str>, n: u64) -> ResourceId {
    let mut create = CreateResponse::new("numbers", json!({"n": n}));
    if let Some(owner) = owner {
        create = create.owner(owner);
    }
    server.create_response(create).await.expect("created").id
}

fn header_of(response: &Response<ResponseBody>, name: header::HeaderName) -> Option<&str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The path of a `Location` below [`BASE`]'s host.
fn path_of(location: &str) -> String {
    location
        .strip_prefix("http://127.0.0.1")
        .unwrap_or_else(|| panic!("{location} is not below {BASE}"))
        .to_owned()
}

/// Status and error code of an error response.
async fn error_of(response: Response<ResponseBody>) -> (StatusCode, Value) {
    let status = response.status();
    (status, body_json(response).await["error"].clone())
}

#[tokio::test]
async fn a_refinement_is_201_and_its_location_reads_the_new_result() {
    let server = server();
    let parent = created(&server, None, 30).await;
    let handler = handler(&server);
    let response = post(&handler, &format!("/resources/{parent}/query"), SELECT, &[]).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(content_type(&response), "application/json");
    assert_eq!(header_of(&response, header::CACHE_CONTROL), Some("no-store"));
    let location = header_of(&response, header::LOCATION)
        .expect("Location")
        .to_owned();
    let body = body_json(response).await;
    assert_eq!(body["resource"]["url"], json!(location), "{body}");
    assert_eq!(body["resource"]["mimeType"], "application/json");
    assert!(
        body["resource"]["name"]
            .as_str()
            .is_some_and(|name| name.ends_with(" (refined)")),
        "{body}"
    );
    assert_eq!(body["metadata"]["total_count"], 30, "{body}");
    assert!(body["results"].as_array().is_some_and(|rows| !rows.is_empty()));
    assert_eq!(body["metadata"].get("status"), None, "ready: no status");
    let refined: ResourceId = location
        .rsplit('/')
        .next()
        .and_then(|id| id.parse().ok())
        .expect("the new result's id ends the Location");
    assert_ne!(refined, parent);
    assert_eq!(body["resource"]["uri"], json!(format!("resource://{refined}")));

    // The Location is a result like any other: its metadata, pages and export.
    let path = path_of(&location);
    let metadata = get(&handler, &path, &[]).await;
    assert_eq!(metadata.status(), StatusCode::OK);
    let metadata = body_json(metadata).await;
    assert_eq!(
        (
            metadata["id"].clone(),
            metadata["status"].clone(),
            metadata["total_count"].clone(),
            metadata["consistency"].clone(),
        ),
        (
            json!(refined.to_string()),
            json!("ready"),
            json!(30),
            json!("snapshot")
        ),
        "{metadata}"
    );
    assert_eq!(
        metadata["metadata"]["refines"],
        json!(format!("resource://{parent}"))
    );
    let export = get(&handler, &format!("{path}/data"), &[]).await;
    assert_eq!(export.status(), StatusCode::OK);
    let rows = body_json(export).await;
    let ids: Vec<u64> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["id"].as_u64())
        .collect();
    assert_eq!(ids, (0..30).collect::<Vec<_>>(), "the parent's rows, in order");
    let page = post(&handler, &path, r#"{"offset": 25}"#, &[]).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(body_json(page).await["returned_count"], 5);

    // A refinement refines too.
    let again = post(&handler, &format!("{path}/query"), SELECT, &[]).await;
    assert_eq!(again.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_body_other_than_exactly_sql_is_400_and_so_is_sql_the_engine_refuses() {
    let server = server();
    let parent = created(&server, None, 5).await;
    let handler = handler(&server);
    let uri = format!("/resources/{parent}/query");
    for (body, mentions) in [
        ("", "sql"),
        ("SELECT * FROM result", "sql"),
        (r#"{"sql": "SELECT * FROM result", "y": 1}"#, "`y`"),
        (r#"{"sql": 1}"#, "string"),
        (r#"{"sql": null}"#, "string"),
        (r#"{}"#, "`sql`"),
        (r#"["SELECT 1"]"#, "sql"),
    ] {
        let response = post(&handler, &uri, body, &[]).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body:?}");
        let error = body_json(response).await;
        assert_eq!(
            (error["error"].clone(), error["retryable"].clone()),
            (json!("invalid_request"), json!(false)),
            "{body:?}"
        );
        assert!(
            error["message"].as_str().is_some_and(|m| m.contains(mentions)),
            "{body:?}: {error}"
        );
    }
    // An unknown query parameter, even with a good body.
    let response = post(&handler, &format!("{uri}?limit=5"), SELECT, &[]).await;
    assert_eq!(
        error_of(response).await,
        (StatusCode::BAD_REQUEST, json!("invalid_request"))
    );

    // The engine's refusal, and its failure as the SQL runs: the engine's message and the columns.
    for (sql, message) in [
        (r#"{"sql": "DELETE FROM result"}"#, REFUSED),
        (r#"{"sql": "SELECT FAIL FROM result"}"#, FAILED),
    ] {
        let response = post(&handler, &uri, sql, &[]).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{sql}");
        let error = body_json(response).await;
        assert_eq!(error["error"], "invalid_request");
        let text = error["message"].as_str().unwrap_or_default();
        assert!(text.starts_with(message), "{error}");
        assert!(
            text.contains("The table `result` has the columns: id (integer), name (string)"),
            "{error}"
        );
    }
    // The parent reads as before.
    let page = post(&handler, &format!("/resources/{parent}"), "", &[]).await;
    assert_eq!(page.status(), StatusCode::OK);
}

#[tokio::test]
async fn another_owner_s_result_is_the_unknown_id_s_404_and_the_refinement_is_the_owner_s() {
    let server = server();
    let parent = created(&server, Some("alice"), 5).await;
    let handler = handler(&server);
    let unknown = post(
        &handler,
        &format!("/resources/{}/query", ResourceId::new()),
        SELECT,
        &[tenant("alice")],
    )
    .await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let unknown = body_json(unknown).await;
    let uri = format!("/resources/{parent}/query");
    for headers in [vec![tenant("mallory")], vec![]] {
        let response = post(&handler, &uri, SELECT, &headers).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{headers:?}");
        assert_eq!(
            body_json(response).await,
            unknown,
            "exactly the unknown id's answer"
        );
    }
    let response = post(&handler, &uri, SELECT, &[tenant("alice")]).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let refined = path_of(header_of(&response, header::LOCATION).expect("Location"));
    // The refined result is the parent's owner's.
    assert_eq!(
        get(&handler, &refined, &[tenant("alice")]).await.status(),
        StatusCode::OK
    );
    for headers in [vec![tenant("mallory")], vec![]] {
        let response = get(&handler, &refined, &headers).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{headers:?}");
    }
}

#[tokio::test]
async fn a_link_never_authorizes_a_refinement() {
    let server = server();
    let parent = created(&server, Some("alice"), 5).await;
    let handler = handler(&server);
    let link = server
        .view_link(parent, &Caller::owner("alice"))
        .await
        .expect("a read link");
    let link = &link.url[link.url.find("expires=").expect("expires")..];
    // The link reads the result …
    let read = get(&handler, &format!("/resources/{parent}/profile?{link}"), &[]).await;
    assert_eq!(read.status(), StatusCode::OK);
    // … but does not refine it: without the owner's own authorization it is the unknown id's 404.
    let unknown = body_json(
        post(
            &handler,
            &format!("/resources/{}/query", ResourceId::new()),
            SELECT,
            &[],
        )
        .await,
    )
    .await;
    let uri = format!("/resources/{parent}/query?{link}");
    for headers in [vec![], vec![tenant("mallory")]] {
        let response = post(&handler, &uri, SELECT, &headers).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{headers:?}");
        assert_eq!(
            header_of(&response, header::REFERRER_POLICY),
            Some("no-referrer"),
            "the URL held a link"
        );
        assert_eq!(body_json(response).await, unknown, "{headers:?}");
    }
    // The link's parameters are ignored, as on `PUT` and `DELETE`: the hook decides.
    let response = post(&handler, &uri, SELECT, &[tenant("alice")]).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    // A link that does not verify changes nothing either.
    let response = post(
        &handler,
        &format!("/resources/{parent}/query?expires=1&token=AAAA"),
        SELECT,
        &[tenant("alice")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn pending_live_failed_expired_and_engineless_parents_answer_as_they_must() {
    let server = server();
    let parent = created(&server, None, 5).await;
    let pending = common::copy_with_status(&server, parent, ResourceStatus::Pending).await;
    let failed = common::copy_with_status(&server, parent, ResourceStatus::Failed).await;
    let expired = common::expired_copy(&server, parent).await;
    let main = handler(&server);
    let refine = |handler: DualHttp, id: ResourceId| async move {
        post(&handler, &format!("/resources/{id}/query"), SELECT, &[]).await
    };

    let response = refine(main.clone(), pending).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(header_of(&response, header::RETRY_AFTER).is_some(), "Retry-After");
    let error = body_json(response).await;
    assert_eq!(
        (error["error"].clone(), error["retryable"].clone()),
        (json!("not_ready"), json!(true))
    );
    assert_eq!(
        error_of(refine(main.clone(), failed).await).await,
        (StatusCode::INTERNAL_SERVER_ERROR, json!("query_failed"))
    );
    assert_eq!(
        error_of(refine(main.clone(), expired).await).await,
        (StatusCode::NOT_FOUND, json!("expired"))
    );

    // A live result: no stored rows.
    let live = common::live_server_with(Arc::new(common::flaky_store()));
    let live_id = created(&live, None, 5).await;
    let live_engine = common::builder_with(Arc::new(common::flaky_store()))
        .without_snapshots()
        .refine_engine(PassThrough)
        .build()
        .expect("valid configuration");
    let live_parent = created(&live_engine, None, 5).await;
    let response = refine(handler(&live_engine), live_parent).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert_eq!(header_of(&response, header::RETRY_AFTER), None);
    let error = body_json(response).await;
    assert_eq!(
        (error["error"].clone(), error["retryable"].clone()),
        (json!("not_refinable"), json!(false))
    );
    assert!(
        error["message"].as_str().is_some_and(|m| m.contains("live")),
        "{error}"
    );

    // A server without an engine.
    let response = refine(handler(&live), live_id).await;
    let error = body_json(response).await;
    assert_eq!(error["error"], "not_refinable");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("no refine engine")),
        "{error}"
    );
}

#[tokio::test]
async fn a_refinement_still_running_is_201_pending() {
    let server = common::builder_with(Arc::new(common::flaky_store()))
        .pending_after(Duration::from_millis(50))
        .refine_engine(PassThrough)
        .build()
        .expect("valid configuration");
    let parent = created(&server, None, 5).await;
    let handler = handler(&server);
    let response = post(
        &handler,
        &format!("/resources/{parent}/query"),
        r#"{"sql": "SELECT * FROM result -- FOREVER"}"#,
        &[],
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = path_of(header_of(&response, header::LOCATION).expect("Location"));
    let body = body_json(response).await;
    assert_eq!(body["metadata"]["status"], "pending", "{body}");
    let metadata = body_json(get(&handler, &location, &[]).await).await;
    assert_eq!(metadata["status"], "pending", "{metadata}");
    let page = post(&handler, &location, "", &[]).await;
    assert_eq!(error_of(page).await, (StatusCode::CONFLICT, json!("not_ready")));
    let deleted = send(&handler, Request::delete(&location)).await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn only_post_with_options_when_cors_is_on() {
    let server = server();
    let parent = created(&server, None, 5).await;
    let uri = format!("/resources/{parent}/query");
    for (handler, allow) in [
        (handler(&server), "POST"),
        (
            DualHttp::builder(server.clone())
                .prefix("/resources")
                .cors(Cors::any())
                .build(),
            "POST, OPTIONS",
        ),
    ] {
        for method in [
            Method::GET,
            Method::HEAD,
            Method::PUT,
            Method::DELETE,
            Method::PATCH,
        ] {
            let response = send(&handler, Request::builder().method(method.clone()).uri(&uri)).await;
            assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
            assert_eq!(header_of(&response, header::ALLOW), Some(allow), "{method}");
            if method != Method::HEAD {
                assert_eq!(body_json(response).await["error"], "method_not_allowed");
            }
        }
    }
    let cors = DualHttp::builder(server.clone())
        .prefix("/resources")
        .cors(Cors::any())
        .build();
    let options = send(&cors, Request::builder().method(Method::OPTIONS).uri(&uri)).await;
    assert_eq!(options.status(), StatusCode::NO_CONTENT);
    assert_eq!(header_of(&options, header::ALLOW), Some("POST, OPTIONS"));
    // Without CORS, `OPTIONS` is a method like the others.
    let options = send(
        &handler(&server),
        Request::builder().method(Method::OPTIONS).uri(&uri),
    )
    .await;
    assert_eq!(options.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_refinement_past_the_time_limit_says_so_and_a_full_store_is_retryable() {
    // The time limit: the caller's SQL ran too long, which is theirs to change (400, naming it).
    let server = common::builder_with(Arc::new(common::flaky_store()))
        .query_time_limit(Duration::from_millis(200))
        .refine_engine(PassThrough)
        .build()
        .expect("valid configuration");
    let parent = created(&server, None, 5).await;
    let http = handler(&server);
    let response = post(
        &http,
        &format!("/resources/{parent}/query"),
        r#"{"sql": "SELECT * FROM result -- FOREVER"}"#,
        &[],
    )
    .await;
    let status = response.status();
    let body = body_json(response).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid_request", "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("time limit") && message.contains("0.2"),
        "{message}"
    );

    // A store at its maximum of results: retry later (503, `Retry-After`), as for any new result.
    let server = common::builder_with(Arc::new(common::flaky_store()))
        .max_resources(1)
        .refine_engine(PassThrough)
        .build()
        .expect("valid configuration");
    let parent = created(&server, None, 5).await;
    let http = handler(&server);
    let response = post(&http, &format!("/resources/{parent}/query"), SELECT, &[]).await;
    assert_eq!(header_of(&response, header::RETRY_AFTER), Some("1"));
    assert_eq!(
        error_of(response).await,
        (StatusCode::SERVICE_UNAVAILABLE, json!("overloaded"))
    );
}
