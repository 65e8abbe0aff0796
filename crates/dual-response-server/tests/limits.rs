//! The demo server's bounds over real sockets on 127.0.0.1 (issue 9): header, idle, body and
//! write-stall timeouts, the connection cap, the MCP session cap and bearer-token authentication.
//! Limits are small so that each test takes about a second.

mod support;

use std::ops::Range;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_response_server::ipeds::dataset::DatasetSize;
use dual_response_server::mcp_client;
use dual_response_server::serve::ServeOptions;
use dual_serve::auth::AuthTokens;
use http::{HeaderMap, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use support::export::{assert_truncated, create_big_resource, start_export};
use support::http::exchange;
use support::in_process::InProcess;
use support::{call, query};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Upper bound of any one test's work.
const LIMIT: Duration = Duration::from_secs(60);

/// A connection to `server` that has sent `request`.
async fn connect_and_send(server: &InProcess, request: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(server.addr()).await.expect("connect");
    stream.write_all(request).await.expect("write");
    stream
}

/// Reads until the server closes the connection; returns what came and when the end came.
async fn read_until_closed(stream: &mut TcpStream, started: Instant) -> (String, Duration) {
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the connection is still open after 10 s"),
        }
    }
    (String::from_utf8_lossy(&received).into_owned(), started.elapsed())
}

/// Sends `request`; returns the status, the headers and the JSON body (`null` if not JSON).
async fn send(request: Request<Full<Bytes>>) -> (StatusCode, HeaderMap, Value) {
    let reply = exchange(request).await;
    let json = reply.json();
    (reply.status, reply.headers, json)
}

/// Asserts that the server closed the connection `after` a time within `bounds`.
fn assert_closed_within(after: Duration, bounds: Range<Duration>, what: &str) {
    assert!(bounds.contains(&after), "{what}: closed after {after:?}");
}

/// Runs `test` against a server that requires the bearer tokens of the tokens file `file`.
async fn with_tokens(file: &str, test: impl AsyncFnOnce(&InProcess)) {
    let tokens = AuthTokens::parse(file).expect("tokens");
    InProcess::run(
        LIMIT,
        |o| o.authentication = dual_serve::auth::Authentication::Tokens(tokens),
        test,
    )
    .await;
}

fn get(url: &str, token: Option<&str>) -> Request<Full<Bytes>> {
    let mut builder = Request::get(url);
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    builder.body(Full::default()).expect("a request")
}

