//! dual-serve's own behaviour, over real sockets, with `DatabaseMcp` on a SQLite file: the JSON-RPC
//! answers it gives in front of rmcp, the MCP session cap, bearer tokens on both endpoints, the JSON
//! 404 of other paths, and a graceful shutdown on request.

mod common;

use std::net::SocketAddr;

use common::{JSON_POST, TempDb, initialize, send, serve};
use dual_serve::ServeOptions;
use dual_serve::auth::AuthTokens;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_rpc_errors_are_answered_before_rmcp() {
    let db = TempDb::new();
    let running = serve(&db, |_| {}).await;
    let addr = running.addr;

    let not_json = send(addr, "POST", "/mcp", &JSON_POST, "this is not json").await;
    assert_eq!(not_json.status, 400);
    assert_eq!(not_json.json()["error"]["code"], -32700);

    let not_rpc = send(addr, "POST", "/mcp", &JSON_POST, r#"{"hello": "world"}"#).await;
    assert_eq!(not_rpc.status, 400);
    assert_eq!(not_rpc.json()["error"]["code"], -32600);

    // A standard method whose params do not parse: -32602 with the request's id, whatever the handler.
    let bad_params = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#;
    let reply = send(addr, "POST", "/mcp", &JSON_POST, bad_params).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer = reply.json();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(7), json!(-32602))
    );

    let unknown = [("Mcp-Session-Id", "no-such-session")];
    let delete = send(addr, "DELETE", "/mcp", &unknown, "").await;
    assert_eq!(delete.status, 404, "{}", delete.body);

    let elsewhere = send(addr, "GET", "/elsewhere", &[], "").await;
    assert_eq!(elsewhere.status, 404);
    assert_eq!(elsewhere.json()["error"], "not_found");

    // A real session still works.
    let init = send(addr, "POST", "/mcp", &JSON_POST, &initialize()).await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(init.json()["result"]["serverInfo"]["name"], "dual-response");
    assert!(init.header("mcp-session-id").is_some());
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_refuses_a_further_initialize_with_retry_after() {
    let db = TempDb::new();
    let running = serve(&db, |o| o.max_mcp_sessions = 1).await;
    let first = send(running.addr, "POST", "/mcp", &JSON_POST, &initialize()).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = send(running.addr, "POST", "/mcp", &JSON_POST, &initialize()).await;
    assert_eq!(second.status, 503, "{}", second.body);
    assert!(second.header("retry-after").is_some());
    assert_eq!(second.json()["error"]["data"]["error"], "overloaded");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_tokens_guard_both_endpoints() {
    let db = TempDb::new();
    let tokens = AuthTokens::parse("secret-token alice\n").expect("tokens");
    let running = serve(&db, |o| {
        o.authentication = dual_serve::auth::Authentication::Tokens(tokens)
    })
    .await;
    let addr = running.addr;
    for (method, path) in [("POST", "/mcp"), ("GET", "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV")] {
        let missing = send(addr, method, path, &JSON_POST, &initialize()).await;
        assert_eq!(missing.status, 401, "{path}");
        assert_eq!(missing.header("www-authenticate"), Some("Bearer"), "{path}");
        let wrong = [JSON_POST[0], JSON_POST[1], ("Authorization", "Bearer wrong")];
        let wrong = send(addr, method, path, &wrong, &initialize()).await;
        assert_eq!(wrong.status, 401, "{path}");
        assert_eq!(
            wrong.header("www-authenticate"),
            Some(r#"Bearer error="invalid_token""#),
            "{path}"
        );
        assert!(!wrong.body.contains("secret-token"), "{path}: {}", wrong.body);
    }
    let right = [
        JSON_POST[0],
        JSON_POST[1],
        ("Authorization", "Bearer secret-token"),
    ];
    let init = send(addr, "POST", "/mcp", &right, &initialize()).await;
    assert_eq!(init.status, 200, "{}", init.body);
    let unknown = send(addr, "GET", "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV", &right, "").await;
    assert_eq!(
        unknown.status, 404,
        "authenticated, and no such resource: {}",
        unknown.body
    );
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_limit_is_refused_by_name() {
    let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    options.max_connections = 0;
    let error = dual_serve::Bound::bind(options).await.expect_err("refused");
    assert!(error.to_string().contains("max_connections"), "{error}");
}
