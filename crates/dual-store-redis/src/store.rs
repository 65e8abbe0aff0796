//! [`RedisStore`] and its [`ResourceStore`] implementation.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use dual_store::{Access, ListPage, Lookup, OwnerFilter, ResourceStore, StoreError, Viewer};
use time::OffsetDateTime;

use crate::fields::{self, SplitTime, Stored};
use crate::scripts;
use crate::shared::Shared;

/// A [`ResourceStore`] in Redis, shared by every server instance that points at the same server and
/// key prefix. A cheap `Clone` handle; see the [crate docs](crate) for the data layout.
#[derive(Clone)]
pub struct RedisStore {
    shared: Arc<Shared>,
}

/// A record or a status as the scripts answer it: `{status, json, query, count, last_access, pinned}`.
type ScriptReply = (i64, String, String, u64, String, i64);

impl RedisStore {
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// The prefix of every key this store writes.
    #[must_use]
    pub fn key_prefix(&self) -> &str {
        &self.shared.keys.prefix
    }

    /// Runs a record script (`KEYS`: record, index, pinned set; `ARGV`: now, then `extra`) and decodes
    /// its reply.
    async fn run_script(
        &self,
        op: &'static str,
        script: &'static redis::Script,
        id: ResourceId,
        now: OffsetDateTime,
        extra: [String; 3],
    ) -> Result<Access, StoreError> {
        let key = self.shared.keys.record(id);
        let expiry = self.shared.keys.expiry.clone();
        let pinned = self.shared.keys.pinned.clone();
        let split = SplitTime::new(now);
        let reply: ScriptReply = self
            .shared
            .connection
            .run(op, |mut con| async move {
                script
                    .key(key)
                    .key(expiry)
                    .key(pinned)
                    .arg(split.micros)
                    .arg(split.nanos)
                    .arg(&extra)
                    .invoke_async(&mut con)
                    .await
            })
            .await?;
        let (status, json, query, count, last_access, pinned) = reply;
        match status {
            0 => Ok(Access::Missing),
            1 => Ok(Access::Expired),
            2 => Stored::decode_script((json, query, count, last_access, pinned))
                .map(|record| Access::Counted(Arc::new(record))),
            3 => Ok(Access::NotVisible),
            4 => Err(StoreError::corrupt("record JSON: its owner cannot be read")),
            other => Err(StoreError::backend(format!(
                "redis {op}: unexpected script status {other}"
            ))),
        }
    }

    /// Runs a script over the records expired at `split` (`KEYS`: expiry index; `ARGV`: now, the
    /// records' key prefix, `limit`) and decodes its reply.
    async fn run_expiry_script<T: redis::FromRedisValue>(
        &self,
        op: &'static str,
        script: &'static redis::Script,
        split: SplitTime,
        limit: usize,
    ) -> Result<T, StoreError> {
        let expiry = self.shared.keys.expiry.clone();
        let records = self.shared.keys.records.clone();
        let owners = self.shared.keys.owners.clone();
        self.shared
            .connection
            .run(op, |mut con| async move {
                script
                    .key(expiry)
                    .arg(split.micros)
                    .arg(split.nanos)
                    .arg(records)
                    .arg(limit)
                    .arg(owners)
                    .invoke_async(&mut con)
                    .await
            })
            .await
    }
}

#[async_trait]
impl ResourceStore for RedisStore {
    #[tracing::instrument(name = "redis_store.save", level = "debug", skip_all, fields(id = %record.id))]
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError> {
        let key = self.shared.keys.record(record.id);
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("DEL").arg(&key).ignore();
        pipe.cmd("HSET").arg(&key);
        for (field, value) in fields::encode(record)? {
            pipe.arg(field).arg(value);
        }
        pipe.ignore();
        let id = record.id.to_string();
        let listing = self.shared.keys.owner_listing(&fields::owner_field(record));
        pipe.cmd("ZADD").arg(&listing).arg(0).arg(&id).ignore();
        // The oldest entries beyond the cap go (a listing shows at most that many records).
        pipe.cmd("ZREMRANGEBYRANK")
            .arg(&listing)
            .arg(0)
            .arg(-(crate::listing::MAX_LISTED + 1))
            .ignore();
        let (expiry, pinned) = (&self.shared.keys.expiry, &self.shared.keys.pinned);
        match record.expires_at {
            Some(at) => {
                pipe.cmd("PEXPIRE")
                    .arg(&key)
                    .arg(self.shared.ttl_millis(at))
                    .ignore();
                let score = SplitTime::new(at).micros;
                pipe.cmd("ZADD").arg(expiry).arg(score).arg(&id).ignore();
                pipe.cmd("SREM").arg(pinned).arg(&id).ignore();
            }
            None => {
                pipe.cmd("ZREM").arg(expiry).arg(&id).ignore();
                pipe.cmd("SADD").arg(pinned).arg(&id).ignore();
            }
        }
        self.shared
            .connection
            .run(
                "save",
                |mut con| async move { pipe.query_async::<()>(&mut con).await },
            )
            .await
    }

