//! [`ServeOptions`]: every limit and timeout of the server, with its documented default.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use dual_rmcp::apps::AppsOptions;
use dual_server::LinkKey;

use super::io;
use crate::auth::Authentication;
use crate::spool;
use crate::store;

/// Default of [`ServeOptions::query_time_limit`]: 5 minutes.
pub const DEFAULT_QUERY_TIME_LIMIT: Duration = Duration::from_secs(300);

/// Default of `serve --pending-after-ms`: 2 seconds.
pub const DEFAULT_PENDING_AFTER: Duration = Duration::from_secs(2);
/// Default of [`ServeOptions::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default of [`ServeOptions::header_timeout`]: 10 s.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of [`ServeOptions::idle_timeout`]: 60 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of [`ServeOptions::body_timeout`]: 30 s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`ServeOptions::export_stall`]: 30 s.
pub const DEFAULT_EXPORT_STALL: Duration = Duration::from_secs(30);
/// Default of [`ServeOptions::max_mcp_sessions`].
pub const DEFAULT_MAX_MCP_SESSIONS: usize = 1000;
/// Default of [`ServeOptions::mcp_session_idle`]: 120 s.
pub const DEFAULT_MCP_SESSION_IDLE: Duration = Duration::from_secs(120);
/// Default of [`ServeOptions::mcp_session_ttl`]: 24 h.
pub const DEFAULT_MCP_SESSION_TTL: Duration = dual_rmcp::sessions::DEFAULT_SESSION_TTL;
/// Default of [`ServeOptions::shutdown_grace`]: 30 s.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Default of [`ServeOptions::metrics_max_connections`].
pub const DEFAULT_METRICS_MAX_CONNECTIONS: usize = 4;

