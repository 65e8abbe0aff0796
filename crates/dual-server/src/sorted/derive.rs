//! Deriving one sorted order: the snapshot's segments are read on the async side and handed to a
//! blocking thread, which extracts each row's key and sorts them there, never on an async worker,
//! holding the memory of the keys in the working-memory budget.

use std::sync::Arc;
use std::time::Instant;

use dual_core::page::{RequestError, SortLimit};
use dual_core::{ResourceId, Sort, SortOrder};
use dual_spool::{RowCursor, RowRun, SpoolError};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use super::SORT_RETRY_AFTER;
use super::budget::{BudgetError, MemoryBudget, Reservation};
use super::key::{ENTRY_BYTES, Keys, RowKey, TooLarge};
use crate::{ExecutorError, ServerError};

/// Bytes of the finished order, per row: one `u32`.
pub(super) const ORDER_BYTES: u64 = 4;

/// What the async side hands the blocking thread.
enum Feed {
    /// The next segment's rows.
    Run(RowRun),
    /// Every row was sent.
    End,
}

/// Why the blocking side stopped without an order.
enum Stop {
    Budget(BudgetError),
    TooLarge,
    /// The async side went away before the end (its request was dropped, or reading failed).
    Abandoned,
}

/// Segments in flight between the reader and the blocking thread.
const FEED_DEPTH: usize = 2;

/// Derives the order of the snapshot `cursor` reads, holding `slot` (a derivation slot) until the
/// blocking thread ends, even when the caller stops waiting for it.
pub(super) async fn derive(
    mut cursor: RowCursor,
    sort: &Sort,
    slot: OwnedSemaphorePermit,
    budget: &Arc<MemoryBudget>,
) -> Result<Arc<[u32]>, ServerError> {
    let id = cursor.manifest().id();
    let rows = cursor.manifest().rows();
    let capacity = usize::try_from(rows).map_err(|_| too_many(id))?;
    let mut reservation = budget.reservation();
    // The entries and the finished order are allocated whatever the keys: reserve them first.
    reservation
        .grow(rows.saturating_mul(ENTRY_BYTES + ORDER_BYTES))
        .map_err(refusal)?;
    let started = Instant::now();
    let (feed, receiver) = mpsc::channel(FEED_DEPTH);
    let field = sort.field.clone();
    let order = sort.order;
    // Sorts in flight (a metric): held with the slot until the blocking thread ends.
    let sorting = crate::metrics::sorting();
    let blocking = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let _sorting = sorting;
        build(receiver, capacity, &field, order, reservation)
    });
    let read = async {
        while let Some(run) = cursor.next().await.map_err(ServerError::spool)? {
            if feed.send(Feed::Run(run)).await.is_err() {
                return Ok(());
            }
        }
        // The blocking side may have stopped already; its result says why.
        let _ = feed.send(Feed::End).await;
        Ok::<(), ServerError>(())
    };
    let read = read.await;
    drop(feed);
    let built = match blocking.await {
        Ok(built) => built,
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    };
    read?;
    let (order, held) = match built {
        Ok(built) => built,
        Err(Stop::Budget(error)) => return Err(refusal(error)),
        Err(Stop::TooLarge) => return Err(too_many(id)),
        Err(Stop::Abandoned) => return Err(ServerError::ResourceNotFound),
    };
    tracing::debug!(
        %id,
        field = %dual_core::escape::log_safe(&sort.field),
        rows,
        memory_bytes = held,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "sorted order of a snapshot derived"
    );
    Ok(order.into())
}

/// The blocking side: every row's key, then their order. Returns the bytes it held at most.
fn build(
    mut receiver: mpsc::Receiver<Feed>,
    capacity: usize,
    field: &str,
    order: SortOrder,
    mut reservation: Reservation,
) -> Result<(Vec<u32>, u64), Stop> {
    let mut keys = Keys::with_rows(capacity);
    let fixed = reservation.bytes().saturating_sub(keys.allocated());
    loop {
        match receiver.blocking_recv() {
            Some(Feed::Run(run)) => {
                for row in run.iter() {
                    let key = RowKey::of(&row, field);
                    // Room for the key's text, reserved before it is allocated.
                    let growth = keys.text_growth(key.text_len());
                    if growth > 0 {
                        reservation.grow(growth as u64).map_err(Stop::Budget)?;
                        keys.grow_text(growth);
                    }
                    keys.push(key).map_err(|TooLarge| Stop::TooLarge)?;
                }
                // Should the rows outnumber the manifest's count, account what was allocated.
                reservation
                    .cover(fixed + keys.allocated())
                    .map_err(Stop::Budget)?;
            }
            Some(Feed::End) => break,
            None => return Err(Stop::Abandoned),
        }
    }
    drop(receiver);
    let held = reservation.bytes();
    Ok((keys.into_order(order), held))
}

/// A derivation the budget cannot take: too large for it (`INVALID_REQUEST`), or it is taken by
/// other sorts (`OVERLOADED`).
fn refusal(error: BudgetError) -> ServerError {
    match error {
        BudgetError::Alone { max } => RequestError::SortTooLarge(SortLimit::Memory { max }).into(),
        BudgetError::Busy { max } => ServerError::Overloaded(ExecutorError::overloaded(
            format!("the sorts being derived hold the sort memory budget of {max} bytes"),
            SORT_RETRY_AFTER,
        )),
    }
}

fn too_many(id: ResourceId) -> ServerError {
    ServerError::spool(SpoolError::Corrupt {
        id,
        reason: "more than 2^32 rows, or a key over 4 GiB, cannot be sorted",
    })
}
