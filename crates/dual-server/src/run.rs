//! A run: one execution of a resource's query into its snapshot, the one owner of its writer task,
//! its progress, its lease and its state changes (docs/DESIGN.md §8).
//!
//! `create_response` starts a run and waits for its [`Answer`]: the end of the write, the sample
//! with the executor's consistent count (the rest still being written), or `pending_after` without
//! a count. Unless the run ended, it then saves the record and hands the run over: a task of its own
//! renews the lease and the progress in the store every progress interval, and at the end stores the
//! outcome (`ready`, or `failed` with the reason: never a short result). The progress is published
//! locally on a watch channel (`Runs`), which readers on this instance follow; other instances read
//! the store.

use std::sync::Arc;
use std::time::Duration;

use dual_core::{
    Column, ResourceRecord, Row,
    column::infer_columns,
    consistency::Consistency,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use dual_spool::Manifest;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::inner::Inner;
use crate::owners::SnapshotCharge;
use crate::progress::{Progress, failure_of};
use crate::renewal::{Renewal, Stopped, marked_failed, renew, renewing};
use crate::sample::cut_sample;
use crate::scheduler::{Reservation, WorkClass};
use crate::snapshot::{self, SnapshotQuery, WriterResult, Written};
use crate::{ExecutorError, ServerError, live};

/// What `create_response` answers from a run.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The writer ended first: every row written, the cap passed, or a failure.
    Ended(WriterResult),
    /// The exact total (the executor's consistent count) and the sample, while the rest is still
    /// being written (`spooled` rows of it readable so far).
    Counted {
        total: u64,
        sample: Vec<Row>,
        spooled: u64,
    },
    /// `pending_after` passed without a count: the rows so far.
    Pending { rows: u64, sample: Vec<Row> },
}

/// A run not yet handed over: dropping it (a `create_response` whose caller went away, or that
/// failed to save its record) stops the query and removes what it wrote.
#[derive(Debug)]
pub(crate) struct Run {
    writer: Option<JoinHandle<WriterResult>>,
    progress: watch::Receiver<Progress>,
    /// Shared with the writer; the driver of a handed-over run says through it when the outcome is
    /// stored.
    publish: Arc<watch::Sender<Progress>>,
    sample_size: usize,
    /// The run's background place, held until its outcome is stored.
    place: Option<Reservation>,
    /// Tells the writer that its caller was answered (it goes on in the background).
    answered: Option<oneshot::Sender<()>>,
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            writer.abort();
        }
    }
}

/// What a handed-over run needs to bring its record to its outcome.
pub(crate) struct RunContext {
    pub(crate) inner: Arc<Inner>,
    /// Columns given or declared up front stay; inferred ones are inferred again from the final
    /// sample.
    pub(crate) fixed_columns: bool,
}

impl Run {
    /// Starts writing the snapshot of `query` in a task of its own, under the query time `limit`,
    /// holding the background `place` reserved for it.
    pub(crate) fn start(
        query: SnapshotQuery,
        charge: SnapshotCharge,
        limit: Duration,
        place: Reservation,
        answered: oneshot::Sender<()>,
    ) -> Self {
        let (publish, progress) = watch::channel(Progress::default());
        let publish = Arc::new(publish);
        let sample_size = query.sample_size;
        let writer = tokio::spawn(snapshot::write(query, Arc::clone(&publish), charge, limit));
        Self {
            writer: Some(writer),
            progress,
            publish,
            sample_size,
            place: Some(place),
            answered: Some(answered),
        }
    }

