//! The database and its executors: a pool of connections, and the [`QueryExecutor`] that runs one
//! kind of query on it, each in a read-only transaction (docs in the crate root).

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::BytesMut;
use deadpool_postgres::Transaction;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use dual_core::{Column, Row, Sort, SortOrder};
use dual_server::{
    ExecutorError, JsonColumns, JsonRowWriter, LiveQuery, QueryExecutor, QueryStart, RowBatch, RowStream,
    RowWindow,
};
use dual_sql::{RowSender, SchemaCache, SqlKind, model_sql, row_channel};
use futures_util::TryStreamExt;
use serde_json::Value;
use tokio_postgres::types::{Format, IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{IsolationLevel, NoTls, Statement};

use crate::as_text;
use crate::decode::{BoxError, Raw, column_type, value, write};
use crate::error::{PgError, pg_error};
use crate::options::{CONNECT_TIMEOUT, PgOptions, STREAM_BUFFER};
use crate::privilege;
use crate::query::{PgQuery, check_select};
use crate::schema::{Describer, unknown};
use crate::session::{Canceller, Session, release};
use dual_sql::sql_guard::FunctionPolicy;

/// A PostgreSQL database served read-only: connect once, then register [`PgDb::sql_executor`] or
/// [`PgDb::query_executor`] for each kind. Clones share the pool.
#[derive(Clone)]
pub struct PgDb {
    shared: Arc<Shared>,
}

struct Shared {
    pool: Pool,
    /// The connections of snapshot streams (see [`PgOptions::snapshot_connections`]).
    snapshots: Pool,
    options: PgOptions,
    schema: SchemaCache,
    /// The database's own functions, found when it connected: refused to the model's SQL unless
    /// its [`FunctionPolicy`] allows them.
    user_functions: Arc<Vec<String>>,
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
        PgExecutor {
            shared: Arc::clone(&self.shared),
            kind: SqlKind::Sql,
            policy: Arc::new(policy),
        }
    }

    /// The executor of a query you write: `build` turns a tool call's params into the statement and
    /// its values ([`PgQuery`]), or into a message for the model when they are wrong.
    #[must_use]
    pub fn query_executor(
        &self,
        build: impl Fn(&Value) -> Result<PgQuery, String> + Send + Sync + 'static,
    ) -> PgExecutor {
        self.executor_of(SqlKind::fixed(build))
    }

    /// The tables and views the role may read, with their columns, described at most once per
    /// [`PgOptions::schema_ttl`]: what the `describe_schema` tool shows, and where the "did you mean
    /// …" of an unknown table or column comes from.
    #[must_use]
    pub fn schema(&self) -> &SchemaCache {
        &self.shared.schema
    }

    fn executor_of(&self, kind: SqlKind<PgQuery>) -> PgExecutor {
        PgExecutor {
            shared: Arc::clone(&self.shared),
            kind,
            policy: Arc::new(FunctionPolicy::new()),
        }
    }
}

/// Runs one query kind over a [`PgDb`]; see the crate docs.
#[derive(Clone)]
pub struct PgExecutor {
    shared: Arc<Shared>,
    kind: SqlKind<PgQuery>,
    policy: Arc<FunctionPolicy>,
}

impl std::fmt::Debug for PgExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgExecutor")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A parameter sent as text, for PostgreSQL to parse as the parameter's type.
#[derive(Debug)]
struct Text<'a>(Option<&'a str>);

impl ToSql for Text<'_> {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self.0 {
            Some(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            None => Ok(IsNull::Yes),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}

impl PgQuery {
    fn texts(&self) -> Vec<Text<'_>> {
        self.params.iter().map(|p| Text(p.as_deref())).collect()
    }
}

fn refs<'a>(texts: &'a [Text<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect()
}

impl PgExecutor {
    fn options(&self) -> PgOptions {
        self.shared.options
    }

    /// The query of `params`: the model's SQL checked, or the developer's built.
    fn query(&self, params: &Value) -> Result<PgQuery, ExecutorError> {
        self.kind
            .query(params, |sql, values| {
                PgQuery::new(check_select(sql, &self.policy)?).bind_json(values)
            })
            .map_err(ExecutorError::new)
    }