/// How to serve: every field has a documented default ([`ServeOptions::new`]); set the ones to
/// change.
///
/// ```
/// use std::time::Duration;
///
/// let mut options = dual_serve::ServeOptions::new("127.0.0.1:0".parse().unwrap());
/// options.max_connections = 64;
/// options.header_timeout = Duration::from_secs(5);
/// assert_eq!(options.max_mcp_sessions, dual_serve::DEFAULT_MAX_MCP_SESSIONS);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    pub addr: SocketAddr,
    /// Resource store: `memory`, `redis://HOST:PORT[/DB]` or `postgres://USER@HOST:PORT/DB`.
    pub store: String,
    /// Redis key prefix or PostgreSQL schema; `None` for the backend's default.
    pub store_prefix: Option<String>,
    /// Time limit of one store operation (and of opening one store connection).
    pub store_timeout: Duration,
    /// Base URL of the REST API in resource links; default `http://{addr}/resources`.
    pub base_url: Option<String>,
    /// Lifetime of a resource.
    pub expiration: Duration,
    /// Sample rows per tool result.
    pub sample_size: u64,
    /// Time limit of a query, in the background or not (and of one SQL statement of a live page or
    /// export); past it the query is cancelled.
    pub query_time_limit: Duration,
    /// How long a tool call waits for its query before it returns a `pending` resource and lets the
    /// query finish in the background (docs/DESIGN.md §8); `None` (the default here; the command line's
    /// `--pending-after-ms` is [`DEFAULT_PENDING_AFTER`]) waits for the end.
    pub pending_after: Option<Duration>,
    /// The scheduler of the server's own query work: foreground slots, background slots, background
    /// places (docs/DESIGN.md §8, "Scheduling").
    pub scheduler: dual_server::SchedulerLimits,
    /// Largest tool result in bytes of JSON, text blocks and `structuredContent` together (the
    /// sample keeps the whole rows that fit).
    pub max_sample_bytes: usize,
    /// Largest `POST /{id}` page in bytes of JSON, cut to whole rows.
    pub max_page_bytes: usize,
    /// Largest `resources/read` text in bytes, cut to whole rows.
    pub max_read_bytes: usize,
    /// Largest error text returned to the model in bytes, cut with a marker.
    pub max_error_text_bytes: usize,
    /// Cap on live resources; at the cap a tool call fails with a retryable error.
    pub max_resources: u64,
    /// Largest snapshot in MiB of compact JSON rows; larger results are served live. 0: no
    /// snapshots, every resource live (pages and exports re-run the query).
    pub snapshot_max_mb: u64,
    /// Most sorted orders of snapshots derived at once (each on a blocking thread).
    pub sort_concurrency: usize,
    /// Longest wait of a sort for a derivation slot; then `503 overloaded` with `Retry-After`.
    pub sort_wait: Duration,
    /// Working memory of the sorts being derived, together, in MiB; a sort that alone needs more
    /// is refused (`400 invalid_request` naming `sort`).
    pub sort_memory_mb: u64,
    /// Most rows of a snapshot sorted; above, `400 invalid_request` naming `sort`.
    pub sort_max_rows: u64,
    /// Largest snapshot sorted, in MiB of compact JSON rows; above, `400 invalid_request`.
    pub sort_max_mb: u64,
    /// Snapshot spool: `memory` (this process's, the default) or `s3://BUCKET[/PREFIX]` (shared by
    /// the instances that share the store; endpoint, region and credentials from `AWS_*`).
    pub spool: String,
    /// Memory budget of the memory spool in MiB (`None`: 256); beyond it segments spill to disk.
    /// An error with an S3 spool.
    pub spool_memory_mb: Option<u64>,
    /// Spill directory of the memory spool (default: a private temporary directory). An error with
    /// an S3 spool.
    pub spool_dir: Option<PathBuf>,
    /// Cap in MiB on the memory spool's bytes in memory and on disk together (`None`: the budget
    /// plus half the spill directory's free space above the floor, at start-up); at the cap a tool
    /// call fails with the retryable `quota_exceeded`. An error with an S3 spool.
    pub spool_max_mb: Option<u64>,
    /// Free space in MiB a spill must leave on the spill directory's disk (`None`: 1 GiB, or 5 %
    /// of the disk when smaller). An error with an S3 spool.
    pub spool_min_free_mb: Option<u64>,
    /// Most snapshot MiB of one owner's live resources (anonymous callers are one owner).
    pub owner_max_mb: u64,
    /// Most live resources of one owner.
    pub owner_max_resources: u64,
    /// Most queries of one owner running at once.
    pub owner_max_queries: u64,
    /// Most pinned resources of one owner; 0 allows none.
    pub owner_max_pins: u64,
    /// Whether anonymous callers may pin (as one owner).
    pub anonymous_pins: bool,
    /// Time between sweeps, which remove expired resources, their snapshots and orphaned
    /// snapshots.
    pub cleanup_interval: Duration,
    /// Most connections open at once; further clients wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// Time a client has to send a request head: from connecting, or on a kept-alive connection
    /// from the first byte of the next request (slowloris).
    pub header_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Time a request body has to arrive in full (else `408` and the connection is closed).
    pub body_timeout: Duration,
    /// Time a response may stay unable to write anything because the client stopped reading (an
    /// export, typically); then the connection is cut.
    pub export_stall: Duration,
    /// Most live MCP sessions; a further `initialize` is answered `503` with `Retry-After`.
    pub max_mcp_sessions: usize,
    /// Time an MCP session may go without a message before it is closed.
    pub mcp_session_idle: Duration,
    /// On a shared store: how long after it started a session of a client before 2026-07-28 can
    /// be restored on another instance (its state is kept in the store that long).
    pub mcp_session_ttl: Duration,
    /// Time in-flight requests and exports get to finish at shutdown before they are cut.
    pub shutdown_grace: Duration,
    /// How `/mcp` and `/resources` authenticate callers: [`Authentication::None`] serves everyone
    /// (the default), [`Authentication::Tokens`] requires a token of a file,
    /// [`Authentication::OAuth`] an OAuth 2.1 access token. A `/resources/…` request with a
    /// capability link's `token` needs none.
    pub authentication: Authentication,
    /// The key capability links are signed with; `None` (the default) draws a random one for this
    /// process, so links do not survive a restart and other instances do not accept them.
    pub link_key: Option<LinkKey>,
    /// How long a capability link lives (default 10 minutes, at most 24 hours).
    pub link_lifetime: Duration,
    /// How tool results are rendered for clients that negotiated MCP Apps (default: without the
    /// `resource_link` block, no download link line).
    pub apps: AppsOptions,
    /// Whether MCP is served over HTTP at `/mcp` (the default); `false` when MCP runs on stdio, and
    /// `/mcp` is then 404.
    pub serve_mcp_over_http: bool,
    /// Where to serve `GET /metrics` (Prometheus text format); `None` (the default) records no
    /// metrics and opens no second listener.
    pub metrics_addr: Option<SocketAddr>,
    /// Most connections open at once on the metrics listener.
    pub metrics_max_connections: usize,
}

