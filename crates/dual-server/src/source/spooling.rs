//! Reading a snapshot while its writer still writes (docs/DESIGN.md §8): rows already stored are
//! served at once, later ones are waited for at most `spool_wait` (then `NOT_READY`), on the
//! writer's instance and on any other.

use std::sync::Arc;
use std::time::Duration;

use dual_core::ResourceRecord;
use dual_spool::{Manifest, Spool};
use tokio::sync::watch;

use super::remote::{REMOTE_POLL, Remote, Seen, failed_error};
use crate::ServerError;
use crate::inner::Inner;
use crate::progress::{End, Progress};

/// Waits, at most `spool_wait`, until the rows of `record` up to `need` are readable (`None`: every
/// row, for a sorted read): `Some` manifest of the stored segments that hold them, or `None` once the
/// snapshot is finished.
///
/// # Errors
/// `NOT_READY` (with the rows spooled so far) when the wait ends first, `RESOURCE_FAILED` when the
/// writer failed meanwhile, `STORAGE_ERROR` when the store could not be read.
pub(super) async fn readable(
    inner: &Inner,
    spool: &Spool,
    record: &ResourceRecord,
    need: Option<u64>,
) -> Result<Option<Arc<Manifest>>, ServerError> {
    let wait = inner.config.spool_wait;
    let Some(progress) = inner.runs.progress(record.id) else {
        return remote(inner, spool, record, need, wait).await;
    };
    local(progress, need, wait).await
}

/// [`readable`] on the writer's instance: follows its progress.
async fn local(
    mut progress: watch::Receiver<Progress>,
    need: Option<u64>,
    wait: Duration,
) -> Result<Option<Arc<Manifest>>, ServerError> {
    let deadline = tokio::time::sleep(wait);
    tokio::pin!(deadline);
    loop {
        let spooled = {
            let p = progress.borrow_and_update();
            match &p.end {
                Some(End::Finished { .. }) => return Ok(None),
                Some(End::Failed(failure)) => {
                    return Err(ServerError::ResourceFailed {
                        failure: failure.clone(),
                    });
                }
                // The resource turns live: its next read finds it so.
                Some(End::OverCap) => return Err(ServerError::NotReady { rows: 0 }),
                None => {}
            }
            if let (Some(need), Some(stored)) = (need, p.stored.as_ref())
                && stored.rows() >= need
            {
                return Ok(Some(Arc::clone(stored)));
            }
            p.spooled()
        };
        tokio::select! {
            changed = progress.changed() => {
                if changed.is_err() {
                    // The writer went away without an end (cancelled): the record says what next.
                    return Err(ServerError::NotReady { rows: spooled });
                }
            }
            () = &mut deadline => return Err(ServerError::NotReady { rows: spooled }),
        }
    }
}

/// [`readable`] on another instance than the writer's: reads the record (and, once it counts the
/// rows, the writer's partial manifest) again every [`REMOTE_POLL`].
async fn remote(
    inner: &Inner,
    spool: &Spool,
    record: &ResourceRecord,
    need: Option<u64>,
    wait: Duration,
) -> Result<Option<Arc<Manifest>>, ServerError> {
    let remote = Remote::new(inner, spool, record.id);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let spooled = match remote.look(need.unwrap_or(u64::MAX)).await? {
            Seen::Finished => return Ok(None),
            Seen::Stored(stored) => return Ok(Some(stored)),
            Seen::Writing { spooled } => spooled,
            Seen::Lapsed(record) => return Err(failed_error(&inner.interrupted(*record).await)),
        };
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(ServerError::NotReady { rows: spooled });
        }
        tokio::time::sleep(REMOTE_POLL.min(deadline - now)).await;
    }
}

/// The rows spooled so far of a `record` being written, as this instance knows them best: from the
/// writer's progress when it runs here (`None` once it finished), else from the record.
pub(crate) fn spooled_rows(inner: &Inner, record: &ResourceRecord) -> Option<u64> {
    if !record.is_spooling() {
        return None;
    }
    match inner.runs.progress(record.id) {
        Some(progress) => {
            let p = progress.borrow();
            match p.end {
                Some(End::Finished { .. }) => None,
                _ => Some(p.spooled().max(record.spooled_rows.unwrap_or_default())),
            }
        }
        None => record.spooled_rows,
    }
}
