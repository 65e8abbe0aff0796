//! Servers that are slow, flaky, rate-limiting, truncating or simply wrong.

use std::time::{Duration, Instant};

use dual_client::{
    ClientError, ClientErrorCode, FetchAllOptions, FetchOptions, FetchStreamOptions, ParsedDualResponse,
};
use futures_util::StreamExt;
use http::StatusCode;
use serde_json::json;

use crate::support::raw::{RawServer, Reply, chunked, error, json, response};
use crate::support::{builder, client};

const PAGE: &str = r#"{"data":[{"id":1},{"id":2},{"id":3}],"total_count":3,"returned_count":3,"offset":0,"limit":100,"has_next":false,"has_previous":false,"next_offset":null}"#;

fn parsed(server: &RawServer, client: &dual_client::DualResponseClient) -> ParsedDualResponse {
    client.parse_strict(&server.tool_result()).expect("parses")
}

/// The error of `result`, which must be a `FETCH_ERROR` whose message says `needle`.
#[track_caller]
fn fetch_error<T: std::fmt::Debug>(result: Result<T, ClientError>, needle: &str) -> ClientError {
    let error = result.expect_err("fails");
    assert_eq!(error.code(), ClientErrorCode::Fetch, "{error}");
    assert!(error.message().contains(needle), "{needle}: {error}");
    error
}

/// A server answering its first `failures` requests with `failure`, then with [`PAGE`].
async fn fails_then_pages(failures: usize, failure: fn() -> Reply) -> RawServer {
    RawServer::start(move |n, _| {
        if n < failures {
            failure()
        } else {
            json("200 OK", PAGE)
        }
    })
    .await
}

