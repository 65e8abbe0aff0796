//! The accept loop: at most `max_connections` connections at once, and never a busy loop.
//!
//! Each connection holds a semaphore permit for its whole life. At the cap the loop stops
//! accepting and waits for a permit (new clients wait in the kernel's listen backlog); after an
//! accept error (`EMFILE`, `ENFILE`, `ENOBUFS`, …) it pauses, longer after each consecutive one, up
//! to a second. Both situations log at most one line per second, with the number held back.
//!
//! Hand-written in the shape of hyper's server example (accept, spawn `serve_connection`, hyper-util's
//! `GracefulShutdown`): `axum::serve` would need a custom `Listener` for the cap, the back-off and
//! [`TimedIo`](super::io::TimedIo), and still could not cut the connections left after the grace period.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Router;
use super::backoff::{AcceptErrors, LogThrottle};
use super::conn;
use super::io::IoTimeouts;

/// The accept loop's parts.
#[derive(Debug)]
pub(super) struct Acceptor {
    pub(super) listener: TcpListener,
    pub(super) router: Arc<Router>,
    pub(super) max_connections: usize,
    pub(super) timeouts: IoTimeouts,
    /// Stops the loop.
    pub(super) stop: CancellationToken,
    /// Cuts every connection.
    pub(super) cut: CancellationToken,
    /// Tracks the connection tasks.
    pub(super) tracker: TaskTracker,
}

impl Acceptor {
    /// Accepts until `stop` is cancelled; returns the handle that shuts the open connections down
    /// gracefully. The listener is closed on return.
    pub(super) async fn run(self) -> GracefulShutdown {
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(self.max_connections));
        let mut cap_log = LogThrottle::new(Duration::from_secs(1));
        let mut errors = AcceptErrors::new("main");
        loop {
            let Some(permit) = self.permit(&slots, &mut cap_log).await else {
                return graceful;
            };
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = self.stop.cancelled() => return graceful,
            };
            match accepted {
                Ok((stream, _peer)) => {
                    errors.accepted();
                    let _ = stream.set_nodelay(true);
                    let connection = conn::serve(
                        stream,
                        Arc::clone(&self.router),
                        self.timeouts,
                        graceful.watcher(),
                        self.cut.clone(),
                    );
                    self.tracker.spawn(async move {
                        connection.await;
                        drop(permit);
                    });
                }
                Err(error) => {
                    drop(permit);
                    if !errors.pause(&error, &self.stop).await {
                        return graceful;
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
