//! [`CancelOnDrop`]: how an executor whose work runs outside its future stops that work when the
//! server drops the future or the stream (the executor contract, docs/DESIGN.md §3).

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::RowStream;

/// Runs a cancel action when dropped, unless disarmed first.
///
/// The server cancels a query by dropping the executor's [`RowStream`] or the future of its
/// [`LiveQuery`] method (see [`QueryExecutor`] for when). Work that lives in
/// the future stops with it; work that runs elsewhere — a blocking thread, a database server —
/// does not, and keeps its connection until it ends on its own. Such an executor creates a
/// `CancelOnDrop` whose action stops that work (SQLite's `InterruptHandle::interrupt`, tokio-postgres'
/// `CancelToken::cancel_query`, MySQL's `KILL QUERY`), keeps it in the future or the stream, and
/// [disarms](CancelOnDrop::disarm) it once the work has ended: then the action is never run for a
/// connection that another query may already use.
///
/// The action runs on the thread that drops the guard, inside the runtime: it must not block for
/// long (signal the work and return, or spawn the cancel request).
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use dual_server::{CancelOnDrop, RowStream};
///
/// // The flag a blocking thread would check between steps.
/// let cancelled = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&cancelled);
/// let stream: RowStream = Box::pin(futures_util::stream::pending());
/// let stream = CancelOnDrop::new(move || flag.store(true, Ordering::Release)).guard_stream(stream);
///
/// // The server drops the stream (a DELETE, the time limit, a client gone): the work is told to stop.
/// drop(stream);
/// assert!(cancelled.load(Ordering::Acquire));
///
/// // Work that ended is not cancelled.
/// let untouched = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&untouched);
/// CancelOnDrop::new(move || flag.store(true, Ordering::Release)).disarm();
/// assert!(!untouched.load(Ordering::Acquire));
/// ```
///
/// [`QueryExecutor`]: crate::QueryExecutor
/// [`LiveQuery`]: crate::LiveQuery
#[must_use = "the action runs as soon as the guard is dropped"]
pub struct CancelOnDrop {
    action: Option<Box<dyn FnOnce() + Send>>,
}

impl CancelOnDrop {
    /// A guard that runs `action` when dropped.
    pub fn new(action: impl FnOnce() + Send + 'static) -> Self {
        Self {
            action: Some(Box::new(action)),
        }
    }

    /// The work ended: drops the guard without running its action.
    pub fn disarm(mut self) {
        self.action = None;
    }

    /// `stream` with this guard attached: the action runs when the stream is dropped before its end,
    /// and the guard is disarmed once the stream has yielded its last item (`None`).
    pub fn guard_stream(self, stream: RowStream) -> RowStream {
        Box::pin(Guarded {
            guard: Some(self),
            stream,
        })
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(action) = self.action.take() {
            action();
        }
    }
}

impl std::fmt::Debug for CancelOnDrop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelOnDrop")
            .field("armed", &self.action.is_some())
            .finish()
    }
}

/// A [`RowStream`] that cancels its work when dropped before its end. The guard is declared first,
/// so it runs before the stream's own resources (a channel's receiver) are released.
struct Guarded {
    guard: Option<CancelOnDrop>,
    stream: RowStream,
}

impl Stream for Guarded {
    type Item = <RowStream as Stream>::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = std::task::ready!(self.stream.as_mut().poll_next(cx));
        if item.is_none()
            && let Some(guard) = self.guard.take()
        {
            guard.disarm();
        }
        Poll::Ready(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.stream.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures_util::StreamExt;

    use super::*;

    fn counting() -> (Arc<AtomicUsize>, CancelOnDrop) {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        let guard = CancelOnDrop::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        });
        (runs, guard)
    }

    #[test]
    fn runs_once_on_drop_and_never_when_disarmed() {
        let (runs, guard) = counting();
        drop(guard);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        let (runs, guard) = counting();
        guard.disarm();
        assert_eq!(runs.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_stream_dropped_before_its_end_cancels_one_read_to_the_end_does_not() {
        let rows = || -> RowStream {
            Box::pin(futures_util::stream::iter([
                Ok(Vec::new().into()),
                Ok(Vec::new().into()),
            ]))
        };

        let (runs, guard) = counting();
        let mut stream = guard.guard_stream(rows());
        assert!(stream.next().await.is_some());
        drop(stream);
        assert_eq!(runs.load(Ordering::SeqCst), 1, "dropped after one of two batches");

        let (runs, guard) = counting();
        let mut stream = guard.guard_stream(rows());
        while stream.next().await.is_some() {}
        drop(stream);
        assert_eq!(runs.load(Ordering::SeqCst), 0, "read to its end");
    }
}
