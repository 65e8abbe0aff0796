//! Running a statement on a leased connection: the count, and the rows stepped once and sent in
//! bounded batches to the reader on the other side of a channel (docs in the crate root).

use std::time::Duration;

use dual_core::{Row, Sort, SortOrder, range::RowRange};
use dual_server::ExecutorError;
use dual_sql::{RowSender, SendStop, ValueCap};

use crate::convert::{self, quote_identifier};
use crate::guard::sqlite_message;
use crate::options::{STREAM_BATCH, STREAM_BATCH_BYTES};
use crate::pool::{Lease, TakeError};
use crate::query::SqliteQuery;

/// The rows `query` matches: `SELECT COUNT(*) FROM (⟨sql⟩)`.
pub(crate) fn count(lease: &Lease, query: &SqliteQuery) -> rusqlite::Result<u64> {
    let sql = format!("SELECT COUNT(*) FROM (\n{}\n)", query.sql());
    let mut stmt = lease.conn().prepare_cached(&sql)?;
    query.bind_to(&mut stmt, &[])?;
    let count: i64 = match stmt.raw_query().next()? {
        Some(row) => row.get(0)?,
        None => 0,
    };
    Ok(u64::try_from(count).unwrap_or_default())
}

/// The sending half of an export, on its blocking thread: a send waits at most `stall` for the reader.
pub(crate) struct Sender {
    pub(crate) rows: RowSender,
    pub(crate) runtime: tokio::runtime::Handle,
    pub(crate) stall: Duration,
}

impl Sender {
    /// Sends `batch`, waiting at most the stall time for room.
    fn send(&self, batch: Vec<Row>) -> Result<(), SendStop> {
        self.runtime.block_on(self.rows.send_within(batch, self.stall))
    }
}

/// Rows of the first batch of a stream: more than the default sample (15), so that a tool call has
/// its sample after one small batch.
const FIRST_BATCH: usize = 32;

/// Steps one statement over the whole result, sending a first batch of [`FIRST_BATCH`] rows, then
/// batches of [`STREAM_BATCH`] rows or about [`STREAM_BATCH_BYTES`]; stops early when
/// the receiver is dropped or stalls. The time limit applies to each batch. `Ok(true)` when every row
/// was sent.
pub(crate) fn stream_rows(
    lease: &Lease,
    query: &SqliteQuery,
    sort: Option<&Sort>,
    range: RowRange,
    sender: &Sender,
) -> rusqlite::Result<bool> {
    let sql = format!(
        "SELECT * FROM (\n{}\n){} LIMIT ? OFFSET ?",
        query.sql(),
        order_by(sort)
    );
    // SQLite reads a negative LIMIT as "no limit".
    let limit = range
        .limit
        .map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX));
    let offset = i64::try_from(range.offset).unwrap_or(i64::MAX);
    let mut stmt = lease.conn().prepare_cached(&sql)?;
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    query.bind_to(&mut stmt, &[limit, offset])?;
    let mut rows = stmt.raw_query();
    // The first batch is small: the sample (and the first bytes of an export) leave at once,
    // without waiting for a full batch to be read and converted.
    let mut batch_rows = FIRST_BATCH;
    let mut batch = Vec::with_capacity(batch_rows);
    let mut batch_bytes = 0usize;
    let mut cap = ValueCap::new(lease.max_value_bytes());
    while let Some(row) = rows.next()? {
        let row = convert::row(row, &names, &mut cap)?;
        batch_bytes += convert::approx_len(&row);
        batch.push(row);
        if batch.len() >= batch_rows || batch_bytes >= STREAM_BATCH_BYTES {
            batch_rows = STREAM_BATCH;
            batch_bytes = 0;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(STREAM_BATCH));
            match sender.send(full) {
                Ok(()) => lease.restart_clock(),
                Err(stop) => {
                    stopped(&stop, sender.stall);
                    return Ok(false);
                }
            }
        }
    }
    if !batch.is_empty()
        && let Err(stop) = sender.send(batch)
    {
        stopped(&stop, sender.stall);
        return Ok(false);
    }
    Ok(true)
}

