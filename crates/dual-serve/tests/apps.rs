//! MCP Apps links over real sockets, with `DatabaseMcp` on a SQLite file behind bearer tokens: the
//! links the app-only tool `dual_download_link` mints (and the download line of a result) fetch
//! every row without an `Authorization` header, only for the owner who asked; a bad link is the
//! unknown id's 404; without a link the bearer check stands. What MCP Apps adds to the MCP surface
//! is dual-rmcp's `tests/apps.rs`.

mod common;

use std::net::SocketAddr;

use common::{JSON_POST, Reply, TempDb, send, serve};
use dual_rmcp::apps::AppsOptions;
use dual_serve::Running;
use dual_serve::auth::AuthTokens;
use serde_json::{Value, json};

/// The first version without an `initialize` handshake.
const PER_REQUEST_VERSION: &str = "2026-07-28";
/// Every row of the small table (3), of which results show 2.
const SQL: &str = "SELECT id, name FROM t ORDER BY id";
/// The bearer tokens of two owners.
const ALICE: &str = "token-of-alice";
const BOB: &str = "token-of-bob";

/// Serves `db` with results of 2 sample rows, to the bearers of [`ALICE`] and [`BOB`] only.
async fn serve_for_owners(db: &TempDb) -> Running {
    let tokens = AuthTokens::parse(&format!("{ALICE} alice\n{BOB} bob\n")).expect("tokens");
    serve(db, |o| {
        o.authentication = dual_serve::auth::Authentication::Tokens(tokens);
        o.sample_size = 2;
    })
    .await
}

/// The capabilities of an MCP Apps host: the extension with the view's MIME type.
fn apps_capabilities() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// An MCP client over HTTP with raw JSON-RPC: an `initialize` handshake and a session before
/// 2026-07-28, the version and capabilities in every request's `_meta` from then on.
struct Mcp {
    addr: SocketAddr,
    version: &'static str,
    capabilities: Value,
    token: Option<&'static str>,
    session: Option<String>,
    next: u64,
}

impl Mcp {
    /// A client of the server at `addr` speaking `version` with `capabilities`, sending
    /// `Authorization: Bearer TOKEN` when `token` is given.
    async fn open(
        addr: SocketAddr,
        version: &'static str,
        capabilities: Value,
        token: Option<&'static str>,
    ) -> Self {
        let mut mcp = Self {
            addr,
            version,
            capabilities,
            token,
            session: None,
            next: 0,
        };
        if version < PER_REQUEST_VERSION {
            let params = json!({"protocolVersion": version, "capabilities": mcp.capabilities,
                                "clientInfo": {"name": "dual-serve-test", "version": "0"}});
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params});
            let reply = mcp.post(&init, None).await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            mcp.session = reply.header("mcp-session-id").map(str::to_owned);
            assert!(mcp.session.is_some(), "a session");
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let reply = mcp.post(&initialized, None).await;
            assert_eq!(reply.status, 202, "{}", reply.body);
        }
        mcp
    }

    /// `POST /mcp` of `message` with the client's headers (and `Mcp-Name: name` from 2026-07-28).
    async fn post(&self, message: &Value, name: Option<&str>) -> Reply {
        let bearer = self.token.map(|token| format!("Bearer {token}"));
        let mut headers = JSON_POST.to_vec();
        let optional = [
            ("Authorization", bearer.as_deref()),
            ("Mcp-Session-Id", self.session.as_deref()),
            ("Mcp-Protocol-Version", Some(self.version)),
        ];
        headers.extend(optional.into_iter().filter_map(|(h, v)| v.map(|v| (h, v))));
        if self.version >= PER_REQUEST_VERSION {
            headers.push(("Mcp-Method", message["method"].as_str().unwrap_or_default()));
            headers.extend(name.map(|name| ("Mcp-Name", name)));
        }
        send(self.addr, "POST", "/mcp", &headers, &message.to_string()).await
    }

    /// The result of `tools/call` of `tool` with `arguments`; panics on a JSON-RPC error.
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let mut params = json!({"name": tool, "arguments": arguments});
        if self.version >= PER_REQUEST_VERSION {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "dual-serve-test", "version": "0"},
            });
        }
        let request = json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call", "params": params});
        let reply = self.post(&request, Some(tool)).await;
        assert_eq!(reply.status, 200, "{tool}: {}", reply.body);
        // The body is the answer, or an event stream whose `data:` lines hold it.
        let answer = std::iter::once(reply.body.as_str())
            .chain(reply.body.lines().filter_map(|line| line.strip_prefix("data:")))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message["id"] == self.next)
            .unwrap_or_else(|| panic!("{tool}: no answer in {}", reply.body));
        assert!(answer.get("error").is_none(), "{tool}: {answer}");
        answer["result"].clone()
    }
}

