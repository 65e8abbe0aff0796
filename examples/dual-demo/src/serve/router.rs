//! The routes, on axum's [`Router`](axum::Router): rmcp at `/mcp` (`super::mcp_endpoint`) and
//! dual-http under `/resources`, both behind `super::guard`; anything else is a JSON `404`.

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::middleware;
use axum::routing::any;
use dual_http::{CallerFromExtensions, DualHttp};
use dual_server::DualResponseServer;
use http::{Request, Response};
use hyper::body::Incoming;
use tower::ServiceExt;

use super::guard::{self, Guard};
use super::mcp_endpoint::{self, McpEndpoint};
use super::running::Switches;
use super::{MCP_PATH, REST_PREFIX, RouterBody, ServeOptions, reply};

/// Routes `/mcp` to rmcp and `/resources` to dual-http.
#[derive(Debug, Clone)]
pub struct Router {
    app: axum::Router,
}

impl Router {
    /// A router over `server`; MCP accepts `Host` headers of loopback names, of `addr` and of the
    /// host of `base_url` (rmcp's DNS-rebinding protection), and stops with `switches`.
    pub(super) fn new(
        server: DualResponseServer,
        addr: SocketAddr,
        base_url: &str,
        options: &ServeOptions,
        switches: &Switches,
    ) -> Self {
        // No prefix: `nest_service` strips `/resources` before dual-http sees the path.
        let rest = DualHttp::builder(server.clone())
            .authorize(CallerFromExtensions)
            .build();
        let mut app = axum::Router::new().nest_service(REST_PREFIX, rest);
        if options.serve_mcp_over_http {
            let hosts = mcp_endpoint::allowed_hosts(addr, base_url);
            let endpoint = McpEndpoint::new(server, hosts, options, switches);
            app = app.nest_service(MCP_PATH, any(mcp_endpoint::handle).with_state(endpoint));
        }
        let guard = Guard {
            auth: options.auth_tokens.clone(),
            body_timeout: options.body_timeout,
        };
        let mut app = app.route_layer(middleware::from_fn_with_state(guard, guard::check));
        if !options.serve_mcp_over_http {
            // After the guard: with MCP on stdio, `/mcp` is a 404 for everyone.
            app = app.nest_service(MCP_PATH, any(|| async { reply::mcp_not_served() }));
        }
        Self {
            app: app.fallback(|| async { reply::not_found() }),
        }
    }

    /// Answers one request.
    pub async fn route(&self, request: Request<Incoming>) -> Response<RouterBody> {
        let result: Result<_, Infallible> = self.app.clone().oneshot(request).await;
        match result {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}