    #[tracing::instrument(name = "redis_store.get", level = "debug", skip_all, fields(%id))]
    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        let key = self.shared.keys.record(id);
        let (json, query, count, last_access, expires): (
            Option<String>,
            Option<String>,
            Option<u64>,
            Option<String>,
            Option<String>,
        ) = self
            .shared
            .connection
            .run("get", |mut con| async move {
                redis::cmd("HMGET")
                    .arg(key)
                    .arg(fields::RECORD)
                    .arg(fields::QUERY)
                    .arg(fields::COUNT)
                    .arg(fields::LAST_ACCESS)
                    .arg(fields::EXPIRES_MICROS)
                    .query_async(&mut con)
                    .await
            })
            .await?;
        let Some(json) = json else {
            return Ok(Lookup::Missing);
        };
        let record = Stored {
            json,
            query,
            count,
            last_access,
            pinned: expires.is_none(),
        }
        .decode()?;
        if record.is_expired_at(now) {
            Ok(Lookup::Expired)
        } else {
            Ok(Lookup::Found(record))
        }
    }

    #[tracing::instrument(name = "redis_store.record_access", level = "debug", skip_all, fields(%id))]
    async fn record_access(
        &self,
        id: ResourceId,
        viewer: Viewer<'_>,
        now: OffsetDateTime,
    ) -> Result<Access, StoreError> {
        let now_text = fields::format_time(now)?;
        let (filter, owner) = match viewer.filter(id) {
            OwnerFilter::Any => ("any", ""),
            OwnerFilter::Unowned => ("unowned", ""),
            OwnerFilter::UnownedOr(owner) => ("owner", owner),
            OwnerFilter::Nothing => ("none", ""),
        };
        let extra = [now_text, filter.to_owned(), owner.to_owned()];
        self.run_script("record_access", &scripts::RECORD_ACCESS, id, now, extra)
            .await
    }

    #[tracing::instrument(name = "redis_store.pin", level = "debug", skip_all, fields(%id))]
    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        let extra = [id.to_string(), String::new(), String::new()];
        match self.run_script("pin", &scripts::PIN, id, now, extra).await? {
            Access::Counted(record) => Ok(Lookup::Found(Arc::unwrap_or_clone(record))),
            Access::Expired => Ok(Lookup::Expired),
            Access::Missing => Ok(Lookup::Missing),
            Access::NotVisible => Err(StoreError::backend("redis pin: unexpected script status 3")),
        }
    }

    #[tracing::instrument(name = "redis_store.update_query", level = "debug", skip_all, fields(id = %record.id))]
    async fn update_query(&self, record: &ResourceRecord) -> Result<bool, StoreError> {
        let key = self.shared.keys.record(record.id);
        let query = fields::encode_query(record)?;
        let updated: i64 = self
            .shared
            .connection
            .run("update_query", |mut con| async move {
                scripts::UPDATE_QUERY
                    .key(key)
                    .arg(query)
                    .invoke_async(&mut con)
                    .await
            })
            .await?;
        Ok(updated == 1)
    }

    #[tracing::instrument(name = "redis_store.delete", level = "debug", skip_all, fields(%id))]
    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        let key = self.shared.keys.record(id);
        let owner: Option<String> = self
            .shared
            .connection
            .run("delete", move |mut con| async move {
                redis::cmd("HGET")
                    .arg(key)
                    .arg(fields::OWNER)
                    .query_async(&mut con)
                    .await
            })
            .await?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        if let Some(owner) = owner {
            pipe.cmd("ZREM")
                .arg(self.shared.keys.owner_listing(&owner))
                .arg(id.to_string())
                .ignore();
        }
        pipe.cmd("DEL")
            .arg(self.shared.keys.record(id))
            .cmd("ZREM")
            .arg(&self.shared.keys.expiry)
            .arg(id.to_string())
            .ignore()
            .cmd("SREM")
            .arg(&self.shared.keys.pinned)
            .arg(id.to_string())
            .ignore();
        let (deleted,): (i64,) = self
            .shared
            .connection
            .run(
                "delete",
                |mut con| async move { pipe.query_async(&mut con).await },
            )
            .await?;
        Ok(deleted > 0)
    }

    #[tracing::instrument(name = "redis_store.find_expired", level = "debug", skip(self))]
    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        // Lua numbers and Redis's LIMIT take at most this; no deployment holds more records.
        let limit = limit.min(i32::MAX as usize);
        let ids: Vec<String> = self
            .run_expiry_script("find_expired", &scripts::FIND_EXPIRED, SplitTime::new(now), limit)
            .await?;
        ids.iter()
            .map(|id| {
                id.parse()
                    .map_err(|_| StoreError::corrupt("malformed id in the expiry index"))
            })
            .collect()
    }

    #[tracing::instrument(name = "redis_store.purge_expired", level = "debug", skip(self))]
    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let split = SplitTime::new(now);
        let batch = self.shared.purge_batch;
        let mut purged = 0u64;
        loop {
            let (deleted, scanned): (u64, usize) = self
                .run_expiry_script("purge_expired", &scripts::PURGE_BATCH, split, batch)
                .await?;
            purged += deleted;
            if scanned < batch {
                break;
            }
        }
        if purged > 0 {
            tracing::debug!(purged, "redis store purged expired resources");
        }
        Ok(purged)
    }

    #[tracing::instrument(name = "redis_store.live_count", level = "debug", skip(self))]
    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let split = SplitTime::new(now);
        let expiry = self.shared.keys.expiry.clone();
        let pinned = self.shared.keys.pinned.clone();
        let records = self.shared.keys.records.clone();
        self.shared
            .connection
            .run("live_count", |mut con| async move {
                scripts::LIVE_COUNT
                    .key(expiry)
                    .key(pinned)
                    .arg(split.micros)
                    .arg(split.nanos)
                    .arg(records)
                    .invoke_async(&mut con)
                    .await
            })
            .await
    }

    #[tracing::instrument(
        name = "redis_store.list",
        level = "debug",
        skip(self, page),
        fields(before = ?page.before, limit = page.limit)
    )]
    async fn list(&self, page: ListPage<'_>, now: OffsetDateTime) -> Result<Vec<ResourceRecord>, StoreError> {
        let Some(listing) = page.listing() else {
            return Ok(Vec::new());
        };
        crate::listing::list(&self.shared, listing, now).await
    }

    #[tracing::instrument(name = "redis_store.save_task", level = "debug", skip_all, fields(id = %task.id))]
    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        crate::tasks::save(&self.shared, task).await
    }

    #[tracing::instrument(name = "redis_store.get_task", level = "debug", skip(self))]
    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        crate::tasks::get(&self.shared, id, now).await
    }

    #[tracing::instrument(name = "redis_store.update_task", level = "debug", skip_all, fields(id = %task.id))]
    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError> {
        crate::tasks::update(&self.shared, task, now).await
    }

    #[tracing::instrument(name = "redis_store.cancel_task", level = "debug", skip(self))]
    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        crate::tasks::cancel(&self.shared, id, now).await
    }

    #[tracing::instrument(name = "redis_store.save_session", level = "debug", skip_all)]
    async fn save_session(&self, id: &str, state: &str, expires: OffsetDateTime) -> Result<(), StoreError> {
        crate::sessions::save(&self.shared, id, state, expires).await
    }

    #[tracing::instrument(name = "redis_store.load_session", level = "debug", skip_all)]
    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError> {
        crate::sessions::load(&self.shared, id, now).await
    }

    #[tracing::instrument(name = "redis_store.delete_session", level = "debug", skip_all)]
    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        crate::sessions::delete(&self.shared, id).await
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.shared.connection.close();
        Ok(())
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.shared.url)
            .field("prefix", &self.shared.keys.prefix)
            .finish_non_exhaustive()
    }
}
