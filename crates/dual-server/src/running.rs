//! The queries this instance runs for pending resources.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use dual_core::ResourceId;
use tokio::task::AbortHandle;

/// The queries this instance is running for pending resources: what `DELETE` cancels.
#[derive(Debug, Default)]
pub(crate) struct RunningQueries {
    tasks: Mutex<HashMap<ResourceId, [AbortHandle; 2]>>,
}

impl RunningQueries {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ResourceId, [AbortHandle; 2]>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn insert(&self, id: ResourceId, writer: AbortHandle, finisher: AbortHandle) {
        self.lock().insert(id, [writer, finisher]);
    }

    pub(crate) fn remove(&self, id: ResourceId) {
        self.lock().remove(&id);
    }

    /// Cancels the query of `id` if this instance runs it: the writer (and with it the executor's
    /// stream and database connection) is dropped at its next await. Returns whether it ran here.
    pub(crate) fn cancel(&self, id: ResourceId) -> bool {
        let Some(tasks) = self.lock().remove(&id) else {
            return false;
        };
        for task in tasks {
            task.abort();
        }
        tracing::info!(%id, "pending query cancelled");
        true
    }

    /// Cancels every query (at shutdown).
    pub(crate) fn cancel_all(&self) {
        for (_, tasks) in self.lock().drain() {
            for task in tasks {
                task.abort();
            }
        }
    }

    /// How many queries run here.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
