//! Snapshots: one execution of a resource's query written to the spool at creation, and the
//! pages and exports read back from it (docs/DESIGN.md §3).

use std::sync::Arc;

use bytes::Bytes;
use dual_core::{ResourceId, Row, Sort, budget::RowBudget, page::ValidPage, range::RowRange};
use dual_spool::{Spool, SpoolError};
use futures_util::StreamExt;
use serde_json::Value;

use crate::owners::SnapshotCharge;
use crate::progress::QueryProgress;
use crate::sorted::SortCache;
use crate::{BatchStream, ExecutorError, JsonRows, QueryExecutor, QueryStart, RowBatch, ServerError};

/// What one execution wrote: the sample and the row count.
#[derive(Debug)]
pub(crate) struct Written {
    /// The first `sample_size` rows.
    pub(crate) sample: Vec<Row>,
    /// Rows written: the resource's `total_count`.
    pub(crate) rows: u64,
}

/// The query a snapshot runs: its executor, its parameters, and the signal the executor gives when it
/// starts running (`QueryExecutor::stream_with_start`).
pub(crate) struct SnapshotQuery {
    /// The executor of the query's kind.
    pub(crate) executor: Arc<dyn QueryExecutor>,
    /// The query's parameters.
    pub(crate) params: Value,
    /// Signalled once the query runs (it has its connection).
    pub(crate) start: QueryStart,
}

/// Runs `query` once through `executor.stream_with_start` (`start` tells when it runs) and writes every row to the snapshot of `id`,
/// counting rows and keeping the sample in `progress` as they come. `Ok(None)` when the rows pass
/// `max_bytes`: the writer is dropped, which removes what it stored, and the caller serves the
/// resource live. Dropping the future (a cancelled or timed-out query) drops the executor's stream.
/// Each row's bytes are charged to the resource's owner through `charge` (`QUOTA_EXCEEDED`,
/// `owner_bytes`, past the owner's quota), whose query slot is held until the write ends.
pub(crate) async fn write(
    spool: Spool,
    query: SnapshotQuery,
    id: ResourceId,
    max_bytes: u64,
    progress: Arc<QueryProgress>,
    charge: SnapshotCharge,
) -> Result<Option<Written>, ServerError> {
    let SnapshotQuery {
        executor,
        params,
        start,
    } = query;
    let SnapshotCharge {
        slot: _slot,
        mut meter,
    } = charge;
    let mut writer = spool.writer(id).await.map_err(ServerError::spool_write)?;
    let mut stream = executor.stream_with_start(params, None, start);
    let mut bytes = 0u64;
    let mut encoded = Vec::with_capacity(512);
    while let Some(batch) = stream.next().await {
        for row in batch.map_err(ServerError::query_failed)? {
            encoded.clear();
            serde_json::to_writer(&mut encoded, &row)
                .map_err(|e| ServerError::query_failed(ExecutorError::from_error(e)))?;
            bytes = bytes.saturating_add(encoded.len() as u64);
            if bytes > max_bytes {
                tracing::info!(
                    rows = writer.rows(),
                    max_bytes,
                    "result larger than the snapshot cap: served live"
                );
                meter.release_all();
                return Ok(None);
            }
            meter.charge(encoded.len() as u64)?;
            writer.append(&encoded).await.map_err(ServerError::spool_write)?;
            progress.push(&row);
        }
    }
    drop(stream);
    let manifest = writer.finish().await.map_err(ServerError::spool_write)?;
    tracing::debug!(
        rows = manifest.rows(),
        bytes = manifest.bytes(),
        segments = manifest.segments().len(),
        "snapshot written"
    );
    Ok(Some(Written {
        sample: progress.take_sample(),
        rows: manifest.rows(),
    }))
}

/// The rows of `page` of the snapshot of `id` in its sort order (snapshot order without), as
/// stored (each the compact JSON of one row), cut to the rows `budget` admits. Reading stops at the
/// first row the budget refuses, so memory holds the page's rows and the segments they share, not
/// `limit` rows.
pub(crate) async fn page(
    spool: &Spool,
    sorts: &SortCache,
    id: ResourceId,
    page: &ValidPage,
    budget: &mut RowBudget,
) -> Result<Vec<Bytes>, ServerError> {
    let mut out = Vec::new();
    match page.sort.as_ref() {
        None => {
            let mut cursor = spool
                .cursor(id, page.offset, Some(page.fetch_limit()))
                .await
                .map_err(ServerError::spool)?;
            while let Some(run) = cursor.next().await.map_err(ServerError::spool)? {
                for row in run.iter() {
                    if !budget.admit(row.len()) {
                        return Ok(out);
                    }
                    out.push(row);
                }
            }
        }
        Some(sort) => {
            let order = sorts.order(spool, id, sort).await?;
            let limit = usize::try_from(page.fetch_limit()).unwrap_or(usize::MAX);
            let start = usize::try_from(page.offset)
                .unwrap_or(usize::MAX)
                .min(order.len());
            let end = start.saturating_add(limit).min(order.len());
            let mut at = start;
            while at < end {
                let rows = gather(spool, id, &order[at..end], budget.remaining()).await?;
                at += rows.len();
                for row in rows {
                    if !budget.admit(row.len()) {
                        return Ok(out);
                    }
                    out.push(row);
                }
            }
        }
    }
    Ok(out)
}

