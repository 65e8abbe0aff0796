//! `serve`: the serving layer of [`dual_serve`] over the database of `--database` — PostgreSQL,
//! MySQL/MariaDB or SQLite with [`DatabaseMcp`] (tools `query` and `describe_schema`), or the
//! embedded dataset with the demo's handler ([`DemoMcp`]: `query` and `search_institutions`).

use std::path::PathBuf;
use std::time::Duration;

use dual_rmcp::DatabaseMcp;
use dual_serve::Bound;
use dual_server::QueryExecutor;
use dual_sql::sql_guard::FunctionPolicy;
use dual_sql::{DatabaseOptions as SqlOptions, SchemaCache};
use dual_sqlite::SqliteDb;
use rmcp::ServerHandler;

pub use dual_serve::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_EXPORT_STALL, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MCP_SESSIONS, DEFAULT_MCP_SESSION_IDLE, DEFAULT_MCP_SESSION_TTL,
    DEFAULT_METRICS_MAX_CONNECTIONS, DEFAULT_PENDING_AFTER, DEFAULT_SHUTDOWN_GRACE, MCP_PATH, METRICS_PATH,
    REQUESTS_TOTAL, REST_PREFIX, Running, ServeError, ServeOptions,
};

use crate::database::DatabaseUrl;
use crate::ipeds::dataset::{self, DatasetSize};
use crate::ipeds::mcp_server::DemoMcp;
use crate::ipeds::sqlite::{self, INSTITUTIONS_KIND, SQL_KIND, SqliteOptions};

/// The kind of the model's SQL: the executor `query` runs.
const SQL: &str = "sql";

/// The database served and how it is reached.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DatabaseOptions {
    /// The database (default [`DatabaseUrl::Demo`]).
    pub url: DatabaseUrl,
    /// With [`DatabaseUrl::Demo`]: the dataset's file (default: a file in the cache directory),
    /// generated when missing.
    pub db: Option<PathBuf>,
    /// Size of the embedded dataset when it must be generated.
    pub dataset_size: DatasetSize,
    /// Longest wait for a free database connection; then the request is `503 overloaded`.
    pub db_wait: Duration,
    /// How many of the database connections exports may hold at once (the rest stay for pages and
    /// counts; a tool call's snapshot takes a connection of its own).
    pub export_slots: usize,
    /// Start even when the database role may do more than read (PostgreSQL, MySQL): see
    /// docs/SECURITY.md, "Least privilege". Default `false`: such a role is refused at start-up.
    pub allow_privileged_role: bool,
    /// Functions of the database's own (user-defined ones, refused by default) the model's SQL may
    /// call.
    pub allow_functions: Vec<String>,
}

impl Default for DatabaseOptions {
    /// The embedded dataset, [`sqlite::DEFAULT_WAIT`], [`sqlite::DEFAULT_EXPORT_SLOTS`], no
    /// privileged role, no user-defined function allowed.
    fn default() -> Self {
        Self {
            url: DatabaseUrl::Demo,
            db: None,
            dataset_size: DatasetSize::DEFAULT,
            db_wait: sqlite::DEFAULT_WAIT,
            export_slots: sqlite::DEFAULT_EXPORT_SLOTS,
            allow_privileged_role: false,
            allow_functions: Vec::new(),
        }
    }
}

impl DatabaseOptions {
    /// The embedded dataset in the file `path` (generated when missing), other options at their
    /// defaults.
    #[must_use]
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self {
            db: Some(path.into()),
            ..Self::default()
        }
    }

    /// The database `url`, other options at their defaults.
    #[must_use]
    pub fn url(url: DatabaseUrl) -> Self {
        Self {
            url,
            ..Self::default()
        }
    }

    /// The function policy of the model's SQL: the built-in lists, and the functions allowed.
    fn policy(&self) -> FunctionPolicy {
        self.allow_functions
            .iter()
            .fold(FunctionPolicy::new(), |policy, name| policy.allow(name))
    }
}

