//! The snapshot's stream: one read-only repeatable-read transaction exports its snapshot, counts the
//! query in it on a second connection while it streams, and reads the rows from a portal, one fetch
//! ahead, each fetch sized by [`FetchSizer`] and written as one batch of JSON rows.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Transaction;
use dual_core::Column;
use dual_server::{ExecutorError, JsonColumns, JsonRowWriter, QueryStart, RowBatch};
use dual_sql::RowSender;
use futures_util::TryStreamExt;
use tokio_postgres::types::Type;

use crate::decode::{self, Raw, column_type};
use crate::fetch_sizer::FetchSizer;
use crate::query::PgQuery;
use crate::session::{Canceller, Session, release};
use crate::shared::{Shared, unreadable};

/// Writes every row of `query` into `rows_out`, on a connection of the snapshot pool taken through
/// `canceller`, which is cleaned and given back at the end. `Ok(true)` when every row was sent.
pub(crate) async fn write(
    shared: Arc<Shared>,
    query: PgQuery,
    start: QueryStart,
    canceller: Canceller,
    rows_out: &RowSender,
) -> Result<bool, ExecutorError> {
    let mut session = canceller.session(&shared.snapshots).await?;
    let written = write_in(&shared, &mut session, query, start, rows_out).await;
    release(&mut session).await;
    written
}

/// [`write`] on its session.
async fn write_in(
    shared: &Arc<Shared>,
    session: &mut Session,
    query: PgQuery,
    mut start: QueryStart,
    rows_out: &RowSender,
) -> Result<bool, ExecutorError> {
    let txn = shared.begin(session).await?;
    let statement = shared.prepare(&txn, query.sql()).await?;
    let names: Vec<String> = statement.columns().iter().map(|c| c.name().to_owned()).collect();
    let types: Vec<Type> = statement.columns().iter().map(|c| c.type_().clone()).collect();
    let columns = Arc::new(JsonColumns::new(&names)?);
    let numeric = shared.options.numeric;
    start.declare_columns(
        names
            .iter()
            .zip(&types)
            .map(|(name, ty)| Column::new(name.clone(), column_type(ty, numeric)))
            .collect(),
    );
    // The query runs from here: `pending_after` counts from now, not from the count's end.
    start.running();
    // The count runs beside the stream, on a connection of its own that reads this
    // transaction's snapshot (exported), so a long query never runs twice in a row.
    let snapshot: String = txn
        .query_one("SELECT pg_export_snapshot()", &[])
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| shared.error(&e))?;
    let mut count = count_beside(shared, snapshot, query.clone(), start);
    let texts = query.texts();
    let portal = txn
        .bind_raw(&statement, texts.iter())
        .await
        .map_err(|e| shared.error(&e))?;
    let mut scratch = String::new();
    let mut sizer = FetchSizer::new(shared.options);
    // One fetch ahead: the next `Execute` is sent as soon as this one's rows are in, before they
    // are decoded, so the server reads the next rows while these are written.
    let mut next = Some(fetch(shared, &txn, &portal, sizer.next()).await?);
    while let Some((pending, asked)) = next.take() {
        let rows: Vec<tokio_postgres::Row> = pending.try_collect().await.map_err(|e| shared.error(&e))?;
        if rows.len() >= asked {
            next = Some(fetch(shared, &txn, &portal, sizer.next()).await?);
        }
        if !rows.is_empty() {
            let (batch, bytes) = batch(shared, &rows, &columns, &names, &types, &mut scratch)?;
            sizer.saw(rows.len(), bytes);
            drop(rows);
            // No stall limit: the server's writer stops reading while it waits for its
            // background turn; its time limit and its drop of the stream bound the wait.
            if rows_out.send_within(batch, Duration::MAX).await.is_err() {
                return Ok(false);
            }
        }
    }
    // A result shorter than its count: the exported snapshot stays until the count has read it
    // (or gave up at `count_wait`), so that even a short result announces its count first.
    count.settled().await;
    txn.rollback().await.map_err(|e| shared.error(&e))?;
    Ok(true)
}

/// Counts `query` in the exported `snapshot` on a task of its own, and signals `start` with the
/// count when it is done within `count_wait`, else without one (the count is then cancelled: the
/// rows are counted as they come). Dropping what it returns cancels the count.
fn count_beside(shared: &Arc<Shared>, snapshot: String, query: PgQuery, start: QueryStart) -> CountBeside {
    let shared = Arc::clone(shared);
    let wait = shared.options.count_wait;
    let task = tokio::spawn(async move {
        match tokio::time::timeout(wait, count_in_snapshot(&shared, &snapshot, &query)).await {
            Ok(Ok(total)) => start.started_with_count(total),
            // Too slow, or the snapshot was gone (the stream already ended): no count.
            _ => start.started(),
        }
    });
    CountBeside(task)
}

/// The rows of `query` in the exported `snapshot`, on a snapshot connection of its own.
async fn count_in_snapshot(shared: &Shared, snapshot: &str, query: &PgQuery) -> Result<u64, ExecutorError> {
    Canceller::run(&shared.snapshots, async |session| {
        let txn = shared.begin(session).await?;
        txn.batch_execute(&format!(
            "SET TRANSACTION SNAPSHOT '{}'",
            snapshot.replace('\'', "''")
        ))
        .await
        .map_err(|e| shared.error(&e))?;
        shared.count_rows(&txn, query).await
    })
    .await
}

/// Sends the `Execute` of the next `rows` rows of `portal` (without waiting for them).
async fn fetch(
    shared: &Shared,
    txn: &Transaction<'_>,
    portal: &tokio_postgres::Portal,
    rows: usize,
) -> Result<(tokio_postgres::RowStream, usize), ExecutorError> {
    let max_rows = i32::try_from(rows).unwrap_or(i32::MAX);
    let stream = txn
        .query_portal_raw(portal, max_rows)
        .await
        .map_err(|e| shared.error(&e))?;
    Ok((stream, usize::try_from(max_rows).unwrap_or(usize::MAX)))
}

/// `rows` as a batch of JSON rows, each value written as it is decoded (no map per row), and
/// the batch's bytes.
fn batch(
    shared: &Shared,
    rows: &[tokio_postgres::Row],
    columns: &Arc<JsonColumns>,
    names: &[String],
    types: &[Type],
    scratch: &mut String,
) -> Result<(RowBatch, usize), ExecutorError> {
    let numeric = shared.options.numeric;
    let mut cap = shared.options.value_cap();
    let mut out = JsonRowWriter::new(Arc::clone(columns), rows.len());
    for row in rows {
        for (at, (name, ty)) in names.iter().zip(types).enumerate() {
            let raw: Raw<'_> = row.try_get(at).map_err(|e| shared.error(&e))?;
            cap.value(name, raw.0.map_or(0, <[u8]>::len))?;
            decode::write(&mut out, ty, raw.0, numeric, scratch).map_err(|e| unreadable(name, ty, &e))?;
        }
        cap.end_row();
        out.end_row()?;
    }
    let bytes = out.bytes();
    Ok((out.finish(), bytes))
}

/// The count running beside a snapshot's stream (on a task of its own): cancelled when dropped.
struct CountBeside(tokio::task::JoinHandle<()>);

impl CountBeside {
    /// Waits until the count has signalled the start (within `count_wait`).
    async fn settled(&mut self) {
        let _ = (&mut self.0).await;
    }
}

impl Drop for CountBeside {
    fn drop(&mut self) {
        self.0.abort();
    }
}