    fn error(&self, error: &tokio_postgres::Error) -> ExecutorError {
        pg_error(error, Some(self.options().time_limit))
    }

    /// A read-only, repeatable-read transaction on `session`'s connection, every statement under
    /// the time limit.
    async fn begin<'s>(&self, session: &'s mut Session) -> Result<Transaction<'s>, ExecutorError> {
        let txn = session
            .conn()?
            .build_transaction()
            .read_only(true)
            .isolation_level(IsolationLevel::RepeatableRead)
            .start()
            .await
            .map_err(|e| self.error(&e))?;
        let millis = self.options().time_limit.as_millis().max(1);
        txn.batch_execute(&format!("SET LOCAL statement_timeout = {millis}"))
            .await
            .map_err(|e| self.error(&e))?;
        Ok(txn)
    }

    /// `sql` prepared, its columns of types without a binary decoder cast to text ([`as_text`]).
    async fn prepare(&self, txn: &Transaction<'_>, sql: &str) -> Result<Statement, ExecutorError> {
        let statement = txn.prepare(sql).await.map_err(|e| self.error(&e))?;
        let columns: Vec<(&str, &Type)> = statement
            .columns()
            .iter()
            .map(|c| (c.name(), c.type_()))
            .collect();
        match as_text::wrapped(sql, &columns) {
            None => Ok(statement),
            Some(wrapped) => txn.prepare(&wrapped).await.map_err(|e| self.error(&e)),
        }
    }

    /// The snapshot's stream, on a task of its own: count, then the rows from a portal, each fetch
    /// sized by [`FetchSizer`] and written as one batch of JSON rows, sent through a bounded channel. `Ok(true)` when every row was sent.
    async fn write(
        &self,
        params: Value,
        start: QueryStart,
        canceller: Canceller,
        rows_out: &RowSender,
    ) -> Result<bool, ExecutorError> {
        let query = self.query(&params)?;
        let mut session = canceller.session(&self.shared.snapshots).await?;
        let written = self.write_in(&mut session, query, start, rows_out).await;
        release(&mut session).await;
        written
    }

    /// [`PgExecutor::write`] on its session.
    async fn write_in(
        &self,
        session: &mut Session,
        query: PgQuery,
        mut start: QueryStart,
        rows_out: &RowSender,
    ) -> Result<bool, ExecutorError> {
        let txn = self.begin(session).await?;
        let statement = self.prepare(&txn, &query.sql).await?;
        let names: Vec<String> = statement.columns().iter().map(|c| c.name().to_owned()).collect();
        let types: Vec<Type> = statement.columns().iter().map(|c| c.type_().clone()).collect();
        let columns = Arc::new(JsonColumns::new(&names)?);
        let numeric = self.options().numeric;
        start.declare_columns(
            names
                .iter()
                .zip(&types)
                .map(|(name, ty)| Column::new(name.clone(), column_type(ty, numeric)))
                .collect(),
        );
        // The query runs from here: `pending_after` counts from now, not from the count's end.
        start.running();
        // The count runs beside the stream, on a connection of its own that reads this
        // transaction's snapshot (exported), so a long query never runs twice in a row.
        let snapshot: String = txn
            .query_one("SELECT pg_export_snapshot()", &[])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| self.error(&e))?;
        let mut count = self.count_beside(snapshot, query.clone(), start);
        let texts = query.texts();
        let portal = txn
            .bind_raw(&statement, texts.iter())
            .await
            .map_err(|e| self.error(&e))?;
        let mut scratch = String::new();
        let mut sizer = FetchSizer::new(self.options());
        // One fetch ahead: the next `Execute` is sent as soon as this one's rows are in, before they
        // are decoded, so the server reads the next rows while these are written.
        let mut next = Some(self.fetch(&txn, &portal, sizer.next()).await?);
        while let Some((pending, asked)) = next.take() {
            let rows: Vec<tokio_postgres::Row> = pending.try_collect().await.map_err(|e| self.error(&e))?;
            if rows.len() >= asked {
                next = Some(self.fetch(&txn, &portal, sizer.next()).await?);
            }
            if !rows.is_empty() {
                let (batch, bytes) = self.batch(&rows, &columns, &names, &types, &mut scratch)?;
                sizer.saw(rows.len(), bytes);
                drop(rows);
                // No stall limit: the server's writer stops reading while it waits for its
                // background turn; its time limit and its drop of the stream bound the wait.
                if rows_out.send_within(batch, Duration::MAX).await.is_err() {
                    return Ok(false);
                }
            }
        }
        // A result shorter than its count: the exported snapshot stays until the count has read it
        // (or gave up at `count_wait`), so that even a short result announces its count first.
        count.settled().await;
        txn.rollback().await.map_err(|e| self.error(&e))?;
        Ok(true)
    }

    /// Counts `query` in the exported `snapshot` on a task of its own, and signals `start` with the
    /// count when it is done within `count_wait`, else without one (the count is then cancelled: the
    /// rows are counted as they come). Dropping what it returns cancels the count.
    fn count_beside(&self, snapshot: String, query: PgQuery, start: QueryStart) -> CountBeside {
        let me = self.clone();
        let wait = self.options().count_wait;
        let task = tokio::spawn(async move {
            match tokio::time::timeout(wait, me.count_in_snapshot(&snapshot, &query)).await {
                Ok(Ok(total)) => start.started_with_count(total),
                // Too slow, or the snapshot was gone (the stream already ended): no count.
                _ => start.started(),
            }
        });
        CountBeside(task)
    }

    /// The rows of `query` in the exported `snapshot`, on a snapshot connection of its own.
    async fn count_in_snapshot(&self, snapshot: &str, query: &PgQuery) -> Result<u64, ExecutorError> {
        Canceller::run(&self.shared.snapshots, async |session| {
            let txn = self.begin(session).await?;
            txn.batch_execute(&format!(
                "SET TRANSACTION SNAPSHOT '{}'",
                snapshot.replace('\'', "''")
            ))
            .await
            .map_err(|e| self.error(&e))?;
            count_rows(self, &txn, query).await
        })
        .await
    }

    /// Sends the `Execute` of the next `rows` rows of `portal` (without waiting for them).
    async fn fetch(
        &self,
        txn: &Transaction<'_>,
        portal: &tokio_postgres::Portal,
        rows: usize,
    ) -> Result<(tokio_postgres::RowStream, usize), ExecutorError> {
        let max_rows = i32::try_from(rows).unwrap_or(i32::MAX);
        let stream = txn
            .query_portal_raw(portal, max_rows)
            .await
            .map_err(|e| self.error(&e))?;
        Ok((stream, usize::try_from(max_rows).unwrap_or(usize::MAX)))
    }

    /// `rows` as a batch of JSON rows, each value written as it is decoded (no map per row), and
    /// the batch's bytes.
    fn batch(
        &self,
        rows: &[tokio_postgres::Row],
        columns: &Arc<JsonColumns>,
        names: &[String],
        types: &[Type],
        scratch: &mut String,
    ) -> Result<(RowBatch, usize), ExecutorError> {
        let numeric = self.options().numeric;
        let mut cap = self.options().value_cap();
        let mut out = JsonRowWriter::new(Arc::clone(columns), rows.len());
        for row in rows {
            for (at, (name, ty)) in names.iter().zip(types).enumerate() {
                let raw: Raw<'_> = row.try_get(at).map_err(|e| self.error(&e))?;
                cap.value(name, raw.0.map_or(0, <[u8]>::len))?;
                write(&mut out, ty, raw.0, numeric, scratch).map_err(|e| unreadable(name, ty, &e))?;
            }
            cap.end_row();
            out.end_row()?;
        }
        let bytes = out.bytes();
        Ok((out.finish(), bytes))
    }
}

