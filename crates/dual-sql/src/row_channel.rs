//! [`row_channel`]: the stream of an executor whose rows are produced elsewhere (a blocking thread
//! stepping a statement, a task reading a database connection), with bounded memory and no silent
//! short result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::Duration;

use dual_server::{ExecutorError, RowBatch, RowStream};
use tokio::sync::mpsc;

/// Why a [`RowSender::send_within`] did not deliver its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendStop {
    /// The reader went away (the stream was dropped): stop producing.
    #[error("the reader of the rows went away")]
    Gone,
    /// The reader took nothing for the stall time: stop producing; the stream ends with an error.
    #[error("the reader of the rows took nothing for the stall time")]
    Stalled,
}

/// The producing half of [`row_channel`]. The stream ends cleanly only after [`RowSender::finish`]:
/// a sender dropped without it (a stalled reader, a failure, a panic) ends the stream with an
/// error, so a result is never cut short silently.
#[derive(Debug)]
pub struct RowSender {
    tx: mpsc::Sender<Result<RowBatch, ExecutorError>>,
    complete: Arc<AtomicBool>,
}

impl RowSender {
    /// Sends `batch`, waiting at most `stall` for room (the channel holds a few batches).
    ///
    /// # Errors
    /// [`SendStop`]: the reader is gone, or took nothing for `stall`.
    pub async fn send_within(&self, batch: impl Into<RowBatch>, stall: Duration) -> Result<(), SendStop> {
        match tokio::time::timeout(stall, self.tx.send(Ok(batch.into()))).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(SendStop::Gone),
            Err(_) => Err(SendStop::Stalled),
        }
    }

    /// Ends the stream with `error` (the reader may be gone already: then nothing is told).
    pub async fn fail(self, error: ExecutorError) {
        let _ = self.tx.send(Err(error)).await;
    }

    /// Ends the stream with `error` without waiting for room (from a thread that must not block):
    /// when the channel is full the stream still ends with an error, the generic one.
    pub fn try_fail(self, error: ExecutorError) {
        let _ = self.tx.try_send(Err(error));
    }

    /// Every row was sent: the stream ends cleanly once the reader took them.
    pub fn finish(self) {
        self.complete.store(true, Ordering::Release);
    }
}

/// A stream of row batches fed through a channel of `buffer` batches, and its sender. The stream
/// yields what the sender sends; after the sender is dropped, it ends cleanly when the sender called
/// [`RowSender::finish`], else with an error (`what` names the result in it).
pub fn row_channel(buffer: usize, what: &'static str) -> (RowSender, RowStream) {
    let (tx, mut rx) = mpsc::channel(buffer.max(1));
    let complete = Arc::new(AtomicBool::new(false));
    let finished = Arc::clone(&complete);
    let mut ended = false;
    let stream: RowStream = Box::pin(futures_util::stream::poll_fn(move |cx| {
        if ended {
            return Poll::Ready(None);
        }
        match rx.poll_recv(cx) {
            Poll::Ready(None) => {
                ended = true;
                if finished.load(Ordering::Acquire) {
                    Poll::Ready(None)
                } else {
                    Poll::Ready(Some(Err(ExecutorError::new(format!(
                        "the {what} was cut before its end (the reader stalled, or the query failed)"
                    )))))
                }
            }
            Poll::Ready(Some(Err(error))) => {
                ended = true;
                Poll::Ready(Some(Err(error)))
            }
            other => other,
        }
    }));
    (RowSender { tx, complete }, stream)
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;
    use dual_core::Row;

    fn row(i: u64) -> Row {
        Row::from_iter([("i".to_owned(), i.into())])
    }

    #[tokio::test]
    async fn a_finished_sender_ends_cleanly_an_abandoned_one_with_an_error() {
        let (sender, mut stream) = row_channel(2, "export");
        tokio::spawn(async move {
            for i in 0..3 {
                assert!(
                    sender
                        .send_within(vec![row(i)], Duration::from_secs(5))
                        .await
                        .is_ok()
                );
            }
            sender.finish();
        });
        let mut seen = 0;
        while let Some(batch) = stream.next().await {
            seen += batch.map(|b| b.len()).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(seen, 3);

        let (sender, mut stream) = row_channel(2, "export");
        drop(sender);
        let error = stream
            .next()
            .await
            .and_then(Result::err)
            .map(|e| e.message().to_owned());
        assert_eq!(
            error.as_deref(),
            Some("the export was cut before its end (the reader stalled, or the query failed)")
        );
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn a_stalled_reader_and_a_gone_one_stop_the_sender() {
        let (sender, stream) = row_channel(1, "result");
        assert_eq!(
            sender.send_within(vec![row(0)], Duration::from_millis(10)).await,
            Ok(())
        );
        assert_eq!(
            sender.send_within(vec![row(1)], Duration::from_millis(20)).await,
            Err(SendStop::Stalled)
        );
        drop(stream);
        assert_eq!(
            sender.send_within(vec![row(2)], Duration::from_millis(20)).await,
            Err(SendStop::Gone)
        );
        let (sender, mut stream) = row_channel(1, "result");
        sender.try_fail(ExecutorError::new("disk on fire"));
        let first = stream
            .next()
            .await
            .and_then(Result::err)
            .map(|e| e.message().to_owned());
        assert_eq!(first.as_deref(), Some("disk on fire"));
    }
}
