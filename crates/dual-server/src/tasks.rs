//! Durable tasks (docs/DESIGN.md §8): a tool call's record in the store, read and cancelled on any
//! instance by the principal that created it, renewed by the instance that runs it.

use std::time::Duration;

use dual_core::task::{TaskId, TaskRecord, TaskState};
use serde_json::json;

use crate::inner::Inner;
use crate::{Caller, ServerError};

/// The JSON-RPC code of a task whose instance stopped (`internal error`).
const INTERRUPTED_CODE: i64 = -32603;

/// 128 bits from the operating system's random number generator: an id nobody can guess.
///
/// # Panics
/// When the operating system has no random number generator (as [`LinkKey::random`](crate::LinkKey::random)).
pub(crate) fn new_id() -> TaskId {
    let mut bytes = [0_u8; 16];
    // Every supported platform has an OS RNG; a server without one cannot mint anything secret.
    getrandom::fill(&mut bytes).expect("the operating system's random number generator");
    TaskId::from_bytes(bytes)
}

/// A working task of `caller`'s, written to the store before it is returned.
pub(crate) async fn create(
    inner: &Inner,
    caller: &Caller,
    ttl: Duration,
    poll_interval: Duration,
) -> Result<TaskRecord, ServerError> {
    let now = inner.clock.now();
    let mut task = TaskRecord::new(
        new_id(),
        caller.owner_name().map(str::to_owned),
        now,
        time_span(ttl),
        time_span(inner.config.query_lease),
    );
    task.poll_interval_ms = u64::try_from(poll_interval.as_millis()).unwrap_or(u64::MAX);
    inner.store.save_task(&task).await?;
    tracing::debug!(task = %task.id, "task created");
    Ok(task)
}

/// The task `id` when `caller` created it (a link's grant sees none), as it reads now: a working
/// task whose instance stopped renewing it is failed. Any other task, or none, is
/// `RESOURCE_NOT_FOUND`, the same answer for both.
pub(crate) async fn read(inner: &Inner, id: TaskId, caller: &Caller) -> Result<TaskRecord, ServerError> {
    let now = inner.clock.now();
    let task = inner
        .store
        .get_task(id, now)
        .await?
        .filter(|task| !caller.is_grant() && task.owner.as_deref() == caller.owner_name())
        .ok_or(ServerError::ResourceNotFound)?;
    if task.lapsed_at(now) {
        return Ok(interrupted(task));
    }
    Ok(task)
}

/// `task` failed because the instance running it stopped renewing it.
fn interrupted(mut task: TaskRecord) -> TaskRecord {
    task.state = TaskState::Failed;
    task.lease_expires_at = None;
    task.status_message = Some("the server instance running this task stopped".to_owned());
    task.result = Some(json!({
        "code": INTERRUPTED_CODE,
        "message": "the server instance running this task stopped before it finished; call the tool again",
    }));
    task
}

/// Writes the running instance's part of `task`, stamped now and with a fresh lease while it
/// works. Answers whether a cancellation was asked for, or `None` once the task is gone, and also
/// when its lease lapsed before this renewal: readers may have seen it failed by then, so it is
/// written failed (a terminal state never changes) and its instance must stop.
pub(crate) async fn renew(inner: &Inner, task: &mut TaskRecord) -> Result<Option<bool>, ServerError> {
    let now = inner.clock.now();
    if task.lapsed_at(now) {
        *task = interrupted(task.clone());
        task.updated_at = now;
        inner.store.update_task(task, now).await?;
        tracing::warn!(task = %task.id, "task renewed after its lease lapsed: written failed, its call stops");
        return Ok(None);
    }
    task.updated_at = now;
    task.lease_expires_at = (!task.state.is_terminal()).then(|| now + time_span(inner.config.query_lease));
    Ok(inner.store.update_task(task, now).await?)
}

/// Marks `caller`'s task `id` for cancellation and answers it. An ended task is answered as it is.
pub(crate) async fn cancel(inner: &Inner, id: TaskId, caller: &Caller) -> Result<TaskRecord, ServerError> {
    let task = read(inner, id, caller).await?;
    if task.state.is_terminal() {
        return Ok(task);
    }
    let marked = inner
        .store
        .cancel_task(id, inner.clock.now())
        .await?
        .ok_or(ServerError::ResourceNotFound)?;
    tracing::info!(task = %id, "task cancellation asked");
    Ok(marked)
}

fn time_span(duration: Duration) -> time::Duration {
    time::Duration::try_from(duration).unwrap_or(time::Duration::MAX)
}
