//! Whether a connection is serving a request, shared by its service and its socket wrapper
//! ([`super::io::TimedIo`]), which times the client out only between requests.
//!
//! A request is in flight from the moment hyper hands its head to the service until hyper drops
//! the response body (written in full, or abandoned with the connection).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::Waker;

use futures_util::task::AtomicWaker;
use http_body::Body;
use http_body_util::BodyExt;

/// The requests of one connection (started, in flight), and the waker of its reader.
#[derive(Debug, Default)]
pub(super) struct Activity {
    started: AtomicU64,
    in_flight: AtomicUsize,
    reader: AtomicWaker,
}

impl Activity {
    /// A request starts; it ends when the guard is dropped.
    pub(super) fn begin(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.started.fetch_add(1, Ordering::AcqRel);
        RequestGuard(Arc::clone(self))
    }

    /// Whether a request is in flight.
    pub(super) fn is_busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// How many requests have started (so a reader can tell that one came and went unseen).
    pub(super) fn started(&self) -> u64 {
        self.started.load(Ordering::Acquire)
    }

    /// The reader to wake when the connection turns idle, so that it arms its idle timer.
    pub(super) fn register_reader(&self, waker: &Waker) {
        self.reader.register(waker);
    }
}

/// One request in flight.
#[derive(Debug)]
pub(super) struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.reader.wake();
        }
    }
}

/// A response body that keeps its request in flight until hyper drops it: `body` itself, frame for
/// frame, holding `guard`.
pub(super) fn in_flight<B: Body>(
    body: B,
    guard: RequestGuard,
) -> impl Body<Data = B::Data, Error = B::Error> {
    body.map_frame(move |frame| {
        let _in_flight = &guard;
        frame
    })
}
