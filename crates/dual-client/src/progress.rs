//! Progress reports of `fetch_all`, shared by the ranges (or pages) downloading at once.

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) type ProgressFn = Box<dyn FnMut(u64, u64) + Send>;

/// A user's callback in an options struct, when one is set: its `Debug` shows only whether it is, so
/// the options can derive theirs.
pub(crate) struct Callback<F: ?Sized>(pub(crate) Option<Box<F>>);

impl<F: ?Sized> Default for Callback<F> {
    fn default() -> Self {
        Self(None)
    }
}

impl<F: ?Sized> fmt::Debug for Callback<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.is_some(), f)
    }
}

/// Counts rows as they arrive and calls the callback at most about every `every` rows.
///
/// The downloads share it through a std `Mutex`: it is locked only to count and call the callback,
/// never across an `.await`, so the reports are serialised and `done` only grows.
pub(crate) struct Progress {
    inner: Mutex<Inner>,
}

struct Inner {
    callback: Option<ProgressFn>,
    total: u64,
    every: u64,
    done: u64,
    reported: Option<u64>,
}

impl Progress {
    pub(crate) fn new(callback: Option<ProgressFn>, total: u64, every: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                callback,
                total,
                every: u64::try_from(every).unwrap_or(u64::MAX).max(1),
                done: 0,
                reported: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A callback that panicked poisons it; the counts are still right.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `rows` more rows arrived; reports when `every` rows arrived since the last report, or all did.
    pub(crate) fn add(&self, rows: usize) {
        if rows == 0 {
            return;
        }
        let mut inner = self.lock();
        inner.done = inner.done.saturating_add(rows as u64);
        let since = inner.done - inner.reported.unwrap_or(0);
        if since >= inner.every || inner.done >= inner.total {
            inner.report();
        }
    }

    /// Reports the final count unless it was the last report.
    pub(crate) fn finish(&self) {
        let mut inner = self.lock();
        if inner.reported != Some(inner.done) {
            inner.report();
        }
    }
}

impl Inner {
    fn report(&mut self) {
        let (done, total) = (self.done, self.total.max(self.done));
        self.reported = Some(done);
        if let Some(callback) = self.callback.as_mut() {
            callback(done, total);
        }
    }
}
