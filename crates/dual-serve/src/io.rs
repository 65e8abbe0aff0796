//! A connection's socket with the timeouts hyper does not have: the client must send a request
//! head in time, may stay idle between requests only so long, and must keep reading responses.
//!
//! * header: from the connection's start, or from the first byte of a further request on a kept-alive
//!   connection, to the moment hyper has the whole head (slowloris);
//! * idle: a kept-alive connection with no request in flight, and no byte of the next one;
//! * write stall: a write (or flush) that stays pending this long, because the client stopped reading.
//!
//! While a request is in flight ([`Activity`]) reads are not timed: its body has its own deadline
//! (`super::request_body`). A timeout is an `io::ErrorKind::TimedOut` error, on which hyper closes the
//! connection; a response cut this way ends without its terminal chunk.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::activity::Activity;

/// The limits of one connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct IoTimeouts {
    /// The time to send one request head.
    pub(super) header: Duration,
    /// The time a kept-alive connection may wait for its next request.
    pub(super) idle: Duration,
    /// The time a write may stay pending.
    pub(super) write_stall: Duration,
}

/// What the reader is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The rest of a request head (timed by `header`).
    Head,
    /// The first byte of the next request (timed by `idle`).
    Idle,
    /// Nothing: a request is in flight (untimed).
    Busy,
}

/// `T` with [`IoTimeouts`]; see the module docs.
#[derive(Debug)]
pub(super) struct TimedIo<T> {
    inner: T,
    activity: Arc<Activity>,
    timeouts: IoTimeouts,
    phase: Phase,
    /// [`Activity::started`] when the reader last looked.
    seen: u64,
    /// When the current phase times out; `None` while busy.
    read_deadline: Option<Instant>,
    /// The timer of reads, set to `read_deadline` or earlier (it is re-armed when it fires early).
    read_timer: Pin<Box<Sleep>>,
    /// What `read_timer` is set to; `None` after it fired.
    read_timer_at: Option<Instant>,
    write_timer: Pin<Box<Sleep>>,
    write_armed: bool,
}

impl<T> TimedIo<T> {
    /// A fresh connection: its first request head is due within `timeouts.header`.
    pub(super) fn new(inner: T, activity: Arc<Activity>, timeouts: IoTimeouts) -> Self {
        let deadline = Instant::now() + timeouts.header;
        Self {
            inner,
            activity,
            timeouts,
            phase: Phase::Head,
            seen: 0,
            read_deadline: Some(deadline),
            read_timer: Box::pin(tokio::time::sleep_until(deadline)),
            read_timer_at: Some(deadline),
            write_timer: Box::pin(tokio::time::sleep(timeouts.write_stall)),
            write_armed: false,
        }
    }

