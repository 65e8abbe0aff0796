//! The protocol tests' raw MCP sessions: [`RawMcp`] against an in-process server, checking that no
//! answer holds rmcp's priming event.

use serde_json::Value;

use crate::support::in_process::InProcess;
use crate::support::raw_mcp::RawMcp;

/// A session of `version` with `server`, not opened (no handshake).
pub(crate) fn new(server: &InProcess, version: &'static str) -> RawMcp {
    RawMcp::new(server.mcp_url(), version).no_priming()
}

/// A session of `version` with `server` after its `initialize` handshake, and the response to
/// `initialize`.
pub(crate) async fn open(server: &InProcess, version: &'static str) -> (RawMcp, Value) {
    let mut session = new(server, version);
    let initialize = session.handshake().await;
    (session, initialize)
}
