//! Writing a snapshot: one execution of a resource's query, every row to the spool, publishing what
//! it has done as it goes (docs/DESIGN.md §3, §8).

use std::sync::Arc;
use std::time::Duration;

use dual_core::column::infer_columns;
use dual_core::profile::Profile;
use dual_core::{ResourceId, Row};
use dual_spool::{Spool, SpoolWriter};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{oneshot, watch};

use crate::batch::decode_row;
use crate::owners::{BytesMeter, SnapshotCharge};
use crate::profiling::{Batch, Profiling};
use crate::progress::{End, Progress, failure_of};
use crate::scheduler::{GIVE_WAY, Slots, TimeBudget, WorkClass};
use crate::start::Started;
use crate::{ExecutorError, QueryExecutor, QueryStart, RowBatch, ServerError};

/// What one execution wrote: the sample and the row count.
#[derive(Debug)]
pub(crate) struct Written {
    /// The first `sample_size` rows.
    pub(crate) sample: Vec<Row>,
    /// Rows written: the resource's `total_count`.
    pub(crate) rows: u64,
    /// The column profile of every row, when the server computes profiles.
    pub(crate) profile: Option<Arc<Profile>>,
}

/// The outcome of a writer: `Ok(None)` when the rows passed the snapshot cap (nothing stays
/// spooled; the resource is served live).
pub(crate) type WriterResult = Result<Option<Written>, ServerError>;

/// The query a snapshot is written from, and where it goes.
pub(crate) struct SnapshotQuery {
    /// The executor of the query's kind.
    pub(crate) executor: Arc<dyn QueryExecutor>,
    /// The query's parameters.
    pub(crate) params: Value,
    /// The spool the rows go to.
    pub(crate) spool: Spool,
    /// The resource.
    pub(crate) id: ResourceId,
    /// The snapshot cap: past it, the writer stops and the resource is served live.
    pub(crate) max_bytes: u64,
    /// Rows kept as the sample.
    pub(crate) sample_size: usize,
    /// Whether the writer computes the column profile as it goes.
    pub(crate) profile: bool,
    /// Where the writer takes its scheduler slots: foreground until the caller is answered,
    /// background after.
    pub(crate) slots: Slots,
    /// Resolves when the caller was answered (the run was handed over): the writer goes on in the
    /// background. Dropped unsent when the run ends before it.
    pub(crate) answered: oneshot::Receiver<()>,
}

/// Runs `query` once through the executor's `stream` and writes every row to the snapshot of its
/// resource, publishing on `progress` when the query starts (and its consistent count, when the
/// executor gives one), the rows read, the sample and the segments stored, and at last how it
/// ended. Each row's bytes are charged to the resource's owner through `charge` (`QUOTA_EXCEEDED`,
/// `owner_bytes`, past the owner's quota), whose query slot is held until the write ends.
///
/// The writer runs in a foreground slot of the scheduler until its caller was answered, then waits
/// for a background slot (reading no rows meanwhile: the executor's stream keeps its database
/// snapshot and is not polled) and finishes there, yielding between batches. Past the query time
/// `limit`, counting the time it runs but not the time it waits for its background turn, the write
/// stops with `QUERY_TIMEOUT`. Dropping the future (a cancelled or timed-out query) drops the
/// executor's stream and the spool writer, which removes what it stored.
pub(crate) async fn write(
    query: SnapshotQuery,
    progress: Arc<watch::Sender<Progress>>,
    charge: SnapshotCharge,
    limit: Duration,
) -> WriterResult {
    let budget = TimeBudget::new(limit);
    let result = {
        let _running = crate::metrics::query_running();
        tokio::select! {
            result = write_rows(query, &progress, charge, &budget) => result,
            () = budget.spent() => Err(ServerError::QueryTimeout { limit }),
        }
    };
    let end = match &result {
        Ok(Some(written)) => End::Finished { rows: written.rows },
        Ok(None) => End::OverCap,
        Err(error) => End::Failed(failure_of(error)),
    };
    progress.send_modify(|p| p.end = Some(end));
    result
}

/// What the writer's loop takes next.
enum Next {
    /// The executor's start signal, with its consistent count and declared columns.
    Started(Started),
    /// A batch of rows, or the end of the stream.
    Batch(Option<Result<RowBatch, ExecutorError>>),
    /// The caller was answered: the rest is background work.
    Answered,
    /// The executor's query runs; its count comes later ([`QueryStart::running`]).
    Running,
}