    /// Enters `phase`, moving the read deadline. The timer is not touched here: a read that completes
    /// at once (the usual case on a busy connection) never needs it, see [`Self::read_timed_out`].
    fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        self.read_deadline = match phase {
            Phase::Head => Some(Instant::now() + self.timeouts.header),
            Phase::Idle => Some(Instant::now() + self.timeouts.idle),
            Phase::Busy => None,
        };
    }

    /// After the inner read returned `Pending`: whether the phase's deadline has passed, else the
    /// read timer is set to wake the task by then. A timer set later than the deadline is moved
    /// earlier; one set earlier (a deadline that moved on, as every request on a kept-alive
    /// connection moves it) is left to fire and is then moved to the deadline. So a connection
    /// serving requests back to back resets its timer about once per idle period, not once per
    /// request, and never takes the timer wheel's lock for a read that did not wait.
    fn read_timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = self.read_deadline else {
            return false;
        };
        loop {
            if self.read_timer_at.is_none_or(|at| at > deadline) {
                self.read_timer.as_mut().reset(deadline);
                self.read_timer_at = Some(deadline);
            }
            if self.read_timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            self.read_timer_at = None;
            if Instant::now() >= deadline {
                self.read_deadline = None;
                return true;
            }
        }
    }

    /// After the inner write returned `Pending`: starts the stall timer, or fails once it ran out.
    fn write_pending<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        if !self.write_armed {
            let deadline = Instant::now() + self.timeouts.write_stall;
            self.write_timer.as_mut().reset(deadline);
            self.write_armed = true;
        }
        ready!(self.write_timer.as_mut().poll(cx));
        tracing::debug!(
            stall = ?self.timeouts.write_stall,
            "cutting a connection: the client stopped reading"
        );
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client did not read the response in time",
        )))
    }

    /// After the inner write completed: stops the stall timer.
    fn write_ready<R>(&mut self, result: io::Result<R>) -> Poll<io::Result<R>> {
        self.write_armed = false;
        Poll::Ready(result)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for TimedIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.activity.register_reader(cx.waker());
        if this.activity.is_busy() {
            if this.phase != Phase::Busy {
                this.enter(Phase::Busy);
            }
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        // Idle after a request, also one that came and went while the reader was not polled.
        let started = this.activity.started();
        if this.phase == Phase::Busy || started != this.seen {
            this.seen = started;
            this.enter(Phase::Idle);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.phase == Phase::Idle && buf.filled().len() > before {
                    this.enter(Phase::Head);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                if this.read_timed_out(cx) {
                    let (limit, what) = match this.phase {
                        Phase::Idle => (this.timeouts.idle, "idle timeout"),
                        Phase::Head | Phase::Busy => (this.timeouts.header, "header timeout"),
                    };
                    tracing::debug!(?limit, "closing a connection: {what}");
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what)));
                }
                Poll::Pending
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TimedIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Pending => this.write_pending(cx),
            Poll::Ready(result) => this.write_ready(result),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => this.write_pending(cx),
            Poll::Ready(result) => this.write_ready(result),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Pending => this.write_pending(cx),
            Poll::Ready(result) => this.write_ready(result),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_shutdown(cx) {
            Poll::Pending => this.write_pending(cx),
            Poll::Ready(result) => this.write_ready(result),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

    use super::*;

    const TIMEOUTS: IoTimeouts = IoTimeouts {
        header: Duration::from_secs(2),
        idle: Duration::from_secs(7),
        write_stall: Duration::from_secs(3),
    };

    fn pair(capacity: usize) -> (TimedIo<DuplexStream>, DuplexStream, Arc<Activity>) {
        let (server, client) = duplex(capacity);
        let activity = Arc::new(Activity::default());
        (
            TimedIo::new(server, Arc::clone(&activity), TIMEOUTS),
            client,
            activity,
        )
    }

    /// Reads until an error; returns it and when it came.
    async fn read_until_error(io: &mut TimedIo<DuplexStream>) -> (io::Error, Duration) {
        let started = Instant::now();
        let mut buf = [0u8; 64];
        loop {
            match io.read(&mut buf).await {
                Ok(0) => panic!("unexpected end of stream"),
                Ok(_) => {}
                Err(error) => return (error, started.elapsed()),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_sent_too_slowly_times_out() {
        let (mut io, mut client, _activity) = pair(1024);
        client.write_all(b"GET / HTTP/1.1\r\n").await.expect("write");
        let (error, after) = read_until_error(&mut io).await;
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(after, TIMEOUTS.header);
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_gets_the_idle_timeout() {
        let (mut io, _client, activity) = pair(1024);
        drop(activity.begin()); // one request served: the connection is idle now
        let (error, after) = read_until_error(&mut io).await;
        assert_eq!(error.to_string(), "idle timeout");
        assert_eq!(after, TIMEOUTS.idle);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_byte_of_the_next_request_starts_the_header_timeout() {
        let (mut io, mut client, activity) = pair(1024);
        drop(activity.begin());
        let started = Instant::now();
        let send = async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            client.write_all(b"G").await.expect("write");
        };
        let ((error, _), ()) = tokio::join!(read_until_error(&mut io), send);
        assert_eq!(error.to_string(), "header timeout");
        assert_eq!(started.elapsed(), Duration::from_secs(3) + TIMEOUTS.header);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_that_keep_coming_move_the_idle_deadline_each_time() {
        let (mut io, _client, activity) = pair(1024);
        drop(activity.begin()); // one request served: the connection is idle now
        let started = Instant::now();
        // Five requests 5 s apart (each idle gap under the 7 s idle timeout, 25 s in all): the
        // timer set for an earlier deadline fires, moves on to the later one, and never cuts.
        let requests = async {
            for _ in 0..5 {
                tokio::time::sleep(Duration::from_secs(5)).await;
                drop(activity.begin());
            }
        };
        let ((error, after), ()) = tokio::join!(read_until_error(&mut io), requests);
        assert_eq!(error.to_string(), "idle timeout");
        assert_eq!(after, Duration::from_secs(25) + TIMEOUTS.idle);
        assert_eq!(started.elapsed(), after);
    }

    #[tokio::test(start_paused = true)]
    async fn reads_are_untimed_while_a_request_is_in_flight() {
        let (mut io, _client, activity) = pair(1024);
        let guard = activity.begin();
        let mut buf = [0u8; 8];
        let waited = tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await;
        assert!(waited.is_err(), "still waiting after 60 s: {waited:?}");
        drop(guard);
        let (error, after) = read_until_error(&mut io).await;
        assert_eq!(error.to_string(), "idle timeout");
        assert_eq!(after, TIMEOUTS.idle);
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_stops_reading_is_cut() {
        let (mut io, _client, _activity) = pair(64);
        let started = Instant::now();
        let error = io.write_all(&[b'x'; 4096]).await.expect_err("the write stalls");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), TIMEOUTS.write_stall);

        // A slow reader that keeps reading is never cut.
        let (mut io, mut slow, _activity) = pair(64);
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            let mut total = 0;
            while total < 4096 {
                tokio::time::sleep(Duration::from_secs(2)).await;
                total += slow.read(&mut buf).await.expect("read");
            }
            total
        });
        io.write_all(&[b'x'; 4096]).await.expect("never stalls 3 s");
        assert_eq!(reader.await.expect("reader"), 4096);
    }
}
