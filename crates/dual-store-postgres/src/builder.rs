//! Options of a [`PostgresStore`] and connecting it.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::ConnectError;
use crate::ident::Ident;
use crate::shared::Shared;
use crate::sql::Sql;
use crate::store::PostgresStore;
use dual_store::redact_secrets;

/// The default table name.
pub(crate) const DEFAULT_TABLE: &str = "dual_resources";

impl PostgresStore {
    /// Options for a store at `url` (`postgres://user[:password]@host[:port]/database`, or the
    /// key-value form `host=… user=… dbname=…`).
    pub fn builder(url: impl Into<String>) -> PostgresStoreBuilder {
        PostgresStoreBuilder::new(url)
    }

    /// Connects to `url` with the default options and creates the table if it is missing.
    ///
    /// # Errors
    ///
    /// As [`PostgresStoreBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<Self, ConnectError> {
        Self::builder(url).connect().await
    }
}

/// Configures and connects a [`PostgresStore`]; made by [`PostgresStore::builder`].
#[derive(Clone)]
#[must_use]
pub struct PostgresStoreBuilder {
    url: String,
    schema: Option<String>,
    table: String,
    pool_size: usize,
    connect_timeout: Duration,
    operation_timeout: Duration,
    purge_batch: usize,
}

impl PostgresStoreBuilder {
    pub(crate) fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            schema: None,
            table: DEFAULT_TABLE.to_owned(),
            pool_size: 16,
            connect_timeout: Duration::from_secs(5),
            operation_timeout: Duration::from_secs(5),
            purge_batch: 1_000,
        }
    }

    /// The schema of the table (default: none, so the table lands in the first schema of the
    /// connection's `search_path`, usually `public`). Created at start-up when missing.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// The table name (default `dual_resources`): lower-case letters, digits and `_`, at most 48.
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = table.into();
        self
    }

    /// How many connections the pool keeps at most (default 16).
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size;
        self
    }

    /// How long opening a connection, or waiting for a free one, may take (default 5 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one statement may run, on the client and as the server's `statement_timeout`
    /// (default 5 s). A call takes at most the connect timeout plus this.
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = timeout;
        self
    }

    /// How many expired records one purge statement deletes (default 1,000); a purge repeats
    /// batches until fewer are left, so no statement holds many row locks for long.
    pub fn purge_batch(mut self, batch: usize) -> Self {
        self.purge_batch = batch;
        self
    }

    /// Checks the options, connects, and creates the schema, table and index when missing.
    ///
    /// # Errors
    ///
    /// [`ConnectError::Config`] for a malformed URL, a bad table or schema name, a zero pool size,
    /// timeout or batch; [`ConnectError::Store`] when PostgreSQL cannot be reached within the timeouts
    /// or the migration fails.
    pub async fn connect(self) -> Result<PostgresStore, ConnectError> {
        let table = Ident::table(&self.table)?;
        let schema = self.schema.as_deref().map(Ident::schema).transpose()?;
        if self.pool_size == 0 || self.purge_batch == 0 {
            return Err(ConnectError::config(
                "postgres: the pool size and purge batch must be positive",
            ));
        }
        if self.connect_timeout.is_zero() || self.operation_timeout.is_zero() {
            return Err(ConnectError::config("postgres: timeouts must be positive"));
        }
        let redacted = redact_secrets(&self.url);
        let mut config = tokio_postgres::Config::from_str(&self.url)
            .map_err(|e| ConnectError::config(format!("postgres: cannot use {redacted}")).with_source(e))?;
        let statement_timeout = format!("-c statement_timeout={}", self.operation_timeout.as_millis());
        let options = match config.get_options() {
            Some(given) => format!("{given} {statement_timeout}"),
            None => statement_timeout,
        };
        config
            .options(options)
            .connect_timeout(self.connect_timeout)
            // A connection whose sent data stays unacknowledged this long is dead; the kernel closes it.
            .tcp_user_timeout(self.operation_timeout + self.connect_timeout);
        if config.get_application_name().is_none() {
            config.application_name("dual-response");
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(self.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(self.connect_timeout))
            .create_timeout(Some(self.connect_timeout))
            .recycle_timeout(Some(self.connect_timeout))
            .build()
            .map_err(|e| ConnectError::config("postgres: cannot build the connection pool").with_source(e))?;
        let shared = Shared {
            pool,
            sql: Sql::new(schema.as_ref(), &table),
            timeout: self.operation_timeout,
            purge_batch: i64::try_from(self.purge_batch).unwrap_or(i64::MAX),
            url: redacted,
            closed: AtomicBool::new(false),
        };
        Ok(PostgresStore::start(shared).await?)
    }
}

impl fmt::Debug for PostgresStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStoreBuilder")
            .field("url", &redact_secrets(&self.url))
            .field("schema", &self.schema)
            .field("table", &self.table)
            .field("pool_size", &self.pool_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .field("purge_batch", &self.purge_batch)
            .finish()
    }
}