/// The rows at snapshot indices `indices`, in that order, as stored: the longest leading run of
/// them within `max_bytes` (each row counting its bytes plus one), and always the first. Reads the
/// segments the indices touch one at a time, each once, in the order of the first index each holds,
/// and stops once the rows gathered pass `max_bytes`; rows are copied out of their segment, so memory
/// is the rows gathered plus one segment, however scattered the indices.
async fn gather(
    spool: &Spool,
    id: ResourceId,
    indices: &[u32],
    max_bytes: usize,
) -> Result<Vec<Bytes>, ServerError> {
    let manifest = spool.manifest(id).await.map_err(ServerError::spool)?;
    // (segment, position in `indices`) pairs, grouped by segment.
    let mut wanted: Vec<(usize, usize)> = Vec::with_capacity(indices.len());
    for (at, &index) in indices.iter().enumerate() {
        let segment = manifest
            .locate(u64::from(index))
            .ok_or(ServerError::spool(SpoolError::Corrupt {
                id,
                reason: "sorted order points past the snapshot",
            }))?;
        wanted.push((segment, at));
    }
    wanted.sort_unstable();
    let mut groups: Vec<&[(usize, usize)]> = wanted.chunk_by(|a, b| a.0 == b.0).collect();
    // Each group's first pair holds its smallest position: read the segment of index 0 first.
    groups.sort_unstable_by_key(|group| group.first().map_or(usize::MAX, |&(_, at)| at));
    let mut out: Vec<Option<Bytes>> = vec![None; indices.len()];
    let mut held = 0usize;
    for group in groups {
        let Some(&(segment, _)) = group.first() else {
            continue;
        };
        let info = manifest.segments()[segment];
        let limit = usize::try_from(info.rows).unwrap_or(usize::MAX);
        let rows = spool
            .read_rows(id, info.first_row, limit)
            .await
            .map_err(ServerError::spool)?;
        let run = rows.runs().first();
        for &(_, at) in group {
            let within = u64::from(indices[at]) - info.first_row;
            let bytes = run
                .and_then(|run| run.row(usize::try_from(within).unwrap_or(usize::MAX)))
                .ok_or(ServerError::ResourceNotFound)?;
            held = held.saturating_add(bytes.len() + 1);
            out[at] = Some(Bytes::copy_from_slice(&bytes));
        }
        if held > max_bytes {
            break;
        }
    }
    let mut used = 0usize;
    Ok(out
        .into_iter()
        .map_while(|row| row)
        .enumerate()
        .take_while(|(i, row)| {
            used = used.saturating_add(row.len() + 1);
            *i == 0 || used <= max_bytes
        })
        .map(|(_, row)| row)
        .collect())
}

/// Most rows of a batch of a sorted export (the segments they touch are read one at a time)…
const SORTED_EXPORT_BATCH: usize = 1_000;
/// …and most bytes, beyond its first row: a sorted export holds one such batch and one segment.
pub(crate) const SORTED_EXPORT_BATCH_BYTES: usize = 1 << 20;

/// The rows of `range` of the snapshot of `id`, in `sort` order, as a stream of batches: one
/// segment per batch unsorted, at most [`SORTED_EXPORT_BATCH`] rows and
/// [`SORTED_EXPORT_BATCH_BYTES`] per batch sorted. Opening checks the
/// snapshot (an outage is an error here, before any byte); later failures are stream items.
pub(crate) async fn export(
    spool: &Spool,
    sorts: &SortCache,
    id: ResourceId,
    sort: Option<Sort>,
    range: RowRange,
) -> Result<BatchStream, ServerError> {
    let Some(sort) = sort else {
        let cursor = spool
            .cursor(id, range.offset, range.limit)
            .await
            .map_err(ServerError::spool)?;
        return Ok(Box::pin(futures_util::stream::unfold(
            Some(cursor),
            move |cursor| async move {
                let mut cursor = cursor?;
                match cursor.next().await {
                    Ok(None) => None,
                    Ok(Some(run)) => Some((Ok(RowBatch::Json(JsonRows::run(run))), Some(cursor))),
                    Err(error) => Some((Err(ExecutorError::from_error(error)), None)),
                }
            },
        )));
    };
    let order = sorts.order(spool, id, &sort).await?;
    let start = usize::try_from(range.offset)
        .unwrap_or(usize::MAX)
        .min(order.len());
    let end = range
        .limit
        .map_or(order.len(), |limit| {
            start.saturating_add(usize::try_from(limit).unwrap_or(usize::MAX))
        })
        .min(order.len());
    let spool = spool.clone();
    Ok(Box::pin(futures_util::stream::unfold(Some(start), move |next| {
        let spool = spool.clone();
        let order = Arc::clone(&order);
        async move {
            let from = next?;
            if from >= end {
                return None;
            }
            let to = from.saturating_add(SORTED_EXPORT_BATCH).min(end);
            match gather(&spool, id, &order[from..to], SORTED_EXPORT_BATCH_BYTES).await {
                Ok(rows) => {
                    let next = from + rows.len();
                    Some((Ok(RowBatch::Json(JsonRows::list(rows))), Some(next)))
                }
                Err(error) => Some((Err(ExecutorError::from_error(error)), None)),
            }
        }
    })))
}
