//! The routes: dual-http under `/resources` and rmcp at `/mcp` (`super::mcp_endpoint`), both behind
//! `super::guard`, matched on the path alone (no web framework: a page is the request served most,
//! so it pays for no routing table and no boxed middleware). With OAuth, the Protected Resource
//! Metadata is served, to everyone, at `/.well-known/oauth-protected-resource` (and that path
//! followed by the resource's path). Anything else is a JSON `404`.

use std::net::SocketAddr;

use dual_http::{CallerFromExtensions, DualHttp};
use dual_server::DualResponseServer;
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::guard::{self, Guard};
use super::mcp_endpoint::{self, McpEndpoint};
use super::running::Switches;
use super::{Body, MCP_PATH, REST_PREFIX, ServeOptions, reply};
use crate::auth::Authenticator;

/// Routes `/mcp` to rmcp and `/resources` to dual-http.
#[derive(Debug, Clone)]
pub struct Router {
    rest: DualHttp,
    guard: Guard,
    /// `None` when MCP is served on stdio: `/mcp` is then a 404 for everyone.
    mcp: Option<McpEndpoint>,
}

impl Router {
    /// A router over `server`; MCP (when `options.serve_mcp_over_http`) runs a handler made by
    /// `make_mcp` per session, accepts `Host` headers of loopback names, of `addr` and of the host
    /// of `base_url` (rmcp's DNS-rebinding protection), and stops with `switches`; `auth` checks the
    /// callers of both endpoints.
    pub(super) fn new(
        server: DualResponseServer,
        addr: SocketAddr,
        base_url: &str,
        options: &ServeOptions,
        auth: Authenticator,
        switches: &Switches,
        make_mcp: mcp_endpoint::MakeService,
    ) -> Self {
        let rest = DualHttp::builder(server.clone())
            .prefix(REST_PREFIX)
            .authorize(CallerFromExtensions)
            .build();
        let guard = Guard {
            auth,
            body_timeout: options.body_timeout,
        };
        let mcp = options.serve_mcp_over_http.then(|| {
            let hosts = mcp_endpoint::allowed_hosts(addr, base_url);
            McpEndpoint::new(&server, hosts, options, switches, make_mcp)
        });
        Self { rest, guard, mcp }
    }

    /// Answers one request.
    pub async fn route(&self, request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path();
        if let Authenticator::OAuth(oauth) = &self.guard.auth
            && oauth.metadata().is_served_at(path)
        {
            return oauth.metadata().respond(request.method());
        }
        if is_under(path, REST_PREFIX) {
            return guard::admit(&self.guard, request, |request| async {
                self.rest
                    .handle(request)
                    .await
                    .map(|body| body.map_err(Into::into).boxed_unsync())
            })
            .await;
        }
        if !is_under(path, MCP_PATH) {
            return reply::not_found();
        }
        match &self.mcp {
            Some(endpoint) => {
                guard::admit(&self.guard, request, |request| {
                    endpoint.handle(request.map(|body| body.map_err(std::io::Error::other).boxed_unsync()))
                })
                .await
            }
            None => reply::mcp_not_served(),
        }
    }
}

/// Whether `path` is `prefix` or below it (`prefix` is a whole segment).
fn is_under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::is_under;
    use crate::{MCP_PATH, REST_PREFIX};

    #[test]
    fn a_prefix_is_a_whole_segment() {
        for path in [
            "/resources",
            "/resources/",
            "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data",
        ] {
            assert!(is_under(path, REST_PREFIX), "{path}");
        }
        for path in ["/", "/resourcesX/1", "/mcp", "/mcp/resources/1", "/resource"] {
            assert!(!is_under(path, REST_PREFIX), "{path}");
        }
        assert!(is_under("/mcp", MCP_PATH));
        assert!(is_under("/mcp/", MCP_PATH));
        assert!(!is_under("/mcpx", MCP_PATH));
    }
}
