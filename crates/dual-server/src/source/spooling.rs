//! Reading a snapshot while its writer still writes (docs/DESIGN.md §8): rows already stored are
//! served at once, later ones are waited for at most `spool_wait` (then `NOT_READY`), and an export
//! on the writer's instance follows it to the end.

use std::sync::Arc;
use std::time::Duration;

use dual_core::{ResourceId, ResourceRecord, range::RowRange, status::ResourceStatus};
use dual_spool::{Manifest, RowCursor, Spool};
use dual_store::Lookup;
use tokio::sync::watch;

use crate::encoded::{BatchStream, JsonRows, RowBatch};
use crate::inner::Inner;
use crate::progress::{End, Progress};
use crate::{ExecutorError, ServerError};

/// How often a reader on another instance than the writer's looks at the record again.
const REMOTE_POLL: Duration = Duration::from_millis(100);

/// Waits, at most `spool_wait`, until the rows of `record` up to `need` are readable (`None`: every
/// row, for a sorted read): `Some` manifest of the stored segments that hold them, or `None` once the
/// snapshot is finished.
///
/// # Errors
/// `NOT_READY` (with the rows spooled so far) when the wait ends first, `RESOURCE_FAILED` when the
/// writer failed meanwhile, `STORAGE_ERROR` when the store could not be read.
pub(super) async fn readable(
    inner: &Inner,
    record: &ResourceRecord,
    need: Option<u64>,
) -> Result<Option<Arc<Manifest>>, ServerError> {
    let wait = inner.config.spool_wait;
    let Some(progress) = inner.runs.progress(record.id) else {
        return remote(inner, record, wait).await.map(|()| None);
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

/// [`readable`] on another instance than the writer's: the stored segments are not known here, so
/// it waits for the snapshot to be finished, reading the record again every [`REMOTE_POLL`].
async fn remote(inner: &Inner, record: &ResourceRecord, wait: Duration) -> Result<(), ServerError> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut spooled = record.spooled_rows.unwrap_or_default();
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(ServerError::NotReady { rows: spooled });
        }
        tokio::time::sleep(REMOTE_POLL.min(deadline - now)).await;
        let current = match inner.store.get(record.id, inner.clock.now()).await? {
            Lookup::Found(current) => current,
            Lookup::Expired => return Err(ServerError::ResourceExpired),
            Lookup::Missing => return Err(ServerError::ResourceNotFound),
        };
        if current.lease_lapsed_at(inner.clock.now()) {
            let failed = inner.interrupted(current).await;
            return Err(failed_error(&failed));
        }
        match current.status {
            ResourceStatus::Ready if !current.is_spooling() => return Ok(()),
            ResourceStatus::Failed => return Err(failed_error(&current)),
            _ => spooled = current.spooled_rows.unwrap_or(spooled),
        }
    }
}

fn failed_error(record: &ResourceRecord) -> ServerError {
    match &record.failure {
        Some(failure) => ServerError::ResourceFailed {
            failure: failure.clone(),
        },
        None => ServerError::NotReady { rows: 0 },
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

/// A following export: the cursor over what is readable now, the next row to send, and the
/// writer's progress until the snapshot is finished.
struct Follow {
    progress: watch::Receiver<Progress>,
    cursor: Option<RowCursor>,
    next: u64,
    finished: bool,
}

/// What a following export can read next.
enum Readable {
    Finished,
    Failed,
    Stored(Arc<Manifest>),
    NotYet,
}

/// What a following export does next.
enum Step {
    Send(RowBatch, u64),
    Fail(String),
    Done,
}

/// The rows of `range` of `record`'s snapshot, read as its writer (on this instance) stores them:
/// each stored segment is sent once it is stored, and the stream ends when the range is complete.
/// A writer that fails, passes the cap or is cancelled first ends the stream with an error (never a
/// short result).
pub(super) fn follow(
    spool: Spool,
    record: &ResourceRecord,
    progress: watch::Receiver<Progress>,
    range: RowRange,
) -> BatchStream {
    let id = record.id;
    let end = range
        .end()
        .map_or(record.total_count, |end| end.min(record.total_count));
    let state = Follow {
        progress,
        cursor: None,
        next: range.offset,
        finished: false,
    };
    Box::pin(futures_util::stream::unfold(Some(state), move |state| {
        let spool = spool.clone();
        async move {
            let mut state = state?;
            match step(&spool, id, &mut state, end).await {
                Step::Send(batch, rows) => {
                    state.next += rows;
                    Some((Ok(batch), Some(state)))
                }
                Step::Fail(message) => Some((Err(ExecutorError::new(message)), None)),
                Step::Done => None,
            }
        }
    }))
}

/// The next batch of a following export: the next run of its cursor, a cursor over what became
/// readable, or the wait for the writer to store more.
async fn step(spool: &Spool, id: ResourceId, state: &mut Follow, end: u64) -> Step {
    loop {
        if let Some(cursor) = state.cursor.as_mut() {
            match cursor.next().await {
                Ok(Some(run)) => {
                    let rows = run.len() as u64;
                    return Step::Send(RowBatch::Json(JsonRows::run(run)), rows);
                }
                Ok(None) => state.cursor = None,
                Err(error) => return Step::Fail(format!("reading the snapshot failed: {error}")),
            }
        }
        if state.next >= end || state.finished {
            return Step::Done;
        }
        let readable = {
            let p = state.progress.borrow_and_update();
            match &p.end {
                Some(End::Finished { .. }) => Readable::Finished,
                Some(End::Failed(_) | End::OverCap) => Readable::Failed,
                None => match p.stored.as_ref() {
                    Some(stored) if stored.rows() > state.next => Readable::Stored(Arc::clone(stored)),
                    _ => Readable::NotYet,
                },
            }
        };
        let readable = match readable {
            Readable::Failed => {
                return Step::Fail("the query failed while its result was being written".to_owned());
            }
            Readable::NotYet => {
                if state.progress.changed().await.is_err() {
                    return Step::Fail(
                        "the query was cancelled while its result was being written".to_owned(),
                    );
                }
                continue;
            }
            Readable::Stored(stored) => Some(stored),
            Readable::Finished => None,
        };
        state.cursor = Some(match readable {
            Some(stored) => spool.cursor_in(Manifest::clone(&stored), state.next, Some(end - state.next)),
            None => {
                state.finished = true;
                match spool.cursor(id, state.next, Some(end - state.next)).await {
                    Ok(cursor) => cursor,
                    Err(error) => return Step::Fail(format!("reading the snapshot failed: {error}")),
                }
            }
        });
    }
}
