//! The routes: dual-http under `/resources`, called straight (a page is the request the demo serves
//! most, so it does not pay for axum's routing and boxed middleware), and rmcp at `/mcp`
//! (`super::mcp_endpoint`) on axum's [`Router`](axum::Router); both behind `super::guard`. Anything
//! else is a JSON `404`.

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
    rest: DualHttp,
    guard: Guard,
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
        let rest = DualHttp::builder(server.clone())
            .prefix(REST_PREFIX)
            .authorize(CallerFromExtensions)
            .build();
        let guard = Guard {
            auth: options.auth_tokens.clone(),
            body_timeout: options.body_timeout,
        };
        let app = if options.serve_mcp_over_http {
            let hosts = mcp_endpoint::allowed_hosts(addr, base_url);
            let endpoint = McpEndpoint::new(server, hosts, options, switches);
            axum::Router::new()
                .nest_service(MCP_PATH, any(mcp_endpoint::handle).with_state(endpoint))
                .route_layer(middleware::from_fn_with_state(guard.clone(), guard::check))
        } else {
            // No guard: with MCP on stdio, `/mcp` is a 404 for everyone.
            axum::Router::new().nest_service(MCP_PATH, any(|| async { reply::mcp_not_served() }))
        };
        Self {
            rest,
            guard,
            app: app.fallback(|| async { reply::not_found() }),
        }
    }

    /// Answers one request.
    pub async fn route(&self, request: Request<Incoming>) -> Response<RouterBody> {
        if is_rest(request.uri().path()) {
            return guard::admit(&self.guard, request, |request| async {
                self.rest.handle(request).await.map(RouterBody::new)
            })
            .await;
        }
        let result: Result<_, Infallible> = self.app.clone().oneshot(request).await;
        match result {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// Whether `path` is dual-http's: `/resources` and everything below it.
fn is_rest(path: &str) -> bool {
    path.strip_prefix(REST_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::is_rest;

    #[test]
    fn the_rest_prefix_is_a_whole_segment() {
        for path in [
            "/resources",
            "/resources/",
            "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data",
        ] {
            assert!(is_rest(path), "{path}");
        }
        for path in ["/", "/resourcesX/1", "/mcp", "/mcp/resources/1", "/resource"] {
            assert!(!is_rest(path), "{path}");
        }
    }
}
