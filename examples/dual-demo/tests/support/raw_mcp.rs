//! A raw MCP session over HTTP (JSON-RPC by hand, no SDK smoothing anything over) with the client
//! capabilities a test chooses: an `initialize` handshake and a session id before 2026-07-28, the
//! version and capabilities in every request's `_meta` from 2026-07-28 on.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::Full;
use serde_json::{Value, json};

/// The first version without an `initialize` handshake.
pub(crate) const PER_REQUEST_VERSION: &str = "2026-07-28";

/// The capabilities of an MCP Apps host: the extension with the view's MIME type.
pub(crate) fn apps_capabilities() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// One session.
#[derive(Debug)]
pub(crate) struct RawMcp {
    url: String,
    id: Option<String>,
    version: &'static str,
    capabilities: Value,
    token: Option<String>,
    next: u64,
}

impl RawMcp {
    /// Opens a session with the server at `addr` as a client of `version` with `capabilities`,
    /// sending `Authorization: Bearer TOKEN` when `token` is given.
    pub(crate) async fn open(
        addr: SocketAddr,
        version: &'static str,
        capabilities: Value,
        token: Option<&str>,
    ) -> Self {
        let mut session = Self {
            url: format!("http://{addr}/mcp"),
            id: None,
            version,
            capabilities,
            token: token.map(str::to_owned),
            next: 0,
        };
        if version >= PER_REQUEST_VERSION {
            return session;
        }
        let params = json!({"protocolVersion": version, "capabilities": session.capabilities,
                            "clientInfo": {"name": "apps-test", "version": "0"}});
        let (status, id, body) = session
            .send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        session.id = id;
        let (status, _, body) = session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        session
    }

    /// The protocol version the session speaks.
    pub(crate) fn version(&self) -> &'static str {
        self.version
    }

    async fn send(&self, message: &Value) -> (StatusCode, Option<String>, String) {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(&self.url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        // The header exists from 2025-06-18 on; a 2025-03-26 client does not send it.
        if self.version >= "2025-06-18" {
            builder = builder.header("mcp-protocol-version", self.version);
        }
        if let Some(id) = &self.id {
            builder = builder.header("mcp-session-id", id);
        }
        if let Some(token) = &self.token {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if self.version >= PER_REQUEST_VERSION {
            let params = &message["params"];
            let name = params["name"].as_str().or_else(|| params["uri"].as_str());
            if let Some(method) = message["method"].as_str() {
                builder = builder.header("mcp-method", method);
            }
            if let Some(name) = name {
                builder = builder.header("mcp-name", name);
            }
        }
        let request = builder
            .body(Full::new(Bytes::from(message.to_string())))
            .expect("a request");
        exchange(request).await
    }

    /// The whole JSON-RPC response to `method` with `params`.
    pub(crate) async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        if self.version >= PER_REQUEST_VERSION {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "apps-test", "version": "0"},
            });
        }
        let (status, _, body) = self
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(status, StatusCode::OK, "{method}: {body}");
        messages(&body)
            .into_iter()
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("{method}: no response in {body}"))
    }

    /// The result of `method`; panics on a JSON-RPC error.
    pub(crate) async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// `tools/call` of `tool` with `arguments`; panics on a JSON-RPC error.
    pub(crate) async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }
}

/// One HTTP exchange with an MCP endpoint: status, session id, raw body.
pub(crate) async fn exchange(request: Request<Full<Bytes>>) -> (StatusCode, Option<String>, String) {
    let reply = super::http::exchange(request).await;
    let session = reply
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (reply.status, session, reply.text())
}

/// The JSON-RPC messages of a body: plain JSON, or the `data:` lines of an event stream.
pub(crate) fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The `field` (`"type"`, `"text"`, …) of each content block of a raw tool result that has it.
pub(crate) fn block_fields(result: &Value, field: &str) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block[field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
