//! An export that follows a snapshot as its writer stores it, on the writer's instance (its
//! progress) or on another (the record and the partial manifest in the shared store and spool):
//! each stored segment is sent once it is stored, and the stream ends when the range is complete.

use std::sync::Arc;

use dual_core::{ResourceId, ResourceRecord, range::RowRange};
use dual_spool::{Manifest, RowCursor, Spool};
use tokio::sync::watch;

use super::remote::{REMOTE_POLL, Remote, Seen};
use crate::progress::{End, Progress};
use crate::{ExecutorError, ServerError};
use crate::{JsonRows, RowBatch, RowStream};

/// Where a following export learns what the writer stored.
pub(super) enum Watch {
    /// The writer runs here: its progress.
    Local(watch::Receiver<Progress>),
    /// The writer runs on another instance.
    Remote(Remote),
}

/// What a following export can read next.
enum Readable {
    Finished,
    Failed(&'static str),
    Stored(Arc<Manifest>),
    NotYet,
}

impl Watch {
    /// What is readable from row `next` on.
    async fn readable(&mut self, next: u64) -> Readable {
        match self {
            Self::Local(progress) => {
                let p = progress.borrow_and_update();
                match &p.end {
                    Some(End::Finished { .. }) => Readable::Finished,
                    Some(End::Failed(_) | End::OverCap) => Readable::Failed(FAILED),
                    None => match p.stored.as_ref() {
                        Some(stored) if stored.rows() > next => Readable::Stored(Arc::clone(stored)),
                        _ => Readable::NotYet,
                    },
                }
            }
            Self::Remote(remote) => match remote.look(next.saturating_add(1)).await {
                Ok(Seen::Finished) => Readable::Finished,
                Ok(Seen::Stored(stored)) => Readable::Stored(stored),
                Ok(Seen::Writing { .. }) => Readable::NotYet,
                Ok(Seen::Lapsed(_)) => {
                    Readable::Failed("the server writing the result stopped before it finished")
                }
                Err(ServerError::ResourceNotFound | ServerError::ResourceExpired) => {
                    Readable::Failed("the resource was deleted while its result was being written")
                }
                Err(ServerError::ResourceFailed { .. }) => Readable::Failed(FAILED),
                Err(_) => Readable::Failed("the store could not be read while the result was being written"),
            },
        }
    }

    /// Waits until there may be more to read; `false` when there will be none (the writer here went
    /// away without an end: cancelled).
    async fn changed(&mut self) -> bool {
        match self {
            Self::Local(progress) => progress.changed().await.is_ok(),
            Self::Remote(_) => {
                tokio::time::sleep(REMOTE_POLL).await;
                true
            }
        }
    }
}

const FAILED: &str = "the query failed while its result was being written";

/// A following export: the cursor over what is readable now, the next row to send, and where it
/// learns what the writer stored, until the snapshot is finished.
struct Follow {
    watch: Watch,
    cursor: Option<RowCursor>,
    next: u64,
    finished: bool,
}

/// What a following export does next.
enum Step {
    Send(RowBatch, u64),
    Fail(String),
    Done,
}

/// The rows of `range` of `record`'s snapshot, read as its writer stores them. A writer that fails,
/// passes the cap, is cancelled or whose instance dies first ends the stream with an error (never a
/// short result).
pub(super) fn follow(spool: Spool, record: &ResourceRecord, watch: Watch, range: RowRange) -> RowStream {
    let id = record.id;
    let end = range
        .end()
        .map_or(record.total_count, |end| end.min(record.total_count));
    let state = Follow {
        watch,
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
        let stored = match state.watch.readable(state.next).await {
            Readable::Failed(message) => return Step::Fail(message.to_owned()),
            Readable::NotYet => {
                if !state.watch.changed().await {
                    return Step::Fail(
                        "the query was cancelled while its result was being written".to_owned(),
                    );
                }
                continue;
            }
            Readable::Stored(stored) => Some(stored),
            Readable::Finished => None,
        };
        state.cursor = Some(match stored {
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
