//! The background task that purges expired resources.

use std::sync::Arc;
use std::time::Duration;

use dual_store::{Clock, ResourceStore};
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
    pub(crate) fn spawn(store: Arc<dyn ResourceStore>, clock: Clock, interval: Duration) -> Self {
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
                        _ = ticks.tick() => sweep(store.as_ref(), clock).await,
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

async fn sweep(store: &dyn ResourceStore, clock: Clock) {
    match store.purge_expired(clock.now()).await {
        Ok(0) => {}
        Ok(purged) => tracing::debug!(purged, "purged expired resources"),
        Err(error) => tracing::warn!(%error, "expiry sweep failed; retrying next interval"),
    }
}
