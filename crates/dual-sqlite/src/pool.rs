//! A small pool of read-only SQLite connections, each with a time limit, a bounded wait for a free
//! connection, and a cap on the connections exports may hold.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, limits::Limit};

use super::cancel::{Attached, Cancel};
use crate::options::SqliteOptions;
use dual_server::Pace;

/// SQLite VM instructions between two checks of the deadline.
const PROGRESS_OPS: i32 = 10_000;
/// The smallest cap on one value: below it, the schema's own statements could not run.
const MIN_VALUE_BYTES: usize = 1 << 10;
/// Prepared statements kept per connection (`prepare_cached`).
const STATEMENT_CACHE: usize = 64;

/// A read-only connection, its deadline (nanoseconds since the pool's epoch; 0 = none) and what
/// stops its statement when its query is cancelled.
pub(crate) struct Slot {
    pub(crate) conn: Connection,
    deadline: Arc<AtomicU64>,
    stop: Attached,
    /// The pace of the snapshot query holding the connection, if any: its progress handler waits
    /// while it is paused.
    pace: Arc<Mutex<Option<Pace>>>,
}

/// What a connection is taken for. Exports hold theirs for as long as the client reads, so they may
/// take at most `export_slots` of the pool: pages and counts always find the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// A count, a page, a sample: short.
    Query,
    /// A single-pass export stream: as long as the client reads.
    Export,
    /// A snapshot's stream, for as long as the server writes it (waiting for its background turn
    /// included). Never waits and never counts against the pool's size: the server's scheduler
    /// bounds how many run at once (docs/DESIGN.md §8, "Scheduling"), so the background work of
    /// answers already given never takes the connections of tool calls, pages and counts. An idle
    /// pooled connection is used when there is one, else one is opened, and closed again when
    /// returned to a pool that has its size.
    Snapshot,
}

/// No connection could be taken.
#[derive(Debug)]
pub(crate) enum TakeError {
    /// None became free within the wait limit.
    Busy {
        /// The wait limit.
        waited: Duration,
    },
    /// Opening a connection failed.
    Sqlite(rusqlite::Error),
    /// The query was cancelled (its future or stream dropped) before it got one.
    Cancelled,
}

/// Up to `size` read-only connections to one database file, opened on demand.
///
/// Queries run on blocking threads (`spawn_blocking`), so waiting for a free connection blocks on a
/// std `Condvar`, for at most `wait`; the mutex is only held to push or pop a connection, never across
/// a query.
pub(crate) struct Pool {
    path: PathBuf,
    size: usize,
    export_slots: usize,
    wait: Duration,
    time_limit: Duration,
    /// `SQLITE_LIMIT_LENGTH` of every connection.
    max_value_bytes: i32,
    /// A refinement's database: the page cache in KiB, and only `result` readable.
    sealed: Option<u32>,
    epoch: Instant,
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    idle: Vec<Slot>,
    open: usize,
    /// Connections held by exports.
    exports: usize,
    /// Connections held by snapshot streams (outside the pool's size).
    snapshots: usize,
}

