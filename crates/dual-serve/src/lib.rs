//! The serving layer of dual-response: one bounded hyper server with MCP (streamable HTTP) at
//! [`MCP_PATH`] and the REST API at [`REST_PREFIX`], both over one
//! [`DualResponseServer`](dual_server::DualResponseServer), with no web framework in between.
//!
//! What it adds to a bare `hyper` accept loop, each limit in [`ServeOptions`] with its documented
//! default:
//!
//! - a connection cap (further clients wait in the listen backlog), a header timeout (slowloris),
//!   an idle timeout for kept-alive connections, a request body deadline (`408`), and a write-stall
//!   cut for responses a client stopped reading;
//! - a cap on live MCP sessions (`503` with `Retry-After`), idle sessions closed, and the MCP
//!   protocol answers rmcp alone gets wrong: `-32700`/`-32600` for bodies that are not JSON-RPC,
//!   `-32602` for a standard method whose params do not parse, `404` for an unknown session;
//! - authentication ([`auth::Authentication`]): bearer tokens from a file ([`auth::AuthTokens`]) or
//!   OAuth 2.1 access tokens of trusted issuers ([`auth::OAuthOptions`], with the Protected Resource
//!   Metadata MCP hosts discover the authorization server from), the owner of each token bound to
//!   every result it creates; the capability-link key from a file ([`link_key`]);
//! - the resource store and the snapshot spool from URLs ([`store`], [`spool`]): `memory`,
//!   `redis://…`, `postgres://…`, `s3://…`;
//! - an optional metrics listener (Prometheus text format) and a graceful drain at shutdown
//!   ([`Running::shutdown`]).
//!
//! [`serve_database`] serves one database with [`dual_rmcp::DatabaseMcp`] in one call. With more
//! executors or a handler of your own, take its three steps: bind, build the server with its
//! executors, serve it with an MCP handler (any rmcp `ServerHandler`):
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use dual_serve::{Bound, ServeOptions};
//!
//! let db = dual_sqlite::SqliteDb::open_with("reports.db".as_ref(), Default::default())?;
//! let options = ServeOptions::new("127.0.0.1:8080".parse()?);
//! let bound = Bound::bind(options).await?;
//! let server = bound.server_builder().await?.executor("sql", db.sql_executor()).build()?;
//! let mcp = dual_rmcp::DatabaseMcp::new(server.clone(), db.schema().clone(), "sql", "Sales data.");
//! let running = bound.serve(server, move || mcp.clone());
//! println!("MCP at {}", running.mcp_url());
//! tokio::signal::ctrl_c().await?;
//! running.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod accept;
mod activity;
mod backoff;
mod bound;
mod conn;
mod database;
mod drain_body;
mod error;
mod guard;
mod io;
mod mcp_checks;
mod mcp_endpoint;
mod metrics;
mod metrics_endpoint;
mod options;
mod reply;
mod request_body;
mod router;
mod running;
mod server;
mod sessions;

pub mod auth;
pub mod link_key;
pub mod shutdown;
pub mod spool;
pub mod store;

pub use bound::Bound;
pub use database::{SQL_KIND, serve_database};
pub use error::ServeError;
pub use metrics::{MetricsError, REQUESTS_TOTAL};
pub use metrics_endpoint::METRICS_PATH;
pub use options::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_EXPORT_STALL, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MCP_SESSIONS, DEFAULT_MCP_SESSION_IDLE, DEFAULT_MCP_SESSION_TTL,
    DEFAULT_METRICS_MAX_CONNECTIONS, DEFAULT_PENDING_AFTER, DEFAULT_QUERY_TIME_LIMIT, DEFAULT_SHUTDOWN_GRACE,
    ServeOptions,
};
pub use router::Router;
pub use running::Running;

/// Where MCP is served.
pub const MCP_PATH: &str = "/mcp";
/// Where the REST API is mounted.
pub const REST_PREFIX: &str = "/resources";

/// The error of a response body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The response body of the [`Router`]: dual-http's and rmcp's bodies, boxed.
pub type Body = http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, BoxError>;
