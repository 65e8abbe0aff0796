//! `dual-demo serve`: one hyper server with MCP (streamable HTTP) at `/mcp` and the REST API at
//! `/resources`, both over one [`DualResponseServer`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dual_http::DualHttp;
use dual_server::DualResponseServer;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::dataset::{self, DatasetSize};
use crate::mcp_server::DemoMcp;
use crate::sqlite::{self, INSTITUTIONS_KIND, SQL_KIND, SqliteDb};
use crate::store::{self, StoreOptions, StoreSpecError};

/// Where MCP is served.
pub const MCP_PATH: &str = "/mcp";
/// Where the REST API is mounted.
pub const REST_PREFIX: &str = "/resources";

/// The response body of the router: rmcp's and dual-http's bodies, boxed.
pub type RouterBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    pub addr: SocketAddr,
    /// SQLite file to serve; `None` for the embedded dataset (generated on first use).
    pub db: Option<PathBuf>,
    /// Size of the embedded dataset when `db` is `None` and it must be generated.
    pub dataset_size: DatasetSize,
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
    /// Time limit of one SQL query.
    pub query_time_limit: Duration,
}

impl ServeOptions {
    /// Defaults: `addr`, the embedded dataset, a memory store, 15 minutes, 15 sample rows.
    #[must_use]
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            db: None,
            dataset_size: DatasetSize::DEFAULT,
            store: "memory".to_owned(),
            store_prefix: None,
            store_timeout: store::DEFAULT_STORE_TIMEOUT,
            base_url: None,
            expiration: dual_server::DEFAULT_EXPIRATION,
            sample_size: dual_server::DEFAULT_SAMPLE_SIZE,
            query_time_limit: sqlite::DEFAULT_TIME_LIMIT,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The dataset could not be generated.
    #[error(transparent)]
    Dataset(#[from] dataset::DatasetError),
    /// The database could not be opened.
    #[error("cannot open the SQLite database {path}: {source}")]
    Database {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// `--store` names no known backend, or the store cannot be reached.
    #[error(transparent)]
    Store(#[from] StoreSpecError),
    /// The server configuration was refused.
    #[error(transparent)]
    Build(#[from] dual_server::BuildError),
    /// Binding the address failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}

/// A running server: its address, the shared [`DualResponseServer`], and a handle to stop it.
#[derive(Debug)]
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The dual-response server behind both endpoints.
    pub server: DualResponseServer,
    /// The database file served.
    pub db_path: PathBuf,
    stop: watch::Sender<bool>,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

impl Running {
    /// `http://{addr}/mcp`.
    #[must_use]
    pub fn mcp_url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Stops accepting connections, ends MCP sessions and shuts the dual-response server down.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        self.cancel.cancel();
        let _ = self.task.await;
        let _ = self.server.shutdown().await;
    }

    /// Waits until the accept loop ends (it runs until [`Running::shutdown`]).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

/// Opens the database (generating the embedded dataset on first use), connects the store and builds
/// the [`DualResponseServer`] with the `sql` and `institutions` executors. Redis expires resources by
/// itself, so with it the server runs no sweeper; the memory and PostgreSQL stores keep theirs.
///
/// # Errors
/// [`ServeError`] for a dataset, database, store or configuration failure.
pub async fn build_server(
    options: &ServeOptions,
    base_url: &str,
) -> Result<(DualResponseServer, PathBuf), ServeError> {
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
    let db =
        SqliteDb::open(&path, sqlite::DEFAULT_POOL_SIZE, options.query_time_limit).map_err(|source| {
            ServeError::Database {
                path: path.clone(),
                source,
            }
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
        .default_sample_size(options.sample_size);
    if opened.native_expiry {
        builder = builder.without_sweeper();
    }
    for kind in [SQL_KIND, INSTITUTIONS_KIND] {
        if let Some(executor) = db.executor(kind) {
            builder = builder.executor(kind, executor);
        }
    }
    Ok((builder.build()?, path))
}

/// Binds `options.addr` and serves MCP at `/mcp` and REST at `/resources` until
/// [`Running::shutdown`].
///
/// # Errors
/// [`ServeError`] when the address cannot be bound or the server cannot be built.
pub async fn start(options: &ServeOptions) -> Result<Running, ServeError> {
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
    let (server, db_path) = build_server(options, &base_url).await?;
    let cancel = CancellationToken::new();
    let router = Router::new(server.clone(), addr, &base_url, cancel.clone());
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(accept_loop(listener, router, stopped));
    tracing::info!(%addr, mcp = %format!("http://{addr}{MCP_PATH}"), rest = %base_url, "serving");
    Ok(Running {
        addr,
        server,
        db_path,
        stop,
        cancel,
        task,
    })
}

async fn accept_loop(listener: TcpListener, router: Router, mut stopped: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => return,
        };
        let (stream, _) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: log, and keep serving the others.
                tracing::warn!(%error, "accept failed");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let router = router.clone();
                async move { Ok::<_, Infallible>(router.route(request).await) }
            });
            if let Err(error) = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
}

/// Routes `/mcp` to rmcp and `/resources` to dual-http.
#[derive(Clone)]
pub struct Router {
    mcp: StreamableHttpService<DemoMcp, LocalSessionManager>,
    rest: DualHttp,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("rest", &self.rest)
            .finish_non_exhaustive()
    }
}

impl Router {
    /// A router over `server`; MCP accepts `Host` headers of loopback names, of `addr` and of the
    /// host of `base_url` (rmcp's DNS-rebinding protection).
    #[must_use]
    pub fn new(
        server: DualResponseServer,
        addr: SocketAddr,
        base_url: &str,
        cancel: CancellationToken,
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
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_cancellation_token(cancel);
        let mcp_server = server.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(DemoMcp::new(mcp_server.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let rest = DualHttp::builder(server).prefix(REST_PREFIX).build();
        Self { mcp, rest }
    }

    /// Answers one request.
    pub async fn route(&self, request: Request<Incoming>) -> Response<RouterBody> {
        let path = request.uri().path();
        if path == MCP_PATH || path.starts_with("/mcp/") {
            self.mcp
                .handle(request)
                .await
                .map(|body| body.map_err(|never| match never {}).boxed_unsync())
        } else if path == REST_PREFIX || path.starts_with("/resources/") {
            self.rest
                .handle(request)
                .await
                .map(|body| body.map_err(Into::into).boxed_unsync())
        } else {
            not_found()
        }
    }
}

fn not_found() -> Response<RouterBody> {
    let body = br#"{"error":"not_found","message":"Not found: MCP is at /mcp, the REST API under /resources","retryable":false}"#;
    let mut response = Response::new(
        Full::new(Bytes::from_static(body))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = StatusCode::NOT_FOUND;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