impl QueryExecutor for PgExecutor {
    /// Every row, with the consistent count: one read-only repeatable-read transaction counts the
    /// result, then reads it from a portal in fetches of about [`PgOptions::batch_bytes`] (at most
    /// [`PgOptions::fetch_rows`] rows), one fetch ahead. `start` is signalled with the
    /// count (or without, once counting took [`PgOptions::count_wait`]). Dropping the stream sends
    /// PostgreSQL a cancel request.
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let (rows, stream) = row_channel(STREAM_BUFFER, "result");
        let canceller = Canceller::new();
        let guard = canceller.guard();
        tokio::spawn(async move {
            let sql = model_sql(&params).to_owned();
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

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

#[async_trait]
impl LiveQuery for PgExecutor {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        let counted = self.live_count(params).await;
        self.shared
            .schema
            .explained(counted, model_sql(params), unknown)
            .await
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let fetched = self.live_fetch(params, window).await;
        self.shared
            .schema
            .explained(fetched, model_sql(params), unknown)
            .await
    }
}

impl PgExecutor {
    /// Runs a live query on a session of its own ([`Canceller::run`]).
    async fn live_count(&self, params: &Value) -> Result<u64, ExecutorError> {
        let query = self.query(params)?;
        Canceller::run(&self.shared.pool, async |session| {
            self.count_in(session, &query).await
        })
        .await
    }

    async fn count_in(&self, session: &mut Session, query: &PgQuery) -> Result<u64, ExecutorError> {
        let txn = self.begin(session).await?;
        count_rows(self, &txn, query).await
    }

    async fn live_fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let query = self.query(params)?;
        Canceller::run(&self.shared.pool, async |session| {
            self.fetch_in(session, &query, window).await
        })
        .await
    }

    async fn fetch_in(
        &self,
        session: &mut Session,
        query: &PgQuery,
        window: RowWindow<'_>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let txn = self.begin(session).await?;
        let at = query.params.len();
        let sql = format!(
            "SELECT * FROM (\n{}\n) AS dual_page{} LIMIT ${} OFFSET ${}",
            query.sql,
            order_by(window.sort),
            at + 1,
            at + 2
        );
        let statement = self.prepare(&txn, &sql).await?;
        let names: Vec<String> = statement.columns().iter().map(|c| c.name().to_owned()).collect();
        let types: Vec<Type> = statement.columns().iter().map(|c| c.type_().clone()).collect();
        let (limit, offset) = (window.limit.to_string(), window.offset.to_string());
        let mut texts = query.texts();
        texts.push(Text(Some(&limit)));
        texts.push(Text(Some(&offset)));
        let rows = txn
            .query(&statement, &refs(&texts))
            .await
            .map_err(|e| self.error(&e))?;
        JsonColumns::new(&names)?;
        let numeric = self.options().numeric;
        let mut cap = self.options().value_cap();
        rows.iter()
            .map(|row| {
                let mut out = Row::with_capacity(names.len());
                cap.end_row();
                for (at, (name, ty)) in names.iter().zip(&types).enumerate() {
                    let raw: Raw<'_> = row.try_get(at).map_err(|e| self.error(&e))?;
                    cap.value(name, raw.0.map_or(0, <[u8]>::len))?;
                    let cell = value(ty, raw.0, numeric).map_err(|e| unreadable(name, ty, &e))?;
                    out.insert(name.clone(), cell);
                }
                Ok(out)
            })
            .collect()
    }
}

/// The count running beside a snapshot's stream (on a task of its own): cancelled when dropped.
struct CountBeside(tokio::task::JoinHandle<()>);

impl CountBeside {
    /// Waits until the count has signalled the start (within `count_wait`).
    async fn settled(&mut self) {
        let _ = (&mut self.0).await;
    }
}

impl Drop for CountBeside {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `SELECT count(*)` of `query` in `txn`.
async fn count_rows(
    executor: &PgExecutor,
    txn: &Transaction<'_>,
    query: &PgQuery,
) -> Result<u64, ExecutorError> {
    let texts = query.texts();
    let sql = format!("SELECT count(*) FROM (\n{}\n) AS dual_count", query.sql);
    let row = txn
        .query_one(&sql, &refs(&texts))
        .await
        .map_err(|e| executor.error(&e))?;
    let total: i64 = row.try_get(0).map_err(|e| executor.error(&e))?;
    Ok(u64::try_from(total).unwrap_or_default())
}

/// A value of column `name` that could not be decoded.
fn unreadable(name: &str, ty: &Type, error: &BoxError) -> ExecutorError {
    ExecutorError::new(format!("column `{name}` ({ty}) could not be read: {error}"))
}

/// ` ORDER BY "field" ASC|DESC` (the identifier quoted), or nothing.
fn order_by(sort: Option<&Sort>) -> String {
    sort.map(|sort| {
        let order = match sort.order {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        };
        format!(" ORDER BY \"{}\" {order}", sort.field.replace('"', "\"\""))
    })
    .unwrap_or_default()
}

/// Rows asked of the first portal fetches, before the rows' width is known: few, so that neither
/// the first batch (the sample) waits nor wide rows take much memory.
const FIRST_FETCH: usize = 16;

/// How many rows each portal fetch asks for: [`FIRST_FETCH`] until rows were seen, then as many as
/// fill about `batch_bytes` at the width seen so far (the average, or the last batch's when wider),
/// within `1..=fetch_rows` and at most four times the fetch before. The fetch after a batch is sent
/// before that batch is measured, so rows that turn wide mid-result make one fetch of the old size.
struct FetchSizer {
    most: usize,
    batch_bytes: usize,
    rows: usize,
    bytes: usize,
    /// The width of the last batch seen, in bytes per row.
    recent: usize,
    last: usize,
}

impl FetchSizer {
    fn new(options: PgOptions) -> Self {
        Self {
            most: usize::try_from(options.fetch_rows).unwrap_or(usize::MAX).max(1),
            batch_bytes: options.batch_bytes.max(1),
            rows: 0,
            bytes: 0,
            recent: 0,
            last: 0,
        }
    }

