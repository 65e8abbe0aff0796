//! The memory store's tasks: a map behind one lock (tasks are few and small, and every operation is
//! one map lookup).

use std::collections::HashMap;
use std::sync::Mutex;

use dual_core::task::{TaskId, TaskRecord};
use time::OffsetDateTime;

use super::lock;

#[derive(Debug, Default)]
pub(super) struct Tasks(Mutex<HashMap<TaskId, TaskRecord>>);

impl Tasks {
    pub(super) fn save(&self, task: &TaskRecord) {
        lock(&self.0).insert(task.id, task.clone());
    }

    pub(super) fn get(&self, id: TaskId, now: OffsetDateTime) -> Option<TaskRecord> {
        lock(&self.0)
            .get(&id)
            .filter(|task| !task.is_expired_at(now))
            .cloned()
    }

    pub(super) fn update(&self, task: &TaskRecord, now: OffsetDateTime) -> Option<bool> {
        let mut tasks = lock(&self.0);
        let stored = tasks.get_mut(&task.id).filter(|task| !task.is_expired_at(now))?;
        stored.take_run(task);
        Some(stored.cancel_requested)
    }

    pub(super) fn cancel(&self, id: TaskId, now: OffsetDateTime) -> Option<TaskRecord> {
        let mut tasks = lock(&self.0);
        let stored = tasks.get_mut(&id).filter(|task| !task.is_expired_at(now))?;
        stored.cancel_requested = true;
        Some(stored.clone())
    }

    /// Forgets every task expired at `now`.
    pub(super) fn purge(&self, now: OffsetDateTime) {
        lock(&self.0).retain(|_, task| !task.is_expired_at(now));
    }

    pub(super) fn clear(&self) {
        drop(std::mem::take(&mut *lock(&self.0)));
    }
}
