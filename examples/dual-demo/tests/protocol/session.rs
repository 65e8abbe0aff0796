//! A raw MCP session of one protocol version, for the protocol tests: requests written as JSON
//! with the headers each version sends, answers read from the SSE or JSON body.

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::Full;
use serde_json::{Value, json};

use crate::support::in_process::InProcess;
use crate::support::raw_mcp::{exchange, messages};

/// A raw MCP session of one protocol version: an `initialize` handshake and a session id before
/// 2026-07-28; from 2026-07-28 on (no handshake, SEP-2567) no session, and every request carries
/// the version and the client's capabilities in its `_meta` and the SEP-2243 `Mcp-Method` and
/// `Mcp-Name` headers.
pub(crate) struct Session {
    url: String,
    id: Option<String>,
    pub(crate) version: &'static str,
    next: u64,
}

/// The first version without an `initialize` handshake.
pub(crate) const PER_REQUEST_VERSION: &str = "2026-07-28";

impl Session {
    pub(crate) async fn open(server: &InProcess, version: &'static str) -> (Self, Value) {
        let mut session = Self::new(server, version);
        let params = json!({"protocolVersion": version, "capabilities": {},
                            "clientInfo": {"name": "protocol-test", "version": "0"}});
        let (status, id, body) = exchange(session.post(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params
        })))
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_no_priming(&body);
        session.id = id;
        let result = messages(&body).into_iter().next().unwrap_or_default();
        let (status, _, body) =
            exchange(session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        (session, result)
    }

    pub(crate) fn new(server: &InProcess, version: &'static str) -> Self {
        Self {
            url: server.mcp_url(),
            id: None,
            version,
            next: 1,
        }
    }

    pub(crate) fn per_request(&self) -> bool {
        self.version >= PER_REQUEST_VERSION
    }

    pub(crate) fn post(&self, message: &Value) -> Request<Full<Bytes>> {
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

    pub(crate) fn raw(&self, method: Method, content_type: &str, body: String) -> Request<Full<Bytes>> {
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
        builder.body(Full::new(Bytes::from(body))).expect("a request")
    }

    /// The whole JSON-RPC response to `method`.
    pub(crate) async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        if self.per_request() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "protocol-test", "version": "0"},
            });
        }
        let (status, _, body) = exchange(self.post(&json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params
        })))
        .await;
        assert_eq!(status, StatusCode::OK, "{method}: {body}");
        assert_no_priming(&body);
        messages(&body)
            .into_iter()
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("{method}: no response in {body}"))
    }

    pub(crate) async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }
}

/// No empty SSE event (rmcp's priming event) that clients before 2025-11-25 do not expect.
fn assert_no_priming(body: &str) {
    for event in body.split("\n\n") {
        let has_data = event
            .lines()
            .any(|line| line.starts_with("data:") && line.len() > 5 && !line[5..].trim().is_empty());
        assert!(
            event.trim().is_empty() || has_data,
            "an event without data: {event:?}"
        );
    }
}