impl PoolState {
    /// Open connections that count against the pool's size.
    fn counted(&self) -> usize {
        self.open - self.snapshots
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("export_slots", &self.export_slots)
            .field("wait", &self.wait)
            .field("time_limit", &self.time_limit)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// A pool of `options.pool_size` connections over `path`, of which exports may hold
    /// `options.export_slots` (at most `size - 1`, at least 1 unless `size` is 1); opens one
    /// connection now so that a missing or unreadable file fails early.
    pub(crate) fn open(path: &Path, options: &SqliteOptions) -> rusqlite::Result<Self> {
        let size = options.pool_size.max(1);
        let pool = Self {
            path: path.to_path_buf(),
            size,
            export_slots: options.export_slots.clamp(1, size.saturating_sub(1).max(1)),
            wait: options.wait,
            time_limit: options.time_limit,
            max_value_bytes: i32::try_from(options.max_value_bytes.max(MIN_VALUE_BYTES)).unwrap_or(i32::MAX),
            sealed: options.sealed,
            epoch: Instant::now(),
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
                exports: 0,
                snapshots: 0,
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

    /// The cap on one value or row, in bytes.
    pub(crate) fn max_value_bytes(&self) -> usize {
        usize::try_from(self.max_value_bytes).unwrap_or(usize::MAX)
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
        // SQLite refuses to build a longer string, blob or row (`SQLITE_TOOBIG`): a runaway value
        // fails its query instead of taking the server's memory.
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, self.max_value_bytes)?;
        if let Some(cache_kib) = self.sealed {
            crate::seal::seal(&mut conn, cache_kib)?;
        }
        let deadline = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let pace: Arc<Mutex<Option<Pace>>> = Arc::default();
        let epoch = self.epoch;
        let watched = Arc::clone(&deadline);
        let stopped = Arc::clone(&stop);
        let paced = Arc::clone(&pace);
        conn.progress_handler(
            PROGRESS_OPS,
            Some(move || {
                let stop = || stopped.load(Ordering::SeqCst);
                wait_while_paused(&paced, &watched, &stop);
                let deadline = watched.load(Ordering::Relaxed);
                stop() || (deadline != 0 && nanos_since(epoch) > deadline)
            }),
        )?;
        let interrupt = Arc::new(conn.get_interrupt_handle());
        Ok(Slot {
            conn,
            deadline,
            stop: Attached { stop, interrupt },
            pace,
        })
    }

    /// Takes a connection for `purpose`, waiting at most the pool's wait limit when all are busy (or,
    /// for an export, when exports hold all their slots), for the query `cancel` stops. Call from a
    /// blocking thread. A cancel wakes the wait: [`TakeError::Cancelled`].
    pub(crate) fn get(self: &Arc<Self>, purpose: Use, cancel: &Arc<Cancel>) -> Result<Lease, TakeError> {
        let mut lease = self.take_for(purpose, cancel)?;
        let attached = lease.slot.as_ref().map(|slot| slot.stop.clone());
        if !attached.is_some_and(|attached| cancel.attach(attached)) {
            // Cancelled meanwhile: dropping the lease gives the connection back unused.
            return Err(TakeError::Cancelled);
        }
        lease.cancel = Some(Arc::clone(cancel));
        Ok(lease)
    }

    /// Takes a connection for `purpose` (see [`Pool::get`]); `Cancelled` when `cancel` is set while it
    /// waits.
    fn take_for(self: &Arc<Self>, purpose: Use, cancel: &Cancel) -> Result<Lease, TakeError> {
        let deadline = Instant::now() + self.wait;
        let mut waiting = None;
        let mut state = self.lock();
        loop {
            // Checked under the pool's lock, which `wake_waiters` takes too: no wake-up is lost.
            if cancel.is_cancelled() {
                return Err(TakeError::Cancelled);
            }
            let allowed = match purpose {
                Use::Query | Use::Snapshot => true,
                Use::Export => state.exports < self.export_slots,
            };
            if allowed {
                if let Some(slot) = state.idle.pop() {
                    state.hold(purpose);
                    return Ok(self.lease(slot, purpose));
                }
                if purpose == Use::Snapshot || state.counted() < self.size {
                    state.open += 1;
                    state.hold(purpose);
                    drop(state);
                    return match self.connect() {
                        Ok(slot) => Ok(self.lease(slot, purpose)),
                        Err(error) => {
                            let mut state = self.lock();
                            state.open -= 1;
                            state.release(purpose);
                            drop(state);
                            self.returned.notify_all();
                            Err(TakeError::Sqlite(error))
                        }
                    };
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TakeError::Busy { waited: self.wait });
            }
            waiting.get_or_insert_with(dual_server::metrics::query_waiting);
            state = self
                .returned
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Connections held by snapshot streams now.
    #[cfg(test)]
    pub(crate) fn held_by_snapshots(&self) -> usize {
        self.lock().snapshots
    }

    /// Stops the query of `cancel`: interrupts its statement if one runs, and wakes it if it waits
    /// for a connection here.
    pub(crate) fn cancel(&self, cancel: &Cancel) {
        cancel.stop();
        self.wake_waiters();
    }

    /// A guard that cancels the query of `cancel` in this pool when the server drops the future or
    /// stream holding it.
    pub(crate) fn cancel_on_drop(self: &Arc<Self>, cancel: &Arc<Cancel>) -> dual_server::CancelOnDrop {
        let cancel = Arc::clone(cancel);
        let pool = Arc::clone(self);
        dual_server::CancelOnDrop::new(move || {
            tracing::debug!("query dropped by the server: cancelling its statement");
            pool.cancel(&cancel);
        })
    }

    /// Wakes every thread waiting for a connection, so that a cancelled one gives up at once.
    pub(crate) fn wake_waiters(&self) {
        // Notified under the lock the waiters check their cancel flag under: none misses it.
        let _state = self.lock();
        self.returned.notify_all();
    }

    /// An idle connection, if one is free right now (never waits, never opens one).
    pub(crate) fn try_get(self: &Arc<Self>) -> Option<Lease> {
        let slot = self.lock().idle.pop()?;
        Some(self.lease(slot, Use::Query))
    }

    fn lease(self: &Arc<Self>, slot: Slot, purpose: Use) -> Lease {
        let lease = Lease {
            slot: Some(slot),
            purpose,
            pool: Arc::clone(self),
            cancel: None,
        };
        lease.restart_clock();
        lease
    }
}

impl PoolState {
    /// Counts a connection taken for `purpose`.
    fn hold(&mut self, purpose: Use) {
        match purpose {
            Use::Query => {}
            Use::Export => self.exports += 1,
            Use::Snapshot => self.snapshots += 1,
        }
    }

    /// Counts a connection given back from `purpose`.
    fn release(&mut self, purpose: Use) {
        match purpose {
            Use::Query => {}
            Use::Export => self.exports -= 1,
            Use::Snapshot => self.snapshots -= 1,
        }
    }
}

/// How often a paused statement looks at its stop flag.
const PAUSED_CHECK: Duration = Duration::from_millis(50);

/// In the progress handler: while the query's pace is paused (its snapshot's writer waits for its
/// background turn), the statement waits here instead of running, its time limit pushed back by the
/// wait, until it may run or is stopped.
fn wait_while_paused(pace: &Mutex<Option<Pace>>, deadline: &AtomicU64, stopped: &dyn Fn() -> bool) {
    let pace = pace.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let Some(pace) = pace.filter(Pace::is_paused) else {
        return;
    };
    let started = Instant::now();
    while !stopped() && !pace.wait_while_paused(PAUSED_CHECK) {}
    let waited = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let _ = deadline.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |at| {
        (at != 0).then(|| at.saturating_add(waited))
    });
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A connection taken from the pool; goes back on drop, never inside a transaction.
pub(crate) struct Lease {
    slot: Option<Slot>,
    purpose: Use,
    pool: Arc<Pool>,
    /// The query's cancel, attached to this connection until the lease drops.
    cancel: Option<Arc<Cancel>>,
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

    /// Whether the query holding this connection was cancelled (its statement is interrupted).
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|cancel| cancel.is_cancelled())
    }

    /// The pool's time limit of one statement.
    pub(crate) fn time_limit(&self) -> Duration {
        self.pool.time_limit
    }

    /// Attaches the pace of the snapshot query holding this connection (detached when the lease
    /// drops): its statement waits while the pace is paused.
    pub(crate) fn follow_pace(&self, pace: Pace) {
        if let Some(slot) = &self.slot {
            *slot.pace.lock().unwrap_or_else(PoisonError::into_inner) = Some(pace);
        }
    }

    /// The pool's cap on one value or row, in bytes.
    pub(crate) fn max_value_bytes(&self) -> usize {
        self.pool.max_value_bytes()
    }

    /// Starts a fresh time limit for what runs next on this connection.
    pub(crate) fn restart_clock(&self) {
        self.restart_clock_within(self.pool.time_limit);
    }

    /// Starts a fresh time limit of `limit` (at most the pool's) for what runs next on this
    /// connection: a statement still running then is interrupted.
    pub(crate) fn restart_clock_within(&self, limit: Duration) {
        if let Some(slot) = &self.slot {
            let limit = u64::try_from(limit.min(self.pool.time_limit).as_nanos()).unwrap_or(u64::MAX);
            let deadline = nanos_since(self.pool.epoch).saturating_add(limit).max(1);
            slot.deadline.store(deadline, Ordering::Relaxed);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // First, so that a cancel arriving from now on leaves the connection (and its next query)
        // alone; this clears the connection's stop flag.
        if let Some(cancel) = self.cancel.take() {
            cancel.detach();
        }
        if let Some(slot) = self.slot.take() {
            slot.deadline.store(0, Ordering::Relaxed);
            *slot.pace.lock().unwrap_or_else(PoisonError::into_inner) = None;
            // A query that left its transaction open (its rollback failed) must not hand its
            // snapshot to the next query on this connection: roll back, or close the connection.
            let reusable = slot.conn.is_autocommit()
                || (slot.conn.execute_batch("ROLLBACK").is_ok() && slot.conn.is_autocommit());
            let mut state = self.pool.lock();
            state.release(self.purpose);
            // A connection beyond the pool's size (opened for a snapshot) is closed, not pooled.
            let keep = reusable && state.counted() <= self.pool.size;
            let closed = if keep {
                state.idle.push(slot);
                None
            } else {
                state.open -= 1;
                Some(slot)
            };
            drop(state);
            if !reusable {
                tracing::warn!("a pooled connection was still inside a transaction: closed");
            }
            // Closed outside the pool's lock.
            drop(closed);
            // Waiters wait for different things (any connection, an export slot): wake them all.
            self.pool.returned.notify_all();
        }
    }
}