async fn write_rows(
    query: SnapshotQuery,
    progress: &watch::Sender<Progress>,
    charge: SnapshotCharge,
    budget: &TimeBudget,
) -> WriterResult {
    let SnapshotQuery {
        executor,
        params,
        spool,
        id,
        max_bytes,
        sample_size,
        slots,
        answered,
        profile,
    } = query;
    let mut profiling = profile.then(Profiling::start);
    // The caller waits: the query runs in a foreground slot (waiting for it counts against the time
    // limit, and is not "running": the tool call is not told it is pending).
    let mut slot = slots.slot(WorkClass::Foreground).await;
    let mut answered = Some(answered);
    let mut class = WorkClass::Foreground;
    let SnapshotCharge { slot: _slot, meter } = charge;
    let mut out = Out {
        writer: spool.writer(id).await.map_err(ServerError::spool_write)?,
        meter,
        bytes: 0,
        rows: 0,
        max_bytes,
        total: None,
        answered: false,
    };
    let (mut start, started) = QueryStart::channel();
    let mut running = Some(start.watch_running());
    let pace = start.pace();
    let mut started = Some(started);
    let mut stream = executor.stream(params, start);
    let mut encoded = Vec::with_capacity(512);
    let mut segments = 0;
    loop {
        if class == WorkClass::Background {
            // Between batches: foreground work (a tool call computing its sample and count) goes
            // first, for at most `GIVE_WAY` a batch, the query paused and its time limit stopped
            // meanwhile; and the worker thread is never held for long.
            if slots.foreground_busy() {
                paused(budget, &pace, slots.foreground_idle(GIVE_WAY)).await;
            }
            tokio::task::yield_now().await;
        }
        let next = tokio::select! {
            biased;
            () = crate::signal::fired(&mut answered) => Next::Answered,
            signal = start_signal(&mut started) => Next::Started(signal),
            () = crate::signal::fired(&mut running) => Next::Running,
            batch = stream.next() => Next::Batch(batch),
        };
        let batch = match next {
            Next::Answered => {
                // The foreground slot is given back at once; the stream is not polled until the
                // background turn comes (its executor keeps the database snapshot meanwhile), and the
                // time limit stops while it waits.
                drop(slot);
                slot = paused(budget, &pace, slots.slot(WorkClass::Background)).await;
                class = WorkClass::Background;
                out.answered = true;
                continue;
            }
            Next::Running => {
                // The `pending_after` clock starts; the count, if any, comes with `Started`.
                progress.send_modify(|p| p.started = true);
                continue;
            }
            Next::Started(signal) => {
                started = None;
                running = None;
                out.total = signal.total;
                if let (Some(profiling), Some(columns)) = (&profiling, &signal.columns) {
                    profiling.declare(columns);
                }
                progress.send_modify(|p| {
                    p.started = true;
                    p.total = signal.total;
                    p.columns = signal.columns;
                });
                continue;
            }
            Next::Batch(None) => break,
            Next::Batch(Some(batch)) => batch.map_err(ServerError::query_failed)?,
        };
        let mut kept = Vec::new();
        match batch {
            RowBatch::Rows(batch) => {
                for row in &batch {
                    encoded.clear();
                    serde_json::to_writer(&mut encoded, &row)
                        .map_err(|e| ServerError::query_failed(ExecutorError::from_error(e)))?;
                    let sampled = out.rows < sample_size as u64;
                    if !out.append(&encoded).await? {
                        out.meter.release_all();
                        return Ok(None);
                    }
                    if sampled {
                        kept.push(row.clone());
                    }
                }
                if let Some(profiling) = &mut profiling {
                    profiling.send(Batch::Decoded(batch)).await;
                }
            }
            RowBatch::Json(batch) => {
                for row in batch.iter() {
                    if out.rows < sample_size as u64 {
                        kept.push(decode_row(&row).map_err(ServerError::query_failed)?);
                    }
                    if !out.append(&row).await? {
                        out.meter.release_all();
                        return Ok(None);
                    }
                }
                if let Some(profiling) = &mut profiling {
                    profiling.send(Batch::Json(batch)).await;
                }
            }
        }
        let stored = out.writer.stored();
        let grew = stored.segments().len() != segments;
        segments = stored.segments().len();
        let so_far = profiling
            .as_mut()
            .and_then(|profiling| profiling.so_far(&progress.borrow(), &kept));
        // The stored segments carry the profile so far, for readers on other instances.
        let stored = grew.then(|| {
            let stored = stored.clone();
            Arc::new(match profiling.as_ref().and_then(Profiling::annex) {
                Some(annex) => stored.with_annex(annex),
                None => stored,
            })
        });
        progress.send_modify(|p| {
            p.started = true;
            p.rows = out.rows;
            p.sample.extend(kept);
            if let Some(stored) = stored {
                p.stored = Some(stored);
            }
            if let Some(profile) = so_far {
                p.profile = Some(profile);
            }
        });
        if answered.is_some() {
            // The caller waits on this progress: its task (woken onto this worker) answers before the
            // next batch is read, rather than after every batch that is already there.
            tokio::task::yield_now().await;
        }
    }
    drop(stream);
    drop(slot);
    if out.total.is_some_and(|total| out.rows != total) {
        return Err(miscounted(out.total, out.rows));
    }
    let profile = match profiling {
        Some(profiling) => {
            let columns = {
                let p = progress.borrow();
                p.columns.clone().unwrap_or_else(|| infer_columns(&p.sample))
            };
            profiling.finish(&columns).await
        }
        None => None,
    };
    let finished = match &profile {
        Some(profile) => match serde_json::to_vec(profile.as_ref()) {
            Ok(annex) => out.writer.finish_with_annex(annex.into()).await,
            Err(_) => out.writer.finish().await,
        },
        None => out.writer.finish().await,
    };
    let manifest = match finished.map_err(ServerError::spool_write) {
        Ok(manifest) => manifest,
        Err(ServerError::QuotaExceeded { quota, limit }) if out.answered => {
            // As in `Out::append`: the announced result is served live.
            served_live(quota, limit, out.rows);
            out.meter.release_all();
            return Ok(None);
        }
        Err(error) => return Err(error),
    };
    tracing::debug!(
        rows = manifest.rows(),
        bytes = manifest.bytes(),
        segments = manifest.segments().len(),
        "snapshot written"
    );
    let sample = progress.borrow().sample.clone();
    if let Some(profile) = &profile {
        progress.send_modify(|p| p.profile = Some(Arc::clone(profile)));
    }
    Ok(Some(Written {
        sample,
        rows: manifest.rows(),
        profile,
    }))
}