fn short_timeout() -> dual_client::DualResponseClient {
    builder()
        .timeout(Duration::from_millis(200))
        .build()
        .expect("client")
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    let server = RawServer::start(|_, _| Reply::Hang).await;
    let client = short_timeout();
    let started = Instant::now();
    let error = parsed(&server, &client)
        .fetch(FetchOptions::new())
        .await
        .expect_err("times out");
    assert_eq!(error.code(), ClientErrorCode::Timeout);
    assert!(error.is_timeout() && error.status().is_none(), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(server.hits(), 1, "timeouts are not retried");
}

#[tokio::test]
async fn a_body_that_stalls_is_a_timeout() {
    let server = RawServer::start(|_, _| {
        Reply::BytesThenHang(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"data\":["
                .to_vec(),
        )
    })
    .await;
    let error = parsed(&server, &short_timeout())
        .metadata()
        .await
        .expect_err("times out");
    assert!(error.is_timeout(), "{error}");
}

#[tokio::test]
async fn an_export_that_stalls_is_a_timeout() {
    let server = RawServer::start(|_, _| {
        let mut head =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec();
        head.extend(b"8\r\n{\"id\":1}\r\n1\r\n\n\r\n");
        Reply::BytesThenHang(head)
    })
    .await;
    let client = short_timeout();
    let error = parsed(&server, &client)
        .fetch_all(FetchAllOptions::new())
        .await
        .expect_err("times out");
    assert!(error.is_timeout(), "{error}");
    // The stream hands over the row that arrived, then the timeout.
    let mut stream = parsed(&server, &client).fetch_stream(FetchStreamOptions::new(1));
    let first = stream.next().await.and_then(Result::ok);
    assert_eq!(first.map(|b| b.len()), Some(1));
    let second = stream.next().await.and_then(Result::err);
    assert!(second.is_some_and(|e| e.is_timeout()));
    assert!(stream.next().await.is_none(), "the stream ends after an error");
}

#[tokio::test]
async fn two_503s_then_success_is_a_success_after_retries() {
    let server = fails_then_pages(2, || error("503 Service Unavailable", "storage_error", true)).await;
    let page = parsed(&server, &client())
        .fetch(FetchOptions::new())
        .await
        .expect("succeeds on the third attempt");
    assert_eq!(page.returned_count, 3);
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = RawServer::start(|_, _| error("503 Service Unavailable", "storage_error", true)).await;
    let client = builder().max_retries(2).build().expect("client");
    let failure = parsed(&server, &client)
        .fetch(FetchOptions::new())
        .await
        .expect_err("gives up");
    assert_eq!(server.hits(), 3, "one attempt and two retries");
    assert_eq!(failure.code(), ClientErrorCode::Fetch);
    assert_eq!(failure.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert!(failure.is_retryable());
    assert_eq!(
        failure.server_error().map(|b| b.error),
        Some(dual_core::error::ErrorCode::StorageError)
    );

    let server = RawServer::start(|_, _| error("503 Service Unavailable", "storage_error", true)).await;
    let client = builder().max_retries(0).build().expect("client");
    assert!(parsed(&server, &client).metadata().await.is_err());
    assert_eq!(server.hits(), 1, "max_retries(0) disables retries");
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = fails_then_pages(1, || {
        response("429 Too Many Requests", &[("Retry-After", "1")], "slow down")
    })
    .await;
    let started = Instant::now();
    parsed(&server, &client())
        .fetch(FetchOptions::new())
        .await
        .expect("succeeds after waiting");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_is_not_waited_for() {
    let server =
        RawServer::start(|_, _| response("429 Too Many Requests", &[("Retry-After", "120")], "")).await;
    let client = builder()
        .max_retry_after(Duration::from_millis(500))
        .build()
        .expect("client");
    let started = Instant::now();
    let error = parsed(&server, &client)
        .fetch(FetchOptions::new())
        .await
        .expect_err("gives up at once");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(error.status(), Some(StatusCode::TOO_MANY_REQUESTS));
    assert!(error.is_retryable());
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn other_error_statuses_are_never_retried() {
    for (status, code) in [
        ("400 Bad Request", "invalid_request"),
        ("401 Unauthorized", "unauthorized"),
        ("403 Forbidden", "forbidden"),
        ("409 Conflict", "conflict"),
        ("413 Payload Too Large", "payload_too_large"),
        ("500 Internal Server Error", "internal"),
        ("502 Bad Gateway", "bad_gateway"),
    ] {
        let server = RawServer::start(move |_, _| error(status, code, false)).await;
        let error = parsed(&server, &client())
            .fetch(FetchOptions::new())
            .await
            .expect_err("fails");
        assert_eq!(server.hits(), 1, "{status} was retried");
        assert_eq!(error.code(), ClientErrorCode::Fetch, "{status}");
        assert_eq!(error.status().map(|s| s.as_u16()), status[..3].parse().ok());
    }
}

#[tokio::test]
async fn query_failed_and_not_ready_have_their_codes_and_are_not_retried() {
    // 500 `query_failed`, even marked retryable: the query would fail the same way again. The client
    // asks the metadata once for the failure's code (here it fails too, so there is none).
    let server = RawServer::start(|_, _| error("500 Internal Server Error", "query_failed", true)).await;
    let error = parsed(&server, &client())
        .fetch(FetchOptions::new())
        .await
        .expect_err("fails");
    assert_eq!(error.code(), ClientErrorCode::QueryFailed);
    assert_eq!(error.code().as_str(), "QUERY_FAILED");
    assert!(error.is_query_failed() && error.is_retryable());
    assert_eq!(error.failure(), None);
    let seen: Vec<String> = server.seen().into_iter().map(|s| s.request_line).collect();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[0].starts_with("POST ") && seen[1].starts_with("GET "),
        "{seen:?}"
    );

    // 409 `not_ready` from `fetch`: at once, whatever the `Retry-After`.
    let server = RawServer::start(|_, _| {
        response(
            "409 Conflict",
            &[("Retry-After", "1"), ("Content-Type", "application/json")],
            r#"{"error":"not_ready","message":"still running","retryable":true}"#,
        )
    })
    .await;
    let started = Instant::now();
    let error = parsed(&server, &client())
        .fetch(FetchOptions::new())
        .await
        .expect_err("not ready");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "fetch does not wait"
    );
    assert_eq!(error.code(), ClientErrorCode::NotReady);
    assert_eq!(error.code().as_str(), "NOT_READY");
    assert_eq!(error.status(), Some(StatusCode::CONFLICT));
    assert!(error.is_not_ready() && error.is_retryable());
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn not_found_maps_to_resource_not_found() {
    // Whatever the body: the reference server sends `{"error": "Resource not found"}`.
    for body in [
        r#"{"error":"not_found","message":"Resource not found or expired","retryable":false}"#,
        r#"{"error":"Resource not found"}"#,
        "<html>Cannot POST</html>",
    ] {
        let server = RawServer::start(move |_, _| json("404 Not Found", body)).await;
        let error = parsed(&server, &client())
            .fetch(FetchOptions::new())
            .await
            .expect_err("fails");
        assert_eq!(error.code(), ClientErrorCode::ResourceNotFound, "{body}");
        assert_eq!(error.code().as_str(), "RESOURCE_NOT_FOUND");
    }
}

#[tokio::test]
async fn a_truncated_body_is_a_fetch_error() {
    let server = RawServer::start(|_, _| {
        let mut bytes = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\nConnection: close\r\n\r\n".to_vec();
        bytes.extend(&PAGE.as_bytes()[..40]);
        Reply::Bytes(bytes)
    })
    .await;
    let result = parsed(&server, &client()).fetch(FetchOptions::new()).await;
    fetch_error(result, "cut off");
}

#[tokio::test]
async fn wrong_or_non_json_bodies_are_fetch_errors() {
    for (body, needle) in [
        (r#"{"rows": []}"#, "wrong shape"),
        (r#"{"data":"x","total_count":3}"#, "wrong shape"),
        (r#"[1,2,3]"#, "wrong shape"),
        ("<html><body>Welcome to nginx</body></html>", "invalid JSON"),
        (r#"{"data":[{"id":1}],"total_count":"#, "truncated"),
        ("", "truncated"),
    ] {
        let server = RawServer::start(move |_, _| json("200 OK", body)).await;
        let parsed = parsed(&server, &client());
        for error in [
            parsed.fetch(FetchOptions::new()).await.err(),
            parsed.metadata().await.err(),
        ] {
            let error = error.expect("fails");
            assert_eq!(error.code(), ClientErrorCode::Fetch, "{body}");
            assert_eq!(error.status(), Some(StatusCode::OK), "{body}");
            assert!(error.message().contains(needle), "{body}: {error}");
            assert!(!error.message().contains("nginx"), "no body content in messages");
        }
    }
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let big = format!(r#"{{"padding":"{}"}}"#, "x".repeat(10_000));
    let server = RawServer::start(move |_, _| json("200 OK", &big)).await;
    let client = builder().max_body_bytes(1000).build().expect("client");
    let error = parsed(&server, &client).metadata().await.expect_err("too large");
    assert!(error.message().contains("larger than 1000 bytes"), "{error}");
}

#[tokio::test]
async fn a_cut_off_export_is_a_fetch_error() {
    let body = b"{\"id\":1}\n{\"id\":2}\n{\"id\":3,\"na";
    // Cut inside a chunk, connection closed.
    let server = RawServer::start(move |_, _| chunked("application/x-ndjson", body, true)).await;
    let error = parsed(&server, &client())
        .fetch_all(FetchAllOptions::new())
        .await
        .expect_err("fails");
    assert_eq!(error.code(), ClientErrorCode::Fetch, "{error}");

    // Properly terminated, but the last line is incomplete.
    let server = RawServer::start(move |_, _| chunked("application/x-ndjson", body, false)).await;
    let result = parsed(&server, &client()).fetch_all(FetchAllOptions::new()).await;
    fetch_error(result, "truncated");
}

#[tokio::test]
async fn export_lines_that_are_not_rows_are_fetch_errors() {
    let server =
        RawServer::start(|_, _| chunked("application/x-ndjson", b"{\"id\":1}\n[1,2]\n", false)).await;
    let result = parsed(&server, &client()).fetch_all(FetchAllOptions::new()).await;
    fetch_error(result, "export line 2");
}

#[tokio::test]
async fn no_export_endpoint_falls_back_to_pages() {
    for export_reply in [
        error("405 Method Not Allowed", "method_not_allowed", false),
        json("404 Not Found", r#"{"error":"Resource not found"}"#),
        response("200 OK", &[("Content-Type", "text/html")], "<html></html>"),
    ] {
        let server = RawServer::start(move |_, seen| {
            if seen.request_line.contains("/data") {
                export_reply.clone()
            } else {
                json("200 OK", PAGE)
            }
        })
        .await;
        let rows = parsed(&server, &client())
            .fetch_all(FetchAllOptions::new())
            .await
            .expect("falls back");
        assert_eq!(rows.len(), 3);
        let seen = server.seen();
        assert_eq!(seen.len(), 2);
        assert!(seen[1].request_line.starts_with("POST "));
    }
}

#[tokio::test]
async fn missing_export_and_missing_page_is_resource_not_found() {
    let server = RawServer::start(|_, _| json("404 Not Found", r#"{"error":"Resource not found"}"#)).await;
    let error = parsed(&server, &client())
        .fetch_all(FetchAllOptions::new())
        .await
        .expect_err("fails");
    assert!(error.is_not_found(), "{error}");
    assert_eq!(server.hits(), 2, "the export, then the first page");
}

#[tokio::test]
async fn a_page_that_does_not_advance_cannot_loop_forever() {
    let server = RawServer::start(|_, seen| {
        if seen.request_line.contains("/data") {
            json("404 Not Found", "{}")
        } else {
            json(
                "200 OK",
                r#"{"data":[{"id":1}],"total_count":3,"returned_count":1,"offset":0,"limit":1,"has_next":true,"has_previous":false,"next_offset":0}"#,
            )
        }
    })
    .await;
    let parsed = parsed(&server, &client());
    let error = parsed.fetch_all(FetchAllOptions::new()).await.expect_err("fails");
    assert!(error.message().contains("no later offset"), "{error}");
    let mut stream = parsed.fetch_stream(FetchStreamOptions::new(1));
    assert!(stream.next().await.is_some_and(|r| r.is_err()));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn refused_connections_are_connect_errors() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let client = client();
    let url = format!("http://{addr}/resources/01JHF3K4Q5R6S7T8V9W0XYZABC");
    let error = client
        .resource(&url)
        .expect("a URL")
        .metadata()
        .await
        .expect_err("refused");
    assert!(error.is_connect() && error.is_retryable(), "{error:?}");
    assert_eq!(error.code(), ClientErrorCode::Fetch);
    assert_eq!(error.status(), None);
}

#[tokio::test]
async fn default_headers_and_content_types_go_with_every_request() {
    let server = RawServer::start(|_, seen| {
        if seen.request_line.contains("/data") {
            chunked(
                "application/x-ndjson",
                b"{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n",
                false,
            )
        } else if seen.request_line.starts_with("DELETE") {
            response("204 No Content", &[], "")
        } else if seen.request_line.starts_with("PUT") {
            json("200 OK", r#"{"status":"pinned","expires_at":null}"#)
        } else {
            json("200 OK", PAGE)
        }
    })
    .await;
    let client = builder()
        .header(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("Bearer s3cret"),
        )
        .header(
            http::HeaderName::from_static("x-tenant"),
            http::HeaderValue::from_static("acme"),
        )
        .build()
        .expect("client");
    assert!(!format!("{client:?}").contains("s3cret"));
    let mut parsed = parsed(&server, &client);
    parsed
        .fetch(FetchOptions::new().offset(5).limit(7))
        .await
        .expect("page");
    parsed.fetch_all(FetchAllOptions::new()).await.expect("all");
    parsed.pin().await.expect("pin");
    parsed.delete().await.expect("delete");
    let seen = server.seen();
    assert_eq!(seen.len(), 4);
    for request in &seen {
        assert!(
            request.headers.contains("authorization: bearer s3cret"),
            "{request:?}"
        );
        assert!(request.headers.contains("x-tenant: acme"), "{request:?}");
        assert!(
            request.headers.contains("user-agent: dual-client/"),
            "{request:?}"
        );
    }
    assert!(seen[0].request_line.starts_with("POST "));
    assert!(seen[0].headers.contains("content-type: application/json"));
    let body: serde_json::Value = serde_json::from_slice(&seen[0].body).expect("JSON body");
    assert_eq!(body, json!({"offset": 5, "limit": 7}));
    assert!(
        seen[1].request_line.starts_with("GET ") && seen[1].request_line.contains("/data?offset=0&limit=4 "),
        "{seen:?}"
    );
    assert!(seen[1].headers.contains("accept: application/x-ndjson"));
    assert!(seen[2].request_line.starts_with("PUT "));
    assert!(seen[3].request_line.starts_with("DELETE "));
}

#[tokio::test]
async fn sort_goes_to_the_export_as_a_query_parameter() {
    let server = RawServer::start(|_, _| {
        chunked(
            "application/x-ndjson",
            b"{\"id\":3}\n{\"id\":2}\n{\"id\":1}\n",
            false,
        )
    })
    .await;
    let rows = parsed(&server, &client())
        .fetch_all(FetchAllOptions::new().sort(dual_client::Sort::new("id", dual_client::SortOrder::Desc)))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 3);
    assert!(
        server.seen()[0]
            .request_line
            .contains("/data?offset=0&limit=4&sort=id:desc "),
        "{:?}",
        server.seen()
    );
}
