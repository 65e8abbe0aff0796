//! A response body that ends cleanly when the server starts shutting down.
//!
//! MCP's standalone `GET /mcp` event stream never ends by itself; a graceful shutdown would wait the
//! whole grace period for it. It is ended between two events instead (the client sees the stream
//! end, as when an SSE server closes it, and would reconnect elsewhere), while every other response
//! runs to its end.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// `B` until `draining` is cancelled; see the module docs.
#[derive(Debug)]
pub(super) struct DrainBody<B> {
    inner: B,
    draining: CancellationToken,
    drained: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<B> DrainBody<B> {
    pub(super) fn new(inner: B, draining: CancellationToken) -> Self {
        Self {
            inner,
            drained: Box::pin(draining.clone().cancelled_owned()),
            draining,
        }
    }
}

impl<B: Body + Unpin> Body for DrainBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if this.drained.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut this.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.draining.is_cancelled() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.draining.is_cancelled() {
            SizeHint::with_exact(0)
        } else {
            self.inner.size_hint()
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures_util::{StreamExt, stream};
    use http_body_util::{BodyExt, StreamBody};

    use super::*;

    #[tokio::test]
    async fn an_endless_stream_ends_when_draining() {
        let events = stream::iter([Ok::<_, std::io::Error>(Frame::data(Bytes::from_static(
            b"data: 1\n\n",
        )))])
        .chain(stream::pending());
        let draining = CancellationToken::new();
        let mut body = DrainBody::new(StreamBody::new(events.boxed()), draining.clone());
        let first = body.frame().await.expect("a frame").expect("data");
        assert_eq!(first.into_data().ok(), Some(Bytes::from_static(b"data: 1\n\n")));
        draining.cancel();
        assert!(body.frame().await.is_none(), "ends cleanly");
    }
}
