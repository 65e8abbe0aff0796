//! A pooled connection in use, and how a dropped query stops on the server (through
//! [`CancelSlot`]): the cancel action sends PostgreSQL a cancel request for the connection's running
//! statement, and a connection that was cancelled leaves the pool instead of going back to it (so a
//! late cancel request can never reach the next query on it).

use deadpool_postgres::{Object, Pool, PoolError};
use dual_server::{CancelOnDrop, ExecutorError};
use dual_sql::{CancelSlot, SlotLease};
use tokio_postgres::{CancelToken, NoTls};

use crate::error::pg_error;

/// A connection taken from the pool for one query.
pub(crate) type Session = SlotLease<Object, CancelToken>;

/// The guard that cancels a session's query when the future or stream holding it is dropped.
#[derive(Clone)]
pub(crate) struct Canceller(CancelSlot<CancelToken>);

impl Canceller {
    pub(crate) fn new() -> Self {
        Self(CancelSlot::new())
    }

    /// The guard to keep in the future or stream: dropping it cancels the running query.
    pub(crate) fn guard(&self) -> CancelOnDrop {
        self.0.guard(|token| {
            tracing::debug!("query dropped: sending PostgreSQL a cancel request");
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = token.cancel_query(NoTls).await {
                        tracing::warn!(%error, "the cancel request did not reach PostgreSQL");
                    }
                });
            }
        })
    }

    /// Runs `work` on a connection of `pool` under a guard of its own. A future dropped mid-query
    /// cancels the statement on the server (the guard fires before the session goes, which then
    /// leaves the pool); one that ends, well or with an error, has its session [`release`]d and gives
    /// its connection back.
    ///
    /// # Errors
    /// Those of [`Canceller::session`], and `work`'s.
    pub(crate) async fn run<T>(
        pool: &Pool,
        work: impl AsyncFnOnce(&mut Session) -> Result<T, ExecutorError>,
    ) -> Result<T, ExecutorError> {
        let canceller = Self::new();
        let mut session = canceller.session(pool).await?;
        let guard = canceller.guard();
        let done = work(&mut session).await;
        release(&mut session).await;
        drop(session);
        guard.disarm();
        done
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
        let token = client.cancel_token();
        // Out of the pool: a cancel request still on its way cannot hit another query.
        self.0.lease(client, token, |client| drop(Object::take(client)))
    }
}

/// Ends what the model's query may have left on `session` beyond its read-only transaction — the
/// session-level advisory locks of `pg_advisory_lock`, the one thing such a transaction lets a
/// statement keep (settings roll back with it; temporary tables, `LISTEN`, `PREPARE` and cursors are
/// refused or end with it) — before the connection goes back to the pool. A connection that cannot
/// be cleaned leaves the pool instead.
pub(crate) async fn release(session: &mut Session) {
    let Ok(client) = session.conn() else {
        return;
    };
    if let Err(error) = client.batch_execute("SELECT pg_advisory_unlock_all()").await {
        tracing::warn!(error = %dual_core::escape::log_error(&error), "could not reset a session: its connection leaves the pool");
        session.discard();
    }
}
