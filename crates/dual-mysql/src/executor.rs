//! The database and its executors: a pool of connections set up read-only, and the
//! [`QueryExecutor`] that runs one kind of query on it (docs in the crate root).

mod live;

use std::sync::Arc;
use std::time::Duration;

use dual_core::budget::row_json_len;
use dual_core::{Column, Row};
use dual_server::{ExecutorError, JsonColumns, QueryExecutor, QueryStart, RowStream};
use dual_sql::{RowSender, SchemaCache, SqlKind, row_channel};
use mysql_async::prelude::Queryable;
use mysql_async::{IsolationLevel, Opts, OptsBuilder, Params, Pool, PoolConstraints, PoolOpts, TxOpts};
use serde_json::Value;

use crate::decode::{column_type, value};
use crate::error::{MyError, my_error};
use crate::options::{MyOptions, STREAM_BUFFER};
use crate::privilege;
use crate::query::{MyQuery, check_select};
use crate::schema::{Describer, unknown};
use crate::session::{self, Canceller};
use dual_sql::sql_guard::FunctionPolicy;

/// `net_write_timeout` of the snapshot streams' connections: a day.
const SNAPSHOT_NET_WRITE_TIMEOUT_SECS: u32 = 86_400;

/// A MySQL or MariaDB database served read-only: connect once, then register
/// [`MyDb::sql_executor`] or [`MyDb::query_executor`] for each kind. Clones share the pool.
#[derive(Clone)]
pub struct MyDb {
    shared: Arc<Shared>,
}

struct Shared {
    pool: Pool,
    /// The connections of snapshot streams (see [`MyOptions::snapshot_connections`]).
    snapshots: Pool,
    /// For the connections that send `KILL QUERY`.
    opts: Opts,
    options: MyOptions,
    schema: SchemaCache,
    /// The database's own functions, found when it connected: refused to the model's SQL unless
    /// its [`FunctionPolicy`] allows them.
    user_functions: Arc<Vec<String>>,
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
        MyExecutor {
            shared: Arc::clone(&self.shared),
            kind: SqlKind::Sql,
            policy: Arc::new(policy),
        }
    }

    /// The executor of a query you write: `build` turns a tool call's params into the statement and
    /// its values ([`MyQuery`]), or into a message for the model when they are wrong.
    #[must_use]
    pub fn query_executor(
        &self,
        build: impl Fn(&Value) -> Result<MyQuery, String> + Send + Sync + 'static,
    ) -> MyExecutor {
        self.executor_of(SqlKind::fixed(build))
    }

    /// The tables and views of the connection's database, with their columns, described at most once
    /// per [`MyOptions::schema_ttl`]: what the `describe_schema` tool shows, and where the "did you
    /// mean …" of an unknown table or column comes from.
    #[must_use]
    pub fn schema(&self) -> &SchemaCache {
        &self.shared.schema
    }

    fn executor_of(&self, kind: SqlKind<MyQuery>) -> MyExecutor {
        MyExecutor {
            shared: Arc::clone(&self.shared),
            kind,
            policy: Arc::new(FunctionPolicy::new()),
        }
    }
}

/// Runs one query kind over a [`MyDb`]; see the crate docs.
#[derive(Clone)]
pub struct MyExecutor {
    shared: Arc<Shared>,
    kind: SqlKind<MyQuery>,
    policy: Arc<FunctionPolicy>,
}

impl std::fmt::Debug for MyExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyExecutor")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

fn params(query: &MyQuery) -> Params {
    if query.params.is_empty() {
        Params::Empty
    } else {
        Params::Positional(query.params.clone())
    }
}

impl MyExecutor {
    fn options(&self) -> MyOptions {
        self.shared.options
    }

    fn query(&self, params: &Value) -> Result<MyQuery, ExecutorError> {
        self.kind
            .query(params, |sql, values| {
                MyQuery::new(check_select(sql, &self.policy)?).bind_json(values)
            })
            .map_err(ExecutorError::new)
    }

    fn error(&self, error: &mysql_async::Error) -> ExecutorError {
        my_error(error, self.options().time_limit)
    }

