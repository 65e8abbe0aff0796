//! What one server holds: its configuration and the parts every operation shares. A leaf of the
//! crate's module graph (it calls no operation), so that creation, runs, sources and the server's
//! public methods can all depend on it without depending on each other.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use dual_core::{
    ResourceId, ResourceRecord,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use dual_spool::Spool;
use dual_store::{Clock, ResourceStore};

use crate::config::ServerConfig;
use crate::links::Links;
use crate::owners::OwnerLedger;
use crate::registry::Registry;
use crate::runs::Runs;
use crate::scheduler::Scheduler;
use crate::sorted::SortCache;
use crate::sweeper::Sweeper;

pub(crate) struct Inner {
    pub(crate) config: ServerConfig,
    pub(crate) store: Arc<dyn ResourceStore>,
    /// `None` when snapshots are off.
    pub(crate) spool: Option<Spool>,
    pub(crate) sorts: Arc<SortCache>,
    pub(crate) registry: Registry,
    /// Runs SQL over stored results (`refine`), when the builder was given one.
    pub(crate) refine: Option<Arc<dyn crate::RefineEngine>>,
    pub(crate) clock: Clock,
    /// The runs (snapshot writers) of this instance.
    pub(crate) runs: Runs,
    /// What each owner holds here, against the per-owner quotas.
    pub(crate) owners: Arc<OwnerLedger>,
    /// Admits the server's own query work: foreground and background slots, fair queues.
    pub(crate) scheduler: Arc<Scheduler>,
    /// Signs and verifies capability links.
    pub(crate) links: Links,
    /// Taken by `shutdown`; a std mutex because it is only held to `take()` the handle.
    pub(crate) sweeper: Mutex<Option<Sweeper>>,
    pub(crate) shut_down: AtomicBool,
}

impl Inner {
    /// Now plus the query lease.
    pub(crate) fn lease_from_now(&self) -> time::OffsetDateTime {
        let lease = time::Duration::try_from(self.config.query_lease).unwrap_or(time::Duration::ZERO);
        self.clock.now().saturating_add(lease)
    }

    /// Removes the snapshot of `id`, logging a failure (the orphan sweep finishes the job), and
    /// releases what it held.
    pub(crate) async fn delete_snapshot(&self, id: ResourceId) {
        if let Some(spool) = &self.spool
            && let Err(error) = spool.delete(id).await
        {
            tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "snapshot left for the orphan sweep");
        }
        self.sorts.forget(id);
        self.owners.release_bytes(id);
    }

    /// The record of a running resource whose lease lapsed (its instance died), turned `failed` with
    /// the retryable `query_interrupted`; the new state is stored, best effort.
    pub(crate) async fn interrupted(&self, mut record: ResourceRecord) -> ResourceRecord {
        record.status = ResourceStatus::Failed;
        record.failure = Some(interrupted_failure());
        record.lease_expires_at = None;
        record.spooled_rows = None;
        if let Err(error) = self.store.update_query(&record).await {
            tracing::warn!(id = %record.id, error = %dual_core::escape::log_error(&error), "could not store an interrupted query's state");
        }
        tracing::info!(id = %record.id, "running query's lease lapsed: resource failed (query_interrupted)");
        record
    }
}

/// The failure of a query whose server stopped before it finished (its lease lapsed, or a shutdown's
/// grace passed first): retryable, and telling the model to run the query again.
pub(crate) fn interrupted_failure() -> QueryFailure {
    QueryFailure::new(
        FailureCode::QueryInterrupted,
        "the server running the query stopped before it finished; run the query again",
    )
}
