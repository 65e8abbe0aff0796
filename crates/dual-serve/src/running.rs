//! A running server and its graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use dual_server::DualResponseServer;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::MCP_PATH;
use crate::shutdown::Signals;

/// The switches of one server's shutdown, in the order they are thrown.
#[derive(Debug, Clone, Default)]
pub(super) struct Switches {
    /// Stops the accept loop (and closes the listener).
    pub(super) stop_accepting: CancellationToken,
    /// Ends the open `GET /mcp` event streams.
    pub(super) draining: CancellationToken,
    /// Cuts the connections still open after the grace period.
    pub(super) cut: CancellationToken,
    /// Ends every MCP session.
    pub(super) mcp_sessions: CancellationToken,
}

/// A running server: its address, the shared [`DualResponseServer`], and a handle to stop it.
#[derive(Debug)]
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The bound address of the metrics listener (`--metrics-addr`), if any.
    pub metrics_addr: Option<SocketAddr>,
    /// The dual-response server behind both endpoints.
    pub server: DualResponseServer,
    pub(super) switches: Switches,
    pub(super) accept: JoinHandle<GracefulShutdown>,
    pub(super) connections: TaskTracker,
    pub(super) grace: Duration,
}

impl Running {
    /// `http://{addr}/mcp`.
    #[must_use]
    pub fn mcp_url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// `http://{addr}/resources`: where the REST API answers (resource links carry
    /// [`ServeOptions::base_url`](super::ServeOptions::base_url) when it is set).
    #[must_use]
    pub fn rest_url(&self) -> String {
        format!("http://{}{}", self.addr, super::REST_PREFIX)
    }

    /// Serves until the first of `signals` (SIGTERM or SIGINT), then shuts down gracefully
    /// ([`Running::shutdown_or`]); a second signal cuts what still runs. Each signal is logged.
    pub async fn shutdown_on(self, signals: &mut Signals) {
        let signal = signals.recv().await;
        tracing::info!(
            signal,
            "shutting down (a second signal cuts the requests in flight)"
        );
        self.shutdown_or(async {
            let signal = signals.recv().await;
            tracing::warn!(signal, "second signal: cutting what still runs");
        })
        .await;
    }

    /// Shuts down gracefully within the grace period of [`super::ServeOptions::shutdown_grace`]; see
    /// [`Running::shutdown_or`].
    pub async fn shutdown(self) {
        self.shutdown_or(std::future::pending()).await;
    }

    /// Shuts down gracefully: stops accepting connections (closing the listener), ends the open
    /// MCP event streams, and lets the requests in flight (exports included) finish, closing each
    /// connection after its response. What still runs when the grace period is over, or when
    /// `cut_now` completes (a second signal, say), is cut: an export cut this way ends without its
    /// terminal chunk, so its client sees an error, never a short body. Then ends the MCP sessions
    /// and shuts the [`DualResponseServer`] down within what is left of the grace: the snapshots of
    /// results already answered finish, or are stored as interrupted (retryable); then the sweeper
    /// stops and the store closes.
    pub async fn shutdown_or(self, cut_now: impl Future<Output = ()>) {
        // One grace for both: the requests in flight, and the snapshots of results already answered
        // (which go on in the background meanwhile).
        let deadline = tokio::time::Instant::now() + self.grace;
        self.switches.stop_accepting.cancel();
        let graceful = match self.accept.await {
            Ok(graceful) => Some(graceful),
            Err(error) => {
                tracing::error!(error = %dual_core::escape::log_safe(&error.to_string()), "the accept loop failed");
                None
            }
        };
        self.switches.draining.cancel();
        let open = self.connections.len();
        if open > 0 {
            tracing::info!(
                connections = open,
                grace_secs = self.grace.as_secs_f64(),
                "shutting down: waiting for the requests in flight"
            );
        }
        let finished = match graceful {
            Some(graceful) => tokio::select! {
                () = graceful.shutdown() => true,
                () = tokio::time::sleep(self.grace) => false,
                () = cut_now => false,
            },
            None => false,
        };
        if !finished {
            tracing::warn!(
                connections = self.connections.len(),
                "cutting the connections still open"
            );
            self.switches.cut.cancel();
        }
        self.connections.close();
        self.connections.wait().await;
        self.switches.mcp_sessions.cancel();
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if let Err(error) = self.server.shutdown_within(left).await {
            tracing::warn!(error = %dual_core::escape::log_error(&error), "closing the store failed");
        }
        tracing::info!("shut down");
    }
}