    /// Waits until `create_response` can answer: the write ended; or the executor's count is known
    /// and the sample full while rows remain; or `pending_after` passed since the query started (it
    /// holds its connection) — `Counted` when the count is known by then, else `Pending`.
    pub(crate) async fn answer(&mut self, pending_after: Option<Duration>) -> Answer {
        let Self {
            writer,
            progress,
            sample_size,
            ..
        } = self;
        let Some(writer) = writer.as_mut() else {
            return Answer::Ended(Err(ServerError::ResourceNotFound));
        };
        let mut deadline = None;
        loop {
            {
                let p = progress.borrow_and_update();
                if deadline.is_none()
                    && p.started
                    && let Some(wait) = pending_after
                {
                    deadline = Some(Box::pin(tokio::time::sleep(wait)));
                }
                if p.end.is_none()
                    && let Some(total) = p.total
                    && p.rows < total
                    && p.sample.len() >= *sample_size
                {
                    return counted(&p, total);
                }
            }
            let timer = async {
                match deadline.as_mut() {
                    Some(deadline) => deadline.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                joined = &mut *writer => return Answer::Ended(joined.unwrap_or_else(|_| Err(panicked_error()))),
                changed = progress.changed() => {
                    if changed.is_err() {
                        // The writer dropped its sender: it ended; its result follows.
                        return Answer::Ended((&mut *writer).await.unwrap_or_else(|_| Err(panicked_error())));
                    }
                }
                () = timer => {
                    let p = progress.borrow();
                    return match p.total {
                        Some(total) if p.end.is_none() => counted(&p, total),
                        _ => Answer::Pending { rows: p.rows, sample: p.sample.clone() },
                    };
                }
            }
        }
    }

    /// The columns the executor declared with its start signal, if it did.
    pub(crate) fn declared_columns(&self) -> Option<Vec<Column>> {
        self.progress.borrow().columns.clone()
    }

    /// Hands the run of `record` (saved, `pending` or spooling) over to a task of its own, which
    /// this instance's `Runs` can cancel and readers follow.
    pub(crate) fn hand_over(mut self, record: ResourceRecord, context: RunContext) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        let id = record.id;
        let writer_abort = writer.abort_handle();
        let progress = self.progress.clone();
        let publish = Arc::clone(&self.publish);
        let inner = Arc::clone(&context.inner);
        let pending = crate::metrics::query_pending();
        if let Some(answered) = self.answered.take() {
            // The writer may have ended meanwhile: then nobody listens, and nothing is left to do.
            let _ = answered.send(());
        }
        let place = self.place.take();
        let (interrupt, interrupted) = oneshot::channel();
        let driver = tokio::spawn(async move {
            let _pending = pending;
            let run = Driven {
                writer,
                progress,
                place,
                interrupted: Some(interrupted),
            };
            drive(record, run, context).await;
            publish.send_modify(|p| p.settled = true);
        });
        inner.runs.insert(
            id,
            writer_abort,
            driver.abort_handle(),
            self.progress.clone(),
            interrupt,
        );
        if driver.is_finished() {
            inner.runs.remove(id);
        }
    }
}

fn counted(progress: &Progress, total: u64) -> Answer {
    Answer::Counted {
        total,
        sample: progress.sample.clone(),
        spooled: progress.spooled(),
    }
}

fn panicked_error() -> ServerError {
    ServerError::query_failed(ExecutorError::new("the query task failed unexpectedly"))
}

/// What the driver of a handed-over run holds.
struct Driven {
    writer: JoinHandle<WriterResult>,
    progress: watch::Receiver<Progress>,
    /// The run's background place, given back when the outcome is stored.
    place: Option<Reservation>,
    /// Sent at the end of a shutdown's grace: stop and store the run as interrupted.
    interrupted: Option<oneshot::Receiver<()>>,
}

/// How the writer of a handed-over run ended.
enum Ending {
    /// It ended by itself (or panicked).
    Joined(Result<WriterResult, tokio::task::JoinError>),
    /// The shutdown's grace passed first: it was stopped.
    Interrupted,
}