/// The first text block of a result.
fn summary(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// `GET url` (a URL of the server at `addr`) with no `Authorization` header.
async fn get(addr: SocketAddr, url: &str) -> Reply {
    let path = url
        .strip_prefix(&format!("http://{addr}"))
        .unwrap_or_else(|| panic!("{url} is not on {addr}"));
    send(addr, "GET", path, &[], "").await
}

/// The rows of a CSV (after its header) or NDJSON body.
fn rows_of(format: &str, body: &str) -> u64 {
    let lines = body.lines().filter(|line| !line.is_empty()).count() as u64;
    if format == "csv" { lines - 1 } else { lines }
}

/// A result of `query` for `host`: its URI, its REST URL and its total count (more rows than the
/// sample shows).
async fn query(host: &mut Mcp) -> (String, String, u64) {
    let result = host.call("query", json!({"sql": SQL})).await;
    let structured = &result["structuredContent"];
    let total = structured["metadata"]["total_count"]
        .as_u64()
        .unwrap_or_else(|| panic!("a count: {result}"));
    assert_eq!(
        (total, structured["results"].as_array().map(Vec::len)),
        (3, Some(2)),
        "{result}"
    );
    let uri = structured["resource"]["uri"].as_str().unwrap_or_default();
    let url = structured["resource"]["url"].as_str().unwrap_or_default();
    (uri.to_owned(), url.to_owned(), total)
}

/// A link from `dual_download_link` with `arguments`.
async fn link(host: &mut Mcp, arguments: Value) -> String {
    let result = host.call("dual_download_link", arguments).await;
    assert_ne!(result["isError"], true, "{result}");
    let url = result["structuredContent"]["url"].as_str().unwrap_or_default();
    url.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_hosts_links_download_every_row_without_a_header_for_its_owner_only() {
    let db = TempDb::new();
    let running = serve_for_owners(&db).await;
    let addr = running.addr;
    for version in ["2025-11-25", PER_REQUEST_VERSION] {
        let mut host = Mcp::open(addr, version, apps_capabilities(), Some(ALICE)).await;
        let (uri, _, total) = query(&mut host).await;
        for format in ["csv", "ndjson"] {
            let url = link(&mut host, json!({"uri": uri, "format": format})).await;
            let reply = get(addr, &url).await;
            assert_eq!(reply.status, 200, "{url}: {}", reply.body);
            assert_eq!(rows_of(format, &reply.body), total, "{version} {format}");
        }
        let page = link(&mut host, json!({"uri": uri, "view": true})).await;
        let reply = get(addr, &page).await;
        assert_eq!(reply.status, 200, "{page}");
        assert!(reply.body.contains(r#"content="rest""#), "the REST page");

        // Another owner, even through an apps host, finds nothing.
        let mut bob = Mcp::open(addr, version, apps_capabilities(), Some(BOB)).await;
        let stolen = bob
            .call("dual_download_link", json!({"uri": uri, "format": "csv"}))
            .await;
        assert_eq!(stolen["isError"], true, "{stolen}");
        assert_eq!(summary(&stolen), format!("resource not found or expired: {uri}"));
    }
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_passes_the_bearer_check_and_a_bad_one_is_not_found() {
    let db = TempDb::new();
    let running = serve_for_owners(&db).await;
    let addr = running.addr;
    let mut host = Mcp::open(addr, "2025-11-25", apps_capabilities(), Some(ALICE)).await;
    let (uri, rest, total) = query(&mut host).await;
    let url = link(&mut host, json!({"uri": uri, "format": "csv"})).await;
    // No header, a valid link: every row.
    let reply = get(addr, &url).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(rows_of("csv", &reply.body), total);
    // No header, a tampered token (or another id, or a widened export): 404 like an unknown id.
    let (head, token) = url.rsplit_once("&token=").expect("a token");
    let flipped = if token.starts_with('A') { "B" } else { "A" };
    let unknown = get(
        addr,
        &format!("http://{addr}/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data?format=csv&expires=1&token=x"),
    )
    .await;
    assert_eq!(unknown.status, 404);
    for bad in [
        format!("{head}&token={flipped}{}", &token[1..]),
        format!("{head}&token={}", &token[..token.len() - 1]),
        url.replace("format=csv", "format=ndjson"),
        format!("{url}&offset=1"),
    ] {
        let reply = get(addr, &bad).await;
        assert_eq!(reply.status, 404, "{bad}: {}", reply.body);
        assert_eq!(reply.json(), unknown.json(), "{bad}");
    }
    // No header and no token: 401, as before.
    let reply = get(addr, &format!("{rest}/data?format=csv")).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    // A token never opens /mcp.
    let reply = send(addr, "GET", "/mcp?token=x", &[], "").await;
    assert_eq!(reply.status, 401);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_download_line_of_a_result_downloads_every_row() {
    let db = TempDb::new();
    let running = serve(&db, |o| {
        o.apps = AppsOptions::new().download_link(true);
        o.sample_size = 2;
    })
    .await;
    let addr = running.addr;
    let mut host = Mcp::open(addr, "2025-11-25", apps_capabilities(), None).await;
    let result = host.call("query", json!({"sql": SQL})).await;
    let total = result["structuredContent"]["metadata"]["total_count"]
        .as_u64()
        .unwrap_or_else(|| panic!("a count: {result}"));
    let line = summary(&result).lines().last().unwrap_or_default();
    assert!(line.starts_with("Download every row as CSV"), "{result}");
    let url = line.rsplit_once(": ").map(|(_, url)| url).unwrap_or_default();
    let reply = get(addr, url).await;
    assert_eq!(reply.status, 200, "{url}");
    assert_eq!(rows_of("csv", &reply.body), total);
    running.shutdown().await;
}
