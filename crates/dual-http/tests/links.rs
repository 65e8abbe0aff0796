//! Capability links on the REST API: `expires` and `token` stand in for the authorization hook,
//! verified before any store access; every bad link is the unknown id's 404, byte for byte; `format=`
//! on `/data`; the `/{id}/view` page.

mod common;
mod handle;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use dual_core::{ResourceId, Sort, SortOrder, range::RowRange};
use dual_http::{Authorize, DualHttp, ResponseBody};
use dual_server::{Caller, CreateResponse, DualResponseServer, LinkFormat, LinkKey};
use dual_store::Clock;
use dual_testkit::logs::Logs;
use handle::{bytes, content_type, send};
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};

const BASE: &str = "http://127.0.0.1/resources";

/// The log test runs alone: a callsite that another test's thread reaches at the same moment,
/// without a subscriber, can keep a cached "never" interest (tracing's callsite registration races
/// with a new thread-local subscriber), and the event the log test looks for would be skipped.
static LOG_CAPTURE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// `X-Tenant: name` is the caller; counts how often it was asked.
#[derive(Debug, Default, Clone)]
struct Tenant(Arc<AtomicUsize>);

impl Authorize for Tenant {
    fn caller(&self, parts: &http::request::Parts) -> Caller {
        self.0.fetch_add(1, Ordering::SeqCst);
        Caller::from_owner(parts.headers.get("x-tenant").and_then(|v| v.to_str().ok()))
    }
}

struct Fixture {
    server: DualResponseServer,
    handler: DualHttp,
    hook: Tenant,
    store: Arc<common::FlakyStore>,
    /// 25 rows owned by `alice`.
    id: ResourceId,
}

async fn fixture() -> Fixture {
    let store = Arc::new(common::flaky_store());
    let server = DualResponseServer::builder()
        .base_url(BASE)
        .shared_store(Arc::clone(&store) as Arc<dyn dual_store::ResourceStore>)
        .executor("numbers", common::numbers())
        .link_key(LinkKey::from_bytes(&[42; 32]).expect("key"))
        .link_lifetime(Duration::from_secs(60))
        .clock(Clock::tokio())
        .without_sweeper()
        .build()
        .expect("server");
    let hook = Tenant::default();
    let handler = DualHttp::builder(server.clone())
        .prefix("/resources")
        .authorize(hook.clone())
        .build();
    let id = owned(&server, "alice", 25).await;
    Fixture {
        server,
        handler,
        hook,
        store,
        id,
    }
}

async fn owned(server: &DualResponseServer, owner: &str, n: u64) -> ResourceId {
    let create = CreateResponse::new("numbers", json!({"n": n})).owner(owner);
    server.create_response(create).await.expect("created").id
}

fn alice() -> Caller {
    Caller::owner("alice")
}

async fn request(handler: &DualHttp, method: Method, url: &str) -> Response<ResponseBody> {
    send(handler, Request::builder().method(method).uri(url)).await
}

async fn get(handler: &DualHttp, url: &str) -> Response<ResponseBody> {
    request(handler, Method::GET, url).await
}

/// The `expires=…&token=…` of a link.
fn link_query(url: &str) -> String {
    let start = url.find("expires=").expect("expires");
    url[start..].to_owned()
}

/// Status, the headers that matter for a 404, and the body.
async fn answer(response: Response<ResponseBody>) -> (StatusCode, Option<String>, Bytes) {
    let status = response.status();
    let length = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, length, bytes(response).await)
}

fn referrer_policy(headers: &HeaderMap) -> &str {
    headers
        .get(header::REFERRER_POLICY)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_data_link_downloads_exactly_its_export_without_a_header_or_the_hook() {
    let _shared = LOG_CAPTURE.read().await;
    let f = fixture().await;
    let link = f
        .server
        .download_link(f.id, &alice(), LinkFormat::Csv, RowRange::ALL, None)
        .await
        .expect("minted");
    let asked = f.hook.0.load(Ordering::SeqCst);
    let response = get(&f.handler, &link.url).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        f.hook.0.load(Ordering::SeqCst),
        asked,
        "the hook is not consulted"
    );
    assert!(content_type(&response).starts_with("text/csv"));
    assert_eq!(
        response.headers()[header::CONTENT_DISPOSITION],
        format!("attachment; filename=\"{}.csv\"", f.id).as_str()
    );
    assert_eq!(referrer_policy(response.headers()), "no-referrer");
    let csv = bytes(response).await;
    let lines = csv.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    assert_eq!(lines, 25 + 1, "every row and the header");

    // HEAD with the same token: the headers alone.
    let head = request(&f.handler, Method::HEAD, &link.url).await;
    assert_eq!(head.status(), StatusCode::OK);
    assert!(content_type(&head).starts_with("text/csv"));
    assert!(head.headers().contains_key(header::CONTENT_DISPOSITION));
    assert!(bytes(head).await.is_empty());

    // A sorted, ranged NDJSON link.
    let sort = Sort::new("score", SortOrder::Desc);
    let link = f
        .server
        .download_link(
            f.id,
            &alice(),
            LinkFormat::Ndjson,
            RowRange::new(5, Some(7)),
            Some(sort),
        )
        .await
        .expect("minted");
    let response = get(&f.handler, &link.url).await;
    assert_eq!(response.status(), StatusCode::OK, "{}", link.url);
    let body = bytes(response).await;
    let rows: Vec<Value> = body
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON row"))
        .collect();
    assert_eq!(rows.len(), 7);
    assert!(
        rows.windows(2)
            .all(|w| w[0]["score"].as_u64() >= w[1]["score"].as_u64())
    );
}