    /// The snapshot's stream, on a task of its own: in one read-only transaction with a consistent
    /// snapshot, the count, then the rows read unbuffered and sent in batches of `fetch_rows` rows or
    /// `batch_bytes` bytes of JSON, whichever comes first.
    async fn write(
        &self,
        params_json: Value,
        mut start: QueryStart,
        canceller: Canceller,
        rows_out: &RowSender,
    ) -> Result<bool, ExecutorError> {
        let query = self.query(&params_json)?;
        let options = self.options();
        // A connection of its own, waited for without a limit (the server's scheduler and time limit
        // bound it).
        let mut session = canceller
            .session(&self.shared.snapshots, Duration::MAX, options.time_limit)
            .await?;
        let conn = session.conn()?;
        let connection = conn.id();
        let mut txn = conn
            .start_transaction(
                TxOpts::new()
                    .with_readonly(true)
                    .with_consistent_snapshot(true)
                    .with_isolation_level(IsolationLevel::RepeatableRead)
                    .clone(),
            )
            .await
            .map_err(|e| self.error(&e))?;
        let statement = txn.prep(&query.sql).await.map_err(|e| self.error(&e))?;
        let columns = statement.columns();
        // Two columns of one name would lose one in a row object: refused, saying how.
        JsonColumns::new(columns.iter().map(|c| c.name_str()))?;
        start.declare_columns(
            columns
                .iter()
                .map(|c| Column::new(c.name_str().into_owned(), column_type(c, options.numeric)))
                .collect(),
        );
        // The query runs from here: `pending_after` counts from now, not from the count's end.
        start.running();
        // The count first, in the same transaction; one slower than `count_wait` is stopped (`KILL
        // QUERY`: the statement ends, the transaction stays) and the rows are counted as they come,
        // so a long query never runs twice in a row.
        let count_sql = format!("SELECT COUNT(*) FROM (\n{}\n) AS dual_count", query.sql);
        let counted: Option<i64> = {
            let count = txn.exec_first(&count_sql, params(&query));
            tokio::pin!(count);
            tokio::select! {
                // A count done in time wins over the timer: no kill is sent to an idle connection.
                biased;
                counted = &mut count => counted.map_err(|e| self.error(&e))?,
                () = tokio::time::sleep(options.count_wait) => {
                    session::kill_query(self.shared.opts.clone(), connection).await;
                    // The count ends, killed (or done just before the kill): either way no count.
                    let _ = (&mut count).await;
                    None
                }
            }
        };
        match counted {
            Some(total) => start.started_with_count(u64::try_from(total).unwrap_or_default()),
            None => start.started(),
        }
        let fetch = usize::try_from(options.fetch_rows).unwrap_or(usize::MAX);
        let mut result = txn
            .exec_iter(&statement, params(&query))
            .await
            .map_err(|e| self.error(&e))?;
        let mut batch = Vec::with_capacity(fetch.min(4_096));
        let mut bytes = 0usize;
        loop {
            let row = result.next().await.map_err(|e| self.error(&e))?;
            let done = row.is_none();
            if let Some(row) = row {
                let row = self.row(&row)?;
                bytes = bytes.saturating_add(row_json_len(&row));
                batch.push(row);
            }
            if !batch.is_empty() && (done || batch.len() >= fetch || bytes >= options.batch_bytes) {
                bytes = 0;
                let full = std::mem::replace(&mut batch, Vec::with_capacity(fetch.min(4_096)));
                // No stall limit: the server's writer stops reading while it waits for its
                // background turn; its time limit and its drop of the stream bound the wait.
                if rows_out.send_within(full, Duration::MAX).await.is_err() {
                    return Ok(false);
                }
            }
            if done {
                break;
            }
        }
        drop(result);
        txn.rollback().await.map_err(|e| self.error(&e))?;
        Ok(true)
    }

    fn row(&self, row: &mysql_async::Row) -> Result<Row, ExecutorError> {
        let numeric = self.options().numeric;
        let mut cap = self.options().value_cap();
        let columns = row.columns_ref();
        let mut out = Row::with_capacity(columns.len());
        for (at, column) in columns.iter().enumerate() {
            let name = column.name_str();
            let cell = match row.as_ref(at) {
                Some(raw) => {
                    if let mysql_async::Value::Bytes(bytes) = raw {
                        cap.value(&name, bytes.len())?;
                    }
                    value(column, raw, numeric)
                        .map_err(|e| ExecutorError::new(format!("column `{name}` could not be read: {e}")))?
                }
                None => Value::Null,
            };
            out.insert(name.into_owned(), cell);
        }
        Ok(out)
    }
}

impl QueryExecutor for MyExecutor {
    /// Every row, with the consistent count: one read-only transaction with a consistent snapshot
    /// counts the result, then reads it unbuffered, `fetch_rows` rows or `batch_bytes` per batch. Dropping the stream
    /// sends `KILL QUERY` for it and closes its connection.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let (rows, stream) = row_channel(STREAM_BUFFER, "result");
        let canceller = Canceller::new(self.shared.opts.clone());
        let guard = canceller.guard();
        tokio::spawn(async move {
            let sql = params
                .get("sql")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            match self.write(params, start, canceller, &rows).await {
                Ok(true) => rows.finish(),
                Ok(false) => {}
                Err(error) => {
                    rows.fail(self.shared.schema.explain(error, &sql, unknown).await)
                        .await
                }
            }
        });
        guard.guard_stream(stream)
    }

    /// Live paging: a result over the snapshot cap is re-run per page (`live.rs`).
    fn live(&self) -> Option<&dyn dual_server::LiveQuery> {
        Some(self)
    }
}
