//! The in-memory store, modelled on mini-redis's `db.rs`, with the map split into shards.

mod sessions;
mod tasks;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use time::OffsetDateTime;

use crate::id_hash::IdHashing;
use crate::{Access, ListPage, Lookup, ResourceStore, StoreError, Viewer};

/// How many locks the records are spread over. A reader locks only its record's shard, so it never
/// waits on a purge for longer than the removal of one record from that shard.
const SHARDS: usize = 64;

/// How many expired records one purge step unlinks while holding the expiry index's lock (which readers
/// never take). Between steps the purge yields to other tasks.
const PURGE_BATCH: usize = 256;

/// Purges that remove more records than this free their memory on tokio's blocking pool, so that the
/// purging task does not hold a runtime worker while freeing them (a realistic record is a tree of about
/// 170 allocations; freeing 100,000 of them takes a few hundred milliseconds).
const FREE_IN_BACKGROUND: usize = 4 * PURGE_BATCH;

/// An in-memory [`ResourceStore`] for development and single-instance deployments.
///
/// A cheap `Clone` handle around shared state. Records live in a hash map split into shards; an index
/// ordered by expiry time makes a purge cost what expires, not what is stored, and purges work in small
/// batches. Readers (`get`, `record_access`) only lock their record's shard and copy the record after
/// releasing it, so a purge never blocks them for long. Resources do not survive a restart and are not
/// shared between processes: use `dual-store-redis` or `dual-store-postgres` for that.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    shared: Arc<Shared>,
}

/// `(expires_at, id)` of every record that expires, earliest first.
type Expirations = BTreeSet<(OffsetDateTime, ResourceId)>;

/// The expiry index and the number of records, behind one lock.
#[derive(Debug, Default)]
struct Index {
    /// The records that expire, by expiry.
    expirations: Expirations,
    /// How many records the shards hold, expired ones not yet purged included.
    records: usize,
    /// Every record's id under its owner (`None`: created without one), for listings.
    by_owner: HashMap<Option<String>, BTreeSet<ResourceId>>,
}

impl Index {
    fn add_owned(&mut self, record: &ResourceRecord) {
        self.by_owner
            .entry(record.owner.clone())
            .or_default()
            .insert(record.id);
    }

    fn remove_owned(&mut self, record: &ResourceRecord) {
        if let Some(ids) = self.by_owner.get_mut(&record.owner) {
            ids.remove(&record.id);
            if ids.is_empty() {
                self.by_owner.remove(&record.owner);
            }
        }
    }
}

/// Records behind an `Arc`: a reader copies a pointer under the lock and the record after releasing it,
/// and removed records are freed outside the lock.
type Shard = HashMap<ResourceId, Arc<ResourceRecord>, IdHashing>;

/// Std mutexes, not tokio's: none is held across an `.await`, and every critical section is a few map
/// operations, so an async mutex would only add overhead. Lock order: `index`, then one shard.
#[derive(Debug)]
struct Shared {
    /// Every change to a record's expiry (save, pin, delete, purge) and every insertion or removal of a
    /// record (save, delete, purge, close) holds this lock and the record's shard together, so the
    /// expiry index and the record count always match the records.
    index: Mutex<Index>,
    shards: [Padded; SHARDS],
    tasks: tasks::Tasks,
    sessions: sessions::Sessions,
    closed: AtomicBool,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            index: Mutex::default(),
            shards: std::array::from_fn(|_| Padded::default()),
            tasks: tasks::Tasks::default(),
            sessions: sessions::Sessions::default(),
            closed: AtomicBool::new(false),
        }
    }
}

/// A shard on its own cache line, so that readers of neighbouring shards do not slow each other down.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded(Mutex<Shard>);

