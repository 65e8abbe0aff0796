//! Long-running queries (docs/DESIGN.md §8): a snapshot's query runs in a task of its own; when it
//! outlives `pending_after`, the resource is saved `pending` and a finisher task renews its lease and
//! progress until the query ends, then marks it `ready` or `failed`.

use std::sync::Arc;
use std::time::Duration;

use dual_core::{
    ResourceId, ResourceRecord,
    column::infer_columns,
    consistency::Consistency,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::progress::QueryProgress;
use crate::snapshot::Written;
use crate::{DualResponseServer, ServerError};

/// The outcome of a snapshot writer task.
pub(crate) type WriterResult = Result<Option<Written>, ServerError>;

/// Aborts the writer task when dropped, unless handed over: a `create_response` whose caller went
/// away does not leave its query running.
pub(crate) struct AbortOnDrop(pub(crate) Option<JoinHandle<WriterResult>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// The failure a writer's error becomes.
pub(crate) fn failure_of(error: &ServerError) -> QueryFailure {
    let code = match error {
        ServerError::QueryTimeout { .. } => FailureCode::QueryTimeout,
        ServerError::Spool(_) | ServerError::Storage(_) | ServerError::QuotaExceeded { .. } => {
            FailureCode::StorageError
        }
        ServerError::Overloaded(_) => FailureCode::Overloaded,
        _ => FailureCode::QueryExecutionFailed,
    };
    QueryFailure::new(code, dual_core::error::Report::new(error).to_string())
}

/// The failure of a writer task that panicked.
fn panicked() -> QueryFailure {
    QueryFailure::new(
        FailureCode::QueryExecutionFailed,
        "the query task failed unexpectedly",
    )
}

impl DualResponseServer {
    /// Saves `record` (pending) and leaves its query running under a finisher task.
    pub(crate) async fn go_pending(
        &self,
        record: ResourceRecord,
        writer: JoinHandle<WriterResult>,
        progress: Arc<QueryProgress>,
        fixed_columns: bool,
    ) -> Result<(), ServerError> {
        let id = record.id;
        let inner = self.inner();
        if let Err(error) = inner.store.save(&record).await {
            writer.abort();
            self.delete_snapshot(id).await;
            return Err(error.into());
        }
        let writer_abort = writer.abort_handle();
        let server = self.clone();
        let pending = crate::metrics::query_pending();
        let finisher = tokio::spawn(async move {
            let _pending = pending;
            server.finish(record, writer, progress, fixed_columns).await;
        });
        inner.running.insert(id, writer_abort, finisher.abort_handle());
        if finisher.is_finished() {
            inner.running.remove(id);
        }
        tracing::info!(%id, "query still running: resource pending");
        Ok(())
    }

    /// Renews the lease and progress of a pending `record` every progress interval until its query
    /// ends, then stores the outcome. A record deleted meanwhile (on any instance) cancels the query.
    async fn finish(
        &self,
        mut record: ResourceRecord,
        mut writer: JoinHandle<WriterResult>,
        progress: Arc<QueryProgress>,
        fixed_columns: bool,
    ) {
        let id = record.id;
        let inner = self.inner();
        let mut tick = tokio::time::interval(inner.config.progress_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let joined = loop {
            tokio::select! {
                joined = &mut writer => break joined,
                _ = tick.tick() => {
                    record.total_count = progress.rows();
                    record.lease_expires_at = Some(self.lease_from_now());
                    match inner.store.update_query(&record).await {
                        Ok(true) => {}
                        Ok(false) => {
                            writer.abort();
                            tracing::info!(%id, "pending resource deleted: query cancelled");
                            self.end_query(id).await;
                            return;
                        }
                        Err(error) => tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "could not renew a pending query's lease"),
                    }
                }
            }
        };
        record.lease_expires_at = None;
        match joined {
            Ok(Ok(Some(written))) => {
                self.ready(&mut record, written, fixed_columns);
            }
            Ok(Ok(None)) => {
                // Over the snapshot cap: served live, counted and sampled as a live resource is.
                self.delete_snapshot(id).await;
                match self.live_outcome(&record).await {
                    Ok((total_count, sample)) => {
                        record.consistency = Consistency::Live;
                        self.ready(
                            &mut record,
                            Written {
                                sample,
                                rows: total_count,
                            },
                            fixed_columns,
                        );
                    }
                    Err(error) => fail(&mut record, failure_of(&error)),
                }
            }
            Ok(Err(error)) => fail(&mut record, failure_of(&error)),
            Err(_) => fail(&mut record, panicked()),
        }
        if record.status == ResourceStatus::Failed {
            self.delete_snapshot(id).await;
        }
        match inner.store.update_query(&record).await {
            Ok(true) => {
                tracing::info!(%id, status = %record.status, rows = record.total_count, "pending query ended")
            }
            Ok(false) => {
                tracing::info!(%id, "pending resource deleted as its query ended");
                self.delete_snapshot(id).await;
            }
            Err(error) => {
                // The lease lapses, and readers see the resource as interrupted.
                tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "could not store the outcome of a pending query");
            }
        }
        inner.running.remove(id);
    }

    /// Fills `record` with a finished query's result.
    fn ready(&self, record: &mut ResourceRecord, written: Written, fixed_columns: bool) {
        if !fixed_columns && record.columns.is_empty() {
            record.columns = infer_columns(&written.sample);
        }
        record.status = ResourceStatus::Ready;
        record.total_count = written.rows;
        record.sample = written.sample.into();
        record.failure = None;
        self.cut_sample(record);
    }

    /// Removes the snapshot of a cancelled query and forgets it.
    async fn end_query(&self, id: ResourceId) {
        self.delete_snapshot(id).await;
        self.inner().running.remove(id);
    }

    /// Now plus the query lease.
    pub(crate) fn lease_from_now(&self) -> time::OffsetDateTime {
        let lease = time::Duration::try_from(self.inner().config.query_lease).unwrap_or(time::Duration::ZERO);
        self.clock().now().saturating_add(lease)
    }

    /// The record of a pending resource whose lease lapsed (its instance died), turned `failed` with
    /// the retryable `query_interrupted`; the new state is stored, best effort.
    pub(crate) async fn interrupted(&self, mut record: ResourceRecord) -> ResourceRecord {
        fail(
            &mut record,
            QueryFailure::new(
                FailureCode::QueryInterrupted,
                "the server running the query stopped before it finished; run the query again",
            ),
        );
        record.lease_expires_at = None;
        if let Err(error) = self.inner().store.update_query(&record).await {
            tracing::warn!(id = %record.id, error = %dual_core::escape::log_error(&error), "could not store an interrupted query's state");
        }
        tracing::info!(id = %record.id, "pending query's lease lapsed: resource failed (query_interrupted)");
        record
    }
}

fn fail(record: &mut ResourceRecord, failure: QueryFailure) {
    record.status = ResourceStatus::Failed;
    record.failure = Some(failure);
}

/// Waits for the writer at most `pending_after` from the moment its query `started` (it has its
/// connection: waiting for one is not running); `None` when it has not finished in time.
pub(crate) async fn wait(
    writer: &mut JoinHandle<WriterResult>,
    started: oneshot::Receiver<()>,
    pending_after: Option<Duration>,
) -> Option<WriterResult> {
    let joined = match pending_after {
        None => writer.await,
        Some(wait) => {
            let running_for = async {
                // A signal dropped unsent counts as started.
                let _ = started.await;
                tokio::time::sleep(wait).await;
            };
            tokio::select! {
                biased;
                joined = writer => joined,
                () = running_for => return None,
            }
        }
    };
    Some(joined.unwrap_or_else(|_| {
        Err(ServerError::query_failed(crate::ExecutorError::new(
            "the query task failed unexpectedly",
        )))
    }))
}
