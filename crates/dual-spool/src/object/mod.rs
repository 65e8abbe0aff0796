//! Segments in object storage through the `object_store` crate, shared by every instance that
//! points at the same bucket and prefix.

#[cfg(feature = "s3")]
mod s3;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

#[cfg(feature = "s3")]
pub use s3::S3SpoolBuilder;

use crate::{Manifest, SpoolBackend, SpoolError, Spooled};

/// The object name of a resource's manifest.
const MANIFEST: &str = "manifest";
/// The object name of the partial manifest of a snapshot still being written.
const PARTIAL: &str = "partial";
/// The suffix of segment object names (`00000000.seg`, `00000001.seg`, …).
const SEGMENT_SUFFIX: &str = ".seg";

/// Snapshots in any [`ObjectStore`]: `{prefix}/{id}/00000000.seg`, … and `{prefix}/{id}/manifest`,
/// written last (`{prefix}/{id}/partial` lists the segments stored so far while it is written).
/// Instance B reads the snapshots instance A wrote; nothing is cached, so a delete is
/// seen by every instance at once.
///
/// Errors: a missing object is [`SpoolError::NotFound`]; everything else (connection refused,
/// timeouts, 5xx after `object_store`'s retries, access denied) is [`SpoolError::Unavailable`].
#[derive(Debug, Clone)]
pub struct ObjectStoreSpool {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
}

impl ObjectStoreSpool {
    /// Snapshots under `prefix` (`""` for the bucket's root) of `store`.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Config`] when `prefix` is not a valid object path.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Self, SpoolError> {
        let prefix = Path::parse(prefix).map_err(|e| SpoolError::config("spool prefix", Some(e.into())))?;
        Ok(Self { store, prefix })
    }

    /// The object store.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The prefix all objects of this spool are under.
    #[must_use]
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    fn resource(&self, id: ResourceId) -> Path {
        self.prefix.clone().join(id.to_string().as_str())
    }

    fn segment(&self, id: ResourceId, index: u32) -> Path {
        self.resource(id)
            .join(format!("{index:08}{SEGMENT_SUFFIX}").as_str())
    }

    fn manifest(&self, id: ResourceId) -> Path {
        self.resource(id).join(MANIFEST)
    }

    async fn put_encoded(&self, id: ResourceId, path: &Path, manifest: &Manifest) -> Result<(), SpoolError> {
        let payload = PutPayload::from(manifest.encode());
        self.store.put(path, payload).await.map_err(|e| error(id, e))?;
        Ok(())
    }

    async fn get(&self, id: ResourceId, path: &Path) -> Result<Bytes, SpoolError> {
        let result = self.store.get(path).await.map_err(|e| error(id, e))?;
        result.bytes().await.map_err(|e| error(id, e))
    }
}

/// Maps an object store error: missing objects are `NotFound`, all else is an outage.
fn error(id: ResourceId, error: object_store::Error) -> SpoolError {
    match error {
        object_store::Error::NotFound { .. } => SpoolError::NotFound(id),
        other => SpoolError::unavailable(other),
    }
}

#[async_trait]
impl SpoolBackend for ObjectStoreSpool {
    async fn put_segment(&self, id: ResourceId, index: u32, segment: Bytes) -> Result<(), SpoolError> {
        let path = self.segment(id, index);
        self.store
            .put(&path, PutPayload::from(segment))
            .await
            .map_err(|e| error(id, e))?;
        Ok(())
    }

    async fn get_segment(&self, id: ResourceId, index: u32) -> Result<Bytes, SpoolError> {
        self.get(id, &self.segment(id, index)).await
    }

    async fn put_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        let id = manifest.id();
        self.put_encoded(id, &self.manifest(id), manifest).await
    }

    async fn get_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        let bytes = self.get(id, &self.manifest(id)).await?;
        Manifest::decode(id, &bytes)
    }

    /// `{prefix}/{id}/partial`, removed with the rest by `delete`.
    async fn put_partial_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        let id = manifest.id();
        self.put_encoded(id, &self.resource(id).join(PARTIAL), manifest)
            .await
    }

    async fn get_partial_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        let bytes = self.get(id, &self.resource(id).join(PARTIAL)).await?;
        Manifest::decode(id, &bytes)
    }

    async fn delete(&self, id: ResourceId) -> Result<(), SpoolError> {
        match self.store.delete(&self.manifest(id)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(SpoolError::unavailable(e)),
        }
        let resource = self.resource(id);
        let locations = self
            .store
            .list(Some(&resource))
            .map_ok(|meta| meta.location)
            .boxed();
        let mut deleted = self.store.delete_stream(locations);
        while let Some(result) = deleted.next().await {
            match result {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(SpoolError::unavailable(e)),
            }
        }
        Ok(())
    }

    /// Every instance pointing at the same bucket and prefix reads the same snapshots.
    fn is_shared(&self) -> bool {
        true
    }

    async fn list(&self) -> Result<Vec<Spooled>, SpoolError> {
        let prefix = (!self.prefix.as_ref().is_empty()).then_some(&self.prefix);
        let mut listing = self.store.list(prefix);
        let mut found: BTreeMap<ResourceId, bool> = BTreeMap::new();
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(SpoolError::unavailable)?;
            let Some(mut parts) = meta.location.prefix_match(&self.prefix) else {
                continue;
            };
            let (Some(id), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let Ok(id) = id.as_ref().parse::<ResourceId>() else {
                continue;
            };
            let finished = name.as_ref() == MANIFEST;
            // A partial manifest alone (stored after a delete raced it) is swept like a segment.
            if finished || name.as_ref() == PARTIAL || name.as_ref().ends_with(SEGMENT_SUFFIX) {
                *found.entry(id).or_default() |= finished;
            }
        }
        Ok(found
            .into_iter()
            .map(|(id, finished)| Spooled { id, finished })
            .collect())
    }
}
