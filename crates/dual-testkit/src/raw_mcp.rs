//! A raw MCP session over HTTP (JSON-RPC by hand, no SDK smoothing anything over) with the client
//! capabilities a test chooses: an `initialize` handshake and a session id before 2026-07-28, the
//! version and capabilities in every request's `_meta` from 2026-07-28 on. Each request is one
//! HTTP/1.1 exchange on a fresh connection ([`send`]), read to its end.
//!
//! ```no_run
//! use dual_testkit::raw_mcp::RawMcp;
//! use serde_json::json;
//!
//! # async fn run(addr: std::net::SocketAddr) {
//! let mut session = RawMcp::open(addr, "2025-06-18", json!({}), None).await;
//! let tools = session.result("tools/list", json!({})).await;
//! assert!(tools["tools"].is_array());
//! # }
//! ```

mod wire;

use std::net::SocketAddr;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::Full;
use serde_json::{Value, json};

pub use wire::{REPLY_WITHIN, Reply, send};

/// The first version without an `initialize` handshake.
pub const PER_REQUEST_VERSION: &str = "2026-07-28";

/// The capabilities of an MCP Apps host: the extension with the view's MIME type.
pub fn apps_capabilities() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// One session; see the module docs.
#[derive(Debug)]
pub struct RawMcp {
    url: String,
    id: Option<String>,
    version: &'static str,
    capabilities: Value,
    token: Option<String>,
    /// Whether every answer is checked for an SSE event without data (rmcp's priming event).
    no_priming: bool,
    next: u64,
}

impl RawMcp {
    /// A session with the MCP endpoint at `url` as a client of `version` with no capabilities,
    /// not opened: before 2026-07-28 its requests carry no session id until [`Self::handshake`].
    pub fn new(url: String, version: &'static str) -> Self {
        Self {
            url,
            id: None,
            version,
            capabilities: json!({}),
            token: None,
            no_priming: false,
            next: 0,
        }
    }

    /// The client's `capabilities`, sent at the handshake or in every request's `_meta`.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sends `Authorization: Bearer TOKEN` with every request.
    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }

    /// Asserts that no answer holds an empty SSE event (rmcp's priming event), which clients before
    /// 2025-11-25 do not expect.
    pub fn no_priming(mut self) -> Self {
        self.no_priming = true;
        self
    }

    /// Opens a session with the server at `addr` as a client of `version` with `capabilities`,
    /// sending `Authorization: Bearer TOKEN` when `token` is given: the handshake before
    /// 2026-07-28, nothing from then on.
    pub async fn open(
        addr: SocketAddr,
        version: &'static str,
        capabilities: Value,
        token: Option<&str>,
    ) -> Self {
        let mut session = Self::new(format!("http://{addr}/mcp"), version).capabilities(capabilities);
        if let Some(token) = token {
            session = session.token(token);
        }
        if !session.per_request() {
            session.handshake().await;
        }
        session
    }

    /// The `initialize` handshake and its `notifications/initialized`: the response to
    /// `initialize`, whose session id the session keeps.
    pub async fn handshake(&mut self) -> Value {
        let params = json!({"protocolVersion": self.version, "capabilities": self.capabilities,
                            "clientInfo": {"name": "raw-mcp-test", "version": "0"}});
        let (status, id, body) = exchange(self.post(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params
        })))
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        self.check(&body);
        self.id = id;
        let initialize = messages(&body).into_iter().next().unwrap_or_default();
        let (status, _, body) =
            exchange(self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        initialize
    }

    /// The protocol version the session speaks.
    pub fn version(&self) -> &'static str {
        self.version
    }

    /// Whether the session speaks a version without a handshake (the version in every request).
    pub fn per_request(&self) -> bool {
        self.version >= PER_REQUEST_VERSION
    }

    /// A `POST` of `message` with the session's headers, and from 2026-07-28 on the SEP-2243
    /// `Mcp-Method` and `Mcp-Name` headers.
    pub fn post(&self, message: &Value) -> Request<Full<Bytes>> {
        let mut request = self.raw(Method::POST, "application/json", message.to_string());
        if self.per_request() {
            let params = &message["params"];
            let name = params["name"].as_str().or_else(|| params["uri"].as_str());
            for (header, value) in [("mcp-method", message["method"].as_str()), ("mcp-name", name)] {
                if let Some(value) = value {
                    request
                        .headers_mut()
                        .insert(header, value.parse().expect("an ASCII header value"));
                }
            }
        }
        request
    }

    /// A request to the endpoint with the session's headers (session id, version, token) and `body`.
    pub fn raw(&self, method: Method, content_type: &str, body: String) -> Request<Full<Bytes>> {
        let mut builder = Request::builder()
            .method(method)
            .uri(&self.url)
            .header(header::CONTENT_TYPE, content_type)
            .header(header::ACCEPT, "application/json, text/event-stream");
        if let Some(id) = &self.id {
            builder = builder.header("mcp-session-id", id);
        }
        // The header exists from 2025-06-18 on; a 2025-03-26 client does not send it.
        if self.version >= "2025-06-18" {
            builder = builder.header("mcp-protocol-version", self.version);
        }
        if let Some(token) = &self.token {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        builder.body(Full::new(Bytes::from(body))).expect("a request")
    }

    /// The whole JSON-RPC response to `method` with `params`.
    pub async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        if self.per_request() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "raw-mcp-test", "version": "0"},
            });
        }
        let (status, _, body) = exchange(self.post(&json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params
        })))
        .await;
        assert_eq!(status, StatusCode::OK, "{method}: {body}");
        self.check(&body);
        messages(&body)
            .into_iter()
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("{method}: no response in {body}"))
    }

    /// The result of `method`; panics on a JSON-RPC error.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// `tools/call` of `tool` with `arguments`; panics on a JSON-RPC error.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    /// With [`Self::no_priming`]: no event of `body` lacks data (a JSON body, as the server's own
    /// answers before rmcp are, has no events).
    fn check(&self, body: &str) {
        if !self.no_priming || serde_json::from_str::<Value>(body).is_ok() {
            return;
        }
        for event in body.split("\n\n") {
            let has_data = event.lines().any(|line| {
                line.strip_prefix("data:")
                    .is_some_and(|data| !data.trim().is_empty())
            });
            assert!(
                event.trim().is_empty() || has_data,
                "an event without data: {event:?}"
            );
        }
    }
}

/// One HTTP exchange with an MCP endpoint on a fresh connection ([`send`]): status, session id, raw
/// body.
///
/// # Panics
/// As [`send`].
pub async fn exchange(request: Request<Full<Bytes>>) -> (StatusCode, Option<String>, String) {
    let reply = send(request).await;
    let session = reply
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (reply.status, session, reply.text())
}

/// The JSON-RPC messages of a body: plain JSON, or the `data:` lines of an event stream.
pub fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The `field` (`"type"`, `"text"`, …) of each content block of a raw tool result that has it.
pub fn block_fields(result: &Value, field: &str) -> Vec<String> {
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
