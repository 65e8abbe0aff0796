//! [`MyDb`]: a MySQL or MariaDB database served read-only, connected once (two pools of
//! connections set up read-only, in UTC, with the statement time limit of the server's kind; the
//! user checked; the database's own functions read), the executors of its kinds, and what dual-sql's
//! [`Pooled`] executor asks of it ([`PooledDatabase`]).

use std::sync::Arc;

use async_trait::async_trait;
use dual_server::{CancelOnDrop, ExecutorError, QueryStart};
use dual_sql::sql_guard::FunctionPolicy;
use dual_sql::{Pooled, PooledDatabase, RowSender, SchemaCache, Unknown};
use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};
use serde_json::Value;

use crate::error::MyError;
use crate::executor::MyExecutor;
use crate::options::MyOptions;
use crate::privilege;
use crate::query::{MyQuery, check_select};
use crate::schema::{Describer, unknown};
use crate::session::Canceller;
use crate::shared::Shared;

/// `net_write_timeout` of the snapshot streams' connections: a day.
const SNAPSHOT_NET_WRITE_TIMEOUT_SECS: u32 = 86_400;

/// A MySQL or MariaDB database served read-only: connect once, then register
/// [`MyDb::sql_executor`] or [`MyDb::query_executor`] for each kind. Clones share the pool.
#[derive(Clone)]
pub struct MyDb {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for MyDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyDb")
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

impl MyDb {
    /// Connects to `url` (`mysql://user:password@host:port/database`) with a pool of
    /// `options.pool_size` connections, each set up read-only, in UTC, with the statement time
    /// limit of the server's kind (MariaDB's `max_statement_time`, MySQL's `max_execution_time`).
    ///
    /// The user it connected as must only read (unless [`MyOptions::allow_privileged_role`]), and
    /// the names of the database's own functions are read, for the model's SQL to refuse
    /// ([`MyDb::sql_executor_with`]).
    ///
    /// # Errors
    /// [`MyError::Config`] for a URL or options that cannot be used, [`MyError::Connect`] when the
    /// database does not answer, [`MyError::PrivilegedRole`] when the user may do more than read.
    pub async fn connect(url: &str, options: MyOptions) -> Result<Self, MyError> {
        let opts = Opts::from_url(url).map_err(|e| MyError::Config {
            message: "the URL cannot be parsed".to_owned(),
            source: Some(Box::new(e)),
        })?;
        let constraints = PoolConstraints::new(0, options.pool_size)
            .filter(|_| options.pool_size > 0 && options.fetch_rows > 0);
        let Some(constraints) = constraints else {
            return Err(MyError::Config {
                message: "pool_size and fetch_rows must be at least 1".to_owned(),
                source: None,
            });
        };
        let mut probe = mysql_async::Conn::new(opts.clone())
            .await
            .map_err(|e| MyError::Connect(Box::new(e)))?;
        let version: Option<String> = probe
            .query_first("SELECT VERSION()")
            .await
            .map_err(|e| MyError::Connect(Box::new(e)))?;
        let privileges = privilege::check(&mut probe).await?;
        if !privileges.found.is_empty() {
            if !options.allow_privileged_role {
                let _ = probe.disconnect().await;
                return Err(MyError::PrivilegedRole {
                    user: privileges.user,
                    found: privileges.found,
                });
            }
            tracing::warn!(
                // Escaped where they were read.
                user = %privileges.user,
                found = %privileges.found.join("; "),
                "mysql: connected as a user that may do more than read (allow_privileged_role)"
            );
        }
        let user_functions = Arc::new(privilege::user_functions(&mut probe).await?);
        let _ = probe.disconnect().await;
        let millis = options.time_limit.as_millis().max(1);
        let limit = if version.unwrap_or_default().contains("MariaDB") {
            format!("SET SESSION max_statement_time = {}", millis as f64 / 1000.0)
        } else {
            format!("SET SESSION max_execution_time = {millis}")
        };
        let setup = vec![
            "SET SESSION time_zone = '+00:00'".to_owned(),
            "SET SESSION TRANSACTION READ ONLY".to_owned(),
            limit,
        ];
        let pooled = OptsBuilder::from_opts(opts.clone())
            .setup(setup.clone())
            .pool_opts(
                PoolOpts::default()
                    .with_constraints(constraints)
                    // COM_RESET_CONNECTION when a connection comes back (locks, user variables, temporary
                    // tables), then the setup again: nothing a query leaves outlives it.
                    .with_reset_connection(true),
            );
        let pool = Pool::new(pooled);
        // A snapshot's stream reads its result unbuffered and stops reading while the server's writer
        // waits for its background turn: the server must not drop it after its default 60 s of
        // unread rows (`net_write_timeout`).
        let mut snapshot_setup = setup;
        snapshot_setup.push(format!(
            "SET SESSION net_write_timeout = {SNAPSHOT_NET_WRITE_TIMEOUT_SECS}"
        ));
        let snapshot_constraints =
            PoolConstraints::new(0, options.snapshot_connections.max(1)).unwrap_or_default();
        let snapshots = Pool::new(
            OptsBuilder::from_opts(opts.clone())
                .setup(snapshot_setup)
                .pool_opts(
                    PoolOpts::default()
                        .with_constraints(snapshot_constraints)
                        .with_reset_connection(true),
                ),
        );
        let schema = SchemaCache::new(Arc::new(Describer(pool.clone())), options.schema_ttl);
        Ok(Self {
            shared: Arc::new(Shared {
                pool,
                snapshots,
                opts,
                options,
                schema,
                user_functions,
            }),
        })
    }

