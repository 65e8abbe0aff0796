//! A pooled connection in use, and how a dropped query stops on the server: the cancel action sends
//! `KILL QUERY` for the connection's running statement from a connection of its own, and a
//! connection that was cancelled is closed instead of going back to the pool (so a late kill can
//! never reach the next query on it).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dual_server::{CancelOnDrop, ExecutorError};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Pool};

use crate::error::my_error;

/// What the cancel action finds.
enum Slot {
    /// The query runs on the connection with this id.
    Running(u32),
    /// The cancel action ran: the session must close its connection.
    Cancelled,
    /// The session ended (or has not started): nothing to cancel.
    Idle,
}

/// A connection taken from the pool for one query.
pub(crate) struct Session {
    conn: Option<Conn>,
    slot: Arc<Mutex<Slot>>,
}

/// The guard side: creates sessions and cancels the one running when dropped.
#[derive(Clone)]
pub(crate) struct Canceller {
    slot: Arc<Mutex<Slot>>,
    opts: Opts,
}

impl Canceller {
    pub(crate) fn new(opts: Opts) -> Self {
        Self {
            slot: Arc::new(Mutex::new(Slot::Idle)),
            opts,
        }
    }

    /// The guard to keep in the future or stream: dropping it kills the running query.
    pub(crate) fn guard(&self) -> CancelOnDrop {
        let slot = Arc::clone(&self.slot);
        let opts = self.opts.clone();
        CancelOnDrop::new(move || {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if let Slot::Running(id) = std::mem::replace(&mut *slot, Slot::Cancelled) {
                tracing::debug!(connection = id, "query dropped: sending KILL QUERY");
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        let killed = async {
                            let mut conn = Conn::new(opts).await?;
                            conn.query_drop(format!("KILL QUERY {id}")).await?;
                            conn.disconnect().await
                        };
                        if let Err(error) = killed.await {
                            tracing::warn!(%error, "KILL QUERY did not reach the server");
                        }
                    });
                }
            }
        })
    }

    /// Takes a connection, waiting at most `wait`.
    ///
    /// # Errors
    /// The retryable `overloaded` when none is free in time; the connection's failure else.
    pub(crate) async fn session(
        &self,
        pool: &Pool,
        wait: Duration,
        limit: Duration,
    ) -> Result<Session, ExecutorError> {
        let conn = match tokio::time::timeout(wait, pool.get_conn()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(error)) => return Err(my_error(&error, limit)),
            Err(_) => {
                return Err(ExecutorError::overloaded(
                    "no database connection became free in time: try again shortly",
                    Duration::from_secs(1),
                ));
            }
        };
        {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            if matches!(*slot, Slot::Cancelled) {
                return Err(ExecutorError::new("the query was cancelled"));
            }
            *slot = Slot::Running(conn.id());
        }
        Ok(Session {
            conn: Some(conn),
            slot: Arc::clone(&self.slot),
        })
    }
}

impl Session {
    /// The connection (held until the session is dropped).
    pub(crate) fn conn(&mut self) -> Result<&mut Conn, ExecutorError> {
        self.conn
            .as_mut()
            .ok_or_else(|| ExecutorError::new("the database connection was released"))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(std::mem::replace(&mut *slot, Slot::Idle), Slot::Cancelled)
            && let Some(conn) = self.conn.take()
        {
            *slot = Slot::Cancelled;
            // Closed, not pooled: a kill still on its way cannot hit another query.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = conn.disconnect().await;
                });
            }
        }
    }
}
