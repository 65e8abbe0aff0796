//! The runs of this instance: what `DELETE` and shutdown cancel, and where readers find the
//! progress of a snapshot still being written here.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use dual_core::ResourceId;
use tokio::sync::{Notify, oneshot, watch};
use tokio::task::AbortHandle;

use crate::progress::Progress;

/// One run handed over to the background: its tasks and its progress.
#[derive(Debug)]
struct Entry {
    /// The snapshot writer and the task that drives the run to its outcome.
    tasks: [AbortHandle; 2],
    progress: watch::Receiver<Progress>,
    /// Tells the driver to stop the writer and store the run as interrupted (at the end of a
    /// shutdown's grace).
    interrupt: Option<oneshot::Sender<()>>,
}

/// The runs this instance drives in the background (after `create_response` answered).
#[derive(Debug, Default)]
pub(crate) struct Runs {
    runs: Mutex<HashMap<ResourceId, Entry>>,
    /// Notified whenever a run leaves.
    left: Notify,
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
        interrupt: oneshot::Sender<()>,
    ) {
        self.lock().insert(
            id,
            Entry {
                tasks: [writer, driver],
                progress,
                interrupt: Some(interrupt),
            },
        );
    }

    pub(crate) fn remove(&self, id: ResourceId) {
        self.lock().remove(&id);
        self.left.notify_waiters();
    }

    /// Waits until no run is left, at most `within`: whether none is.
    pub(crate) async fn drained_within(&self, within: Duration) -> bool {
        let drained = async {
            loop {
                let left = self.left.notified();
                tokio::pin!(left);
                // Registered before the count is read: a run leaving in between still wakes it.
                left.as_mut().enable();
                if self.len() == 0 {
                    return;
                }
                left.await;
            }
        };
        tokio::time::timeout(within, drained).await.is_ok()
    }

    /// Tells every run to stop and store itself as interrupted (`query_interrupted`); each leaves
    /// once its state is stored.
    pub(crate) fn interrupt_all(&self) {
        for entry in self.lock().values_mut() {
            if let Some(interrupt) = entry.interrupt.take() {
                let _ = interrupt.send(());
            }
        }
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
        self.left.notify_waiters();
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
        self.left.notify_waiters();
    }

    /// How many runs this instance drives.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
