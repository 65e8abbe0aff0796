//! [`QueryStart`]: an executor tells the server when its query actually starts running, so that a
//! query still waiting for a database connection never reads as running (docs/DESIGN.md §8).

use tokio::sync::oneshot;

/// Handed to [`QueryExecutor::stream_with_start`](crate::QueryExecutor::stream_with_start): call
/// [`QueryStart::started`] once the query has what it needs to run (its database connection).
///
/// `create_response` waits at most `pending_after` for a snapshot's query before answering
/// `pending` ("the query is still running"); that clock starts only at this signal. Until then the
/// query only waits for capacity, bounded by the executor's own wait limit, after which it fails with
/// the retryable [`ExecutorError::overloaded`](crate::ExecutorError::overloaded) — answered to the
/// caller as `OVERLOADED`, never as a pending resource. The query time limit bounds both.
///
/// Dropping it without calling [`QueryStart::started`] counts as started, so an executor that
/// loses it cannot make a caller wait longer than before.
#[derive(Debug)]
pub struct QueryStart(Option<oneshot::Sender<()>>);

impl QueryStart {
    /// A signal and the receiver the server waits on.
    pub(crate) fn channel() -> (Self, oneshot::Receiver<()>) {
        let (sender, receiver) = oneshot::channel();
        (Self(Some(sender)), receiver)
    }

    /// A signal nobody waits for (to call
    /// [`QueryExecutor::stream_with_start`](crate::QueryExecutor::stream_with_start) outside a server).
    #[must_use]
    pub fn detached() -> Self {
        Self(None)
    }

    /// The query has started: it holds its connection and runs.
    pub fn started(mut self) {
        if let Some(sender) = self.0.take() {
            // The server may have stopped waiting (the query was cancelled): nothing to tell.
            let _ = sender.send(());
        }
    }
}