    fn next(&mut self) -> usize {
        let rows = if self.bytes == 0 {
            FIRST_FETCH
        } else {
            let per_row = (self.bytes / self.rows.max(1)).max(self.recent).max(1);
            (self.batch_bytes / per_row).min(self.last.max(FIRST_FETCH).saturating_mul(4))
        };
        self.last = rows.clamp(1, self.most);
        self.last
    }

    fn saw(&mut self, rows: usize, bytes: usize) {
        self.recent = bytes / rows.max(1);
        self.rows = self.rows.saturating_add(rows);
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_grow_to_fill_the_batch_bytes_within_fetch_rows() {
        let mut sizer = FetchSizer::new(PgOptions::default().fetch_rows(10_000).batch_bytes(1 << 20));
        assert_eq!(sizer.next(), FIRST_FETCH);
        assert_eq!(sizer.next(), FIRST_FETCH, "nothing seen yet");
        sizer.saw(16, 1_600);
        let grown: Vec<usize> = (0..5).map(|_| sizer.next()).collect();
        assert_eq!(
            grown,
            [64, 256, 1_024, 4_096, 10_000],
            "narrow rows: fourfold up to fetch_rows"
        );
        sizer.saw(1_000, 100 * (1 << 20));
        assert_eq!(sizer.next(), 10, "wide rows: about 1 MiB a batch");
        // Rows that turn wide after many narrow ones: the last batch's width counts at once.
        let mut turning = FetchSizer::new(PgOptions::default().fetch_rows(10_000).batch_bytes(1 << 20));
        turning.saw(1_000_000, 100_000_000);
        for _ in 0..5 {
            turning.next();
        }
        turning.saw(10, 1_000_000);
        assert_eq!(turning.next(), 10, "100 kB rows after a million 100 B rows");
        let mut tiny = FetchSizer::new(PgOptions::default().fetch_rows(5).batch_bytes(10));
        assert_eq!(tiny.next(), 5);
        tiny.saw(1, 1_000);
        assert_eq!(tiny.next(), 1);
    }
}
