//! The demo's MCP client: rmcp's streamable-HTTP client transport over its own reqwest client.
//!
//! rmcp's transport does the protocol (POST a message, read a JSON or SSE answer, the `GET` event
//! stream, `DELETE` at the end) with the limits the demo relies on: 16 MiB per JSON answer or SSE
//! event, 64 KiB per error body. The demo talks to its own server over plain `http://`; reqwest is
//! the one object_store already brings (for the S3 spool), rustls with ring, no native TLS.

use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// Connects an rmcp client (with no client-side handlers) to the streamable-HTTP endpoint `url`
/// (e.g. `http://127.0.0.1:8080/mcp`) and initializes the session.
///
/// # Errors
/// The initialization error (connection refused, not an MCP endpoint, …).
pub async fn connect(url: &str) -> Result<RunningService<RoleClient, ()>, ClientInitializeError> {
    connect_with(StreamableHttpClientTransportConfig::with_uri(url.to_owned())).await
}

/// [`connect`], sending `Authorization: Bearer TOKEN` with every request (for a server started with
/// `--auth-tokens`).
///
/// # Errors
/// The initialization error (connection refused, `401` for a wrong token, …).
pub async fn connect_with_token(
    url: &str,
    token: &str,
) -> Result<RunningService<RoleClient, ()>, ClientInitializeError> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    connect_with(config).await
}

async fn connect_with(
    config: StreamableHttpClientTransportConfig,
) -> Result<RunningService<RoleClient, ()>, ClientInitializeError> {
    // reqwest is built without a default crypto provider (as dual-spool's S3 client) and panics
    // building a client without one: rustls' ring provider, unless the application installed one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    ().serve(StreamableHttpClientTransport::from_config(config)).await
}
