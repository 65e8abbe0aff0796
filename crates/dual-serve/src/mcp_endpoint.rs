//! The `/mcp` endpoint: rmcp's [`StreamableHttpService`] over the caller's handler, behind the MCP
//! session cap and the checks of `super::mcp_checks`, with its `GET /mcp` event streams ended when
//! the server starts draining.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use dual_server::DualResponseServer;
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

use super::backoff::LogThrottle;
use super::drain_body::DrainBody;
use super::mcp_checks::{self, MAX_MCP_BODY_BYTES, McpBody};
use super::running::Switches;
use super::sessions::SessionCap;
use super::{Body, ServeOptions, reply};

/// A response future of rmcp's service (owning what it needs: a borrowing one trips rustc's
/// higher-ranked `Send` check once inside the connection's future).
type McpFuture = Pin<Box<dyn Future<Output = Response<BoxBody<Bytes, Infallible>>> + Send>>;

/// rmcp's [`StreamableHttpService`] over some handler, its type erased so that the router is not
/// generic.
pub(super) trait McpService: Send + Sync {
    /// Answers one request.
    fn call(&self, request: Request<McpBody>) -> McpFuture;
}

impl<H: ServerHandler + Send + 'static> McpService for StreamableHttpService<H, LocalSessionManager> {
    fn call(&self, request: Request<McpBody>) -> McpFuture {
        let service = self.clone();
        Box::pin(async move { service.handle(request).await })
    }
}

/// Builds rmcp's service for a session manager and configuration: the handler factory of
/// [`Bound::serve`](crate::Bound::serve), typed.
pub(super) type MakeService =
    Box<dyn FnOnce(Arc<LocalSessionManager>, StreamableHttpServerConfig) -> Arc<dyn McpService> + Send>;

/// The [`MakeService`] of a handler factory: rmcp calls `make` once per MCP session.
pub(super) fn make_service<H, F>(make: F) -> MakeService
where
    H: ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    Box::new(move |manager, config| Arc::new(StreamableHttpService::new(move || Ok(make()), manager, config)))
}

/// rmcp's service with the server's bounds.
#[derive(Clone)]
pub(super) struct McpEndpoint {
    service: Arc<dyn McpService>,
    sessions: SessionCap,
    draining: CancellationToken,
    /// Whether sessions are kept in a shared store (then any instance restores a session it does
    /// not hold, and such a restore counts against this instance's cap like a new session).
    shared_sessions: bool,
    /// One "cap reached" line per second; a std mutex, never held across an `.await`.
    cap_log: Arc<Mutex<LogThrottle>>,
}

impl McpEndpoint {
    /// rmcp over `server`, accepting the `Host` headers `hosts` (its DNS-rebinding protection).
    /// `switches.mcp_sessions` ends every MCP session; `switches.draining` ends the open
    /// `GET /mcp` event streams.
    pub(super) fn new(
        server: &DualResponseServer,
        hosts: Vec<String>,
        options: &ServeOptions,
        switches: &Switches,
        make: MakeService,
    ) -> Self {
        // No SSE priming events: they exist for resuming a stream from an event store, which this
        // server has none of, and clients of versions before 2025-11-25 do not expect them (the
        // Python SDK 1.9.4 logs a parse error for each).
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_cancellation_token(switches.mcp_sessions.clone())
            .with_sse_retry(None)
            .with_max_request_body_bytes(MAX_MCP_BODY_BYTES);
        // Several instances on one store: a session of a client before 2026-07-28 is restorable on
        // each of them (2026-07-28 has no sessions).
        let shared_sessions = server.store().is_shared();
        if shared_sessions {
            config.session_store = Some(Arc::new(
                dual_rmcp::sessions::StoreSessions::new(server.clone()).ttl(options.mcp_session_ttl),
            ));
        }
        let cap = SessionCap::new(options.max_mcp_sessions, options.mcp_session_idle);
        let service = make(cap.manager(), config);
        Self {
            service,
            sessions: cap,
            draining: switches.draining.clone(),
            shared_sessions,
            cap_log: Arc::new(Mutex::new(LogThrottle::new(Duration::from_secs(1)))),
        }
    }

    /// Logs, at most once a second, that the session cap refused a client.
    fn log_cap_reached(&self) {
        let admitted = self
            .cap_log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit();
        if let Some(suppressed) = admitted {
            tracing::warn!(
                cap = self.sessions.max(),
                suppressed,
                "MCP session cap reached: refusing new sessions"
            );
        }
    }
}

/// The `Host` headers MCP accepts: loopback names, the IP of `addr` and the host of `base_url`.
pub(super) fn allowed_hosts(addr: SocketAddr, base_url: &str) -> Vec<String> {
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    hosts.push(addr.ip().to_string());
    if let Some(host) = base_url
        .parse::<http::Uri>()
        .ok()
        .and_then(|uri| uri.host().map(str::to_owned))
    {
        hosts.push(host);
    }
    hosts
}

impl fmt::Debug for McpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpEndpoint")
            .field("max_sessions", &self.sessions.max())
            .field("shared_sessions", &self.shared_sessions)
            .finish_non_exhaustive()
    }
}

impl McpEndpoint {
    /// Answers one request to `/mcp`. A boxed future owning a clone of the endpoint: one borrowing
    /// it trips rustc's higher-ranked `Send` check inside the connection's future.
    pub(super) fn handle(
        &self,
        request: Request<McpBody>,
    ) -> Pin<Box<dyn Future<Output = Response<Body>> + Send + 'static>> {
        Box::pin(self.clone().answer(request))
    }

    /// Answers one request to `/mcp`.
    async fn answer(self, request: Request<McpBody>) -> Response<Body> {
        let endpoint = &self;
        // A POST without a session id starts a session (an `initialize`); rmcp refuses any other
        // message without one, so holding a slot for those too costs nothing. A session this instance
        // does not hold is restored from the shared store, and takes a slot too.
        let session_id = request
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let held = match &session_id {
            Some(id) => endpoint.sessions.contains(id).await,
            None => false,
        };
        // A 2026-07-28 request has no session (it names its version in `MCP-Protocol-Version`): it takes
        // no session slot, whatever it does or however long it stays open.
        let stateless = request
            .headers()
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|version| version >= "2026-07-28");
        let new_session = match &session_id {
            None => request.method() == Method::POST && !stateless,
            Some(_) => endpoint.shared_sessions && !held,
        };
        let _admission = if new_session {
            let Some(admission) = endpoint.sessions.admit().await else {
                endpoint.log_cap_reached();
                return reply::too_many_sessions(endpoint.sessions.max());
            };
            Some(admission)
        } else {
            None
        };
        if request.method() == Method::DELETE && session_id.is_some() && !held && !endpoint.shared_sessions {
            return mcp_checks::unknown_session();
        }
        let event_stream = request.method() == Method::GET;
        let response = if request.method() == Method::POST && mcp_checks::is_json(request.headers()) {
            match mcp_checks::checked_post(request).await {
                Ok(request) => endpoint.service.call(request).await,
                Err(response) => return response,
            }
        } else {
            endpoint.service.call(request).await
        };
        if event_stream {
            let draining = endpoint.draining.clone();
            response.map(|body| {
                DrainBody::new(body, draining)
                    .map_err(|never| match never {})
                    .boxed_unsync()
            })
        } else {
            response.map(|body| body.map_err(|never| match never {}).boxed_unsync())
        }
    }
}