impl ServeOptions {
    /// Defaults: `addr`, a memory store, 15 minutes, 15 sample rows, the
    /// `DEFAULT_*` limits of this module, no authentication.
    #[must_use]
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            store: "memory".to_owned(),
            store_prefix: None,
            store_timeout: store::DEFAULT_STORE_TIMEOUT,
            base_url: None,
            expiration: dual_server::DEFAULT_EXPIRATION,
            sample_size: dual_server::DEFAULT_SAMPLE_SIZE,
            query_time_limit: DEFAULT_QUERY_TIME_LIMIT,
            pending_after: None,
            scheduler: dual_server::SchedulerLimits::default(),
            max_sample_bytes: dual_server::DEFAULT_MAX_SAMPLE_BYTES,
            max_page_bytes: dual_server::DEFAULT_MAX_PAGE_BYTES,
            max_read_bytes: dual_server::DEFAULT_MAX_READ_BYTES,
            max_error_text_bytes: dual_server::DEFAULT_MAX_ERROR_TEXT_BYTES,
            max_resources: dual_server::DEFAULT_MAX_RESOURCES,
            snapshot_max_mb: dual_server::DEFAULT_SNAPSHOT_MAX_BYTES >> 20,
            sort_concurrency: dual_server::DEFAULT_SORT_CONCURRENCY,
            sort_wait: dual_server::DEFAULT_SORT_WAIT,
            sort_memory_mb: dual_server::DEFAULT_SORT_MEMORY_BYTES >> 20,
            sort_max_rows: dual_server::DEFAULT_SORT_MAX_ROWS,
            sort_max_mb: dual_server::DEFAULT_SORT_MAX_BYTES >> 20,
            spool: spool::MEMORY.to_owned(),
            spool_memory_mb: None,
            spool_dir: None,
            spool_max_mb: None,
            spool_min_free_mb: None,
            owner_max_mb: dual_server::DEFAULT_OWNER_MAX_BYTES >> 20,
            owner_max_resources: dual_server::DEFAULT_OWNER_MAX_RESOURCES,
            owner_max_queries: dual_server::DEFAULT_OWNER_MAX_QUERIES,
            owner_max_pins: dual_server::DEFAULT_OWNER_MAX_PINS,
            anonymous_pins: true,
            cleanup_interval: dual_server::DEFAULT_CLEANUP_INTERVAL,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            export_stall: DEFAULT_EXPORT_STALL,
            max_mcp_sessions: DEFAULT_MAX_MCP_SESSIONS,
            mcp_session_idle: DEFAULT_MCP_SESSION_IDLE,
            mcp_session_ttl: DEFAULT_MCP_SESSION_TTL,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            authentication: Authentication::None,
            link_key: None,
            link_lifetime: dual_server::DEFAULT_LINK_LIFETIME,
            apps: AppsOptions::new(),
            serve_mcp_over_http: true,
            metrics_addr: None,
            metrics_max_connections: DEFAULT_METRICS_MAX_CONNECTIONS,
        }
    }

    /// The timeouts of a connection, on the main listener and the metrics one alike.
    pub(super) fn io_timeouts(&self) -> io::IoTimeouts {
        io::IoTimeouts {
            header: self.header_timeout,
            idle: self.idle_timeout,
            write_stall: self.export_stall,
        }
    }

    /// The first limit that cannot work, by field name: a zero count or timeout.
    #[must_use]
    pub fn invalid_limit(&self) -> Option<&'static str> {
        let counts = [
            ("max_connections", self.max_connections),
            ("max_mcp_sessions", self.max_mcp_sessions),
            ("metrics_max_connections", self.metrics_max_connections),
            (
                "max_resources",
                usize::try_from(self.max_resources).unwrap_or(usize::MAX),
            ),
        ];
        let times = [
            ("header_timeout", self.header_timeout),
            ("idle_timeout", self.idle_timeout),
            ("body_timeout", self.body_timeout),
            ("export_stall", self.export_stall),
            ("mcp_session_idle", self.mcp_session_idle),
            ("mcp_session_ttl", self.mcp_session_ttl),
            ("query_time_limit", self.query_time_limit),
            ("cleanup_interval", self.cleanup_interval),
        ];
        counts
            .into_iter()
            .find(|(_, n)| *n == 0)
            .map(|(name, _)| name)
            .or_else(|| times.into_iter().find(|(_, t)| t.is_zero()).map(|(name, _)| name))
    }
}
