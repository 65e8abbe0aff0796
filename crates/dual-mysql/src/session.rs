//! A pooled connection in use, and how a dropped query stops on the server (through
//! [`CancelSlot`]): the cancel action sends `KILL QUERY` for the connection's running statement from
//! a connection of its own, and a connection that was cancelled is closed instead of going back to
//! the pool (so a late kill can never reach the next query on it).

use std::time::Duration;

use dual_server::{CancelOnDrop, ExecutorError};
use dual_sql::{CancelSlot, SlotLease};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Pool};

use crate::error::my_error;

/// A connection taken from the pool for one query.
pub(crate) type Session = SlotLease<Conn, u32>;

/// The guard side: creates sessions and kills the one running when dropped.
#[derive(Clone)]
pub(crate) struct Canceller {
    slot: CancelSlot<u32>,
    opts: Opts,
}

impl Canceller {
    pub(crate) fn new(opts: Opts) -> Self {
        Self {
            slot: CancelSlot::new(),
            opts,
        }
    }

    /// The guard to keep in the future or stream: dropping it kills the running query.
    pub(crate) fn guard(&self) -> CancelOnDrop {
        let opts = self.opts.clone();
        self.slot.guard(move |id| {
            tracing::debug!(connection = id, "query dropped: sending KILL QUERY");
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(kill_query(opts, id));
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
        let id = conn.id();
        // Closed, not pooled: a kill still on its way cannot hit another query.
        self.slot.lease(conn, id, |conn| {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = conn.disconnect().await;
                });
            }
        })
    }
}

/// Sends `KILL QUERY id` from a connection of its own: the statement running on connection `id`
/// stops, the connection and its transaction stay. A failure is logged.
pub(crate) async fn kill_query(opts: Opts, id: u32) {
    let killed = async {
        let mut conn = Conn::new(opts).await?;
        conn.query_drop(format!("KILL QUERY {id}")).await?;
        conn.disconnect().await
    };
    if let Err(error) = killed.await {
        tracing::warn!(%error, "KILL QUERY did not reach the server");
    }
}
