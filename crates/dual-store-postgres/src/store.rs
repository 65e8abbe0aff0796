//! [`PostgresStore`] and its [`ResourceStore`] implementation.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Object, Pool};
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use dual_store::{Access, Lookup, OwnerFilter, ResourceStore, StoreError, Viewer};
use time::OffsetDateTime;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Statement};

use crate::error::{breaks_connection, map_pg_error, map_pool_error};
use crate::row::{self, QueryParams, SaveParams, micros};
use crate::sql::Sql;

/// A [`ResourceStore`] in one PostgreSQL table, shared by every server instance that points at the
/// same database and table. A cheap `Clone` handle around a connection pool; see the
/// [crate docs](crate) for the table.
#[derive(Clone)]
pub struct PostgresStore {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) pool: Pool,
    pub(crate) sql: Sql,
    pub(crate) timeout: Duration,
    pub(crate) purge_batch: i64,
    /// The connection string with its password redacted, for `Debug`.
    pub(crate) url: String,
    pub(crate) closed: AtomicBool,
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

impl PostgresStore {
    pub(crate) async fn start(shared: Shared) -> Result<Self, StoreError> {
        let store = Self {
            shared: Arc::new(shared),
        };
        let client = store.client("migrate").await?;
        let outcome = tokio::time::timeout(
            store.shared.timeout,
            client.batch_execute(&store.shared.sql.migrate),
        )
        .await;
        store.finish("migrate", client, outcome)?;
        tracing::debug!(url = %store.shared.url, table = %store.shared.sql.table, "postgres store ready");
        Ok(store)
    }

    /// The table this store keeps records in, quoted and schema-qualified when a schema was given.
    #[must_use]
    pub fn table(&self) -> &str {
        &self.shared.sql.table
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// A pooled connection, or why there is none within the connect timeout.
    async fn client(&self, op: &'static str) -> Result<Object, StoreError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        self.shared.pool.get().await.map_err(|e| map_pool_error(op, e))
    }

    /// Turns the outcome of a bounded call into the store's answer. A connection that timed out or
    /// broke is taken out of the pool and closed: a silent socket would otherwise fail the next call
    /// too, and the pool replaces it with a fresh one on demand.
    fn finish<T>(
        &self,
        op: &'static str,
        client: Object,
        outcome: Result<Result<T, tokio_postgres::Error>, tokio::time::error::Elapsed>,
    ) -> Result<T, StoreError> {
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => {
                if breaks_connection(&error) {
                    drop(Object::take(client));
                }
                Err(map_pg_error(op, error))
            }
            Err(_) => {
                drop(Object::take(client));
                let timeout = self.shared.timeout;
                tracing::warn!(op, ?timeout, "postgres store call timed out");
                Err(StoreError::unavailable(format!(
                    "postgres {op} timed out after {timeout:?}"
                )))
            }
        }
    }

    /// Runs a prepared query within the operation timeout.
    pub(crate) async fn rows(
        &self,
        op: &'static str,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, StoreError> {
        self.prepared(op, sql, async |client, statement| {
            client.query(statement, params).await
        })
        .await
    }

    /// Runs a prepared statement within the operation timeout, answering the rows it touched.
    pub(crate) async fn execute(
        &self,
        op: &'static str,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, StoreError> {
        self.prepared(op, sql, async |client, statement| {
            client.execute(statement, params).await
        })
        .await
    }

    /// Prepares `sql` (cached per connection) and runs `call` with it, within the operation timeout.
    async fn prepared<T>(
        &self,
        op: &'static str,
        sql: &str,
        call: impl AsyncFnOnce(&Object, &Statement) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StoreError> {
        let client = self.client(op).await?;
        let outcome = tokio::time::timeout(self.shared.timeout, async {
            let statement = client.prepare_cached(sql).await?;
            call(&client, &statement).await
        })
        .await;
        self.finish(op, client, outcome)
    }

    /// Runs an update-if-live statement and tells found, expired and missing apart.
    async fn update_live(
        &self,
        op: &'static str,
        sql: &str,
        id: ResourceId,
        now: OffsetDateTime,
    ) -> Result<Lookup, StoreError> {
        let rows = self.rows(op, sql, &[&id.to_string(), &micros(now)]).await?;
        let row = rows
            .first()
            .ok_or_else(|| StoreError::backend(format!("postgres {op}: no row returned")))?;
        Ok(match row::decode_update(row)? {
            Ok(record) => Lookup::Found(record),
            Err(true) => Lookup::Expired,
            Err(false) => Lookup::Missing,
        })
    }
}

#[async_trait]
impl ResourceStore for PostgresStore {
    #[tracing::instrument(name = "postgres_store.save", level = "debug", skip_all, fields(id = %record.id))]
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError> {
        let params = SaveParams::new(record)?;
        self.execute("save", &self.shared.sql.save, &params.params())
            .await
            .map(drop)
    }

    #[tracing::instrument(name = "postgres_store.get", level = "debug", skip_all, fields(%id))]
    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        let rows = self.rows("get", &self.shared.sql.get, &[&id.to_string()]).await?;
        let Some(row) = rows.first() else {
            return Ok(Lookup::Missing);
        };
        let record = row::decode(row)?;
        if record.is_expired_at(micros(now)) {
            Ok(Lookup::Expired)
        } else {
            Ok(Lookup::Found(record))
        }
    }

