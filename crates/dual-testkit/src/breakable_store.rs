//! A store that can be switched to fail, for testing how layers above a store handle its failures.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use async_trait::async_trait;
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use time::OffsetDateTime;

use dual_store::{Access, ListPage, Lookup, MemoryStore, ResourceStore, StoreError, Viewer};

/// A store (a [`MemoryStore`] of its own, or any store it wraps) that fails every call but `close`
/// with [`StoreError::Unavailable`] carrying `message` while broken. Give it a message that must
/// never reach a caller (an address, say) to check that errors are not leaked. Wrapping a store
/// that another server also uses cuts one server off from it: an instance that dies, say.
#[derive(Debug)]
pub struct BreakableStore {
    inner: Arc<dyn ResourceStore>,
    broken: AtomicBool,
    /// Calls through this handle, for [`BreakableStore::calls`].
    calls: AtomicU64,
    message: String,
    shared: bool,
    /// `close` leaves the wrapped store open.
    keep_open: bool,
}

impl BreakableStore {
    /// A working store whose failures, once broken, carry `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self::wrapping(Arc::new(MemoryStore::new()), message)
    }

    /// `inner`, breakable: while broken, calls through this handle fail, and `inner` is untouched.
    pub fn wrapping(inner: Arc<dyn ResourceStore>, message: impl Into<String>) -> Self {
        Self {
            inner,
            broken: AtomicBool::new(false),
            calls: AtomicU64::new(0),
            message: message.into(),
            shared: false,
            keep_open: false,
        }
    }

    /// `close` leaves the wrapped store open: a test reads what a server stored until it shut down
    /// (closing a [`MemoryStore`] empties it).
    #[must_use]
    pub fn keeping_open(mut self) -> Self {
        self.keep_open = true;
        self
    }

    /// The store answers `true` to [`ResourceStore::is_shared`], as Redis and PostgreSQL do: for
    /// tests of what a server does differently with a shared store (with a spool that says it is
    /// shared too, such as [`InProcessShared`](crate::InProcessShared)).
    #[must_use]
    pub fn pretending_shared(mut self) -> Self {
        self.shared = true;
        self
    }

    /// Breaks or mends the store.
    pub fn set_broken(&self, broken: bool) {
        self.broken.store(broken, Ordering::SeqCst);
    }

    /// How many store calls went through this handle so far, broken or not (`close` and
    /// `is_shared` excepted): one call is one round trip on a networked store, so a test can count
    /// what an operation costs.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    fn check(&self) -> Result<(), StoreError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.broken.load(Ordering::SeqCst) {
            Err(StoreError::unavailable(self.message.clone()))
        } else {
            Ok(())
        }
    }
}

#[async_trait]
impl ResourceStore for BreakableStore {
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError> {
        self.check()?;
        self.inner.save(record).await
    }

    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.check()?;
        self.inner.get(id, now).await
    }

    async fn record_access(
        &self,
        id: ResourceId,
        viewer: Viewer<'_>,
        now: OffsetDateTime,
    ) -> Result<Access, StoreError> {
        self.check()?;
        self.inner.record_access(id, viewer, now).await
    }

    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.check()?;
        self.inner.pin(id, now).await
    }

    async fn update_query(&self, record: &ResourceRecord) -> Result<bool, StoreError> {
        self.check()?;
        self.inner.update_query(record).await
    }

    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        self.check()?;
        self.inner.delete(id).await
    }

    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError> {
        self.check()?;
        self.inner.find_expired(now, limit).await
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        self.check()?;
        self.inner.purge_expired(now).await
    }

    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        self.check()?;
        self.inner.live_count(now).await
    }

    async fn list(&self, page: ListPage<'_>, now: OffsetDateTime) -> Result<Vec<ResourceRecord>, StoreError> {
        self.check()?;
        self.inner.list(page, now).await
    }

    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        self.check()?;
        self.inner.save_task(task).await
    }

    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        self.check()?;
        self.inner.get_task(id, now).await
    }

    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError> {
        self.check()?;
        self.inner.update_task(task, now).await
    }

    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        self.check()?;
        self.inner.cancel_task(id, now).await
    }

    async fn save_session(&self, id: &str, state: &str, expires: OffsetDateTime) -> Result<(), StoreError> {
        self.check()?;
        self.inner.save_session(id, state, expires).await
    }

    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError> {
        self.check()?;
        self.inner.load_session(id, now).await
    }

    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.check()?;
        self.inner.delete_session(id).await
    }

    fn is_shared(&self) -> bool {
        self.shared || self.inner.is_shared()
    }

    async fn close(&self) -> Result<(), StoreError> {
        if self.keep_open {
            return Ok(());
        }
        self.inner.close().await
    }
}
