//! [`QueryStart`]: an executor tells the server when its query actually starts running, so that a
//! query still waiting for a database connection never reads as running, and, when it can, how many
//! rows the query will yield (docs/DESIGN.md §8).

use dual_core::Column;
use tokio::sync::oneshot;

use crate::Pace;

/// Handed to [`QueryExecutor::stream`](crate::QueryExecutor::stream): call [`QueryStart::started`]
/// once the query has what it needs to run (its database connection), or
/// [`QueryStart::started_with_count`] when it also counted the result in the same database snapshot
/// its stream reads.
///
/// `create_response` waits at most `pending_after` for a snapshot's query before answering
/// `pending` ("the query is still running"); that clock starts only at this signal. Until then the
/// query only waits for capacity, bounded by the executor's own wait limit, after which it fails with
/// the retryable [`ExecutorError::overloaded`](crate::ExecutorError::overloaded) — answered to the
/// caller as `OVERLOADED`, never as a pending resource. The query time limit bounds both.
///
/// Dropping it without a signal counts as [`QueryStart::started`], so an executor that loses it
/// cannot make a caller wait longer than before.
///
/// An executor whose count takes a while beside its running query (PostgreSQL counts in an exported
/// snapshot while the stream reads) calls [`QueryStart::running`] as soon as it holds its connection:
/// the `pending_after` clock then starts at once, not when the count comes.
///
/// An executor that learns the result's columns and types from the database before the first row
/// (a prepared statement's) declares them with [`QueryStart::declare_columns`] before it signals;
/// the server then keeps them instead of inferring types from the sample.
#[derive(Debug)]
pub struct QueryStart {
    sender: Option<oneshot::Sender<Started>>,
    running: Option<oneshot::Sender<()>>,
    columns: Option<Vec<Column>>,
    pace: Pace,
}

/// What an executor's [`QueryStart`] signalled: its consistent count, and the columns it declared.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Started {
    /// The consistent count ([`QueryStart::started_with_count`]), or `None`.
    pub total: Option<u64>,
    /// The columns declared with [`QueryStart::declare_columns`], or `None`.
    pub columns: Option<Vec<Column>>,
}

impl QueryStart {
    /// A signal and the receiver the server waits on: [`Started`] with no total for
    /// [`QueryStart::started`], with the total for [`QueryStart::started_with_count`] (and the
    /// declared columns, if any), an error when the signal was dropped unsent (started, without a
    /// count). Executor tests use it to see what their stream announced.
    #[must_use]
    pub fn channel() -> (Self, oneshot::Receiver<Started>) {
        let (sender, receiver) = oneshot::channel();
        (
            Self {
                sender: Some(sender),
                running: None,
                columns: None,
                pace: Pace::default(),
            },
            receiver,
        )
    }

    /// The receiver of [`QueryStart::running`] (the server's; an executor's test sees only
    /// [`Started`]).
    pub(crate) fn watch_running(&mut self) -> oneshot::Receiver<()> {
        let (sender, receiver) = oneshot::channel();
        self.running = Some(sender);
        receiver
    }

    /// A signal nobody waits for (to call [`QueryExecutor::stream`](crate::QueryExecutor::stream)
    /// outside a server).
    #[must_use]
    pub fn detached() -> Self {
        Self {
            sender: None,
            running: None,
            columns: None,
            pace: Pace::default(),
        }
    }

    /// Whether the query may run now: the server pauses it while the snapshot's writer waits for
    /// its background turn (see [`Pace`]). Take it before signalling; clones share it.
    #[must_use]
    pub fn pace(&self) -> Pace {
        self.pace.clone()
    }

    /// Declares the result's columns, in order, with their types as the database gives them (for
    /// the metadata and the typed exports); sent with the start signal.
    pub fn declare_columns(&mut self, columns: Vec<Column>) {
        self.columns = Some(columns);
    }

    /// The query runs (it holds its connection), and its count, if any, comes later with
    /// [`QueryStart::started_with_count`] or [`QueryStart::started`]: the server's `pending_after`
    /// clock starts now. Calling it again, or after nothing listens, does nothing.
    pub fn running(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = running.send(());
        }
    }

    /// The query has started: it holds its connection and runs.
    pub fn started(self) {
        self.send(None);
    }

    /// The query has started, and its stream will yield exactly `total` rows: the executor counted
    /// them in the same database snapshot (one read transaction) that its stream reads, so the count
    /// cannot differ from the rows however the data changes meanwhile. The optional capability
    /// "consistent count": an executor that cannot guarantee it calls [`QueryStart::started`].
    pub fn started_with_count(self, total: u64) {
        self.send(Some(total));
    }

    fn send(mut self, total: Option<u64>) {
        if let Some(sender) = self.sender.take() {
            // The server may have stopped waiting (the query was cancelled): nothing to tell.
            let _ = sender.send(Started {
                total,
                columns: self.columns.take(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::QueryStart;

    #[tokio::test]
    async fn started_sends_no_count() {
        let (start, started) = QueryStart::channel();
        start.started();
        assert_eq!(started.await.ok(), Some(super::Started::default()));
    }

    #[tokio::test]
    async fn started_with_count_delivers_the_count() {
        let (mut start, started) = QueryStart::channel();
        let columns = vec![dual_core::Column::new("id", dual_core::ColumnType::Integer)];
        start.declare_columns(columns.clone());
        start.started_with_count(1_234_567);
        let started = started.await.ok();
        assert_eq!(started.as_ref().and_then(|s| s.total), Some(1_234_567));
        assert_eq!(started.and_then(|s| s.columns), Some(columns));
    }

    #[tokio::test]
    async fn running_is_told_before_the_count() {
        let (mut start, started) = QueryStart::channel();
        let mut running = start.watch_running();
        assert!(running.try_recv().is_err(), "nothing told yet");
        start.running();
        assert_eq!(running.try_recv().ok(), Some(()));
        start.running();
        start.started_with_count(3);
        assert_eq!(started.await.ok().and_then(|s| s.total), Some(3));
    }

    #[tokio::test]
    async fn a_dropped_signal_is_started_without_a_count() {
        let (start, started) = QueryStart::channel();
        drop(start);
        assert!(started.await.is_err());
    }
}