/// Where the writer's loop puts each row, and what it has counted.
struct Out {
    writer: SpoolWriter,
    meter: BytesMeter,
    /// Bytes of the rows offered so far.
    bytes: u64,
    /// Rows written.
    rows: u64,
    max_bytes: u64,
    /// The executor's consistent count, once announced.
    total: Option<u64>,
    /// The caller was answered: from now on the result must not be lost.
    answered: bool,
}

impl Out {
    /// Charges and appends one encoded row: `Ok(false)`, writing nothing, when it passes the
    /// snapshot cap, or reaches a quota after the caller was answered (the resource is served live;
    /// the caller releases the charges); an error past the executor's count.
    async fn append(&mut self, row: &[u8]) -> Result<bool, ServerError> {
        self.bytes = self.bytes.saturating_add(row.len() as u64);
        if self.bytes > self.max_bytes {
            tracing::info!(
                rows = self.rows,
                max_bytes = self.max_bytes,
                "result larger than the snapshot cap: served live"
            );
            return Ok(false);
        }
        let stored = match self.meter.charge(row.len() as u64) {
            Ok(()) => self.writer.append(row).await.map_err(ServerError::spool_write),
            Err(error) => Err(error),
        };
        match stored {
            Ok(()) => {}
            // Once the caller was told about the result, a quota reached (the spool's bytes or free
            // space, the owner's bytes) must not lose it: it is served live, as past the cap.
            Err(ServerError::QuotaExceeded { quota, limit }) if self.answered => {
                served_live(quota, limit, self.rows);
                return Ok(false);
            }
            Err(error) => return Err(error),
        }
        self.rows += 1;
        if self.total.is_some_and(|total| self.rows > total) {
            return Err(miscounted(self.total, self.rows));
        }
        Ok(true)
    }
}

/// Waits for `turn` with the query paused (its [`Pace`](crate::Pace)) and its time limit stopped.
async fn paused<T>(budget: &TimeBudget, pace: &crate::Pace, turn: impl Future<Output = T>) -> T {
    budget.stop();
    let pause = pace.pause();
    let outcome = turn.await;
    drop(pause);
    budget.run();
    outcome
}

/// Logs that `quota` (of `limit`) was reached after the answer, `rows` rows in: the result is served
/// live instead of lost.
fn served_live(quota: crate::Quota, limit: u64, rows: u64) {
    tracing::warn!(
        rows,
        quota = quota.as_str(),
        limit,
        "a quota was reached after the answer: the result is served live"
    );
}

/// The executor's start signal; never, once it came (`started` is `None`). A signal dropped unsent
/// counts as started without a count.
async fn start_signal(started: &mut Option<oneshot::Receiver<Started>>) -> Started {
    match started {
        Some(receiver) => receiver.await.unwrap_or_default(),
        None => std::future::pending().await,
    }
}

/// The stream's rows did not match the count the executor gave: the result is refused, never
/// served short or long.
fn miscounted(total: Option<u64>, rows: u64) -> ServerError {
    let total = total.unwrap_or_default();
    ServerError::query_failed(ExecutorError::new(format!(
        "the executor counted {total} rows but its stream yielded {}{rows}; the result is not served",
        if rows > total { "at least " } else { "" }
    )))
}
