//! Routes `/mcp` to rmcp and `/resources` to dual-http, after the checks both share: the bearer
//! token (with `--auth-tokens`), the request body's deadline, and for a new MCP session the cap.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dual_http::{CallerFromExtensions, DualHttp};
use dual_server::Caller;
use dual_server::DualResponseServer;
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

use super::backoff::LogThrottle;
use super::drain_body::DrainBody;
use super::mcp_checks::{self, MAX_MCP_BODY_BYTES};
use super::request_body::TimedBody;
use super::sessions::SessionCap;
use super::{MCP_PATH, REST_PREFIX, RouterBody, ServeOptions, reply};
use crate::auth::AuthTokens;
use crate::mcp_server::DemoMcp;

/// Routes `/mcp` to rmcp and `/resources` to dual-http.
#[derive(Clone)]
pub struct Router {
    mcp: StreamableHttpService<DemoMcp, LocalSessionManager>,
    /// Whether `/mcp` is served (not when MCP runs on stdio).
    serve_mcp: bool,
    rest: DualHttp,
    sessions: SessionCap,
    auth: Option<AuthTokens>,
    body_timeout: Duration,
    draining: CancellationToken,
    /// One "cap reached" line per second; a std mutex, never held across an `.await`.
    cap_log: Arc<Mutex<LogThrottle>>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("rest", &self.rest)
            .field("sessions", &self.sessions)
            .field("auth", &self.auth)
            .field("body_timeout", &self.body_timeout)
            .finish_non_exhaustive()
    }
}

/// Where a request goes.
enum Target {
    Mcp,
    Rest,
}

impl Router {
    /// A router over `server`; MCP accepts `Host` headers of loopback names, of `addr` and of the
    /// host of `base_url` (rmcp's DNS-rebinding protection). Cancelling `sessions` ends every MCP
    /// session; cancelling `draining` ends the open `GET /mcp` event streams.
    pub(super) fn new(
        server: DualResponseServer,
        addr: SocketAddr,
        base_url: &str,
        options: &ServeOptions,
        sessions: CancellationToken,
        draining: CancellationToken,
    ) -> Self {
        let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
        hosts.push(addr.ip().to_string());
        if let Some(host) = base_url
            .parse::<http::Uri>()
            .ok()
            .and_then(|uri| uri.host().map(str::to_owned))
        {
            hosts.push(host);
        }
        // No SSE priming events: they exist for resuming a stream from an event store, which this
        // server has none of, and clients of versions before 2025-11-25 do not expect them (the
        // Python SDK 1.9.4 logs a parse error for each).
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_cancellation_token(sessions)
            .with_sse_retry(None)
            .with_max_request_body_bytes(MAX_MCP_BODY_BYTES);
        let cap = SessionCap::new(options.max_mcp_sessions, options.mcp_session_idle);
        let mcp_server = server.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(DemoMcp::new(mcp_server.clone())),
            cap.manager(),
            config,
        );
        let rest = DualHttp::builder(server)
            .prefix(REST_PREFIX)
            .authorize(CallerFromExtensions)
            .build();
        Self {
            mcp,
            serve_mcp: options.serve_mcp_over_http,
            rest,
            sessions: cap,
            auth: options.auth_tokens.clone(),
            body_timeout: options.body_timeout,
            draining,
            cap_log: Arc::new(Mutex::new(LogThrottle::new(Duration::from_secs(1)))),
        }
    }

    /// Answers one request.
    pub async fn route(&self, mut request: Request<Incoming>) -> Response<RouterBody> {
        let path = request.uri().path();
        let target = if path == MCP_PATH || path.starts_with("/mcp/") {
            if !self.serve_mcp {
                return reply::mcp_not_served();
            }
            Target::Mcp
        } else if path == REST_PREFIX || path.starts_with("/resources/") {
            Target::Rest
        } else {
            return reply::not_found();
        };
        if let Some(tokens) = &self.auth {
            match tokens.authenticate(request.headers()) {
                Ok(owner) => {
                    // The server authorizes with the `Caller`: dual-http's `CallerFromExtensions` and
                    // dual-rmcp's `caller_from_extensions` read it back from here.
                    request.extensions_mut().insert(Caller::owner(owner.0.clone()));
                    request.extensions_mut().insert(owner);
                }
                Err(failure) => {
                    tracing::debug!(path, %failure, "unauthorized request");
                    return reply::unauthorized(failure);
                }
            }
        }
        let (parts, body) = request.into_parts();
        let body = TimedBody::new(body, self.body_timeout);
        let expired = body.expired_flag();
        let request = Request::from_parts(parts, body);
        let response = match target {
            Target::Mcp => self.mcp(request).await,
            Target::Rest => self
                .rest
                .handle(request)
                .await
                .map(|body| body.map_err(Into::into).boxed_unsync()),
        };
        if expired.load(Ordering::Acquire) {
            return reply::request_timeout(self.body_timeout);
        }
        response
    }

    async fn mcp(&self, request: Request<TimedBody<Incoming>>) -> Response<RouterBody> {
        // A POST without a session id starts a session (an `initialize`); rmcp refuses any other
        // message without one, so holding a slot for those too costs nothing.
        let new_session =
            request.method() == Method::POST && !request.headers().contains_key(HEADER_SESSION_ID);
        let _admission = if new_session {
            match self.sessions.admit().await {
                Some(admission) => Some(admission),
                None => {
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
                    return reply::too_many_sessions(self.sessions.max());
                }
            }
        } else {
            None
        };
        if request.method() == Method::DELETE
            && let Some(id) = request
                .headers()
                .get(HEADER_SESSION_ID)
                .and_then(|v| v.to_str().ok())
            && !self.sessions.contains(id).await
        {
            return mcp_checks::unknown_session();
        }
        let event_stream = request.method() == Method::GET;
        let response = if request.method() == Method::POST && mcp_checks::is_json(request.headers()) {
            match mcp_checks::checked_post(request).await {
                Ok(request) => self.mcp.handle(request).await,
                Err(response) => return response,
            }
        } else {
            self.mcp.handle(request).await
        };
        if event_stream {
            let draining = self.draining.clone();
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
