//! The accept loop of the main and the metrics listener: at most `max_connections` connections at
//! once, and never a busy loop.
//!
//! Each connection holds a semaphore permit for its whole life. At the cap the loop stops
//! accepting and waits for a permit (new clients wait in the kernel's listen backlog); after an
//! accept error (`EMFILE`, `ENFILE`, `ENOBUFS`, …) it pauses, longer after each consecutive one, up
//! to a second. Both situations log at most one line per second, with the number held back.
//!
//! Hand-written in the shape of hyper's server example (accept, spawn `serve_connection`, hyper-util's
//! `GracefulShutdown`, see `super::conn::serve_all`): `axum::serve` would need a custom `Listener`
//! for the cap, the back-off and [`TimedIo`](super::io::TimedIo), and still could not cut the
//! connections left after the grace period.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio_util::sync::CancellationToken;

use super::backoff::{AcceptErrors, LogThrottle};

/// A listener with its bounds, what the main and the metrics listener share: at most
/// `max_connections` connections at once, accepting until `stop` is cancelled.
#[derive(Debug)]
pub(super) struct Listener {
    pub(super) listener: TcpListener,
    /// The listener's name in log lines: `main`, `metrics`.
    pub(super) name: &'static str,
    pub(super) max_connections: usize,
    /// Stops the loop (and closes the listener).
    pub(super) stop: CancellationToken,
}

impl Listener {
    /// Accepts until `stop` is cancelled and hands each connection to `start` with its slot, which
    /// the connection's task holds until it ends. The listener is closed on return.
    pub(super) async fn run(self, mut start: impl FnMut(TcpStream, OwnedSemaphorePermit)) {
        let slots = Arc::new(Semaphore::new(self.max_connections));
        let mut cap_log = LogThrottle::new(Duration::from_secs(1));
        let mut errors = AcceptErrors::new(self.name);
        loop {
            let Some(permit) = self.permit(&slots, &mut cap_log).await else {
                return;
            };
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = self.stop.cancelled() => return,
            };
            match accepted {
                Ok((stream, _peer)) => {
                    errors.accepted();
                    start(stream, permit);
                }
                Err(error) => {
                    drop(permit);
                    if !errors.pause(&error, &self.stop).await {
                        return;
                    }
                }
            }
        }
    }

    /// A connection slot; at the cap, waits for one. `None` when stopped meanwhile.
    async fn permit(
        &self,
        slots: &Arc<Semaphore>,
        cap_log: &mut LogThrottle,
    ) -> Option<OwnedSemaphorePermit> {
        match Arc::clone(slots).try_acquire_owned() {
            Ok(permit) => return Some(permit),
            Err(TryAcquireError::Closed) => return None,
            Err(TryAcquireError::NoPermits) => {}
        }
        if let Some(suppressed) = cap_log.admit() {
            tracing::warn!(
                listener = self.name,
                max_connections = self.max_connections,
                suppressed,
                "connection cap reached; new connections wait until one closes"
            );
        }
        tokio::select! {
            permit = Arc::clone(slots).acquire_owned() => permit.ok(),
            () = self.stop.cancelled() => None,
        }
    }
}