/// The whole result of `query` with its count, in one read transaction: `BEGIN`, the count (handed
/// to `announce`), then the rows as [`stream_rows`] sends them, then `ROLLBACK` (nothing was
/// written). A count still running after `count_wait` would not be announced (see
/// `Counting::signal`): it is stopped there, and the rows are streamed without it, so a query whose
/// count costs as much as the query itself does not run twice. SQLite starts a deferred transaction's snapshot at its first read, the count, and keeps
/// it until the transaction ends, so the rows stepped afterwards are exactly the rows counted, however
/// other connections write meanwhile (in WAL mode they write on; in rollback-journal mode they wait).
/// The transaction ends on every return, an error or a stop included: dropping it rolls back, and a
/// [`Lease`] never goes back to the pool inside a transaction.
pub(crate) fn stream_counted(
    lease: &Lease,
    query: &SqliteQuery,
    sender: &Sender,
    count_wait: Duration,
    announce: impl FnOnce(u64),
) -> rusqlite::Result<bool> {
    let transaction = lease.conn().unchecked_transaction()?;
    lease.restart_clock_within(count_wait);
    match count(lease, query) {
        Ok(total) => announce(total),
        // Stopped at `count_wait` (not cancelled, not the time limit): stream without a count. The
        // read transaction stays: a SELECT that fails leaves it open.
        Err(rusqlite::Error::SqliteFailure(code, _))
            if code.code == rusqlite::ErrorCode::OperationInterrupted
                && !lease.cancelled()
                && count_wait < lease.time_limit() =>
        {
            tracing::debug!(
                count_wait_ms = u64::try_from(count_wait.as_millis()).unwrap_or(u64::MAX),
                "count slower than the count wait: streaming without it"
            );
        }
        Err(error) => return Err(error),
    }
    lease.restart_clock();
    let sent = stream_rows(lease, query, None, RowRange::ALL, sender)?;
    // Rolls back (nothing was written); the rows are out whatever that answers, and a failed
    // rollback is the lease's to clean up.
    drop(transaction);
    Ok(sent)
}

/// Logs why an export stopped early; the connection goes back to the pool as the lease drops.
fn stopped(stop: &SendStop, stall: Duration) {
    match stop {
        SendStop::Gone => tracing::debug!("export reader went away; connection released"),
        _ => tracing::warn!(
            stall_ms = u64::try_from(stall.as_millis()).unwrap_or(u64::MAX),
            "export reader took nothing for the stall time; connection released and export cut"
        ),
    }
}

/// A connection that could not be had: `overloaded` when none was free in time.
pub(crate) fn take_error(error: TakeError) -> ExecutorError {
    match error {
        TakeError::Busy { waited } => ExecutorError::overloaded(
            format!(
                "no database connection became free within {} ms",
                waited.as_millis()
            ),
            Duration::from_secs(1),
        ),
        TakeError::Sqlite(error) => ExecutorError::new(sqlite_message(&error)),
        TakeError::Cancelled => ExecutorError::new("the query was cancelled"),
    }
}

pub(crate) fn order_by(sort: Option<&Sort>) -> String {
    sort.map(|sort| {
        let order = match sort.order {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        };
        format!(" ORDER BY {} {order}", quote_identifier(&sort.field))
    })
    .unwrap_or_default()
}

pub(crate) fn executor_error(error: &rusqlite::Error, lease: &Lease, limit: Duration) -> ExecutorError {
    if let rusqlite::Error::SqliteFailure(code, _) = error
        && code.code == rusqlite::ErrorCode::TooBig
    {
        return too_big(lease.max_value_bytes());
    }
    if let Some(refused) = convert::refused_row(error) {
        return ExecutorError::new(refused.message());
    }
    let message = sqlite_message(error);
    if message == "interrupted" && lease.cancelled() {
        ExecutorError::new("the query was cancelled")
    } else if message == "interrupted" {
        ExecutorError::new(format!(
            "the query exceeded the time limit of {} ms: add filters or aggregate",
            limit.as_millis()
        ))
    } else {
        ExecutorError::new(message)
    }
}

/// A value or row past the cap: what SQLite refused to build, and what to do. SQLite does not say
/// which column it was building.
pub(crate) fn too_big(cap: usize) -> ExecutorError {
    ExecutorError::new(format!(
        "a value or row of the result is larger than the cap of {cap} bytes (max_value_bytes; SQLite does \
         not say which column): select less of it, e.g. substr() or length() of a long column"
    ))
}
