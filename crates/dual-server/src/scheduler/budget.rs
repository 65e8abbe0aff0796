//! A time limit that stops while its work waits its turn: the query time limit of a snapshot writer
//! counts the time it runs, not the time it waits in the background queue.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// What is left of a time limit, and whether it is running.
#[derive(Debug)]
pub(crate) struct TimeBudget {
    /// A std mutex: held for a few arithmetic operations, never across an `.await`.
    state: Mutex<State>,
    resumed: Notify,
}

#[derive(Debug)]
struct State {
    /// What was left when the budget last started running (or stopped).
    left: Duration,
    /// When it last started running; `None` while stopped.
    running_since: Option<Instant>,
}

impl TimeBudget {
    /// A running budget of `limit`.
    pub(crate) fn new(limit: Duration) -> Self {
        Self {
            state: Mutex::new(State {
                left: limit,
                running_since: Some(Instant::now()),
            }),
            resumed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What is left now; `None` while stopped.
    fn left(&self) -> Option<Duration> {
        let state = self.lock();
        let since = state.running_since?;
        Some(state.left.saturating_sub(since.elapsed()))
    }

    /// Stops the budget (the work waits its turn).
    pub(crate) fn stop(&self) {
        let mut state = self.lock();
        if let Some(since) = state.running_since.take() {
            state.left = state.left.saturating_sub(since.elapsed());
        }
    }

    /// Runs the budget again from what was left.
    pub(crate) fn run(&self) {
        {
            let mut state = self.lock();
            if state.running_since.is_none() {
                state.running_since = Some(Instant::now());
            }
        }
        self.resumed.notify_waiters();
    }

    /// Resolves once the budget is spent: never while it is stopped.
    pub(crate) async fn spent(&self) {
        loop {
            let resumed = self.resumed.notified();
            tokio::pin!(resumed);
            // Registered before the state is read: a `run` in between still wakes it.
            resumed.as_mut().enable();
            match self.left() {
                Some(left) if left.is_zero() => return,
                Some(left) => tokio::time::sleep(left).await,
                None => resumed.await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn time_spent_stopped_does_not_count() {
        let budget = TimeBudget::new(Duration::from_secs(10));
        tokio::time::advance(Duration::from_secs(4)).await;
        budget.stop();
        tokio::time::advance(Duration::from_secs(600)).await;
        assert_eq!(budget.left(), None);
        budget.run();
        assert_eq!(budget.left(), Some(Duration::from_secs(6)));
        let started = Instant::now();
        budget.spent().await;
        assert_eq!(started.elapsed(), Duration::from_secs(6));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stopped_budget_is_never_spent_until_it_runs_again() {
        let budget = std::sync::Arc::new(TimeBudget::new(Duration::from_secs(1)));
        budget.stop();
        let waiting = tokio::spawn({
            let budget = std::sync::Arc::clone(&budget);
            async move { budget.spent().await }
        });
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(!waiting.is_finished());
        budget.run();
        tokio::time::timeout(Duration::from_secs(2), waiting)
            .await
            .expect("spent one second after it ran again")
            .expect("the task ended");
    }
}
