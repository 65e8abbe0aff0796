//! [`Bound`]: the listeners of a server that is not serving yet, and the start of serving.

use std::net::SocketAddr;
use std::sync::Arc;

use dual_server::{DualResponseServer, DualResponseServerBuilder};
use rmcp::ServerHandler;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use super::running::{Running, Switches};
use super::{MCP_PATH, METRICS_PATH, REST_PREFIX, Router, ServeError, ServeOptions};
use super::{accept, conn, mcp_endpoint, metrics, metrics_endpoint, server};
use crate::auth::Authenticator;

/// The bound address (and the metrics listener, when asked for) of a server about to serve: bind
/// first, so that the server's resource links name the real address (`127.0.0.1:0` picks a port),
/// then build the [`DualResponseServer`] ([`Bound::server_builder`]) and [`Bound::serve`] it.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
    addr: SocketAddr,
    base_url: String,
    metrics_addr: Option<SocketAddr>,
    switches: Switches,
    options: ServeOptions,
    auth: Authenticator,
}

impl Bound {
    /// Checks `options`' limits, binds `options.addr` and, with `options.metrics_addr`, installs the
    /// metrics recorder and serves `GET /metrics` there at once.
    ///
    /// # Errors
    /// [`ServeError::Limit`] for a zero limit, [`ServeError::Bind`] when an address cannot be bound,
    /// [`ServeError::OAuth`] when the OAuth resource (by default the MCP URL) is not usable,
    /// [`ServeError::Metrics`] when the metrics recorder cannot be installed.
    pub async fn bind(options: ServeOptions) -> Result<Self, ServeError> {
        if let Some(name) = options.invalid_limit() {
            return Err(ServeError::Limit(name));
        }
        let bind_error = |source| ServeError::Bind {
            addr: options.addr,
            source,
        };
        let listener = TcpListener::bind(options.addr).await.map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let base_url = options
            .base_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}{REST_PREFIX}"));
        let mcp_url = match base_url.strip_suffix(REST_PREFIX) {
            Some(root) => format!("{root}{MCP_PATH}"),
            None => format!("http://{addr}{MCP_PATH}"),
        };
        let auth = Authenticator::new(&options.authentication, &mcp_url)?;
        let switches = Switches::default();
        // Before the server is built, so that what it reports at start (its caps) is recorded.
        let metrics_addr = match options.metrics_addr {
            Some(metrics_addr) => Some(serve_metrics(metrics_addr, &options, &switches).await?),
            None => None,
        };
        Ok(Self {
            listener,
            addr,
            base_url,
            metrics_addr,
            switches,
            options,
            auth,
        })
    }

    /// The bound address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The REST API's base URL in resource links: [`ServeOptions::base_url`], or
    /// `http://{addr}/resources`.
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The options this server was bound with.
    #[must_use]
    pub fn options(&self) -> &ServeOptions {
        &self.options
    }

    /// A [`DualResponseServer`] builder with the store and the spool connected (from
    /// [`ServeOptions::store`] and [`ServeOptions::spool`]) and every limit of the options set; add
    /// the executors and build it.
    ///
    /// # Errors
    /// [`ServeError::Store`] or [`ServeError::Spool`] when one is misnamed or cannot be reached.
    pub async fn server_builder(&self) -> Result<DualResponseServerBuilder, ServeError> {
        server::builder(&self.options, &self.base_url).await
    }

    /// Serves `server`: the REST API at `/resources`, and MCP at `/mcp` (unless
    /// [`ServeOptions::serve_mcp_over_http`] is off) with a handler `make_mcp` makes for each MCP
    /// session, until [`Running::shutdown`].
    ///
    /// `make_mcp` typically clones one handler (`move || mcp.clone()`); a handler of a database is
    /// [`dual_rmcp::DatabaseMcp`]. Must be called within a Tokio runtime.
    pub fn serve<H, F>(self, server: DualResponseServer, make_mcp: F) -> Running
    where
        H: ServerHandler + Send + 'static,
        F: Fn() -> H + Send + Sync + 'static,
    {
        let (addr, options, switches) = (self.addr, self.options, self.switches);
        let base_url = self.base_url;
        let make = mcp_endpoint::make_service(make_mcp);
        let router = Router::new(
            server.clone(),
            addr,
            &base_url,
            &options,
            self.auth,
            &switches,
            make,
        );
        let connections = TaskTracker::new();
        let listener = accept::Listener {
            listener: self.listener,
            name: "main",
            max_connections: options.max_connections,
            stop: switches.stop_accepting.clone(),
        };
        let accept = tokio::spawn(conn::serve_all(
            listener,
            Arc::new(router),
            options.io_timeouts(),
            switches.cut.clone(),
            connections.clone(),
        ));
        let mcp = if options.serve_mcp_over_http {
            format!("http://{addr}{MCP_PATH}")
        } else {
            "stdio".to_owned()
        };
        tracing::info!(
            %addr,
            %mcp,
            rest = %base_url,
            auth = options.authentication.mode(),
            max_connections = options.max_connections,
            max_mcp_sessions = options.max_mcp_sessions,
            "serving"
        );
        Running {
            addr,
            metrics_addr: self.metrics_addr,
            server,
            switches,
            accept,
            connections,
            grace: options.shutdown_grace,
        }
    }
}

/// Installs the metrics recorder, binds `addr` and serves `GET /metrics` there until `switches`
/// stop the server; returns the bound address.
async fn serve_metrics(
    addr: SocketAddr,
    options: &ServeOptions,
    switches: &Switches,
) -> Result<SocketAddr, ServeError> {
    let handle = metrics::install()?;
    let bind_error = |source| ServeError::Bind { addr, source };
    let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    let listener = accept::Listener {
        listener,
        name: "metrics",
        max_connections: options.metrics_max_connections,
        stop: switches.stop_accepting.clone(),
    };
    tokio::spawn(metrics_endpoint::serve_all(
        listener,
        handle,
        options.io_timeouts(),
        switches.cut.clone(),
    ));
    tracing::info!(
        metrics = %format_args!("http://{bound}{METRICS_PATH}"),
        max_connections = options.metrics_max_connections,
        "serving metrics"
    );
    Ok(bound)
}