#[tokio::test(start_paused = true)]
async fn every_bad_link_is_the_unknown_ids_404_byte_for_byte_and_touches_no_store() {
    let _shared = LOG_CAPTURE.read().await;
    let f = fixture().await;
    let other = owned(&f.server, "alice", 3).await;
    let data = f
        .server
        .download_link(f.id, &alice(), LinkFormat::Csv, RowRange::new(0, Some(10)), None)
        .await
        .expect("minted");
    let view = f.server.view_link(f.id, &alice()).await.expect("minted");
    let data_query = link_query(&data.url);
    let view_query = link_query(&view.url);
    let token = data_query.split("token=").nth(1).expect("token").to_owned();
    let flipped = format!(
        "{}{}",
        if token.starts_with('A') { 'B' } else { 'A' },
        &token[1..]
    );
    let expires: u64 = data_query["expires=".len()..data_query.find('&').expect("&")]
        .parse()
        .expect("digits");
    let data_path = format!("{BASE}/{}/data", f.id);

    let unknown = answer(get(&f.handler, &format!("{BASE}/{}", ResourceId::new())).await).await;
    assert_eq!(unknown.0, StatusCode::NOT_FOUND);

    let bad = [
        (
            "tampered token",
            format!("{data_path}?format=csv&limit=10&expires={expires}&token={flipped}"),
        ),
        (
            "tampered expires",
            format!(
                "{data_path}?format=csv&limit=10&expires={}&token={token}",
                expires + 1
            ),
        ),
        (
            "tampered format",
            format!("{data_path}?format=json&limit=10&{data_query}"),
        ),
        (
            "tampered range",
            format!("{data_path}?format=csv&limit=11&{data_query}"),
        ),
        (
            "added offset",
            format!("{data_path}?format=csv&offset=1&limit=10&{data_query}"),
        ),
        (
            "added sort",
            format!("{data_path}?format=csv&limit=10&sort=id&{data_query}"),
        ),
        ("no format", format!("{data_path}?limit=10&{data_query}")),
        (
            "other resource",
            format!("{BASE}/{other}/data?format=csv&limit=10&{data_query}"),
        ),
        ("data token on metadata", format!("{BASE}/{}?{data_query}", f.id)),
        (
            "data token on the view",
            format!("{BASE}/{}/view?{data_query}", f.id),
        ),
        ("read token of another id", format!("{BASE}/{other}?{view_query}")),
        (
            "token without expires",
            format!("{data_path}?format=csv&limit=10&token={token}"),
        ),
        (
            "expires without token",
            format!("{data_path}?format=csv&limit=10&expires={expires}"),
        ),
        (
            "expires not digits",
            format!("{data_path}?format=csv&limit=10&expires=-{expires}&token={token}"),
        ),
        (
            "empty token",
            format!("{data_path}?format=csv&limit=10&expires={expires}&token="),
        ),
    ];
    for (what, url) in &bad {
        let seen = answer(get(&f.handler, url).await).await;
        assert_eq!(seen, unknown, "{what}: {url}");
    }

    // The verdict needs no store: with the store down a bad link is still the 404, a good one is not.
    f.store.set_broken(true);
    for (what, url) in &bad {
        let seen = answer(get(&f.handler, url).await).await;
        assert_eq!(seen, unknown, "{what}, store down");
    }
    assert_eq!(
        get(&f.handler, &data.url).await.status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    f.store.set_broken(false);

    // Expired, by the server's clock.
    assert_eq!(get(&f.handler, &data.url).await.status(), StatusCode::OK);
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(answer(get(&f.handler, &data.url).await).await, unknown, "expired");
    assert_eq!(answer(get(&f.handler, &view.url).await).await, unknown, "expired");
}

#[tokio::test(start_paused = true)]
async fn a_read_link_reads_metadata_pages_data_and_the_view() {
    let _shared = LOG_CAPTURE.read().await;
    let f = fixture().await;
    let view = f.server.view_link(f.id, &alice()).await.expect("minted");
    let query = link_query(&view.url);
    let item = format!("{BASE}/{}?{query}", f.id);

    let metadata = get(&f.handler, &item).await;
    assert_eq!(metadata.status(), StatusCode::OK);
    assert_eq!(referrer_policy(metadata.headers()), "no-referrer");
    assert_eq!(handle::body_json(metadata).await["total_count"], 25);

    let page = f
        .handler
        .handle(
            Request::post(&item)
                .header(header::CONTENT_TYPE, "application/json")
                .body(http_body_util::Full::new(Bytes::from_static(
                    br#"{"offset": 20, "limit": 10}"#,
                )))
                .expect("request"),
        )
        .await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(handle::body_json(page).await["returned_count"], 5);

    for url in [
        format!("{BASE}/{}/data?{query}", f.id),
        format!("{BASE}/{}/data?format=ndjson&sort=id:desc&offset=3&{query}", f.id),
    ] {
        let data = get(&f.handler, &url).await;
        assert_eq!(data.status(), StatusCode::OK, "{url}");
    }
    let page = get(&f.handler, &view.url).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(f.hook.0.load(Ordering::SeqCst), 0, "no request asked the hook");

    // Without a link, alice's resource is not found for an anonymous request.
    let plain = get(&f.handler, &format!("{BASE}/{}", f.id)).await;
    assert_eq!(plain.status(), StatusCode::NOT_FOUND);
    assert!(plain.headers().get(header::REFERRER_POLICY).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_link_never_pins_or_deletes() {
    let _shared = LOG_CAPTURE.read().await;
    let f = fixture().await;
    let view = f.server.view_link(f.id, &alice()).await.expect("minted");
    let item = format!("{BASE}/{}?{}", f.id, link_query(&view.url));
    for method in [Method::PUT, Method::DELETE] {
        let response = request(&f.handler, method.clone(), &item).await;
        assert_eq!(
            response.status(),
            StatusCode::NOT_FOUND,
            "{method}: the hook decided (anonymous)"
        );
        assert_eq!(referrer_policy(response.headers()), "no-referrer");
    }
    let record = f.server.get_resource(f.id, &alice()).await.expect("still there");
    assert!(record.expires_at.is_some(), "not pinned");
    // With the owner's header the hook decides, and the link is simply ignored.
    let pin = send(&f.handler, Request::put(&item).header("x-tenant", "alice")).await;
    assert_eq!(pin.status(), StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn format_overrides_accept_and_names_the_attachment() {
    let _shared = LOG_CAPTURE.read().await;
    let f = fixture().await;
    let url = format!("{BASE}/{}/data?format=ndjson", f.id);
    let response = send(
        &f.handler,
        Request::get(&url)
            .header("x-tenant", "alice")
            .header(header::ACCEPT, "text/csv"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(content_type(&response), "application/x-ndjson");
    assert_eq!(
        response.headers()[header::CONTENT_DISPOSITION],
        format!("attachment; filename=\"{}.ndjson\"", f.id).as_str()
    );
    assert!(response.headers().get(header::REFERRER_POLICY).is_none());

    let plain = send(
        &f.handler,
        Request::get(format!("{BASE}/{}/data", f.id)).header("x-tenant", "alice"),
    )
    .await;
    assert!(plain.headers().get(header::CONTENT_DISPOSITION).is_none());

    let unknown = send(
        &f.handler,
        Request::get(format!("{BASE}/{}/data?format=xml", f.id)).header("x-tenant", "alice"),
    )
    .await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    let body = handle::body_json(unknown).await;
    assert_eq!(body["error"], "invalid_request");
    assert!(body["message"].as_str().unwrap_or_default().contains("`format`"));

    let arrow = send(
        &f.handler,
        Request::get(format!("{BASE}/{}/data?format=arrow", f.id)).header("x-tenant", "alice"),
    )
    .await;
    if cfg!(feature = "arrow") {
        assert_eq!(arrow.status(), StatusCode::OK);
        assert_eq!(content_type(&arrow), "application/vnd.apache.arrow.stream");
    } else {
        assert_eq!(arrow.status(), StatusCode::NOT_ACCEPTABLE);
        assert_eq!(handle::body_json(arrow).await["error"], "not_acceptable");
    }
}

#[tokio::test(start_paused = true)]
async fn the_view_page_is_served_with_its_policy_to_whoever_may_read() {
    let _shared = LOG_CAPTURE.read().await;
    let f = fixture().await;
    let page = format!("{BASE}/{}/view", f.id);
    for method in [Method::GET, Method::HEAD] {
        let response = send(
            &f.handler,
            Request::builder()
                .method(method.clone())
                .uri(&page)
                .header("x-tenant", "alice"),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK, "{method}");
        let headers = response.headers();
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert_eq!(
            headers[header::CONTENT_SECURITY_POLICY],
            format!(
                "default-src 'none'; script-src {}; style-src {}; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
                dual_view::SCRIPT_HASH,
                dual_view::STYLE_HASH
            )
            .as_str()
        );
        assert_eq!(referrer_policy(headers), "no-referrer");
        assert_eq!(headers[header::CACHE_CONTROL], "no-store");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let body = bytes(response).await;
        if method == Method::GET {
            // Without Parquet, the page has no Parquet button.
            let page = if cfg!(feature = "parquet") {
                dual_view::rest_page()
            } else {
                dual_view::without_parquet(&dual_view::rest_page())
            };
            assert_eq!(body, page.as_bytes());
        } else {
            assert!(body.is_empty());
        }
    }
    let record = f.server.get_resource(f.id, &alice()).await.expect("there");
    assert_eq!(record.access_count, 0, "the page counts no access");

    let unknown = answer(get(&f.handler, &format!("{BASE}/{}", ResourceId::new())).await).await;
    for (who, url) in [
        ("anonymous", page.clone()),
        ("unknown id", format!("{BASE}/{}/view", ResourceId::new())),
    ] {
        assert_eq!(answer(get(&f.handler, &url).await).await, unknown, "{who}");
    }
    let bob = send(&f.handler, Request::get(&page).header("x-tenant", "bob")).await;
    assert_eq!(answer(bob).await, unknown, "another owner");
    let extra = send(
        &f.handler,
        Request::get(format!("{page}?x=1")).header("x-tenant", "alice"),
    )
    .await;
    assert_eq!(extra.status(), StatusCode::BAD_REQUEST);
    let post = send(&f.handler, Request::post(&page).header("x-tenant", "alice")).await;
    assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(post.headers()[header::ALLOW], "GET, HEAD");
}

#[tokio::test(start_paused = true)]
async fn the_token_never_reaches_the_log() {
    let _alone = LOG_CAPTURE.write().await;
    let (logs, _guard) = Logs::capture();
    let f = fixture().await;
    let view = f.server.view_link(f.id, &alice()).await.expect("minted");
    let data = f
        .server
        .download_link(f.id, &alice(), LinkFormat::Csv, RowRange::ALL, None)
        .await
        .expect("minted");
    let token = |url: &str| url.split("token=").nth(1).expect("token").to_owned();
    let tokens = [token(&view.url), token(&data.url)];
    let other = ResourceId::new();
    for url in [
        view.url.clone(),
        data.url.clone(),
        format!("{BASE}/{other}/data?{}", link_query(&data.url)),
        format!("{BASE}/{}?{}x", f.id, link_query(&view.url)),
        format!("{BASE}/{}/data?format=xml&{}", f.id, link_query(&view.url)),
        // Encoded by something on the way: `=` (a parameter named `token=…`) and `?` (the query in
        // the path). Neither the answer nor the log may repeat the token.
        format!(
            "{BASE}/{}?{}",
            f.id,
            link_query(&view.url).replace("token=", "token%3D")
        ),
        format!("{BASE}/{}/data%3F{}", f.id, link_query(&data.url)),
        format!("{BASE}/{}/data%3f{}", f.id, link_query(&data.url)),
    ] {
        let response = get(&f.handler, &url).await;
        let body = bytes(response).await;
        let body = String::from_utf8_lossy(&body);
        for token in &tokens {
            assert!(
                !body.contains(&token[..16]),
                "{url} answered with its token: {body}"
            );
        }
    }
    let text = logs.text();
    assert!(
        text.contains("capability link refused"),
        "the refusals are logged:\n{text}"
    );
    for token in &tokens {
        assert!(!text.contains(token.as_str()), "a token reached the log:\n{text}");
        assert!(
            !text.contains(&token[..16]),
            "part of a token reached the log:\n{text}"
        );
    }
    assert!(
        !text.contains("expires="),
        "a query string reached the log:\n{text}"
    );
}
