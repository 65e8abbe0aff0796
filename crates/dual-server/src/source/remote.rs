//! A snapshot being written on another instance, as this one sees it: the record in the shared
//! store (status, lease, rows spooled) and the partial manifest the writer publishes in the shared
//! spool before each progress write, so that the rows the record counts are always readable through
//! it (docs/DESIGN.md §8).

use std::sync::Arc;
use std::time::Duration;

use dual_core::{ResourceId, ResourceRecord, status::ResourceStatus};
use dual_spool::{Manifest, Spool};
use dual_store::{Clock, Lookup, ResourceStore};

use crate::ServerError;
use crate::inner::Inner;

/// How often a reader on another instance than the writer's looks at the record again.
pub(super) const REMOTE_POLL: Duration = Duration::from_millis(100);

/// What a look at another instance's run found.
pub(super) enum Seen {
    /// The snapshot is finished: read it through its manifest.
    Finished,
    /// The stored segments, holding at least the rows asked for.
    Stored(Arc<Manifest>),
    /// Still being written, without the rows asked for yet: `spooled` rows are readable so far.
    Writing { spooled: u64 },
    /// The writer's lease lapsed (its instance died): the record as read, still `ready`.
    Lapsed(Box<ResourceRecord>),
}

/// The run of one resource on another instance, looked at through the store and the spool.
pub(super) struct Remote {
    store: Arc<dyn ResourceStore>,
    clock: Clock,
    spool: Spool,
    id: ResourceId,
}

impl Remote {
    pub(super) fn new(inner: &Inner, spool: &Spool, id: ResourceId) -> Self {
        Self {
            store: Arc::clone(&inner.store),
            clock: inner.clock,
            spool: spool.clone(),
            id,
        }
    }

    /// Reads the record again and, when it counts at least `need` rows spooled, the partial
    /// manifest that holds them (`u64::MAX`: only the finished snapshot will do).
    ///
    /// # Errors
    /// `RESOURCE_FAILED` (the writer failed), `RESOURCE_EXPIRED`, `RESOURCE_NOT_FOUND` (deleted
    /// meanwhile), `STORAGE_ERROR`.
    pub(super) async fn look(&self, need: u64) -> Result<Seen, ServerError> {
        let now = self.clock.now();
        let record = match self.store.get(self.id, now).await? {
            Lookup::Found(record) => record,
            Lookup::Expired => return Err(ServerError::ResourceExpired),
            Lookup::Missing => return Err(ServerError::ResourceNotFound),
        };
        if record.lease_lapsed_at(now) {
            return Ok(Seen::Lapsed(Box::new(record)));
        }
        match record.status {
            ResourceStatus::Failed => return Err(failed_error(&record)),
            ResourceStatus::Ready if !record.is_spooling() => return Ok(Seen::Finished),
            _ => {}
        }
        let spooled = record.spooled_rows.unwrap_or_default();
        if spooled >= need
            && let Some(manifest) = self
                .spool
                .partial_manifest(self.id)
                .await
                .map_err(ServerError::spool)?
            && manifest.rows() >= need
        {
            return Ok(Seen::Stored(Arc::new(manifest)));
        }
        Ok(Seen::Writing { spooled })
    }
}

/// The error a failed record reads as.
pub(super) fn failed_error(record: &ResourceRecord) -> ServerError {
    match &record.failure {
        Some(failure) => ServerError::ResourceFailed {
            failure: failure.clone(),
        },
        None => ServerError::NotReady { rows: 0 },
    }
}
