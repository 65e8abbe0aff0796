//! The signals that stop `dual-response serve`: SIGTERM (service managers, `kill`, container runtimes)
//! and SIGINT (Ctrl-C). The first starts a graceful shutdown; a second one cuts it short.

use std::io;

/// Listens for SIGTERM and SIGINT (Ctrl-C only, where there are no Unix signals).
///
/// Install it before serving: from then on these signals no longer kill the process, they are
/// delivered to [`Signals::recv`].
#[derive(Debug)]
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers.
    ///
    /// # Errors
    /// The OS refused to install a signal handler.
    #[cfg(unix)]
    pub fn install() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Installs the handlers.
    ///
    /// # Errors
    /// Never, where there are no Unix signals (Ctrl-C is awaited in [`Signals::recv`]).
    #[cfg(not(unix))]
    pub fn install() -> io::Result<Self> {
        Ok(Self {})
    }

    /// Waits for the next signal and returns its name.
    #[cfg(unix)]
    pub async fn recv(&mut self) -> &'static str {
        tokio::select! {
            Some(()) = self.term.recv() => "SIGTERM",
            Some(()) = self.int.recv() => "SIGINT",
            else => std::future::pending().await,
        }
    }

    /// Waits for the next Ctrl-C.
    #[cfg(not(unix))]
    pub async fn recv(&mut self) -> &'static str {
        match tokio::signal::ctrl_c().await {
            Ok(()) => "Ctrl-C",
            Err(_) => std::future::pending().await,
        }
    }
}