/// A change made to a live record, and to the expiry index when the caller holds it, under the locks.
type Update<'a> = &'a dyn Fn(&mut ResourceRecord, Option<&mut Expirations>);

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many records are held, expired ones not yet purged included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.shared.shards.iter().map(|s| lock(&s.0).len()).sum()
    }

    /// Whether the store holds no record.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.shared.shards.iter().all(|s| lock(&s.0).is_empty())
    }

    fn open(&self) -> Result<&Shared, StoreError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        Ok(&self.shared)
    }

    /// Applies `update` (if any) to a live record and returns the record afterwards, copied after the
    /// locks are released. With `index`, the expiry index is locked too.
    fn update_live(
        &self,
        id: ResourceId,
        now: OffsetDateTime,
        index: bool,
        update: Option<Update<'_>>,
    ) -> Result<Lookup, StoreError> {
        let shared = self.open()?;
        let record = {
            let mut index = index.then(|| lock(&shared.index));
            let mut shard = shared.shard(id);
            let Some(record) = shard.get_mut(&id) else {
                return Ok(Lookup::Missing);
            };
            if record.is_expired_at(now) {
                return Ok(Lookup::Expired);
            }
            if let Some(update) = update {
                // Copies the record only while a reader still holds the previous version.
                update(
                    Arc::make_mut(record),
                    index.as_deref_mut().map(|index| &mut index.expirations),
                );
            }
            Arc::clone(record)
        };
        Ok(Lookup::Found(Arc::unwrap_or_clone(record)))
    }
}

impl Shared {
    fn shard(&self, id: ResourceId) -> MutexGuard<'_, Shard> {
        // ULIDs end in 80 random bits.
        let bits = u128::from(id.as_ulid());
        lock(&self.shards[(bits as usize) % SHARDS].0)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock cannot leave the maps inconsistent in a way that matters more than
    // losing the whole store, so a poisoned lock is recovered rather than propagated.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Frees purged records: inline when there are few, on the blocking pool when there are many and a
/// runtime is at hand.
fn free(records: Vec<Arc<ResourceRecord>>) {
    if records.len() > FREE_IN_BACKGROUND
        && let Ok(runtime) = tokio::runtime::Handle::try_current()
    {
        drop(runtime.spawn_blocking(move || drop(records)));
    } else {
        drop(records);
    }
}

#[async_trait]
impl ResourceStore for MemoryStore {
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError> {
        let shared = self.open()?;
        let (id, expires_at) = (record.id, record.expires_at);
        let record = Arc::new(record.clone());
        let replaced = {
            let mut index = lock(&shared.index);
            index.add_owned(&record);
            let owner = record.owner.clone();
            let replaced = shared.shard(id).insert(id, record);
            if let Some(old) = replaced.as_deref()
                && old.owner != owner
            {
                index.remove_owned(old);
            }
            match replaced.as_ref().map(|r| r.expires_at) {
                None => index.records += 1,
                Some(Some(old)) => {
                    index.expirations.remove(&(old, id));
                }
                Some(None) => {}
            }
            if let Some(at) = expires_at {
                index.expirations.insert((at, id));
            }
            replaced
        };
        drop(replaced);
        Ok(())
    }

    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.update_live(id, now, false, None)
    }

