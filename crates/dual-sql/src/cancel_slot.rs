//! [`CancelSlot`]: where an executor over a connection pool keeps what cancels the query running on a
//! pooled connection, so that dropping the query stops it on the database server and the connection
//! it ran on never serves another query.

use std::sync::{Arc, Mutex, PoisonError};

use dual_server::{CancelOnDrop, ExecutorError};

/// What the cancel action finds.
enum Slot<H> {
    /// The session ended (or has not started): nothing to cancel.
    Idle,
    /// A query runs on a leased connection; `H` cancels it (a cancel token, a connection id).
    Running(H),
    /// The cancel action ran: the lease must discard its connection, and no new lease starts.
    Cancelled,
}

/// The state one query shares between its [guard](CancelSlot::guard) (kept in the executor's future
/// or stream) and its [lease](CancelSlot::lease) of a pooled connection.
///
/// The server cancels a query by dropping its future or stream (docs/DESIGN.md §3). A database
/// server keeps running a statement until told otherwise, so the guard, dropped while a lease is
/// running, takes the lease's handle and runs the cancel action with it (tokio-postgres'
/// `CancelToken::cancel_query`, MySQL's `KILL QUERY`) exactly once. The lease, dropped after a
/// cancel, gives its connection to `discard` instead of back to the pool: a cancel request still on
/// its way can then never reach the next query on that connection. A lease asked for after the
/// cancel is refused.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use dual_sql::CancelSlot;
///
/// # fn main() -> Result<(), dual_server::ExecutorError> {
/// let cancelled = Arc::new(AtomicU32::new(0)); // the connection a cancel was sent for
/// let discarded = Arc::new(AtomicU32::new(0)); // the connection taken out of the pool
/// let slot: CancelSlot<u32> = CancelSlot::new();
/// let seen = Arc::clone(&cancelled);
/// let guard = slot.guard(move |connection_id| seen.store(connection_id, Ordering::SeqCst));
/// let bin = Arc::clone(&discarded);
/// let lease = slot.lease(7_u32, 7, move |conn| bin.store(conn, Ordering::SeqCst))?;
///
/// drop(guard); // the server dropped the query: the statement on connection 7 is cancelled…
/// drop(lease); // …and that connection is discarded, not pooled again.
/// assert_eq!(cancelled.load(Ordering::SeqCst), 7);
/// assert_eq!(discarded.load(Ordering::SeqCst), 7);
/// assert!(slot.lease(8_u32, 8, |_| ()).is_err(), "a cancelled query starts nothing");
/// # Ok(())
/// # }
/// ```
pub struct CancelSlot<H> {
    slot: Arc<Mutex<Slot<H>>>,
}

impl<H> Clone for CancelSlot<H> {
    fn clone(&self) -> Self {
        Self {
            slot: Arc::clone(&self.slot),
        }
    }
}

impl<H> std::fmt::Debug for CancelSlot<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &*self.slot.lock().unwrap_or_else(PoisonError::into_inner) {
            Slot::Idle => "idle",
            Slot::Running(_) => "running",
            Slot::Cancelled => "cancelled",
        };
        f.debug_struct("CancelSlot").field("state", &state).finish()
    }
}

impl<H: Send + 'static> Default for CancelSlot<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: Send + 'static> CancelSlot<H> {
    /// A slot with no query running.
    #[must_use]
    pub fn new() -> Self {
        Self {
            slot: Arc::new(Mutex::new(Slot::Idle)),
        }
    }

    /// The guard to keep in the future or stream: dropped while a lease runs, it runs `cancel` with
    /// that lease's handle (once), and marks the slot cancelled. It must not block: spawn the cancel
    /// request (see [`CancelOnDrop`]).
    pub fn guard(&self, cancel: impl FnOnce(H) + Send + 'static) -> CancelOnDrop {
        let slot = Arc::clone(&self.slot);
        CancelOnDrop::new(move || {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if let Slot::Running(handle) = std::mem::replace(&mut *slot, Slot::Cancelled) {
                drop(slot);
                cancel(handle);
            }
        })
    }