    #[tracing::instrument(name = "postgres_store.record_access", level = "debug", skip_all, fields(%id))]
    async fn record_access(
        &self,
        id: ResourceId,
        viewer: Viewer<'_>,
        now: OffsetDateTime,
    ) -> Result<Access, StoreError> {
        let (filter, owner) = match viewer.filter(id) {
            OwnerFilter::Any => ("any", None),
            OwnerFilter::Unowned => ("unowned", None),
            OwnerFilter::UnownedOr(owner) => ("owner", Some(owner)),
            OwnerFilter::Nothing => ("none", None),
        };
        let rows = self
            .rows(
                "record_access",
                &self.shared.sql.record_access,
                &[&id.to_string(), &micros(now), &filter, &owner],
            )
            .await?;
        let row = rows
            .first()
            .ok_or_else(|| StoreError::backend("postgres record_access: no row returned"))?;
        Ok(match row::decode_access(row)? {
            Ok(record) => Access::Counted(record),
            Err(Some(true)) => Access::Expired,
            Err(Some(false)) => Access::NotVisible,
            Err(None) => Access::Missing,
        })
    }

    #[tracing::instrument(name = "postgres_store.pin", level = "debug", skip_all, fields(%id))]
    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.update_live("pin", &self.shared.sql.pin, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.update_query", level = "debug", skip_all, fields(id = %record.id))]
    async fn update_query(&self, record: &ResourceRecord) -> Result<bool, StoreError> {
        let params = QueryParams::new(record)?;
        let updated = self
            .execute("update_query", &self.shared.sql.update_query, &params.params())
            .await?;
        Ok(updated > 0)
    }

    #[tracing::instrument(name = "postgres_store.delete", level = "debug", skip_all, fields(%id))]
    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        let deleted = self
            .execute("delete", &self.shared.sql.delete, &[&id.to_string()])
            .await?;
        Ok(deleted > 0)
    }

    #[tracing::instrument(name = "postgres_store.find_expired", level = "debug", skip(self))]
    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .rows(
                "find_expired",
                &self.shared.sql.find_expired,
                &[&micros(now), &limit],
            )
            .await?;
        rows.iter()
            .map(|row| {
                let id: String = row
                    .try_get(0)
                    .map_err(|e| StoreError::corrupt("column id").with_source(e))?;
                id.parse()
                    .map_err(|_| StoreError::corrupt("column id: not a ULID"))
            })
            .collect()
    }

    #[tracing::instrument(name = "postgres_store.purge_expired", level = "debug", skip(self))]
    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let now = micros(now);
        let batch = self.shared.purge_batch;
        let mut purged = 0;
        loop {
            let deleted = self
                .execute("purge_expired", &self.shared.sql.purge_batch, &[&now, &batch])
                .await?;
            purged += deleted;
            if deleted < batch.unsigned_abs() {
                break;
            }
        }
        if purged > 0 {
            tracing::debug!(purged, "postgres store purged expired resources");
        }
        crate::tasks::purge(self, now).await?;
        Ok(purged)
    }

    #[tracing::instrument(name = "postgres_store.live_count", level = "debug", skip(self))]
    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let rows = self
            .rows("live_count", &self.shared.sql.live_count, &[&micros(now)])
            .await?;
        let count: i64 = rows
            .first()
            .ok_or_else(|| StoreError::backend("postgres live_count: no row returned"))?
            .try_get(0)
            .map_err(|e| StoreError::backend("postgres live_count").with_source(e))?;
        Ok(count.unsigned_abs())
    }

    #[tracing::instrument(name = "postgres_store.list", level = "debug", skip(self, owner))]
    async fn list(
        &self,
        owner: Option<&str>,
        now: OffsetDateTime,
        before: Option<ResourceId>,
        limit: usize,
    ) -> Result<Vec<ResourceRecord>, StoreError> {
        crate::tasks::list(self, owner, now, before, limit).await
    }

    #[tracing::instrument(name = "postgres_store.save_task", level = "debug", skip_all, fields(id = %task.id))]
    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        crate::tasks::save(self, task).await
    }

    #[tracing::instrument(name = "postgres_store.get_task", level = "debug", skip(self))]
    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        crate::tasks::get(self, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.update_task", level = "debug", skip_all, fields(id = %task.id))]
    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError> {
        crate::tasks::update(self, task, now).await
    }

    #[tracing::instrument(name = "postgres_store.cancel_task", level = "debug", skip(self))]
    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        crate::tasks::cancel(self, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.save_session", level = "debug", skip_all)]
    async fn save_session(
        &self,
        id: &str,
        state: &str,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        crate::tasks::save_session(self, id, state, expires_at).await
    }

    #[tracing::instrument(name = "postgres_store.load_session", level = "debug", skip_all)]
    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError> {
        crate::tasks::load_session(self, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.delete_session", level = "debug", skip_all)]
    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        crate::tasks::delete_session(self, id).await
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.pool.close();
        Ok(())
    }
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.shared.url)
            .field("table", &self.shared.sql.table)
            .finish_non_exhaustive()
    }
}
