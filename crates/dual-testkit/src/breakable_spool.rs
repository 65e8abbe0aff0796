//! A backend wrapper whose storage a test can switch off, for the outage checks of backends that
//! have no network to cut.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;

use dual_spool::{Manifest, SpoolBackend, SpoolError, Spooled};

/// Wraps a backend; while broken, every call fails with [`SpoolError::Unavailable`] without
/// touching the inner backend. Clones share the switch.
#[derive(Debug, Clone)]
pub struct BreakableSpool<B> {
    inner: B,
    broken: Arc<AtomicBool>,
}

impl<B: SpoolBackend> BreakableSpool<B> {
    /// Wraps `inner`, working.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            broken: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Fails every call from now on.
    pub fn break_storage(&self) {
        self.broken.store(true, Ordering::SeqCst);
    }

    /// Works again.
    pub fn restore(&self) {
        self.broken.store(false, Ordering::SeqCst);
    }

    /// `call` on the inner backend, unless the storage is switched off.
    async fn guarded<T, F>(&self, call: impl FnOnce() -> F) -> Result<T, SpoolError>
    where
        F: Future<Output = Result<T, SpoolError>>,
    {
        if self.broken.load(Ordering::SeqCst) {
            return Err(SpoolError::unavailable("storage switched off by the test"));
        }
        call().await
    }
}

#[async_trait]
impl<B: SpoolBackend> SpoolBackend for BreakableSpool<B> {
    async fn put_segment(&self, id: ResourceId, index: u32, segment: Bytes) -> Result<(), SpoolError> {
        self.guarded(|| self.inner.put_segment(id, index, segment)).await
    }

    async fn get_segment(&self, id: ResourceId, index: u32) -> Result<Bytes, SpoolError> {
        self.guarded(|| self.inner.get_segment(id, index)).await
    }

    async fn put_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        self.guarded(|| self.inner.put_manifest(manifest)).await
    }

    async fn get_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.guarded(|| self.inner.get_manifest(id)).await
    }

    async fn put_partial_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        self.guarded(|| self.inner.put_partial_manifest(manifest)).await
    }

    async fn get_partial_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.guarded(|| self.inner.get_partial_manifest(id)).await
    }

    async fn delete(&self, id: ResourceId) -> Result<(), SpoolError> {
        self.guarded(|| self.inner.delete(id)).await
    }

    async fn list(&self) -> Result<Vec<Spooled>, SpoolError> {
        self.guarded(|| self.inner.list()).await
    }

    fn is_shared(&self) -> bool {
        self.inner.is_shared()
    }

    fn usage(&self) -> Option<dual_spool::SpoolUsage> {
        self.inner.usage()
    }

    async fn close(&self) -> Result<(), SpoolError> {
        self.inner.close().await
    }
}
