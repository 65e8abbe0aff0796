//! The background task that purges expired resources, their snapshots, and orphaned snapshots.

use std::sync::Arc;
use std::time::Duration;

use dual_core::ResourceId;
use dual_spool::Spool;
use dual_store::{Clock, Lookup, ResourceStore};
use time::OffsetDateTime;

use crate::ServerError;
use crate::metrics;
use crate::sorted::SortCache;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::Instrument;

/// Handle to the sweeper task. Dropping it stops the task (the drop guard of mini-redis's `db.rs`).
#[derive(Debug)]
pub(crate) struct Sweeper {
    stop: Arc<Notify>,
    task: Option<JoinHandle<()>>,
}

impl Sweeper {
    /// Spawns a sweep every `interval` on the current runtime.
    pub(crate) fn spawn(
        store: Arc<dyn ResourceStore>,
        spool: Option<Spool>,
        sorts: Arc<SortCache>,
        clock: Clock,
        interval: Duration,
    ) -> Self {
        let stop = Arc::new(Notify::new());
        let signal = Arc::clone(&stop);
        let span = tracing::info_span!("dual_sweeper", interval_ms = interval.as_millis() as u64);
        // The schedule starts now, not when the task is first polled.
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let task = tokio::spawn(
            async move {
                loop {
                    tokio::select! {
                        () = signal.notified() => break,
                        _ = ticks.tick() => sweep(store.as_ref(), spool.as_ref(), &sorts, clock).await,
                    }
                }
                tracing::debug!("sweeper stopped");
            }
            .instrument(span),
        );
        Self {
            stop,
            task: Some(task),
        }
    }

    /// Stops the task and waits for it to finish its current sweep.
    pub(crate) async fn stop(mut self) {
        // `notify_one` stores a permit, so the stop is seen even if the task is mid-sweep.
        self.stop.notify_one();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.stop.notify_one();
    }
}

async fn sweep(store: &dyn ResourceStore, spool: Option<&Spool>, sorts: &SortCache, clock: Clock) {
    let expired = purge(store, spool, sorts, clock.now()).await;
    match &expired {
        Ok(0) => {}
        Ok(purged) => tracing::debug!(purged, "purged expired resources"),
        Err(error) => {
            tracing::warn!(error = %dual_core::escape::log_error(error), "expiry sweep failed; retrying next interval")
        }
    }
    let orphans = match spool {
        Some(spool) => sweep_orphans(store, spool, sorts, clock.now()).await,
        None => Ok(0),
    };
    match &orphans {
        Ok(0) => {}
        Ok(removed) => tracing::info!(removed, "orphaned snapshots removed"),
        Err(error) => {
            tracing::warn!(error = %dual_core::escape::log_error(error), "orphan sweep failed; retrying next interval")
        }
    }
    metrics::swept(&expired, &orphans);
    // The live resources gauge: one count per sweep, the store's figure.
    match store.live_count(clock.now()).await {
        Ok(live) => metrics::live_resources(live),
        Err(error) => tracing::debug!(
            error = %dual_core::escape::log_error(&error),
            "could not count the live resources for the metrics"
        ),
    }
}

/// Expired ids looked up per batch before a purge.
const PURGE_BATCH: usize = 1_000;
/// Most spooled snapshots the orphan sweep looks up in the store per sweep.
const ORPHAN_CHECKS: usize = 1_000;
/// How old a snapshot's id must be before the orphan sweep may remove it while its record is
/// missing: a snapshot is written before its record is saved, by this or another instance.
pub(crate) const ORPHAN_GRACE: Duration = Duration::from_secs(60 * 60);

/// Deletes the snapshots of the expired resources, then purges their records, returning how many
/// records were purged. A snapshot whose deletion fails, or of a resource that expires between the
/// two steps, is left to the orphan sweep; an expired resource is never served meanwhile.
pub(crate) async fn purge(
    store: &dyn ResourceStore,
    spool: Option<&Spool>,
    sorts: &SortCache,
    now: OffsetDateTime,
) -> Result<u64, ServerError> {
    if let Some(spool) = spool {
        // Bounded: a backlog larger than this is purged now and its snapshots swept as orphans.
        let expired = store.find_expired(now, PURGE_BATCH).await?;
        for id in expired {
            sorts.forget(id);
            if let Err(error) = spool.delete(id).await {
                tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "snapshot of an expired resource left for the orphan sweep");
            }
        }
    }
    Ok(store.purge_expired(now).await?)
}

/// Removes the snapshots whose resource is gone (deleted, expired, or never saved: a crash between
/// writing and saving), except those younger than [`ORPHAN_GRACE`]; looks at most
/// [`ORPHAN_CHECKS`] snapshots up per call. Returns how many it removed.
pub(crate) async fn sweep_orphans(
    store: &dyn ResourceStore,
    spool: &Spool,
    sorts: &SortCache,
    now: OffsetDateTime,
) -> Result<usize, ServerError> {
    let grace_ms = u64::try_from(ORPHAN_GRACE.as_millis()).unwrap_or(u64::MAX);
    let now_ms = u64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or(0);
    let mut removed = 0;
    let spooled = spool
        .list()
        .await
        .map_err(|error| ServerError::Spool(error.into()))?;
    for entry in spooled.into_iter().take(ORPHAN_CHECKS) {
        if young(entry.id, now_ms, grace_ms) {
            continue;
        }
        if matches!(store.get(entry.id, now).await?, Lookup::Found(_)) {
            continue;
        }
        sorts.forget(entry.id);
        spool
            .delete(entry.id)
            .await
            .map_err(|error| ServerError::Spool(error.into()))?;
        removed += 1;
    }
    Ok(removed)
}

/// Whether `id` was made less than `grace_ms` before `now_ms` (its ULID's timestamp).
fn young(id: ResourceId, now_ms: u64, grace_ms: u64) -> bool {
    id.as_ulid().timestamp_ms().saturating_add(grace_ms) > now_ms
}
