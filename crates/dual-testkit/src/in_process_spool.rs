//! A process-local spool backend that says it is shared, for tests that run several server
//! instances sharing a store inside one process.

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;

use dual_spool::{Manifest, SpoolBackend, SpoolError, SpoolUsage, Spooled};

/// Wraps a backend (a `MemorySpool`, typically) and answers `true` to
/// [`SpoolBackend::is_shared`]: the server instances of one test live in one process, so they do
/// share it, and a builder with a shared store (Redis, PostgreSQL) accepts it. Everything else goes
/// to the inner backend. Never use it across processes.
#[derive(Debug, Clone)]
pub struct InProcessShared<B>(pub B);

#[async_trait]
impl<B: SpoolBackend> SpoolBackend for InProcessShared<B> {
    async fn put_segment(&self, id: ResourceId, index: u32, segment: Bytes) -> Result<(), SpoolError> {
        self.0.put_segment(id, index, segment).await
    }

    async fn get_segment(&self, id: ResourceId, index: u32) -> Result<Bytes, SpoolError> {
        self.0.get_segment(id, index).await
    }

    async fn put_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        self.0.put_manifest(manifest).await
    }

    async fn get_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.0.get_manifest(id).await
    }

    async fn put_partial_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        self.0.put_partial_manifest(manifest).await
    }

    async fn get_partial_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.0.get_partial_manifest(id).await
    }

    async fn delete(&self, id: ResourceId) -> Result<(), SpoolError> {
        self.0.delete(id).await
    }

    async fn list(&self) -> Result<Vec<Spooled>, SpoolError> {
        self.0.list().await
    }

    /// Shared by the instances of this process.
    fn is_shared(&self) -> bool {
        true
    }

    fn usage(&self) -> Option<SpoolUsage> {
        self.0.usage()
    }

    async fn close(&self) -> Result<(), SpoolError> {
        self.0.close().await
    }
}
