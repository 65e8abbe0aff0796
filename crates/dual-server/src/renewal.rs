//! A running resource's lease, renewed in the store every progress interval while its instance
//! works on it — the snapshot's writer, then a live recount — so that it lapses only when the
//! instance is gone, never while it is alive but busy (docs/DESIGN.md §8).

use std::future::Future;

use dual_core::ResourceRecord;
use dual_core::status::ResourceStatus;
use tokio::sync::oneshot;

use crate::inner::Inner;

/// What a renewal found.
pub(crate) enum Renewal {
    /// The lease runs on.
    Renewed,
    /// The record is gone (deleted on some instance): the work stops.
    Deleted,
    /// Its lease had lapsed (the instance was too busy to renew it) and a reader turned it failed:
    /// it stays failed, and the work stops.
    MarkedFailed,
}

/// Renews `record`'s lease (and stores its progress) once.
pub(crate) async fn renew(inner: &Inner, record: &mut ResourceRecord) -> Renewal {
    let lapsed = record.lease_expires_at.is_some_and(|at| at <= inner.clock.now());
    if lapsed && marked_failed(inner, record.id).await {
        return Renewal::MarkedFailed;
    }
    record.lease_expires_at = Some(inner.lease_from_now());
    match inner.store.update_query(record).await {
        Ok(true) => Renewal::Renewed,
        Ok(false) => Renewal::Deleted,
        Err(error) => {
            tracing::warn!(id = %record.id, error = %dual_core::escape::log_error(&error), "could not renew a running query's lease");
            Renewal::Renewed
        }
    }
}

/// Why [`renewing`] stopped its work before the end.
pub(crate) enum Stopped {
    /// The shutdown's grace passed.
    Interrupted,
    /// The record was deleted, or turned failed (see [`Renewal`]).
    Gone,
}

/// Runs `work` while renewing `record`'s lease every progress interval; stops it (drops it, which
/// cancels its query) when `interrupted` fires or a renewal finds the record gone or failed. The
/// lease is cleared again when it returns.
pub(crate) async fn renewing<T>(
    inner: &Inner,
    record: &mut ResourceRecord,
    interrupted: &mut Option<oneshot::Receiver<()>>,
    work: impl Future<Output = T>,
) -> Result<T, Stopped> {
    let mut tick = tokio::time::interval(inner.config.progress_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(work);
    let outcome = loop {
        tokio::select! {
            done = &mut work => break Ok(done),
            () = crate::signal::fired(interrupted) => break Err(Stopped::Interrupted),
            _ = tick.tick() => match renew(inner, record).await {
                Renewal::Renewed => {}
                Renewal::Deleted | Renewal::MarkedFailed => break Err(Stopped::Gone),
            },
        }
    };
    record.lease_expires_at = None;
    outcome
}

/// Whether the store holds `id` as failed already (a reader turned it failed when its lease
/// lapsed); a store that cannot be read says no, and the outcome is stored as usual.
pub(crate) async fn marked_failed(inner: &Inner, id: dual_core::ResourceId) -> bool {
    matches!(
        inner.store.get(id, inner.clock.now()).await,
        Ok(dual_store::Lookup::Found(current)) if current.status == ResourceStatus::Failed
    )
}