    /// The executor of the model's SQL: params `{"sql": "SELECT …", "params"?: [..]}`, one read-only
    /// query whose `?` parameters are bound in order.
    #[must_use]
    pub fn sql_executor(&self) -> MyExecutor {
        self.sql_executor_with(FunctionPolicy::new())
    }

    /// [`MyDb::sql_executor`] under the operator's function policy: the built-in list of functions
    /// the model's SQL may not call, what `policy` adds, and the database's own functions found when
    /// it connected, refused as of unknown effect unless `policy` allows them.
    #[must_use]
    pub fn sql_executor_with(&self, policy: FunctionPolicy) -> MyExecutor {
        let policy = policy.user_defined(self.shared.user_functions.iter());
        MyExecutor(Arc::new(Pooled::sql(Arc::clone(&self.shared), policy)))
    }

    /// The executor of a query you write: `build` turns a tool call's params into the statement and
    /// its values ([`MyQuery`]), or into a message for the model when they are wrong.
    #[must_use]
    pub fn query_executor(
        &self,
        build: impl Fn(&Value) -> Result<MyQuery, String> + Send + Sync + 'static,
    ) -> MyExecutor {
        MyExecutor(Arc::new(Pooled::fixed(Arc::clone(&self.shared), build)))
    }

    /// The tables and views of the connection's database, with their columns, described at most once
    /// per [`MyOptions::schema_ttl`]: what the `describe_schema` tool shows, and where the "did you
    /// mean …" of an unknown table or column comes from.
    #[must_use]
    pub fn schema(&self) -> &SchemaCache {
        &self.shared.schema
    }
}

#[async_trait]
impl PooledDatabase for Shared {
    type Query = MyQuery;
    type Cancel = Canceller;

    const UNKNOWN: fn(&str) -> Option<Unknown<'_>> = unknown;

    fn model_query(sql: &str, values: &Value, policy: &FunctionPolicy) -> Result<MyQuery, String> {
        MyQuery::new(check_select(sql, policy)?).bind_json(values)
    }

    fn schema(&self) -> &SchemaCache {
        &self.schema
    }

    fn cancel(&self) -> (Canceller, CancelOnDrop) {
        let canceller = Canceller::new(self.opts.clone());
        let guard = canceller.guard();
        (canceller, guard)
    }

    async fn write(
        self: Arc<Self>,
        query: MyQuery,
        start: QueryStart,
        cancel: Canceller,
        rows: &RowSender,
    ) -> Result<bool, ExecutorError> {
        self.write_snapshot(query, start, cancel, rows).await
    }
}