    async fn record_access(
        &self,
        id: ResourceId,
        viewer: Viewer<'_>,
        now: OffsetDateTime,
    ) -> Result<Access, StoreError> {
        let shared = self.open()?;
        let record = {
            let mut shard = shared.shard(id);
            let Some(record) = shard.get_mut(&id) else {
                return Ok(Access::Missing);
            };
            if record.is_expired_at(now) {
                return Ok(Access::Expired);
            }
            // Checked under the same lock as the count: a record the viewer may not see is untouched.
            if !viewer.sees(record) {
                return Ok(Access::NotVisible);
            }
            let counted = Arc::make_mut(record);
            counted.access_count = counted.access_count.saturating_add(1);
            counted.last_accessed_at = Some(now);
            Arc::clone(record)
        };
        Ok(Access::Counted(record))
    }

    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        let pin = |record: &mut ResourceRecord, expirations: Option<&mut Expirations>| {
            if let (Some(at), Some(expirations)) = (record.expires_at.take(), expirations) {
                expirations.remove(&(at, id));
            }
        };
        self.update_live(id, now, true, Some(&pin))
    }

    async fn update_query(&self, record: &ResourceRecord) -> Result<bool, StoreError> {
        let shared = self.open()?;
        let mut shard = shared.shard(record.id);
        let Some(stored) = shard.get_mut(&record.id) else {
            return Ok(false);
        };
        let stored = Arc::make_mut(stored);
        stored.status = record.status;
        stored.total_count = record.total_count;
        stored.spooled_rows = record.spooled_rows;
        stored.columns.clone_from(&record.columns);
        stored.sample = Arc::clone(&record.sample);
        stored.consistency = record.consistency;
        stored.lease_expires_at = record.lease_expires_at;
        stored.failure.clone_from(&record.failure);
        Ok(true)
    }

    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        let shared = self.open()?;
        let removed = {
            let mut index = lock(&shared.index);
            let Some(record) = shared.shard(id).remove(&id) else {
                return Ok(false);
            };
            index.records -= 1;
            index.remove_owned(&record);
            if let Some(at) = record.expires_at {
                index.expirations.remove(&(at, id));
            }
            record
        };
        drop(removed);
        Ok(true)
    }

    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError> {
        let index = lock(&self.open()?.index);
        Ok(index
            .expirations
            .iter()
            .take_while(|(at, _)| *at <= now)
            .take(limit)
            .map(|(_, id)| *id)
            .collect())
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let mut removed: Vec<Arc<ResourceRecord>> = Vec::new();
        loop {
            let shared = self.open()?;
            let mut unlinked = 0;
            {
                let mut index = lock(&shared.index);
                while unlinked < PURGE_BATCH {
                    match index.expirations.first() {
                        Some(&(at, id)) if at <= now => {
                            index.expirations.pop_first();
                            if let Some(record) = shared.shard(id).remove(&id) {
                                index.records -= 1;
                                index.remove_owned(&record);
                                removed.push(record);
                            }
                            unlinked += 1;
                        }
                        _ => break,
                    }
                }
            }
            if unlinked < PURGE_BATCH {
                break;
            }
            // Let writers waiting on the index in; the next batch starts where this one stopped.
            tokio::task::yield_now().await;
        }
        self.open()?.tasks.purge(now);
        self.open()?.sessions.purge(now);
        let purged = removed.len() as u64;
        free(removed);
        if purged > 0 {
            tracing::debug!(purged, "memory store purged expired resources");
        }
        Ok(purged)
    }

    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let index = lock(&self.open()?.index);
        // Every expired record is in the index (pinned ones never expire), earliest first, so this
        // walks what has expired and not been purged yet, not what is stored.
        let expired = index.expirations.iter().take_while(|(at, _)| *at <= now).count();
        Ok((index.records - expired) as u64)
    }

    async fn list(&self, page: ListPage<'_>, now: OffsetDateTime) -> Result<Vec<ResourceRecord>, StoreError> {
        let shared = self.open()?;
        let listed: Vec<Arc<ResourceRecord>> = {
            let index = lock(&shared.index);
            let Some(ids) = index.by_owner.get(&page.owner.map(str::to_owned)) else {
                return Ok(Vec::new());
            };
            let below = match page.before {
                Some(before) => ids.range(..before),
                None => ids.range(..),
            };
            below
                .rev()
                .filter_map(|id| shared.shard(*id).get(id).map(Arc::clone))
                .filter(|record| !record.is_expired_at(now))
                .take(page.limit)
                .collect()
        };
        Ok(listed.into_iter().map(Arc::unwrap_or_clone).collect())
    }

    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        self.open()?.tasks.save(task);
        Ok(())
    }

    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.open()?.tasks.get(id, now))
    }

    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError> {
        Ok(self.open()?.tasks.update(task, now))
    }

    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.open()?.tasks.cancel(id, now))
    }

    async fn save_session(&self, id: &str, state: &str, expires: OffsetDateTime) -> Result<(), StoreError> {
        self.open()?.sessions.save(id, state, expires);
        Ok(())
    }

    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError> {
        Ok(self.open()?.sessions.load(id, now))
    }

    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.open()?.sessions.delete(id))
    }

    /// Only this process sees its records.
    fn is_shared(&self) -> bool {
        false
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.shared.closed.store(true, Ordering::Release);
        // The shards are emptied under the index lock, so a call that got past `open` before the flag
        // was set cannot leave the record count out of step with them. The records are freed after.
        let emptied = {
            let mut index = lock(&self.shared.index);
            let shards: Vec<Shard> = self
                .shared
                .shards
                .iter()
                .map(|shard| std::mem::take(&mut *lock(&shard.0)))
                .collect();
            (std::mem::take(&mut *index), shards)
        };
        drop(emptied);
        self.shared.tasks.clear();
        self.shared.sessions.clear();
        Ok(())
    }
}
