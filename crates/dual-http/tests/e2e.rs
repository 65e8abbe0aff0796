//! Real sockets: the handler in hyper-util's server on 127.0.0.1, a hyper client.

mod common;

use std::time::Duration;

use bytes::Bytes;
use dual_http::DualHttp;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

type HttpClient = Client<HttpConnector, Full<Bytes>>;

const BUDGET: Duration = Duration::from_secs(60);

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Result<Bytes, String>,
}

async fn send(client: &HttpClient, request: Request<Full<Bytes>>) -> Reply {
    let response = tokio::time::timeout(BUDGET, client.request(request))
        .await
        .expect("answered in time")
        .expect("request sent");
    let (parts, body) = response.into_parts();
    let body = tokio::time::timeout(BUDGET, body.collect())
        .await
        .expect("body read in time")
        .map(|c| c.to_bytes())
        .map_err(|e| e.to_string());
    Reply {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

/// Sends `request` with an empty body.
async fn send_empty(client: &HttpClient, request: http::request::Builder) -> Reply {
    send(client, request.body(Full::default()).expect("request")).await
}

fn req(method: Method, uri: String) -> http::request::Builder {
    Request::builder().method(method).uri(uri)
}

fn json(reply: &Reply) -> Value {
    serde_json::from_slice(reply.body.as_ref().expect("complete body")).expect("JSON body")
}

/// How often `id` was read, as its record says.
async fn access_count(server: &dual_server::DualResponseServer, id: dual_core::ResourceId) -> u64 {
    server
        .get_resource(id, &dual_server::Caller::anonymous())
        .await
        .expect("still there")
        .access_count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_posts() {
    let server = common::server();
    let id = common::create(&server, serde_json::json!({"n": 10_000})).await;
    let (addr, task) = common::serve(DualHttp::builder(server.clone()).prefix("/resources").build()).await;
    let client = client();
    let mut handles = Vec::new();
    for i in 0..50u64 {
        let client = client.clone();
        let request = req(Method::POST, format!("http://{addr}/resources/{id}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(format!(
                r#"{{"offset": {}, "limit": 100}}"#,
                i * 100
            ))))
            .expect("request");
        handles.push(tokio::spawn(async move { (i, send(&client, request).await) }));
    }
    for handle in handles {
        let (i, reply) = handle.await.expect("task");
        assert_eq!(reply.status, StatusCode::OK);
        let page = json(&reply);
        assert_eq!(page["returned_count"], 100);
        assert_eq!(page["data"][0], Value::Object(common::row(i * 100)));
        assert_eq!(page["next_offset"], i * 100 + 100);
    }
    assert_eq!(access_count(&server, id).await, 50);
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_100k_rows_in_every_format() {
    const N: u64 = 100_000;
    let server = common::server();
    let id = common::create(&server, serde_json::json!({"n": N})).await;
    let (addr, task) = common::serve(DualHttp::builder(server.clone()).prefix("/resources").build()).await;
    let client = client();
    let url = format!("http://{addr}/resources/{id}/data");

    let reply = send_empty(&client, req(Method::GET, url.clone())).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.headers[header::CONTENT_TYPE], "application/json");
    assert!(
        reply.headers.get(header::CONTENT_LENGTH).is_none(),
        "streamed, not buffered"
    );
    let rows = json(&reply);
    let rows = rows.as_array().expect("array");
    assert_eq!(rows.len() as u64, N);
    for (i, got) in rows.iter().enumerate() {
        assert_eq!(got, &Value::Object(common::row(i as u64)), "JSON row {i}");
    }

    let reply = send_empty(
        &client,
        req(Method::GET, format!("{url}?sort=id:desc")).header(header::ACCEPT, "application/x-ndjson"),
    )
    .await;
    assert_eq!(reply.headers[header::CONTENT_TYPE], "application/x-ndjson");
    let body = reply.body.expect("complete");
    let text = std::str::from_utf8(&body).expect("UTF-8");
    let mut count = 0u64;
    for (i, line) in text.lines().enumerate() {
        let got: Value = serde_json::from_str(line).expect("JSON line");
        assert_eq!(
            got,
            Value::Object(common::row(N - 1 - i as u64)),
            "NDJSON line {i}"
        );
        count += 1;
    }
    assert_eq!(count, N);

    let reply = send_empty(
        &client,
        req(Method::GET, url.clone()).header(header::ACCEPT, "text/csv"),
    )
    .await;
    assert!(
        reply.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap_or_default()
            .starts_with("text/csv")
    );
    let body = reply.body.expect("complete");
    let text = std::str::from_utf8(&body).expect("UTF-8");
    let mut lines = text.split_terminator("\r\n");
    assert_eq!(lines.next(), Some("id,name,score,ratio,active,tags,note"));
    let mut count = 0u64;
    for (i, line) in lines.enumerate() {
        let i = i as u64;
        let row = common::row(i);
        let expected = format!(
            "{i},\"Name {i}, \"\"quoted\"\"\",{},{},{},\"{{\"\"k\"\":{}}}\",{}",
            row["score"],
            row["ratio"],
            row["active"],
            i % 5,
            if i.is_multiple_of(2) { "" } else { "odd" }
        );
        assert_eq!(line, expected, "CSV row {i}");
        count += 1;
    }
    assert_eq!(count, N);
    assert_eq!(access_count(&server, id).await, 3);
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_failing_mid_stream_breaks_the_transfer() {
    // A snapshot would fail at creation: the failure midway is the live path's.
    let server = common::live_server();
    let id = common::create(
        &server,
        serde_json::json!({"n": 50_000, "fail_stream_at": 20_000}),
    )
    .await;
    let (addr, task) = common::serve(DualHttp::new(server)).await;
    let client = client();
    for accept in ["application/json", "application/x-ndjson", "text/csv"] {
        let reply = send_empty(
            &client,
            req(Method::GET, format!("http://{addr}/{id}/data")).header(header::ACCEPT, accept),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "headers went out before the failure"
        );
        assert!(
            reply.body.is_err(),
            "{accept}: the client must see a broken transfer"
        );
    }
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_head_and_limits_over_the_wire() {
    let server = common::server();
    let id = common::create(&server, serde_json::json!({"n": 10})).await;
    let (addr, task) = common::serve(
        DualHttp::builder(server)
            .prefix("/resources")
            .body_limit(1024)
            .build(),
    )
    .await;
    let client = client();
    let base = format!("http://{addr}");

    // Outside the prefix: the API's 404.
    for path in ["/", "/other/{id}", "/resources", "/resourcesx/{id}"] {
        let path = path.replace("{id}", &id.to_string());
        let reply = send_empty(&client, req(Method::GET, format!("{base}{path}"))).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(json(&reply)["error"], "not_found", "{path}");
    }

    // HEAD: headers, no body.
    let reply = send_empty(&client, req(Method::HEAD, format!("{base}/resources/{id}"))).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.headers.contains_key(header::CONTENT_LENGTH));
    assert_eq!(reply.body.as_deref().map(<[u8]>::len), Ok(0));

    // A body over the configured limit, declared and undeclared (chunked).
    let big = Bytes::from(format!("{{\"limit\": 1{}}}", " ".repeat(2048)));
    let reply = send(
        &client,
        req(Method::POST, format!("{base}/resources/{id}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(big.clone()))
            .expect("request"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(json(&reply)["error"], "payload_too_large");

    let chunks = futures_util::stream::iter(
        big.chunks(256)
            .map(|c| Ok::<_, std::convert::Infallible>(http_body::Frame::data(Bytes::copy_from_slice(c))))
            .collect::<Vec<_>>(),
    );
    let chunked_client: Client<HttpConnector, StreamBody<_>> =
        Client::builder(TokioExecutor::new()).build_http();
    let request = req(Method::POST, format!("{base}/resources/{id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(StreamBody::new(chunks))
        .expect("request");
    let response = tokio::time::timeout(BUDGET, chunked_client.request(request))
        .await
        .expect("in time")
        .expect("sent");
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    task.abort();
}