    /// Lends `conn` to the query; `handle` is what cancels a statement running on it. When the lease
    /// ends after a cancel, `conn` goes to `discard` (close it, or take it out of its pool); else it
    /// is simply dropped (back to its pool).
    ///
    /// # Errors
    /// "the query was cancelled" when the guard has already cancelled this query (`conn` is dropped:
    /// nothing ran on it, so it may go back to its pool).
    pub fn lease<C>(
        &self,
        conn: C,
        handle: H,
        discard: impl FnOnce(C) + Send + 'static,
    ) -> Result<SlotLease<C, H>, ExecutorError> {
        {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            if matches!(*slot, Slot::Cancelled) {
                // No statement ran on `conn` and no cancel names it: it may go back to its pool.
                return Err(ExecutorError::new("the query was cancelled"));
            }
            *slot = Slot::Running(handle);
        }
        Ok(SlotLease {
            conn: Some(conn),
            discard: Some(Box::new(discard)),
            slot: Arc::clone(&self.slot),
        })
    }
}

/// A pooled connection lent to one query by [`CancelSlot::lease`]; dropping it ends the query's
/// use of the connection.
pub struct SlotLease<C, H> {
    conn: Option<C>,
    discard: Option<Box<dyn FnOnce(C) + Send>>,
    slot: Arc<Mutex<Slot<H>>>,
}

impl<C, H> std::fmt::Debug for SlotLease<C, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlotLease").finish_non_exhaustive()
    }
}

impl<C, H> SlotLease<C, H> {
    /// The connection, held until the lease is dropped.
    ///
    /// # Errors
    /// Never while the lease lives; the error stands for a connection already given back.
    pub fn conn(&mut self) -> Result<&mut C, ExecutorError> {
        self.conn
            .as_mut()
            .ok_or_else(|| ExecutorError::new("the database connection was released"))
    }

    /// Ends the lease now with the connection discarded (closed, or taken out of its pool), as
    /// after a cancel: for a connection whose state the query may have left unclean.
    pub fn discard(&mut self) {
        if let (Some(conn), Some(discard)) = (self.conn.take(), self.discard.take()) {
            discard(conn);
        }
    }
}

impl<C, H> Drop for SlotLease<C, H> {
    fn drop(&mut self) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(std::mem::replace(&mut *slot, Slot::Idle), Slot::Cancelled) {
            *slot = Slot::Cancelled;
            drop(slot);
            if let (Some(conn), Some(discard)) = (self.conn.take(), self.discard.take()) {
                discard(conn);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A slot whose cancels and discards are counted.
    fn counted() -> (CancelSlot<u8>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        (
            CancelSlot::new(),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
        )
    }

    fn count(counter: &Arc<AtomicUsize>) -> impl FnOnce(u8) + Send + 'static {
        let counter = Arc::clone(counter);
        move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_discarded_lease_discards_its_connection_once() {
        let (slot, _cancels, discards) = counted();
        let mut lease = slot
            .lease(1, 1, count(&discards))
            .unwrap_or_else(|e| panic!("{e}"));
        lease.discard();
        assert!(lease.conn().is_err(), "the connection is gone");
        drop(lease);
        assert_eq!(discards.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_query_that_ended_is_never_cancelled_and_its_connection_is_pooled() {
        let (slot, cancels, discards) = counted();
        let guard = slot.guard(count(&cancels));
        let lease = slot.lease(1, 1, count(&discards));
        drop(lease);
        guard.disarm();
        assert_eq!(
            (cancels.load(Ordering::SeqCst), discards.load(Ordering::SeqCst)),
            (0, 0)
        );
    }

    #[test]
    fn a_guard_dropped_between_leases_cancels_nothing_but_stops_the_next_lease() {
        let (slot, cancels, discards) = counted();
        let guard = slot.guard(count(&cancels));
        drop(slot.lease(1, 1, count(&discards)));
        drop(guard);
        assert_eq!(cancels.load(Ordering::SeqCst), 0, "nothing ran");
        let refused = slot.lease(2, 2, count(&discards));
        assert!(refused.is_err());
        assert_eq!(
            discards.load(Ordering::SeqCst),
            0,
            "nothing ran on the refused connection: it goes back to its pool"
        );
    }

    #[test]
    fn a_guard_dropped_while_a_query_runs_cancels_it_once_and_the_connection_is_discarded() {
        let (slot, cancels, discards) = counted();
        let guard = slot.guard(count(&cancels));
        let mut lease = slot
            .lease(1, 1, count(&discards))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lease.conn().ok().copied(), Some(1));
        drop(guard);
        assert_eq!(cancels.load(Ordering::SeqCst), 1);
        assert_eq!(discards.load(Ordering::SeqCst), 0, "still in use");
        drop(lease);
        assert_eq!(discards.load(Ordering::SeqCst), 1);
        assert!(format!("{slot:?}").contains("cancelled"));
    }
}
