//! A pooled connection in use, and how a dropped query stops on the server: the cancel action sends
//! PostgreSQL a cancel request for the connection's running statement, and a connection that was
//! cancelled leaves the pool instead of going back to it (so a late cancel request can never reach
//! the next query on it).

use std::sync::{Arc, Mutex, PoisonError};

use deadpool_postgres::{Object, Pool, PoolError};
use dual_server::{CancelOnDrop, ExecutorError};
use tokio_postgres::{CancelToken, NoTls};

use crate::error::pg_error;

/// What the cancel action finds.
enum Slot {
    /// The query runs on the connection this token cancels.
    Running(CancelToken),
    /// The cancel action ran: the session must not return its connection to the pool.
    Cancelled,
    /// The session ended (or has not started): nothing to cancel.
    Idle,
}

/// A connection taken from the pool for one query.
pub(crate) struct Session {
    client: Option<Object>,
    slot: Arc<Mutex<Slot>>,
}

/// The guard that cancels a session's query when the future or stream holding it is dropped.
#[derive(Clone)]
pub(crate) struct Canceller(Arc<Mutex<Slot>>);

impl Canceller {
    pub(crate) fn new() -> Self {
        Self(Arc::new(Mutex::new(Slot::Idle)))
    }

    /// The guard to keep in the future or stream: dropping it cancels the running query.
    pub(crate) fn guard(&self) -> CancelOnDrop {
        let slot = Arc::clone(&self.0);
        CancelOnDrop::new(move || {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if let Slot::Running(token) = std::mem::replace(&mut *slot, Slot::Cancelled) {
                tracing::debug!("query dropped: sending PostgreSQL a cancel request");
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        if let Err(error) = token.cancel_query(NoTls).await {
                            tracing::warn!(%error, "the cancel request did not reach PostgreSQL");
                        }
                    });
                }
            }
        })
    }

    /// Takes a connection, waiting at most the pool's wait limit.
    ///
    /// # Errors
    /// The retryable `overloaded` when none is free in time; the connection's failure else.
    pub(crate) async fn session(&self, pool: &Pool) -> Result<Session, ExecutorError> {
        let client = pool.get().await.map_err(|error| match error {
            PoolError::Timeout(_) => ExecutorError::overloaded(
                "no database connection became free in time: try again shortly",
                std::time::Duration::from_secs(1),
            ),
            PoolError::Backend(error) => pg_error(&error, None),
            other => ExecutorError::new(format!("could not connect to the database: {other}")),
        })?;
        {
            let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if matches!(*slot, Slot::Cancelled) {
                return Err(ExecutorError::new("the query was cancelled"));
            }
            *slot = Slot::Running(client.cancel_token());
        }
        Ok(Session {
            client: Some(client),
            slot: Arc::clone(&self.0),
        })
    }
}

impl Session {
    /// The connection (held until the session is dropped).
    pub(crate) fn client(&mut self) -> Result<&mut Object, ExecutorError> {
        self.client
            .as_mut()
            .ok_or_else(|| ExecutorError::new("the database connection was released"))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(std::mem::replace(&mut *slot, Slot::Idle), Slot::Cancelled)
            && let Some(client) = self.client.take()
        {
            // Out of the pool: a cancel request still on its way cannot hit another query.
            drop(Object::take(client));
            *slot = Slot::Cancelled;
        }
    }
}
