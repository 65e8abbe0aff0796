//! Where a resource's rows come from, chosen once per record: its snapshot (finished, or still
//! being written) or, for a live resource, its query executed again. A source serves pages and
//! exports, and discards what it holds when the resource is deleted (docs/DESIGN.md §3, §8).

mod follow;
mod profiled;
mod remote;
mod spooled;
mod spooling;

use std::sync::Arc;

use dual_core::{
    ResourceRecord, Sort, budget::RowBudget, consistency::Consistency, page::ValidPage, range::RowRange,
};
use dual_spool::Spool;

use crate::encoded::{EncodedPage, cut};
use crate::inner::Inner;
use crate::live::live_paging;
use crate::{QueryExecutor, RowStream, RowWindow, ServerError, take_rows};

use follow::{Watch, follow};
use remote::Remote;
pub(crate) use spooling::spooled_rows;

/// The source of one record's rows.
pub(crate) enum Source<'a> {
    /// The snapshot written at creation.
    Snapshot {
        inner: &'a Inner,
        spool: &'a Spool,
        record: &'a ResourceRecord,
    },
    /// The query, executed again for every read.
    Live {
        inner: &'a Inner,
        record: &'a ResourceRecord,
    },
}

impl<'a> Source<'a> {
    /// The source of `record`: its snapshot when it has one and this server has a spool, else live.
    pub(crate) fn of(inner: &'a Inner, record: &'a ResourceRecord) -> Self {
        match (&inner.spool, record.consistency) {
            (Some(spool), Consistency::Snapshot) => Self::Snapshot { inner, spool, record },
            _ => Self::Live { inner, record },
        }
    }

    /// Whether the rows come from a snapshot.
    pub(crate) fn is_snapshot(&self) -> bool {
        matches!(self, Self::Snapshot { .. })
    }

    /// The rows of `page` within `max_bytes`, with `has_next` exact: read from the snapshot (rows
    /// still being written are waited for, at most `spool_wait`), or fetched from the executor.
    pub(crate) async fn page(&self, page: &ValidPage, max_bytes: usize) -> Result<EncodedPage, ServerError> {
        let mut budget = RowBudget::for_page(page, max_bytes);
        match *self {
            Self::Snapshot { inner, spool, record } => {
                let stored = if record.is_spooling() {
                    let need = match page.sort {
                        None => Some(
                            page.offset
                                .saturating_add(page.fetch_limit())
                                .min(record.total_count),
                        ),
                        Some(_) => None,
                    };
                    spooling::readable(inner, spool, record, need).await?
                } else {
                    None
                };
                let rows = spooled::page(
                    spool,
                    &inner.sorts,
                    record.id,
                    stored.as_deref(),
                    page,
                    &mut budget,
                )
                .await?;
                Ok(EncodedPage::json(rows, cut(&budget, page, record.total_count)))
            }
            Self::Live { inner, record } => {
                let executor = inner.registry.get(&record.query.kind)?;
                let rows = live_paging(executor)?
                    .fetch(
                        &record.query.params,
                        RowWindow::new(page.offset, page.fetch_limit())
                            .sorted(page.sort.as_ref())
                            .capped(budget.remaining()),
                    )
                    .await
                    .map_err(ServerError::query_failed)?;
                Ok(EncodedPage::decoded(rows, page, budget, record.total_count))
            }
        }
    }

    /// The rows of `range` in `sort` order as a stream of batches: a snapshot's as stored (a
    /// snapshot still being written is followed as its writer writes, here or on another instance;
    /// sorted, it is waited for at most `spool_wait`), a live resource's from the executor's `stream_range`, cut
    /// after `range.limit` rows.
    pub(crate) async fn export(&self, sort: Option<Sort>, range: RowRange) -> Result<RowStream, ServerError> {
        match *self {
            Self::Snapshot { inner, spool, record } => {
                if record.is_spooling() {
                    if sort.is_none() {
                        let watch = match inner.runs.progress(record.id) {
                            Some(progress) => Watch::Local(progress),
                            None => Watch::Remote(Remote::new(inner, spool, record.id)),
                        };
                        return Ok(follow(spool.clone(), record, watch, range));
                    }
                    spooling::readable(inner, spool, record, None).await?;
                }
                spooled::export(spool, &inner.sorts, record.id, sort, range).await
            }
            Self::Live { inner, record } => {
                let executor: Arc<dyn QueryExecutor> = Arc::clone(inner.registry.get(&record.query.kind)?);
                Ok(take_rows(
                    executor.stream_range(record.query.params.clone(), sort, range),
                    range.limit,
                ))
            }
        }
    }

    /// The column profile of the rows: the snapshot's (complete, or so far while it is written);
    /// a live resource has none (`NO_PROFILE`).
    pub(crate) async fn profile(&self) -> Result<Arc<dual_core::profile::Profile>, ServerError> {
        match *self {
            Self::Snapshot { inner, spool, record } => profiled::profile(inner, spool, record).await,
            Self::Live { .. } => Err(ServerError::NoProfile {
                reason: "the result is live (over the snapshot size cap, or snapshots are off): its rows are not \
                         stored, so nothing profiled them",
            }),
        }
    }

    /// Discards what the source holds for the resource before its record is deleted: a run of this
    /// instance stops now (one elsewhere stops at its next lease renewal, which finds the record
    /// gone), and the snapshot is removed.
    ///
    /// # Errors
    /// `STORAGE_ERROR` when the spool could not remove the snapshot: the resource stays in place, to
    /// be deleted again.
    pub(crate) async fn discard(&self) -> Result<(), ServerError> {
        match *self {
            Self::Snapshot { inner, spool, record } => {
                inner.runs.cancel(record.id);
                spool.delete(record.id).await.map_err(ServerError::spool)?;
                inner.sorts.forget(record.id);
                Ok(())
            }
            Self::Live { inner, record } => {
                inner.runs.cancel(record.id);
                Ok(())
            }
        }
    }
}
