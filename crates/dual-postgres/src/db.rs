//! [`PgDb`]: a PostgreSQL database served read-only, connected once (two pools, the role checked,
//! the database's own functions read), the executors of its kinds, and what dual-sql's [`Pooled`]
//! executor asks of it ([`PooledDatabase`]: the model's SQL checked in PostgreSQL's dialect, a
//! cancel request, the snapshot's stream of `snapshot.rs`).

use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use dual_server::{CancelOnDrop, ExecutorError, QueryStart};
use dual_sql::sql_guard::FunctionPolicy;
use dual_sql::{Pooled, PooledDatabase, RowSender, SchemaCache, Unknown};
use serde_json::Value;
use tokio_postgres::NoTls;

use crate::error::PgError;
use crate::executor::PgExecutor;
use crate::options::{CONNECT_TIMEOUT, PgOptions};
use crate::privilege;
use crate::query::{PgQuery, check_select};
use crate::schema::{Describer, unknown};
use crate::session::Canceller;
use crate::shared::Shared;
use crate::snapshot;

/// A PostgreSQL database served read-only: connect once, then register [`PgDb::sql_executor`] or
/// [`PgDb::query_executor`] for each kind. Clones share the pool.
#[derive(Clone)]
pub struct PgDb {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PgDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgDb")
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

impl PgDb {
    /// Connects to `url` (`postgres://user:password@host:port/database`, or the key-value form)
    /// with a pool of `options.pool_size` connections, and checks one connection: the role it
    /// connected as must only read (unless [`PgOptions::allow_privileged_role`]), and the names of the
    /// database's own functions are read, for the model's SQL to refuse ([`PgDb::sql_executor_with`]).
    ///
    /// # Errors
    /// [`PgError::Config`] for a URL or options that cannot be used, [`PgError::Connect`] when the
    /// database does not answer, [`PgError::PrivilegedRole`] when the role may do more than read.
    pub async fn connect(url: &str, options: PgOptions) -> Result<Self, PgError> {
        let mut config = tokio_postgres::Config::from_str(url).map_err(|e| PgError::Config {
            message: "the URL cannot be parsed".to_owned(),
            source: Some(Box::new(e)),
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        if config.get_application_name().is_none() {
            config.application_name("dual-postgres");
        }
        if options.pool_size == 0 || options.fetch_rows == 0 {
            return Err(PgError::Config {
                message: "pool_size and fetch_rows must be at least 1".to_owned(),
                source: None,
            });
        }
        let build = |manager, size, wait| {
            Pool::builder(manager)
                .max_size(size)
                .runtime(Runtime::Tokio1)
                .wait_timeout(wait)
                .create_timeout(Some(CONNECT_TIMEOUT))
                .recycle_timeout(Some(CONNECT_TIMEOUT))
                .build()
                .map_err(|e| PgError::Config {
                    message: "the connection pool cannot be built".to_owned(),
                    source: Some(Box::new(e)),
                })
        };
        let manager_config = || ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let snapshots = build(
            Manager::from_config(config.clone(), NoTls, manager_config()),
            options.snapshot_connections.max(1),
            None,
        )?;
        let pool = build(
            Manager::from_config(config, NoTls, manager_config()),
            options.pool_size,
            Some(options.wait),
        )?;
        let client = pool.get().await.map_err(|e| PgError::Connect(Box::new(e)))?;
        let privileges = privilege::check(&client).await?;
        if !privileges.found.is_empty() {
            if !options.allow_privileged_role {
                return Err(PgError::PrivilegedRole {
                    role: privileges.role,
                    found: privileges.found,
                });
            }
            tracing::warn!(
                // Escaped where they were read.
                role = %privileges.role,
                found = %privileges.found.join("; "),
                "postgres: connected as a role that may do more than read (allow_privileged_role)"
            );
        }
        let user_functions = Arc::new(privilege::user_functions(&client).await?);
        drop(client);
        let schema = SchemaCache::new(Arc::new(Describer(pool.clone())), options.schema_ttl);
        Ok(Self {
            shared: Arc::new(Shared {
                pool,
                snapshots,
                options,
                schema,
                user_functions,
            }),
        })
    }

    /// The executor of the model's SQL: params `{"sql": "SELECT …", "params"?: [..]}`, one read-only
    /// query whose parameters (`$1`, `$2`, …) are bound in order.
    #[must_use]
    pub fn sql_executor(&self) -> PgExecutor {
        self.sql_executor_with(FunctionPolicy::new())
    }

    /// [`PgDb::sql_executor`] under the operator's function policy: the built-in list of functions
    /// the model's SQL may not call, what `policy` adds, and the database's own functions found when
    /// it connected, refused as of unknown effect unless `policy` allows them.
    #[must_use]
    pub fn sql_executor_with(&self, policy: FunctionPolicy) -> PgExecutor {
        let policy = policy.user_defined(self.shared.user_functions.iter());
        PgExecutor(Arc::new(Pooled::sql(Arc::clone(&self.shared), policy)))
    }

    /// The executor of a query you write: `build` turns a tool call's params into the statement and
    /// its values ([`PgQuery`]), or into a message for the model when they are wrong.
    #[must_use]
    pub fn query_executor(
        &self,
        build: impl Fn(&Value) -> Result<PgQuery, String> + Send + Sync + 'static,
    ) -> PgExecutor {
        PgExecutor(Arc::new(Pooled::fixed(Arc::clone(&self.shared), build)))
    }

    /// The tables and views the role may read, with their columns, described at most once per
    /// [`PgOptions::schema_ttl`]: what the `describe_schema` tool shows, and where the "did you mean
    /// …" of an unknown table or column comes from.
    #[must_use]
    pub fn schema(&self) -> &SchemaCache {
        &self.shared.schema
    }
}

#[async_trait]
impl PooledDatabase for Shared {
    type Query = PgQuery;
    type Cancel = Canceller;

    const UNKNOWN: fn(&str) -> Option<Unknown<'_>> = unknown;

    fn model_query(sql: &str, values: &Value, policy: &FunctionPolicy) -> Result<PgQuery, String> {
        PgQuery::new(check_select(sql, policy)?).bind_json(values)
    }

    fn schema(&self) -> &SchemaCache {
        &self.schema
    }

    fn cancel(&self) -> (Canceller, CancelOnDrop) {
        let canceller = Canceller::new();
        let guard = canceller.guard();
        (canceller, guard)
    }

    async fn write(
        self: Arc<Self>,
        query: PgQuery,
        start: QueryStart,
        cancel: Canceller,
        rows: &RowSender,
    ) -> Result<bool, ExecutorError> {
        snapshot::write(self, query, start, cancel, rows).await
    }
}