/// Why the demo server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
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
    /// The database could not be reached, or refused the role.
    #[error("cannot connect to the database {url}: {source}")]
    Connect {
        /// The URL, its password redacted.
        url: String,
        /// The driver's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A database limit is zero.
    #[error("`{0}` must be greater than zero")]
    Limit(&'static str),
    /// The server could not start.
    #[error(transparent)]
    Serve(#[from] ServeError),
    /// The server configuration was refused.
    #[error(transparent)]
    Build(#[from] dual_server::ServerBuildError),
}

/// A running server and the database it serves.
#[derive(Debug)]
pub struct Served {
    /// The server.
    pub running: Running,
    /// The database served, for messages: a file's path, or a URL with its password redacted.
    pub database: String,
    /// The database's MCP handler for another transport (stdio): one per session.
    pub handler: Handler,
}

/// The MCP handler of the database served.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Handler {
    /// The demo's handler.
    Demo(DemoMcp),
    /// A database's handler.
    Database(DatabaseMcp),
}

/// Opens the database (generating the embedded dataset on first use), binds `options.addr` and
/// serves MCP at `/mcp` and REST at `/resources` until [`Running::shutdown`].
///
/// # Errors
/// [`StartError`] when the dataset, the database, a limit, the store, the spool or the address
/// fails.
pub async fn start(options: &ServeOptions, database: &DatabaseOptions) -> Result<Served, StartError> {
    if database.export_slots == 0 {
        return Err(StartError::Limit("export_slots"));
    }
    if database.db_wait.is_zero() {
        return Err(StartError::Limit("db_wait"));
    }
    let bound = Bound::bind(options.clone()).await?;
    match &database.url {
        DatabaseUrl::Demo => serve_demo(bound, options, database).await,
        DatabaseUrl::Sqlite(path) => {
            let db = SqliteDb::open_with(path, sqlite_options(options, database)).map_err(|source| {
                StartError::Database {
                    path: path.clone(),
                    source,
                }
            })?;
            let executor = db.sql_executor_with(database.policy());
            let name = path.display().to_string();
            serve_with(bound, executor, db.schema(), "A SQLite database.", name).await
        }
        DatabaseUrl::Postgres(url) => {
            let db = dual_postgres::PgDb::connect(url, sql_options(options, database))
                .await
                .map_err(|source| connect_error(&database.url, source))?;
            let executor = db.sql_executor_with(database.policy());
            let name = database.url.redacted();
            serve_with(bound, executor, db.schema(), "A PostgreSQL database.", name).await
        }
        DatabaseUrl::Mysql(url) => {
            let db = dual_mysql::MyDb::connect(url, sql_options(options, database))
                .await
                .map_err(|source| connect_error(&database.url, source))?;
            let executor = db.sql_executor_with(database.policy());
            let name = database.url.redacted();
            serve_with(bound, executor, db.schema(), "A MySQL or MariaDB database.", name).await
        }
    }
}

/// The embedded dataset with the demo's handler.
async fn serve_demo(
    bound: Bound,
    options: &ServeOptions,
    database: &DatabaseOptions,
) -> Result<Served, StartError> {
    let path = match &database.db {
        Some(path) => path.clone(),
        None => dataset::default_path(),
    };
    if dataset::ensure(&path, database.dataset_size)? {
        tracing::info!(path = %path.display(), "generated the embedded dataset");
    }
    let db = SqliteDb::open_with(&path, sqlite_options(options, database)).map_err(|source| {
        StartError::Database {
            path: path.clone(),
            source,
        }
    })?;
    let mut builder = bound.server_builder().await?;
    for kind in [SQL_KIND, INSTITUTIONS_KIND] {
        if let Some(executor) = sqlite::executor(&db, kind) {
            builder = builder.executor(kind, executor);
        }
    }
    let server = builder.refine_engine(refiner()).build()?;
    let tasks = dual_rmcp::DualTasks::new(server.clone());
    let mcp = DemoMcp::new(server.clone())
        .with_apps(options.apps)
        .with_tasks(tasks);
    let handler = Handler::Demo(mcp.clone());
    let running = bound.serve(server, move || mcp.clone());
    Ok(Served {
        running,
        database: path.display().to_string(),
        handler,
    })
}

/// The engine of the `refine` tool and `POST /{id}/query`: SQLite, over a temporary database per
/// refinement in the system's temporary directory.
fn refiner() -> dual_sqlite::SqliteRefiner {
    dual_sqlite::SqliteRefiner::default()
}

/// Serves the database of `executor` (its SQL as [`SQL`]) with [`DatabaseMcp`], a clone per MCP
/// session: `describe_schema` reads `schema`, and MCP Apps clients get `query` results rendered as
/// the bound options' `apps` ask. `database` names it in messages.
async fn serve_with(
    bound: Bound,
    executor: impl QueryExecutor,
    schema: &SchemaCache,
    description: &str,
    database: String,
) -> Result<Served, StartError> {
    let apps = bound.options().apps;
    let server = bound
        .server_builder()
        .await?
        .executor(SQL, executor)
        .refine_engine(refiner())
        .build()?;
    let mcp = DatabaseMcp::new(server.clone(), schema.clone(), SQL, description).with_apps(apps);
    let handler = Handler::Database(mcp.clone());
    let running = bound.serve(server, move || mcp.clone());
    Ok(Served {
        running,
        database,
        handler,
    })
}

/// The error of a database that cannot be reached: the URL without its password, and the cause.
fn connect_error(url: &DatabaseUrl, source: impl std::error::Error + Send + Sync + 'static) -> StartError {
    StartError::Connect {
        url: url.redacted(),
        source: Box::new(source),
    }
}

/// The SQLite options of `serve`.
fn sqlite_options(options: &ServeOptions, database: &DatabaseOptions) -> SqliteOptions {
    SqliteOptions::default()
        .pool_size(sqlite::DEFAULT_POOL_SIZE)
        .export_slots(database.export_slots)
        .wait(database.db_wait)
        .time_limit(options.query_time_limit)
        // An export whose reader stalls gives its database connection back after the same time the
        // connection is cut.
        .stall(options.export_stall)
        // A count that takes longer than a tool call waits is not announced: the call answers
        // `pending` as it would without a count.
        .count_wait(options.pending_after.unwrap_or(options.query_time_limit))
}

/// The PostgreSQL and MySQL options of `serve`.
fn sql_options(options: &ServeOptions, database: &DatabaseOptions) -> SqlOptions {
    SqlOptions::default()
        .wait(database.db_wait)
        .time_limit(options.query_time_limit)
        .stall(options.export_stall)
        .count_wait(options.pending_after.unwrap_or(options.query_time_limit))
        .allow_privileged_role(database.allow_privileged_role)
}

impl Handler {
    /// Serves MCP on `transport` (stdin/stdout) until the client closes it or `stop` completes.
    ///
    /// # Errors
    /// When MCP cannot be initialized on the transport.
    pub async fn serve_stdio(self, stop: impl Future<Output = ()>) -> Result<(), Box<dyn std::error::Error>> {
        match self {
            Self::Demo(mcp) => stdio(mcp, stop).await,
            Self::Database(mcp) => stdio(mcp, stop).await,
        }
    }
}

/// Serves `mcp` on stdin/stdout until the client closes stdin or `stop` completes.
async fn stdio<H: ServerHandler>(
    mcp: H,
    stop: impl Future<Output = ()>,
) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::ServiceExt;
    tokio::pin!(stop);
    let service = tokio::select! {
        service = mcp.serve(rmcp::transport::stdio()) => service?,
        () = &mut stop => {
            tracing::info!("shutting down before MCP was initialized");
            return Ok(());
        }
    };
    let cancel = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => tracing::info!("stdin closed: shutting down"),
        () = &mut stop => {
            tracing::info!("shutting down");
            cancel.cancel();
            let _ = waiting.await;
        }
    }
    Ok(())
}

/// [`start`] on the SQLite file `db` with the database options' defaults; the running server.
///
/// # Errors
/// As [`start`].
pub async fn start_on(options: &ServeOptions, db: &std::path::Path) -> Result<Running, StartError> {
    Ok(start(options, &DatabaseOptions::file(db)).await?.running)
}
