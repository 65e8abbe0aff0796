//! [`StoreSessions`] (feature `streamable-http`): legacy MCP sessions (before 2026-07-28) that any
//! instance sharing the server's store can restore, as rmcp's streamable HTTP server asks of a
//! `SessionStore`.

use std::time::Duration;

use dual_server::DualResponseServer;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};

/// How long a session can be restored on another instance after it started, by default.
pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest session id kept: rmcp's are UUIDs; anything longer is no session of ours.
const MAX_SESSION_ID_BYTES: usize = 128;

/// rmcp's `SessionStore` over a [`DualResponseServer`]'s resource store: the client's
/// `initialize` parameters are saved after the handshake, and an instance that receives a request
/// for a session it does not hold restores it from them, so a client of 2025-11-25 or earlier
/// keeps its session behind a load balancer without sticky sessions. Set it as
/// `StreamableHttpServerConfig::session_store`.
///
/// A session can be restored for [`DEFAULT_SESSION_TTL`] (or [`StoreSessions::ttl`]) after it
/// started; after that it keeps working on the instance that holds it. What lives in a session
/// (its event stream, `resources/subscribe`) stays on the instance that holds it: use
/// `subscriptions/listen` (2026-07-28) to be told of changes wherever the request lands.
#[derive(Debug, Clone)]
pub struct StoreSessions {
    server: DualResponseServer,
    ttl: Duration,
}

impl StoreSessions {
    /// Sessions kept in `server`'s store for [`DEFAULT_SESSION_TTL`].
    #[must_use]
    pub fn new(server: DualResponseServer) -> Self {
        Self {
            server,
            ttl: DEFAULT_SESSION_TTL,
        }
    }

    /// Keeps each session restorable for `ttl` after it started.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
}

/// Why a session id is refused.
#[derive(Debug, thiserror::Error)]
#[error("session id of {0} bytes: at most {MAX_SESSION_ID_BYTES}")]
struct SessionIdTooLong(usize);

fn checked(id: &str) -> Result<&str, SessionStoreError> {
    if id.len() > MAX_SESSION_ID_BYTES {
        return Err(Box::new(SessionIdTooLong(id.len())));
    }
    Ok(id)
}

#[async_trait::async_trait]
impl SessionStore for StoreSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Ok(id) = checked(session_id) else {
            return Ok(None);
        };
        let now = self.server.clock().now();
        let Some(text) = self.server.store().load_session(id, now).await? else {
            return Ok(None);
        };
        let state: SessionState = serde_json::from_str(&text)?;
        tracing::debug!("MCP session restored from the store");
        Ok(Some(state))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let id = checked(session_id)?;
        let text = serde_json::to_string(state)?;
        let expires_at = self.server.clock().now() + dual_core::time::Duration::try_from(self.ttl)?;
        Ok(self.server.store().save_session(id, &text, expires_at).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let id = checked(session_id)?;
        self.server.store().delete_session(id).await?;
        Ok(())
    }
}
