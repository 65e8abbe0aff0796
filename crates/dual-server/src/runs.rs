//! The runs of this instance: what `DELETE` and shutdown cancel, and where readers find the
//! progress of a snapshot still being written here.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use dual_core::ResourceId;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::progress::Progress;

/// One run handed over to the background: its tasks and its progress.
#[derive(Debug)]
struct Entry {
    /// The snapshot writer and the task that drives the run to its outcome.
    tasks: [AbortHandle; 2],
    progress: watch::Receiver<Progress>,
}

/// The runs this instance drives in the background (after `create_response` answered).
#[derive(Debug, Default)]
pub(crate) struct Runs {
    runs: Mutex<HashMap<ResourceId, Entry>>,
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ResourceId, Entry>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn insert(
        &self,
        id: ResourceId,
        writer: AbortHandle,
        driver: AbortHandle,
        progress: watch::Receiver<Progress>,
    ) {
        self.lock().insert(
            id,
            Entry {
                tasks: [writer, driver],
                progress,
            },
        );
    }

    pub(crate) fn remove(&self, id: ResourceId) {
        self.lock().remove(&id);
    }

    /// The progress of the run of `id`, when this instance drives it.
    pub(crate) fn progress(&self, id: ResourceId) -> Option<watch::Receiver<Progress>> {
        self.lock().get(&id).map(|entry| entry.progress.clone())
    }

    /// Cancels the run of `id` if this instance drives it: the writer (and with it the executor's
    /// stream and database connection) is dropped at its next await. Returns whether it ran here.
    pub(crate) fn cancel(&self, id: ResourceId) -> bool {
        let Some(entry) = self.lock().remove(&id) else {
            return false;
        };
        for task in entry.tasks {
            task.abort();
        }
        tracing::info!(%id, "running query cancelled");
        true
    }

    /// Cancels every run (at shutdown).
    pub(crate) fn cancel_all(&self) {
        for (_, entry) in self.lock().drain() {
            for task in entry.tasks {
                task.abort();
            }
        }
    }

    /// How many runs this instance drives.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
