//! A request body with a deadline: the whole body must arrive within the limit, counted from the
//! moment the request reached the router. A half-sent body fails with
//! [`RequestBodyError::TimedOut`], and the guard answers `408` and closes the connection.
//!
//! Hand-written: tower-http's `TimeoutBody` bounds the wait for each frame, not the whole body, and
//! does not tell the guard that the deadline, rather than the client, ended the body.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The boxed error of a request body.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(super) enum RequestBodyError {
    /// The connection failed while the body was read.
    #[error("reading the request body failed: {0}")]
    Read(#[source] BoxError),
    /// The body did not arrive in full within the limit.
    #[error("the request body did not arrive within {0:?}")]
    TimedOut(Duration),
}

/// `B` with a deadline; see the module docs.
#[derive(Debug)]
pub(super) struct TimedBody<B> {
    inner: B,
    limit: Duration,
    deadline: Instant,
    /// Made the first time the body waits: a body that came with its head (most do) needs none.
    timer: Option<Pin<Box<Sleep>>>,
    expired: Arc<AtomicBool>,
}

impl<B> TimedBody<B> {
    /// `inner`, due within `limit` from now.
    pub(super) fn new(inner: B, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            deadline: Instant::now() + limit,
            timer: None,
            expired: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Set once the body timed out (the handler may have turned the error into any response).
    pub(super) fn expired_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.expired)
    }
}

impl<B> Body for TimedBody<B>
where
    B: Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = RequestBodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(|e| RequestBodyError::Read(e.into())))),
            Poll::Pending => {
                let deadline = this.deadline;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.as_mut().poll(cx).is_ready() {
                    this.expired.store(true, Ordering::Release);
                    tracing::debug!(limit = ?this.limit, "a request body did not arrive in time");
                    return Poll::Ready(Some(Err(RequestBodyError::TimedOut(this.limit))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures_util::{StreamExt, stream};
    use http_body_util::{BodyExt, StreamBody};
    use tokio::time::Instant;

    use super::*;

    type Chunks = stream::BoxStream<'static, Result<Frame<Bytes>, std::io::Error>>;

    fn body(chunks: Chunks) -> TimedBody<StreamBody<Chunks>> {
        TimedBody::new(StreamBody::new(chunks), Duration::from_secs(30))
    }

    #[tokio::test(start_paused = true)]
    async fn a_half_sent_body_times_out() {
        let half = stream::iter([Ok(Frame::data(Bytes::from_static(b"{\"sql\":")))])
            .chain(stream::pending())
            .boxed();
        let timed = body(half);
        let expired = timed.expired_flag();
        let started = Instant::now();
        let error = timed.collect().await.expect_err("times out");
        assert!(matches!(error, RequestBodyError::TimedOut(limit) if limit == Duration::from_secs(30)));
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        assert!(expired.load(Ordering::Acquire));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_in_time_is_passed_through() {
        let slow = stream::iter([b"ab", b"cd"])
            .then(|chunk| async move {
                tokio::time::sleep(Duration::from_secs(10)).await;
                Ok(Frame::data(Bytes::from_static(chunk)))
            })
            .boxed();
        let timed = body(slow);
        let expired = timed.expired_flag();
        let collected = timed.collect().await.expect("in time").to_bytes();
        assert_eq!(collected, Bytes::from_static(b"abcd"));
        assert!(!expired.load(Ordering::Acquire));
    }
}