fn initialize(url: &str) -> Request<Full<Bytes>> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "limits", "version": "0"}}
    });
    Request::post(url)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowloris_head_is_closed_after_the_header_timeout() {
    let configure = |o: &mut ServeOptions| o.header_timeout = Duration::from_millis(300);
    InProcess::run(LIMIT, configure, async |server| {
        // A client that sends part of a head, and one that sends nothing at all.
        let mut slow = TcpStream::connect(server.addr()).await.expect("connect");
        let mut silent = TcpStream::connect(server.addr()).await.expect("connect");
        let started = Instant::now();
        slow.write_all(b"GET /resources/x HTTP/1.1\r\nHost: a\r\n")
            .await
            .expect("write");
        tokio::time::sleep(Duration::from_millis(100)).await;
        slow.write_all(b"X-Slow: 1\r\n").await.expect("write");
        let (answer, after) = read_until_closed(&mut slow, started).await;
        assert!(answer.is_empty(), "no response to half a head: {answer}");
        assert_closed_within(
            after,
            Duration::from_millis(250)..Duration::from_secs(3),
            "half a head",
        );
        let (answer, after) = read_until_closed(&mut silent, started).await;
        assert!(answer.is_empty(), "{answer}");
        assert!(after < Duration::from_secs(3), "closed after {after:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    // The idle timeout is longer than the header timeout: an idle connection must get the former.
    let configure = |o: &mut ServeOptions| {
        o.header_timeout = Duration::from_millis(300);
        o.idle_timeout = Duration::from_millis(1200);
    };
    InProcess::run(LIMIT, configure, async |server| {
        let mut stream = connect_and_send(server, b"GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n").await;
        let mut buf = vec![0u8; 4096];
        let n = stream.read(&mut buf).await.expect("a response");
        let started = Instant::now();
        assert!(
            String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 404"),
            "{}",
            String::from_utf8_lossy(&buf[..n])
        );
        let (more, after) = read_until_closed(&mut stream, started).await;
        assert!(more.len() < 200, "only the rest of the 404: {more}");
        assert_closed_within(after, Duration::from_millis(1000)..Duration::from_secs(4), "idle");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_body_is_answered_408_and_closed() {
    let configure = |o: &mut ServeOptions| o.body_timeout = Duration::from_millis(400);
    InProcess::run(LIMIT, configure, async |server| {
        for path in ["/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV", "/mcp"] {
            let mut stream = TcpStream::connect(server.addr()).await.expect("connect");
            let started = Instant::now();
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"offset\""
            );
            stream.write_all(head.as_bytes()).await.expect("write");
            let (answer, after) = read_until_closed(&mut stream, started).await;
            assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer}");
            assert!(answer.contains("request_timeout"), "{path}: {answer}");
            assert_closed_within(after, Duration::from_millis(350)..Duration::from_secs(4), path);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_to_a_client_that_stopped_reading_is_cut_after_the_stall_time() {
    let configure = |o: &mut ServeOptions| o.export_stall = Duration::from_millis(500);
    InProcess::run(LIMIT, configure, async |server| {
        let id = create_big_resource(&server.mcp_url()).await;
        let (body, _) = start_export(server.addr(), &id).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        // What the kernel buffered is still there, then the body ends without its terminal chunk.
        let error = body.collect().await.expect_err("a cut export is an error");
        assert_truncated(&error);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_holds_and_a_waiting_client_is_served_when_one_closes() {
    let configure = |o: &mut ServeOptions| o.max_connections = 2;
    InProcess::run(LIMIT, configure, async |server| {
        let first = TcpStream::connect(server.addr()).await.expect("connect");
        let _second = TcpStream::connect(server.addr()).await.expect("connect");
        // The kernel completes the third handshake (listen backlog); the server must not serve it.
        let request = b"GET /nowhere HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
        let mut third = connect_and_send(server, request).await;
        let mut buf = vec![0u8; 4096];
        let early = timeout(Duration::from_millis(700), third.read(&mut buf)).await;
        assert!(early.is_err(), "served beyond the cap: {early:?}");
        drop(first);
        let started = Instant::now();
        let (answer, after) = read_until_closed(&mut third, started).await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        assert!(
            after < Duration::from_secs(3),
            "served {after:?} after a slot freed"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_session_cap_answers_503_and_existing_sessions_keep_working() {
    let configure = |o: &mut ServeOptions| o.max_mcp_sessions = 2;
    InProcess::run(LIMIT, configure, async |server| {
        let url = server.mcp_url();
        let one = mcp_client::connect(&url).await.expect("first session");
        let two = mcp_client::connect(&url).await.expect("second session");

        let (status, headers, body) = send(initialize(&url)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(headers.contains_key(header::RETRY_AFTER), "{headers:?}");
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert_eq!(
            body["error"]["message"],
            "too many MCP sessions (cap 2); retry later"
        );
        assert!(
            mcp_client::connect(&url).await.is_err(),
            "a third client is refused"
        );

        // A 2026-07-28 request has no session and takes no slot: it is served at the cap.
        let stateless = json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "limits", "version": "0"}}}
        });
        let request = Request::post(&url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(Full::new(Bytes::from(stateless.to_string())))
            .expect("a request");
        let reply = exchange(request).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert!(reply.text().contains("search_institutions"), "{}", reply.text());

        // The existing sessions are unaffected.
        let tools = one.list_all_tools().await.expect("tools/list");
        assert_eq!(tools.len(), 3);
        let result = query(&two, "SELECT 1 AS one").await;
        assert_eq!(result.is_error, Some(false));

        // A closed session frees its slot.
        let _ = one.cancel().await;
        let mut again = None;
        for _ in 0..50 {
            if let Ok(client) = mcp_client::connect(&url).await {
                again = Some(client);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let again = again.expect("a new session once one closed");
        let _ = again.cancel().await;
        let _ = two.cancel().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_valid_token_mcp_and_rest_answer_401() {
    with_tokens("right-token alice\n", async |server| {
        let rest = format!("http://{}/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV", server.addr());
        for (token, challenge) in [
            (None, "Bearer"),
            (Some("wrong-token"), r#"Bearer error="invalid_token""#),
            (Some("right-toke"), r#"Bearer error="invalid_token""#),
        ] {
            let (status, headers, body) = send(get(&rest, token)).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
            assert_eq!(headers[header::WWW_AUTHENTICATE], challenge, "{token:?}");
            assert_eq!(body["error"], "unauthorized", "{body}");
            assert_eq!(body["retryable"], false, "{body}");
            assert!(body["message"].is_string(), "{body}");
        }
        let (status, _, _) = send(initialize(&server.mcp_url())).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(mcp_client::connect(&server.mcp_url()).await.is_err());
        assert!(
            mcp_client::connect_with_token(&server.mcp_url(), "wrong-token")
                .await
                .is_err()
        );
        // Elsewhere there is nothing to protect: still the router's 404.
        let (status, _, _) = send(get(&format!("http://{}/", server.addr()), None)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_right_token_is_served_over_mcp_and_rest() {
    with_tokens("# demo\nright-token alice\nother-token bob\n", async |server| {
        let mcp = mcp_client::connect_with_token(&server.mcp_url(), "right-token")
            .await
            .expect("an authenticated MCP session");
        let result = query(&mcp, "SELECT id, name FROM institutions ORDER BY id").await;
        assert_eq!(result.is_error, Some(false));
        let uri = result.structured_content.expect("structuredContent")["resource"]["uri"]
            .as_str()
            .expect("a resource URI")
            .to_owned();
        let id = uri.trim_start_matches("resource://");
        let url = format!("http://{}/resources/{id}", server.addr());
        let (status, _, body) = send(get(&url, Some("right-token"))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["total_count"], DatasetSize::SMALL.institutions, "{body}");
        // The resource belongs to alice: bob's valid token sees what an unknown id gets.
        let (status, _, body) = send(get(&url, Some("other-token"))).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::NOT_FOUND, Some("not_found")),
            "{body}"
        );
        let (status, _, _) = send(get(&url, None)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let _ = mcp.cancel().await;

        // The reporting client sends the token to MCP and REST alike, and fetches every row.
        let csv = server.dir().join("alice.csv");
        server
            .report(
                "SELECT id, name FROM institutions ORDER BY id",
                Some(csv.clone()),
                Some("right-token"),
            )
            .await
            .expect("the report runs with a token");
        let lines = std::fs::read_to_string(&csv).expect("the CSV").lines().count() as u64;
        assert_eq!(
            lines,
            u64::from(DatasetSize::SMALL.institutions) + 1,
            "a header and every row"
        );
        let refused = server
            .report("SELECT 1", None, Some("wrong-token"))
            .await
            .expect_err("a wrong token fails the report");
        assert!(
            !refused.to_string().contains("wrong-token"),
            "tokens are never echoed: {refused}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_of_huge_values_keeps_only_whole_rows_within_max_sample_bytes() {
    let configure = |o: &mut ServeOptions| o.max_sample_bytes = 64 * 1024;
    InProcess::run(LIMIT, configure, async |server| {
        let mcp = mcp_client::connect(&server.mcp_url())
            .await
            .expect("an MCP session");
        // Rows of 2 MB values (the issue's `randomblob(50000000)`, scaled down), and a small last column.
        let sql = "SELECT randomblob(2000000) AS b, id FROM institutions ORDER BY id LIMIT 20";
        let result = query(&mcp, sql).await;
        assert_eq!(result.is_error, Some(false));
        let bytes = serde_json::to_vec(&result).expect("JSON").len();
        assert!(bytes < 64 * 1024, "the whole tool result is {bytes} bytes");
        let structured = result.structured_content.expect("structuredContent");
        assert_eq!(
            structured["metadata"]["total_count"], 20,
            "the count is always there"
        );
        assert_eq!(
            structured["metadata"]["sample_count"], 0,
            "no 2 MB row fits in 64 KiB"
        );
        assert!(
            structured["resource"]["uri"].as_str().is_some(),
            "the link is always there"
        );

        // Small rows: as many whole rows as fit, and the count of those kept.
        let sql = "SELECT id, hex(randomblob(3000)) AS h FROM institutions ORDER BY id";
        let result = call(&mcp, "query", json!({"sql": sql, "sample_size": 100})).await;
        let structured = result.structured_content.expect("structuredContent");
        let kept = structured["results"].as_array().map_or(0, Vec::len);
        // Each row goes out twice (the table and structuredContent): about 12 KB a row.
        assert!(
            (3..6).contains(&kept),
            "6,000-byte rows under 64 KiB for the whole result: kept {kept}"
        );
        assert_eq!(structured["metadata"]["sample_count"], kept);
        let whole = structured["results"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|row| row["h"].as_str().map(str::len) == Some(6000));
        assert!(whole, "no value is cut in half");
        let _ = mcp.cancel().await;
    })
    .await;
}
