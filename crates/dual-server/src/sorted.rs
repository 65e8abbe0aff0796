//! Sorted orders of snapshots: derived once per resource and sort key by scanning the snapshot,
//! kept in memory under a byte budget, least recently used evicted first.
//!
//! Deriving is bounded (docs/DESIGN.md §3): a snapshot over the row or byte limit is refused
//! before anything is read, at most `concurrency` orders are derived at once (on blocking threads;
//! a further sort waits its turn a bounded time, then is `OVERLOADED`), and the keys they hold
//! are counted against one working-memory budget.

mod budget;
mod derive;
mod key;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dual_core::page::{RequestError, SortLimit};
use dual_core::{ResourceId, Sort, SortOrder};
use dual_spool::{Manifest, Spool};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use self::budget::MemoryBudget;
use self::key::ENTRY_BYTES;
use crate::config::SortLimits;
use crate::{ExecutorError, ServerError};

/// How long a sort refused as `OVERLOADED` (no derivation slot within the wait, or the working
/// memory taken by other sorts) is told to wait before retrying.
pub const SORT_RETRY_AFTER: Duration = Duration::from_secs(2);

type Key = (ResourceId, String, SortOrder);

/// The cache of sorted orders (row indices into a snapshot), one per `(resource, field, order)`.
#[derive(Debug)]
pub(crate) struct SortCache {
    budget: u64,
    /// A std mutex: held only for map operations, never across an `.await`.
    state: Mutex<State>,
    limits: SortLimits,
    /// One permit per derivation in progress.
    slots: Arc<Semaphore>,
    /// The working memory of the derivations in progress.
    memory: Arc<MemoryBudget>,
}

#[derive(Debug, Default)]
struct State {
    orders: HashMap<Key, (Arc<[u32]>, u64)>,
    bytes: u64,
    tick: u64,
}

impl SortCache {
    pub(crate) fn new(budget: u64, limits: SortLimits) -> Self {
        Self {
            budget,
            state: Mutex::new(State::default()),
            limits,
            slots: Arc::new(Semaphore::new(limits.concurrency)),
            memory: MemoryBudget::new(limits.memory_bytes),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The order of the snapshot of `id` by `sort`: from the cache, else derived by one scan of the
    /// snapshot once the snapshot passes the size limits and a derivation slot is free (two requests
    /// missing at once may both derive it; the result is the same).
    pub(crate) async fn order(
        &self,
        spool: &Spool,
        id: ResourceId,
        sort: &Sort,
    ) -> Result<Arc<[u32]>, ServerError> {
        let key = (id, sort.field.clone(), sort.order);
        if let Some(order) = self.cached(&key) {
            return Ok(order);
        }
        let cursor = spool.cursor(id, 0, None).await.map_err(ServerError::spool)?;
        self.check_size(cursor.manifest())?;
        let slot = self.slot().await?;
        // Another request may have derived it while this one waited.
        if let Some(order) = self.cached(&key) {
            return Ok(order);
        }
        let order = derive::derive(cursor, sort, slot, &self.memory).await?;
        self.insert(key, Arc::clone(&order));
        Ok(order)
    }

    fn cached(&self, key: &Key) -> Option<Arc<[u32]>> {
        let mut state = self.lock();
        state.tick += 1;
        let tick = state.tick;
        let (order, used) = state.orders.get_mut(key)?;
        *used = tick;
        Some(Arc::clone(order))
    }

    /// Refuses a snapshot over the row or byte limit, or whose entries alone would pass the
    /// working-memory budget.
    fn check_size(&self, manifest: &Manifest) -> Result<(), ServerError> {
        let (rows, bytes) = (manifest.rows(), manifest.bytes());
        let limits = &self.limits;
        let limit = if rows > limits.max_rows {
            SortLimit::Rows {
                rows,
                max: limits.max_rows,
            }
        } else if bytes > limits.max_bytes {
            SortLimit::Bytes {
                bytes,
                max: limits.max_bytes,
            }
        } else if rows.saturating_mul(ENTRY_BYTES + derive::ORDER_BYTES) > limits.memory_bytes {
            SortLimit::Memory {
                max: limits.memory_bytes,
            }
        } else {
            return Ok(());
        };
        tracing::debug!(id = %manifest.id(), rows, bytes, %limit, "sort refused: snapshot too large");
        Err(RequestError::SortTooLarge(limit).into())
    }

    /// A derivation slot, waiting at most the configured time for one.
    async fn slot(&self) -> Result<OwnedSemaphorePermit, ServerError> {
        let limits = &self.limits;
        match tokio::time::timeout(limits.wait, Arc::clone(&self.slots).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; a timeout is the answer either way.
            Ok(Err(_)) | Err(_) => Err(ServerError::Overloaded(ExecutorError::overloaded(
                format!(
                    "{} sorted orders are being derived and none finished within {} ms",
                    limits.concurrency,
                    limits.wait.as_millis()
                ),
                SORT_RETRY_AFTER,
            ))),
        }
    }

    fn insert(&self, key: Key, order: Arc<[u32]>) {
        let size = order.len() as u64 * 4;
        if size > self.budget {
            return;
        }
        let mut state = self.lock();
        state.tick += 1;
        let tick = state.tick;
        if let Some((old, _)) = state.orders.insert(key, (order, tick)) {
            state.bytes -= old.len() as u64 * 4;
        }
        state.bytes += size;
        while state.bytes > self.budget {
            let Some(oldest) = state
                .orders
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some((old, _)) = state.orders.remove(&oldest) {
                state.bytes -= old.len() as u64 * 4;
            }
        }
    }

    /// Forgets every order of `id` (deleted or purged).
    pub(crate) fn forget(&self, id: ResourceId) {
        let mut state = self.lock();
        let mut freed = 0;
        state.orders.retain(|(of, _, _), (order, _)| {
            let keep = *of != id;
            if !keep {
                freed += order.len() as u64 * 4;
            }
            keep
        });
        state.bytes -= freed;
    }
}

#[cfg(test)]
mod tests;
