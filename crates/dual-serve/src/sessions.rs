//! The cap on live MCP sessions.
//!
//! rmcp's [`LocalSessionManager`] keeps every session (about 93 KB each) until the client deletes it
//! or it has been idle for `keep_alive`; it has no cap. The router asks [`SessionCap::admit`] before
//! letting a new session's `initialize` through and answers `503` when it says no.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// At most `max` sessions: live ones plus those being created.
#[derive(Debug, Clone)]
pub(super) struct SessionCap {
    manager: Arc<LocalSessionManager>,
    max: usize,
    admitting: Arc<AtomicUsize>,
}

impl SessionCap {
    /// A session manager whose sessions close after `idle` without a message, capped at `max`.
    pub(super) fn new(max: usize, idle: Duration) -> Self {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(idle);
        // No SSE priming events (see the router): the session manager sends its own.
        manager.session_config.sse_retry = None;
        Self {
            manager: Arc::new(manager),
            max,
            admitting: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Whether a session with this id is live.
    pub(super) async fn contains(&self, id: &str) -> bool {
        self.manager.sessions.read().await.contains_key(id)
    }

    /// The session manager to give rmcp.
    pub(super) fn manager(&self) -> Arc<LocalSessionManager> {
        Arc::clone(&self.manager)
    }

    /// The cap.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// A slot for one more session, held until rmcp has answered the `initialize` (by then the
    /// session is in the manager's map), or `None` at the cap.
    ///
    /// Never overshoots: a request counts itself before it reads the map, and a session is in the
    /// map before its slot is released. Concurrent requests may be refused a little early.
    pub(super) async fn admit(&self) -> Option<Admission> {
        let admitting = self.admitting.fetch_add(1, Ordering::SeqCst) + 1;
        let admission = Admission(Arc::clone(&self.admitting));
        let live = self.manager.sessions.read().await.len();
        (live + admitting <= self.max).then_some(admission)
    }
}

/// A slot taken by [`SessionCap::admit`]; released on drop.
#[derive(Debug)]
pub(super) struct Admission(Arc<AtomicUsize>);

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slots_are_held_until_dropped() {
        let cap = SessionCap::new(2, Duration::from_secs(60));
        let first = cap.admit().await.expect("a slot");
        let second = cap.admit().await.expect("a slot");
        assert!(cap.admit().await.is_none(), "at the cap");
        drop(first);
        let third = cap.admit().await.expect("a slot again");
        drop((second, third));
        assert_eq!(cap.admitting.load(Ordering::SeqCst), 0);
    }
}
