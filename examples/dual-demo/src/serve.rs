//! `dual-demo serve`: one hyper server with MCP (streamable HTTP) at `/mcp` and the REST API at
//! `/resources`, both over one [`DualResponseServer`]; bounded (connections, timeouts, MCP sessions,
//! optional bearer tokens, all in [`ServeOptions`]) and shut down gracefully ([`Running::shutdown`]).

mod accept;
mod activity;
mod backoff;
mod conn;
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
mod sessions;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use dual_server::DualResponseServer;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

pub use error::ServeError;
pub use metrics::{DEMO_REQUESTS_TOTAL, MetricsError};
pub use metrics_endpoint::METRICS_PATH;
pub use options::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_EXPORT_STALL, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MCP_SESSIONS, DEFAULT_MCP_SESSION_IDLE, DEFAULT_MCP_SESSION_TTL,
    DEFAULT_METRICS_MAX_CONNECTIONS, DEFAULT_PENDING_AFTER, DEFAULT_SHUTDOWN_GRACE, ServeOptions,
};
pub use router::Router;
pub use running::Running;

use crate::dataset;
use crate::spool::{SpoolOptions, SpoolSpec};
use crate::sqlite::{self, INSTITUTIONS_KIND, SQL_KIND, SqliteOptions};
use crate::store::{self, StoreOptions};
use dual_sqlite::SqliteDb;

/// Where MCP is served.
pub const MCP_PATH: &str = "/mcp";
/// Where the REST API is mounted.
pub const REST_PREFIX: &str = "/resources";

/// The response body of the router: axum's, boxing rmcp's and dual-http's bodies.
pub type RouterBody = axum::body::Body;

