//! A small pool of read-only SQLite connections, each with a time limit.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

/// SQLite VM instructions between two checks of the deadline.
const PROGRESS_OPS: i32 = 10_000;
/// Prepared statements kept per connection (`prepare_cached`).
const STATEMENT_CACHE: usize = 64;

/// A read-only connection and its deadline (nanoseconds since the pool's epoch; 0 = none).
pub(crate) struct Slot {
    pub(crate) conn: Connection,
    deadline: Arc<AtomicU64>,
}

/// Up to `size` read-only connections to one database file, opened on demand.
///
/// Queries run on blocking threads (`spawn_blocking`), so waiting for a free connection blocks on a
/// std `Condvar`; the mutex is only held to push or pop a connection, never across a query.
pub(crate) struct Pool {
    path: PathBuf,
    size: usize,
    time_limit: Duration,
    epoch: Instant,
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    idle: Vec<Slot>,
    open: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("time_limit", &self.time_limit)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// A pool over `path`; opens one connection now so that a missing or unreadable file fails early.
    pub(crate) fn open(path: &Path, size: usize, time_limit: Duration) -> rusqlite::Result<Self> {
        let pool = Self {
            path: path.to_path_buf(),
            size: size.max(1),
            time_limit,
            epoch: Instant::now(),
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            returned: Condvar::new(),
        };
        let first = pool.connect()?;
        let mut state = pool.lock();
        state.idle.push(first);
        state.open = 1;
        drop(state);
        Ok(pool)
    }

    /// The time limit of one query (of one batch, for streams).
    pub(crate) fn time_limit(&self) -> Duration {
        self.time_limit
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn connect(&self) -> rusqlite::Result<Slot> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&self.path, flags)?;
        // Belt and braces: the connection is read-only, and SQLite refuses writes on it as well.
        conn.pragma_update(None, "query_only", true)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let deadline = Arc::new(AtomicU64::new(0));
        let epoch = self.epoch;
        let watched = Arc::clone(&deadline);
        conn.progress_handler(
            PROGRESS_OPS,
            Some(move || {
                let deadline = watched.load(Ordering::Relaxed);
                deadline != 0 && nanos_since(epoch) > deadline
            }),
        )?;
        Ok(Slot { conn, deadline })
    }

    /// Takes a connection, waiting for one when all `size` are busy. Call from a blocking thread.
    pub(crate) fn get(self: &Arc<Self>) -> rusqlite::Result<Lease> {
        let mut state = self.lock();
        loop {
            if let Some(slot) = state.idle.pop() {
                return Ok(self.lease(slot));
            }
            if state.open < self.size {
                state.open += 1;
                drop(state);
                return match self.connect() {
                    Ok(slot) => Ok(self.lease(slot)),
                    Err(error) => {
                        self.lock().open -= 1;
                        self.returned.notify_one();
                        Err(error)
                    }
                };
            }
            state = self.returned.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// An idle connection, if one is free right now (never waits, never opens one).
    pub(crate) fn try_get(self: &Arc<Self>) -> Option<Lease> {
        let slot = self.lock().idle.pop()?;
        Some(self.lease(slot))
    }

    fn lease(self: &Arc<Self>, slot: Slot) -> Lease {
        let lease = Lease {
            slot: Some(slot),
            pool: Arc::clone(self),
        };
        lease.restart_clock();
        lease
    }
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A connection taken from the pool; goes back on drop.
pub(crate) struct Lease {
    slot: Option<Slot>,
    pool: Arc<Pool>,
}

impl Lease {
    /// The connection.
    pub(crate) fn conn(&self) -> &Connection {
        match &self.slot {
            Some(slot) => &slot.conn,
            // `slot` is only taken inside `drop`.
            None => unreachable!("lease used after drop"),
        }
    }

    /// Starts a fresh time limit for what runs next on this connection.
    pub(crate) fn restart_clock(&self) {
        if let Some(slot) = &self.slot {
            let limit = u64::try_from(self.pool.time_limit.as_nanos()).unwrap_or(u64::MAX);
            let deadline = nanos_since(self.pool.epoch).saturating_add(limit).max(1);
            slot.deadline.store(deadline, Ordering::Relaxed);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.deadline.store(0, Ordering::Relaxed);
            self.pool.lock().idle.push(slot);
            self.pool.returned.notify_one();
        }
    }
}
