//! The in-memory store, modelled on mini-redis's `db.rs`.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use dual_core::{ResourceId, ResourceRecord};
use time::OffsetDateTime;

use crate::{Lookup, ResourceStore, StoreError};

/// How many expired records one purge step removes while holding the lock. Small enough that a
/// concurrent reader waits well under a millisecond, large enough that a purge is not lock-bound.
const PURGE_BATCH: usize = 1_024;

/// An in-memory [`ResourceStore`] for development and single-instance deployments.
///
/// A cheap `Clone` handle around shared state. Records live in a hash map; an index ordered by expiry
/// time makes a purge cost what expires, not what is stored, and purges work in small batches so
/// readers are never blocked for long. Resources do not survive a restart and are not shared between
/// processes: use `dual-store-redis` or `dual-store-postgres` for that.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// A std mutex, not tokio's: it is never held across an `.await`, and every critical section is a
    /// few hash-map operations, so an async mutex would only add overhead.
    state: Mutex<State>,
    closed: AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<ResourceId, ResourceRecord>,
    /// `(expires_at, id)` of every record that expires, earliest first.
    expirations: BTreeSet<(OffsetDateTime, ResourceId)>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many records are held, expired ones not yet purged included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.shared.lock().entries.len()
    }

    /// Whether the store holds no record.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn state(&self) -> Result<MutexGuard<'_, State>, StoreError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        Ok(self.shared.lock())
    }

    /// Applies `update` to a live record under the lock and returns the record afterwards.
    fn update_live(
        &self,
        id: ResourceId,
        now: OffsetDateTime,
        update: impl FnOnce(&mut ResourceRecord, &mut BTreeSet<(OffsetDateTime, ResourceId)>),
    ) -> Result<Lookup, StoreError> {
        let mut guard = self.state()?;
        let state = &mut *guard;
        let Some(record) = state.entries.get_mut(&id) else {
            return Ok(Lookup::Missing);
        };
        if record.is_expired_at(now) {
            return Ok(Lookup::Expired);
        }
        update(record, &mut state.expirations);
        Ok(Lookup::Found(record.clone()))
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps inconsistent in a way that matters more
        // than losing the whole store, so a poisoned lock is recovered rather than propagated.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl ResourceStore for MemoryStore {
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError> {
        let record = record.clone();
        let mut state = self.state()?;
        if let Some(old) = state.entries.get(&record.id).and_then(|r| r.expires_at) {
            state.expirations.remove(&(old, record.id));
        }
        if let Some(at) = record.expires_at {
            state.expirations.insert((at, record.id));
        }
        state.entries.insert(record.id, record);
        Ok(())
    }

    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.update_live(id, now, |_, _| {})
    }

    async fn record_access(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.update_live(id, now, |record, _| {
            record.access_count = record.access_count.saturating_add(1);
            record.last_accessed_at = Some(now);
        })
    }

    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.update_live(id, now, |record, expirations| {
            if let Some(at) = record.expires_at.take() {
                expirations.remove(&(at, id));
            }
        })
    }

    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        let mut state = self.state()?;
        let Some(record) = state.entries.remove(&id) else {
            return Ok(false);
        };
        if let Some(at) = record.expires_at {
            state.expirations.remove(&(at, id));
        }
        Ok(true)
    }

    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError> {
        let state = self.state()?;
        Ok(state
            .expirations
            .iter()
            .take_while(|(at, _)| *at <= now)
            .take(limit)
            .map(|(_, id)| *id)
            .collect())
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let mut purged = 0u64;
        loop {
            let removed = {
                let mut guard = self.state()?;
                let state = &mut *guard;
                let mut removed = 0;
                while removed < PURGE_BATCH {
                    match state.expirations.first() {
                        Some(&(at, id)) if at <= now => {
                            state.expirations.pop_first();
                            state.entries.remove(&id);
                            removed += 1;
                        }
                        _ => break,
                    }
                }
                removed
            };
            purged += removed as u64;
            if removed < PURGE_BATCH {
                break;
            }
            // Let readers waiting on the lock in; the next batch starts where this one stopped.
            tokio::task::yield_now().await;
        }
        if purged > 0 {
            tracing::debug!(purged, "memory store purged expired resources");
        }
        Ok(purged)
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.shared.closed.store(true, Ordering::Release);
        let mut state = self.shared.lock();
        state.entries.clear();
        state.expirations.clear();
        Ok(())
    }
}
