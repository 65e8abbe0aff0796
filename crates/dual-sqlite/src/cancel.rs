//! Stopping a query whose future or stream the server dropped (the executor contract of
//! `dual_server::QueryExecutor`): its blocking thread gives its connection back at once.
//!
//! Each query has a [`Cancel`]. While the query holds a pooled connection, the `Cancel` knows that
//! connection's stop flag and interrupt handle ([`Cancel::attach`]); the lease forgets them
//! ([`Cancel::detach`]) before the connection goes back to the pool, under the same lock as
//! [`Cancel::stop`], so a cancel never reaches the next query on that connection.
//!
//! Cancelling sets the stop flag, which the connection's progress handler checks every few thousand
//! SQLite instructions (so a statement that had not yet started when the cancel came stops too), and
//! calls `sqlite3_interrupt` for a statement running now. A query still waiting for a connection is
//! woken and gives up; one not yet on its thread finds itself cancelled before taking one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::InterruptHandle;

/// How one query is stopped; see the module docs.
#[derive(Default)]
pub(crate) struct Cancel {
    /// Set once, by [`Cancel::stop`]; read by a thread waiting for a connection.
    cancelled: AtomicBool,
    /// The connection the query runs on, when it holds one.
    attached: Mutex<Option<Attached>>,
}

/// What stops the statement running on one connection.
#[derive(Clone)]
pub(crate) struct Attached {
    /// Checked by the connection's progress handler: set, the statement is interrupted.
    pub(crate) stop: Arc<AtomicBool>,
    /// `sqlite3_interrupt` of the connection.
    pub(crate) interrupt: Arc<InterruptHandle>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Cancel {
    /// Whether the query was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Stops the query: interrupts its statement if one runs. A query waiting for a connection
    /// notices when its pool wakes it ([`Pool::cancel`](crate::pool::Pool::cancel) does both).
    pub(crate) fn stop(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Some(attached) = self.lock().as_ref() {
            attached.stop.store(true, Ordering::SeqCst);
            attached.interrupt.interrupt();
        }
    }

    /// The query now runs on the connection `attached` stops. `false` (and nothing attached) when it
    /// was cancelled already: the caller gives the connection back without running anything.
    pub(crate) fn attach(&self, attached: Attached) -> bool {
        let mut slot = self.lock();
        if self.is_cancelled() {
            return false;
        }
        *slot = Some(attached);
        true
    }

    /// The query gave its connection back: a later cancel leaves that connection alone. The
    /// connection's stop flag is cleared for the next query.
    pub(crate) fn detach(&self) {
        if let Some(attached) = self.lock().take() {
            attached.stop.store(false, Ordering::SeqCst);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Attached>> {
        self.attached.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