/// Opens the database (generating the embedded dataset on first use), connects the store and the
/// spool and builds the [`DualResponseServer`] with the `sql` and `institutions` executors.
///
/// Snapshots need a spool every instance sharing the store can read: with a shared store they are
/// on with an S3 spool, and off (every resource live, with a warning) with the memory spool. Redis
/// expires resources by itself, so with it and no snapshots the server runs no sweeper; otherwise
/// the sweeper runs every `cleanup_interval`, removing expired resources' snapshots and orphans.
///
/// # Errors
/// [`ServeError`] for a dataset, database, store or configuration failure.
pub async fn build_server(
    options: &ServeOptions,
    base_url: &str,
) -> Result<(DualResponseServer, PathBuf), ServeError> {
    // Checked first: a bad `--spool` fails before anything is opened.
    let spool = SpoolSpec::parse(&SpoolOptions {
        spec: options.spool.clone(),
        memory_mb: options.spool_memory_mb,
        dir: options.spool_dir.clone(),
        max_mb: options.spool_max_mb,
        min_free_mb: options.spool_min_free_mb,
    })?;
    let path = match &options.db {
        Some(path) => path.clone(),
        None => {
            let path = dataset::default_path();
            if dataset::ensure(&path, options.dataset_size)? {
                tracing::info!(path = %path.display(), "generated the embedded dataset");
            }
            path
        }
    };
    let sqlite_options = SqliteOptions::default()
        .pool_size(sqlite::DEFAULT_POOL_SIZE)
        .export_slots(options.export_slots)
        .wait(options.db_wait)
        .time_limit(options.query_time_limit)
        // An export whose reader stalls gives its database connection back after the same time the
        // connection is cut.
        .stall(options.export_stall)
        // A count that takes longer than a tool call waits is not announced: the call answers
        // `pending` as it would without a count.
        .count_wait(options.pending_after.unwrap_or(options.query_time_limit));
    let db = SqliteDb::open_with(&path, sqlite_options).map_err(|source| ServeError::Database {
        path: path.clone(),
        source,
    })?;
    let opened = store::open(&StoreOptions {
        spec: options.store.clone(),
        prefix: options.store_prefix.clone(),
        timeout: options.store_timeout,
    })
    .await?;
    tracing::info!(
        store = %opened.redacted,
        prefix = options.store_prefix.as_deref().unwrap_or("(default)"),
        native_expiry = opened.native_expiry,
        "store connected"
    );
    let mut builder = DualResponseServer::builder()
        .base_url(base_url)
        .shared_store(opened.store)
        .default_expiration(options.expiration)
        .default_sample_size(options.sample_size)
        .max_sample_bytes(options.max_sample_bytes)
        .max_page_bytes(options.max_page_bytes)
        .max_read_bytes(options.max_read_bytes)
        .max_error_text_bytes(options.max_error_text_bytes)
        .max_resources(options.max_resources)
        .owner_max_bytes(options.owner_max_mb.saturating_mul(1 << 20))
        .owner_max_resources(options.owner_max_resources)
        .owner_max_queries(options.owner_max_queries)
        .owner_max_pins(options.owner_max_pins)
        .anonymous_pins(options.anonymous_pins)
        .query_time_limit(options.query_time_limit)
        .scheduler_limits(options.scheduler)
        .shutdown_grace(options.shutdown_grace);
    builder = match options.pending_after {
        Some(wait) => builder.pending_after(wait),
        None => builder.wait_for_end(),
    };
    builder = builder
        .sort_concurrency(options.sort_concurrency)
        .sort_wait(options.sort_wait)
        .sort_memory_bytes(options.sort_memory_mb.saturating_mul(1 << 20))
        .sort_max_rows(options.sort_max_rows)
        .sort_max_bytes(options.sort_max_mb.saturating_mul(1 << 20));
    // A memory spool is this process's: instances sharing a Redis or PostgreSQL store could not
    // read each other's snapshots, so with it a shared store serves every resource live.
    let shared_store = options.store.trim() != "memory";
    let snapshots = options.snapshot_max_mb > 0 && (spool.is_shared() || !shared_store);
    if shared_store && options.snapshot_max_mb > 0 && !snapshots {
        tracing::warn!("a shared store without a shared spool: snapshots are off, every resource is live");
    }
    if snapshots {
        let spool = spool.open().await?;
        tracing::info!(snapshot_max_mb = options.snapshot_max_mb, "snapshots on");
        builder = builder
            .spool(spool)
            .snapshot_max_bytes(options.snapshot_max_mb.saturating_mul(1 << 20));
    } else {
        builder = builder.without_snapshots();
    }
    // Snapshots of expired resources are removed by the sweep only, whatever the store.
    if opened.native_expiry && !snapshots {
        builder = builder.without_sweeper();
    } else {
        builder = builder.cleanup_interval(options.cleanup_interval);
    }
    builder = builder.link_lifetime(options.link_lifetime);
    match &options.link_key {
        Some(key) => builder = builder.link_key(key.clone()),
        None => tracing::info!(
            "capability links are signed with a random key of this process: they stop working at a \
             restart and other instances do not accept them (--link-key-file shares a key)"
        ),
    }
    for kind in [SQL_KIND, INSTITUTIONS_KIND] {
        if let Some(executor) = sqlite::executor(&db, kind) {
            builder = builder.executor(kind, executor);
        }
    }
    Ok((builder.build()?, path))
}

/// Binds `options.addr` and serves MCP at `/mcp` and REST at `/resources` until
/// [`Running::shutdown`].
///
/// # Errors
/// [`ServeError`] when a limit is zero, the address cannot be bound or the server cannot be built.
pub async fn start(options: &ServeOptions) -> Result<Running, ServeError> {
    if let Some(name) = options.invalid_limit() {
        return Err(ServeError::Limit(name));
    }
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: options.addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: options.addr,
        source,
    })?;
    let base_url = options
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}{REST_PREFIX}"));
    let switches = running::Switches::default();
    // Before the server is built, so that what it reports at start (its caps) is recorded.
    let metrics_addr = match options.metrics_addr {
        Some(metrics_addr) => Some(serve_metrics(metrics_addr, options, &switches).await?),
        None => None,
    };
    let (server, db_path) = build_server(options, &base_url).await?;
    let router = Router::new(server.clone(), addr, &base_url, options, &switches);
    let connections = TaskTracker::new();
    let listener = accept::Listener {
        listener,
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
        auth = options.auth_tokens.is_some(),
        max_connections = options.max_connections,
        max_mcp_sessions = options.max_mcp_sessions,
        "serving"
    );
    Ok(Running {
        addr,
        metrics_addr,
        server,
        db_path,
        switches,
        accept,
        connections,
        grace: options.shutdown_grace,
    })
}

/// Installs the metrics recorder, binds `addr` and serves `GET /metrics` there until `switches`
/// stop the server; returns the bound address.
async fn serve_metrics(
    addr: SocketAddr,
    options: &ServeOptions,
    switches: &running::Switches,
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
