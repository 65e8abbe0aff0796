//! dual-serve's own behaviour, over real sockets, with `DatabaseMcp` on a SQLite file: the JSON-RPC
//! answers it gives in front of rmcp, the MCP session cap, bearer tokens on both endpoints, the JSON
//! 404 of other paths, and a graceful shutdown on request.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use dual_serve::auth::AuthTokens;
use dual_serve::{Running, ServeOptions, serve_database};
use dual_sqlite::{SqliteDb, SqliteOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A SQLite file with one small table, removed when dropped.
struct TempDb(PathBuf);

impl TempDb {
    fn new() -> Self {
        let path = std::env::temp_dir().join(format!("dual-serve-test-{:016x}.sqlite", fastrand::u64(..)));
        let db = rusqlite::Connection::open(&path).expect("a SQLite file");
        db.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three');",
        )
        .expect("a table");
        Self(path)
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Serves `db` on a free loopback port with `configure` applied.
async fn serve(db: &TempDb, configure: impl FnOnce(&mut ServeOptions)) -> Running {
    let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    options.shutdown_grace = Duration::from_secs(2);
    configure(&mut options);
    let sqlite = SqliteDb::open_with(&db.0, SqliteOptions::default()).expect("opens");
    serve_database(
        options,
        sqlite.sql_executor(),
        sqlite.schema().clone(),
        "A test database.",
    )
    .await
    .expect("serves")
}

/// One response: status, headers (lower-case names) and body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON, or the first SSE `data:` line's.
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .ok()
            .or_else(|| {
                self.body
                    .lines()
                    .find_map(|line| line.strip_prefix("data:"))
                    .and_then(|data| serde_json::from_str(data.trim()).ok())
            })
            .unwrap_or_else(|| panic!("a JSON body: {}", self.body))
    }
}

/// Sends one HTTP/1.1 request on a fresh connection (`Connection: close`) and reads the reply.
async fn send(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut raw))
        .await
        .expect("a reply within 20 s")
        .expect("reads");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let body = if chunked { dechunk(rest) } else { rest.to_owned() };
    Reply {
        status,
        headers,
        body,
    }
}

/// The payload of a chunked body.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        body.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    body
}

const JSON_POST: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "dual-serve-test", "version": "0"}}})
    .to_string()
}

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
