//! The store's connection: a `ConnectionManager` behind a deadline, replaced when it stops answering.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use dual_store::StoreError;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, RedisError, RedisResult, ServerErrorKind};

/// A `ConnectionManager` reconnects by itself when a connection drops, but a connection that stays
/// open and silent (a half-open socket, a partition) only yields timeouts, which do not trigger a
/// reconnect. So every call runs under a deadline, and a call that misses it swaps in a fresh,
/// lazily connecting manager; the next call starts from a new socket.
pub(crate) struct Connection {
    client: redis::Client,
    config: ConnectionManagerConfig,
    timeout: Duration,
    /// A std mutex, not tokio's: it guards a clone-out of the handle and a swap, never an `.await`.
    slot: Mutex<Slot>,
}

struct Slot {
    /// Bumped on every swap, so concurrent timeouts on one manager replace it only once.
    generation: u64,
    /// `None` once the store is closed.
    manager: Option<ConnectionManager>,
}

impl Connection {
    /// Connects eagerly, so a wrong URL or an unreachable server shows at start-up.
    pub(crate) async fn open(
        client: redis::Client,
        config: ConnectionManagerConfig,
        timeout: Duration,
    ) -> Result<Self, StoreError> {
        let connect = ConnectionManager::new_with_config(client.clone(), config.clone());
        let manager = match tokio::time::timeout(timeout, connect).await {
            Ok(result) => result.map_err(|e| map_error("connect", e))?,
            Err(_) => return Err(timed_out("connect", timeout)),
        };
        Ok(Self {
            client,
            config,
            timeout,
            slot: Mutex::new(Slot {
                generation: 0,
                manager: Some(manager),
            }),
        })
    }

    /// Runs `call` on the current manager within the operation timeout.
    pub(crate) async fn run<T, F, Fut>(&self, op: &'static str, call: F) -> Result<T, StoreError>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let (generation, manager) = {
            let slot = self.lock();
            let Some(manager) = slot.manager.clone() else {
                return Err(StoreError::Closed);
            };
            (slot.generation, manager)
        };
        match tokio::time::timeout(self.timeout, call(manager)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => {
                if error.is_timeout() {
                    self.replace(generation);
                }
                Err(map_error(op, error))
            }
            Err(_) => {
                self.replace(generation);
                Err(timed_out(op, self.timeout))
            }
        }
    }

    /// Drops the manager; later calls fail with [`StoreError::Closed`].
    pub(crate) fn close(&self) {
        let mut slot = self.lock();
        slot.manager = None;
        slot.generation += 1;
    }

    fn replace(&self, generation: u64) {
        let mut slot = self.lock();
        if slot.generation != generation || slot.manager.is_none() {
            return;
        }
        match ConnectionManager::new_lazy_with_config(self.client.clone(), self.config.clone()) {
            Ok(fresh) => {
                tracing::info!("redis store replaces a connection that stopped answering");
                slot.manager = Some(fresh);
                slot.generation += 1;
            }
            Err(error) => {
                tracing::warn!(error = %dual_core::escape::log_safe(&error.to_string()), "redis store cannot replace its connection")
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slot> {
        // The slot is a handle and a counter, always consistent, so a poisoned lock is recovered.
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn timed_out(op: &str, timeout: Duration) -> StoreError {
    tracing::warn!(op, ?timeout, "redis store call timed out");
    StoreError::unavailable(format!("redis {op} timed out after {timeout:?}"))
}

/// Connection trouble, and the server states that pass (loading, failover), are `Unavailable`;
/// everything else Redis says is `Backend`. Either keeps `error` as its cause.
pub(crate) fn map_error(op: &str, error: RedisError) -> StoreError {
    let unavailable = error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_timeout()
        || matches!(
            error.kind(),
            ErrorKind::Server(
                ServerErrorKind::BusyLoading
                    | ServerErrorKind::TryAgain
                    | ServerErrorKind::MasterDown
                    | ServerErrorKind::ReadOnly
                    | ServerErrorKind::ClusterDown
            )
        );
    if unavailable {
        tracing::warn!(op, error = %dual_core::escape::log_safe(&error.to_string()), "redis store unavailable");
        StoreError::unavailable(format!("redis {op}")).with_source(error)
    } else {
        tracing::error!(op, error = %dual_core::escape::log_safe(&error.to_string()), "redis store call failed");
        StoreError::backend(format!("redis {op}")).with_source(error)
    }
}
