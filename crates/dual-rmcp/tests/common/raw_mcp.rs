//! A raw MCP session with a handler served in this process: JSON-RPC written and read by hand,
//! one message a line, so a test sees every byte the server sends (no SDK type drops or adds a
//! field), with the client capabilities and protocol version the test chooses: an `initialize`
//! handshake before 2026-07-28, the version and capabilities in every request's `_meta` from
//! 2026-07-28 on.

use std::time::Duration;

use dual_rmcp::rmcp::ServerHandler;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio::time::timeout;

/// The first version without an `initialize` handshake.
pub(crate) const PER_REQUEST_VERSION: &str = "2026-07-28";
/// Longest wait for one answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// The capabilities of an MCP Apps host: the extension with the view's MIME type.
pub(crate) fn apps_capabilities() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// One session; see the module docs.
#[derive(Debug)]
pub(crate) struct RawMcp {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    version: &'static str,
    capabilities: Value,
    next: u64,
}

impl RawMcp {
    /// A session with `mcp`, served in this process, as a client of `version` with
    /// `capabilities`: after the handshake before 2026-07-28, at once from then on.
    pub(crate) async fn open(mcp: impl ServerHandler, version: &'static str, capabilities: Value) -> Self {
        let (read, write) = tokio::io::split(super::serve_in_process(mcp));
        let mut session = Self {
            write,
            lines: BufReader::new(read).lines(),
            version,
            capabilities,
            next: 0,
        };
        if version < PER_REQUEST_VERSION {
            let params = json!({"protocolVersion": version, "capabilities": session.capabilities,
                                "clientInfo": {"name": "raw-mcp-test", "version": "0"}});
            let initialized = session.answer("initialize", params).await;
            assert_eq!(initialized["result"]["protocolVersion"], version, "{initialized}");
            session
                .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
        }
        session
    }

    /// The protocol version the session speaks.
    pub(crate) fn version(&self) -> &'static str {
        self.version
    }

    /// The whole JSON-RPC response to `method` with `params` (and from 2026-07-28 on the
    /// session's version and capabilities in its `_meta`).
    pub(crate) async fn request(&mut self, method: &str, mut params: Value) -> Value {
        if self.version >= PER_REQUEST_VERSION {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "raw-mcp-test", "version": "0"},
            });
        }
        self.answer(method, params).await
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

    /// Sends request `method` with `params` as they are and reads up to its answer (within
    /// [`ANSWER_WITHIN`]), passing over the notifications before it.
    async fn answer(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = timeout(ANSWER_WITHIN, async {
            loop {
                let line = self
                    .lines
                    .next_line()
                    .await
                    .unwrap_or_else(|e| panic!("{method}: {e}"))
                    .unwrap_or_else(|| panic!("{method}: the server closed the session"));
                let message: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{method}: {e}: {line}"));
                if message["id"] == id {
                    return message;
                }
            }
        })
        .await;
        answer.unwrap_or_else(|_| panic!("{method}: no answer within {ANSWER_WITHIN:?}"))
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write
            .write_all(line.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
}
