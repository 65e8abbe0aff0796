//! [`PostgresStore`] and its [`ResourceStore`] implementation.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use dual_store::{Access, ListPage, Lookup, OwnerFilter, ResourceStore, StoreError, Viewer};
use time::OffsetDateTime;

use crate::row::{self, QueryParams, SaveParams, micros};
use crate::shared::Shared;

/// A [`ResourceStore`] in one PostgreSQL table, shared by every server instance that points at the
/// same database and table. A cheap `Clone` handle around a connection pool; see the
/// [crate docs](crate) for the table.
#[derive(Clone)]
pub struct PostgresStore {
    shared: Arc<Shared>,
}

impl PostgresStore {
    pub(crate) async fn start(shared: Shared) -> Result<Self, StoreError> {
        let store = Self {
            shared: Arc::new(shared),
        };
        let client = store.shared.client("migrate").await?;
        let outcome = tokio::time::timeout(
            store.shared.timeout,
            client.batch_execute(&store.shared.sql.migrate),
        )
        .await;
        store.shared.finish("migrate", client, outcome)?;
        tracing::debug!(url = %store.shared.url, table = %store.shared.sql.table, "postgres store ready");
        Ok(store)
    }

    /// The table this store keeps records in, quoted and schema-qualified when a schema was given.
    #[must_use]
    pub fn table(&self) -> &str {
        &self.shared.sql.table
    }

    /// Runs an update-if-live statement and tells found, expired and missing apart.
    async fn update_live(
        &self,
        op: &'static str,
        sql: &str,
        id: ResourceId,
        now: OffsetDateTime,
    ) -> Result<Lookup, StoreError> {
        let rows = self
            .shared
            .rows(op, sql, &[&id.to_string(), &micros(now)])
            .await?;
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
        self.shared
            .execute("save", &self.shared.sql.save, &params.params())
            .await
            .map(drop)
    }

    #[tracing::instrument(name = "postgres_store.get", level = "debug", skip_all, fields(%id))]
    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        let rows = self
            .shared
            .rows("get", &self.shared.sql.get, &[&id.to_string()])
            .await?;
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
            .shared
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
            Ok(record) => Access::Counted(Arc::new(record)),
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
            .shared
            .execute("update_query", &self.shared.sql.update_query, &params.params())
            .await?;
        Ok(updated > 0)
    }

    #[tracing::instrument(name = "postgres_store.delete", level = "debug", skip_all, fields(%id))]
    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        let deleted = self
            .shared
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
            .shared
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
                .shared
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
        crate::tasks::purge(&self.shared, now).await?;
        Ok(purged)
    }

    #[tracing::instrument(name = "postgres_store.live_count", level = "debug", skip(self))]
    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let rows = self
            .shared
            .rows("live_count", &self.shared.sql.live_count, &[&micros(now)])
            .await?;
        let count: i64 = rows
            .first()
            .ok_or_else(|| StoreError::backend("postgres live_count: no row returned"))?
            .try_get(0)
            .map_err(|e| StoreError::backend("postgres live_count").with_source(e))?;
        Ok(count.unsigned_abs())
    }

    #[tracing::instrument(
        name = "postgres_store.list",
        level = "debug",
        skip(self, page),
        fields(before = ?page.before, limit = page.limit)
    )]
    async fn list(&self, page: ListPage<'_>, now: OffsetDateTime) -> Result<Vec<ResourceRecord>, StoreError> {
        let Some(listing) = page.listing() else {
            return Ok(Vec::new());
        };
        crate::tasks::list(&self.shared, listing, now).await
    }

    #[tracing::instrument(name = "postgres_store.save_task", level = "debug", skip_all, fields(id = %task.id))]
    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        crate::tasks::save(&self.shared, task).await
    }

    #[tracing::instrument(name = "postgres_store.get_task", level = "debug", skip(self))]
    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        crate::tasks::get(&self.shared, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.update_task", level = "debug", skip_all, fields(id = %task.id))]
    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError> {
        crate::tasks::update(&self.shared, task, now).await
    }

    #[tracing::instrument(name = "postgres_store.cancel_task", level = "debug", skip(self))]
    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        crate::tasks::cancel(&self.shared, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.save_session", level = "debug", skip_all)]
    async fn save_session(&self, id: &str, state: &str, expires: OffsetDateTime) -> Result<(), StoreError> {
        crate::tasks::save_session(&self.shared, id, state, expires).await
    }

    #[tracing::instrument(name = "postgres_store.load_session", level = "debug", skip_all)]
    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError> {
        crate::tasks::load_session(&self.shared, id, now).await
    }

    #[tracing::instrument(name = "postgres_store.delete_session", level = "debug", skip_all)]
    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        crate::tasks::delete_session(&self.shared, id).await
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
