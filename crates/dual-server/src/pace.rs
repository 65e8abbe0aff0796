//! [`Pace`]: how the server tells an executor whose work runs outside its stream (a blocking thread
//! stepping a statement, say) that the stream's reader is waiting for its background turn, so that
//! the work pauses too instead of taking a core the foreground needs (docs/DESIGN.md §8,
//! "Scheduling").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Whether a snapshot's query may run now. Each [`QueryStart`](crate::QueryStart) carries one
/// ([`QueryStart::pace`](crate::QueryStart::pace)); clones share it.
///
/// The server pauses it while the snapshot's writer waits for its background turn and resumes it
/// when the turn comes. An executor that only produces rows when its stream is polled needs nothing:
/// the writer does not poll while it waits. One whose work goes on elsewhere checks it where it can
/// stop cheaply — dual-sqlite waits in SQLite's progress handler, which also stops the statement's
/// time limit meanwhile.
///
/// ```
/// use std::time::Duration;
/// let pace = dual_server::Pace::default();
/// let paused = pace.pause();
/// assert!(pace.is_paused());
/// assert_eq!(pace.wait_while_paused(Duration::from_millis(10)), false, "still paused after the wait");
/// drop(paused);
/// assert!(pace.wait_while_paused(Duration::from_secs(1)), "runs again");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Pace(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    paused: AtomicBool,
    /// Only held to wait on `resumed` and to wake it.
    lock: Mutex<()>,
    resumed: Condvar,
}

impl Pace {
    /// Whether the work should wait now (one atomic load: cheap to ask often).
    #[must_use]
    pub fn is_paused(&self) -> bool {
        self.0.paused.load(Ordering::Acquire)
    }

    /// Pauses the work until the returned guard is dropped.
    pub fn pause(&self) -> Paused {
        self.0.paused.store(true, Ordering::Release);
        Paused(self.clone())
    }

    /// Blocks the calling thread while paused, at most `at_most`: whether it may run now. For a
    /// blocking thread only, never an async task; check your own cancellation between calls.
    #[must_use]
    pub fn wait_while_paused(&self, at_most: Duration) -> bool {
        let deadline = Instant::now() + at_most;
        let mut guard = self.0.lock.lock().unwrap_or_else(PoisonError::into_inner);
        while self.is_paused() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            guard = self
                .0
                .resumed
                .wait_timeout(guard, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    fn resume(&self) {
        // Stored under the lock the waiters check under: none misses the wake-up.
        let _guard = self.0.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.0.paused.store(false, Ordering::Release);
        self.0.resumed.notify_all();
    }
}

/// A pause of a [`Pace`]: the work runs again when it is dropped.
#[derive(Debug)]
#[must_use = "the work runs again when the pause is dropped"]
pub struct Paused(Pace);

impl Drop for Paused {
    fn drop(&mut self) {
        self.0.resume();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_thread_runs_again_as_soon_as_the_pause_ends() {
        let pace = Pace::default();
        let paused = pace.pause();
        let waiter = {
            let pace = pace.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let resumed = pace.wait_while_paused(Duration::from_secs(30));
                (resumed, started.elapsed())
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        drop(paused);
        let (resumed, waited) = waiter.join().unwrap_or((false, Duration::MAX));
        assert!(resumed);
        assert!(waited < Duration::from_secs(5), "woken at once: {waited:?}");
    }
}