/// Renews the lease and progress of `record` every progress interval until the writer ends, then
/// stores the outcome. A record deleted meanwhile (on any instance) cancels the query; an interrupt
/// (the end of a shutdown's grace) stops it and stores it failed with `query_interrupted`.
async fn drive(mut record: ResourceRecord, run: Driven, context: RunContext) {
    let Driven {
        mut writer,
        progress,
        place,
        mut interrupted,
    } = run;
    let RunContext { inner, fixed_columns } = context;
    let id = record.id;
    let mut tick = tokio::time::interval(inner.config.progress_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    // The rows of the last partial manifest published.
    let mut published: Option<u64> = None;
    let ending = loop {
        tokio::select! {
            joined = &mut writer => break Ending::Joined(joined),
            () = crate::signal::fired(&mut interrupted) => {
                writer.abort();
                break Ending::Interrupted;
            }
            _ = tick.tick() => {
                let stored = {
                    let p = progress.borrow();
                    if record.status == ResourceStatus::Pending {
                        record.total_count = p.rows;
                        None
                    } else {
                        p.stored.clone()
                    }
                };
                if let Some(stored) = stored
                    && published.is_none_or(|rows| rows < stored.rows())
                {
                    // The partial manifest goes first: the rows the record counts are readable
                    // everywhere.
                    match publish_partial(&inner, &stored).await {
                        Ok(()) => {
                            published = Some(stored.rows());
                            record.spooled_rows = Some(stored.rows());
                        }
                        Err(error) => tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "could not publish the rows spooled so far"),
                    }
                }
                match renew(&inner, &mut record).await {
                    Renewal::Renewed => {}
                    Renewal::MarkedFailed => {
                        writer.abort();
                        tracing::warn!(%id, "the lease lapsed and the resource was marked failed: query stopped");
                        inner.delete_snapshot(id).await;
                        inner.runs.remove(id);
                        return;
                    }
                    Renewal::Deleted => {
                        writer.abort();
                        tracing::info!(%id, "running resource deleted: query cancelled");
                        inner.delete_snapshot(id).await;
                        inner.runs.remove(id);
                        return;
                    }
                }
            }
        }
    };
    record.lease_expires_at = None;
    record.spooled_rows = None;
    match ending {
        Ending::Interrupted => {
            tracing::warn!(%id, "shutdown grace over before the result was written: marked interrupted");
            fail(&mut record, crate::inner::interrupted_failure());
        }
        Ending::Joined(Ok(Ok(Some(written)))) => ready(&inner, &mut record, written, fixed_columns),
        // Over the snapshot cap, or a quota reached (the result was announced: it must not be
        // lost): served live, counted and sampled as a live resource is.
        Ending::Joined(Ok(Ok(None) | Err(ServerError::QuotaExceeded { .. }))) => {
            inner.delete_snapshot(id).await;
            let sample_size = inner.config.default_sample_size.max(record.sample.len() as u64);
            let limit = inner.config.query_time_limit;
            let outcome = match inner.registry.get(&record.query.kind) {
                Ok(executor) => {
                    let params = record.query.params.clone();
                    let recount = async {
                        // Background work: the caller was answered.
                        let _slot = match &place {
                            Some(place) => Some(place.slot(WorkClass::Background).await),
                            None => None,
                        };
                        live::count_and_sample(executor, &params, sample_size, limit).await
                    };
                    // The recount may take until the time limit: the lease is renewed meanwhile.
                    match renewing(&inner, &mut record, &mut interrupted, recount).await {
                        Ok(counted) => counted.map_err(|e| failure_of(&e)),
                        Err(Stopped::Interrupted) => Err(crate::inner::interrupted_failure()),
                        Err(Stopped::Gone) => {
                            tracing::info!(%id, "resource deleted or failed while recounted: recount stopped");
                            inner.runs.remove(id);
                            return;
                        }
                    }
                }
                Err(error) => Err(failure_of(&error)),
            };
            match outcome {
                Ok((rows, sample)) => {
                    record.consistency = Consistency::Live;
                    // Live past the cap: no snapshot, so no profile.
                    let written = Written {
                        sample,
                        rows,
                        profile: None,
                    };
                    ready(&inner, &mut record, written, fixed_columns);
                }
                Err(failure) => fail(&mut record, failure),
            }
        }
        Ending::Joined(Ok(Err(error))) => fail(&mut record, failure_of(&error)),
        Ending::Joined(Err(_)) => fail(
            &mut record,
            QueryFailure::new(
                FailureCode::QueryExecutionFailed,
                "the query task failed unexpectedly",
            ),
        ),
    }
    if record.status != ResourceStatus::Failed && marked_failed(&inner, id).await {
        // Its lease lapsed while this instance was busy, and a reader turned it failed: a state
        // never goes back from failed.
        tracing::warn!(%id, "the resource was marked failed while its query ran: it stays failed");
        record.status = ResourceStatus::Failed;
        inner.delete_snapshot(id).await;
        inner.runs.remove(id);
        return;
    }
    if record.status == ResourceStatus::Failed {
        inner.delete_snapshot(id).await;
    }
    match inner.store.update_query(&record).await {
        Ok(true) => {
            tracing::info!(%id, status = %record.status, rows = record.total_count, "running query ended");
        }
        Ok(false) => {
            tracing::info!(%id, "running resource deleted as its query ended");
            inner.delete_snapshot(id).await;
        }
        Err(error) => {
            // The lease lapses, and readers see the resource as interrupted.
            tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "could not store the outcome of a running query");
        }
    }
    inner.runs.remove(id);
}

/// Publishes the segments stored so far in a shared spool, for readers on other instances.
async fn publish_partial(inner: &Inner, stored: &Manifest) -> Result<(), ServerError> {
    match &inner.spool {
        Some(spool) => spool.publish_partial(stored).await.map_err(ServerError::spool),
        None => Ok(()),
    }
}

/// Fills `record` with a finished query's result.
fn ready(inner: &Inner, record: &mut ResourceRecord, written: Written, fixed_columns: bool) {
    if !fixed_columns && (record.columns.is_empty() || record.sample.len() < written.sample.len()) {
        record.columns = infer_columns(&written.sample);
    }
    record.status = ResourceStatus::Ready;
    record.total_count = written.rows;
    record.sample = written.sample.into();
    record.failure = None;
    cut_sample(&inner.config, record);
}

fn fail(record: &mut ResourceRecord, failure: QueryFailure) {
    record.status = ResourceStatus::Failed;
    record.failure = Some(failure);
}
