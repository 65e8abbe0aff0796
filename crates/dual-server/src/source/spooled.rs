//! Reading a finished snapshot (or the stored part of one still being written): pages and exports,
//! sorted through the cached sorted order of a key (docs/DESIGN.md §3).

use std::sync::Arc;

use bytes::Bytes;
use dual_core::{ResourceId, Sort, budget::RowBudget, page::ValidPage, range::RowRange};
use dual_spool::{Manifest, Spool, SpoolError};

use crate::sorted::SortCache;
use crate::stored_rows::StoredRows;
use crate::{ExecutorError, JsonRows, RowBatch, RowStream, ServerError};

/// The rows of `page` of the snapshot of `id` in its sort order (snapshot order without), as
/// stored (each the compact JSON of one row), cut to the rows `budget` admits. Reading stops at the
/// first row the budget refuses, so memory holds the page's rows and the segments they share, not
/// `limit` rows; an unsorted page of segments the spool keeps in memory holds slices of them, no
/// copy. With `stored` (the segments of a snapshot still being written), an unsorted page
/// reads those; a sorted one needs the finished snapshot.
pub(crate) async fn page(
    spool: &Spool,
    sorts: &SortCache,
    id: ResourceId,
    stored: Option<&Manifest>,
    page: &ValidPage,
    budget: &mut RowBudget,
) -> Result<StoredRows, ServerError> {
    let mut out = StoredRows::default();
    match page.sort.as_ref() {
        None => {
            let mut cursor = match stored {
                Some(manifest) => spool.cursor_in(manifest.clone(), page.offset, Some(page.fetch_limit())),
                None => spool
                    .cursor(id, page.offset, Some(page.fetch_limit()))
                    .await
                    .map_err(ServerError::spool)?,
            };
            while let Some(run) = cursor.next().await.map_err(ServerError::spool)? {
                // The rows the limit allows in one step when they fit (the run's length is one
                // subtraction), then one by one: at most one more row when the limit is reached.
                let head = run
                    .len()
                    .min(usize::try_from(budget.rows_left()).unwrap_or(usize::MAX));
                let bulk = if budget.admit_joined(head as u64, run.head_byte_len(head)) {
                    head
                } else {
                    0
                };
                let admitted = bulk
                    + run
                        .slices_from(bulk)
                        .take_while(|row| budget.admit(row.len()))
                        .count();
                let whole = admitted == run.len();
                out.push_run(run.head(admitted));
                if !whole {
                    return Ok(out);
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
                    out.push(&row);
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
) -> Result<RowStream, ServerError> {
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
