//! `create_response`: run the query, keep the sample and the count, store the resource — waiting for
//! a snapshot's query at most `pending_after` (docs/DESIGN.md §8).

use std::sync::Arc;

use dual_core::{
    Column, DualResponse, ResourceId, ResourceRecord, Row, column::infer_columns, consistency::Consistency,
    status::ResourceStatus,
};
use serde_json::Value;
use time::OffsetDateTime;
use tracing::Instrument;

use crate::config::MAX_SAMPLE_SIZE;
use crate::owners::SnapshotCharge;
use crate::pending::{self, AbortOnDrop};
use crate::progress::QueryProgress;
use crate::server::DEFAULT_RESOURCE_NAME;
use crate::{CreateResponse, DualResponseServer, QueryExecutor, QueryStart, ServerError, snapshot};

impl DualResponseServer {
    /// Runs the query, stores the resource and returns the dual response.
    ///
    /// With snapshots (the default), one pass of the executor's `stream` writes every row to the
    /// spool, keeps the sample and counts the rows, so `total_count` is exactly the rows that pages
    /// and exports serve (`consistency: snapshot`). A result over the snapshot cap, or a server
    /// without snapshots, runs `count` and the sample `fetch` concurrently instead and is served by
    /// re-executing the query (`consistency: live`).
    ///
    /// # Errors
    /// `UNKNOWN_QUERY_KIND`, `INVALID_REQUEST` (sample size or expiration out of range),
    /// `COUNT_EXECUTION_FAILED` / `QUERY_EXECUTION_FAILED` carrying the executor's message, or
    /// `STORAGE_ERROR` (the store, or the spool).
    pub async fn create_response(&self, mut request: CreateResponse) -> Result<DualResponse, ServerError> {
        let span = tracing::info_span!("dual_create", kind = %dual_core::escape::log_safe(&request.query.kind), id = tracing::field::Empty);
        async move {
            let inner = self.inner();
            let executor = inner.registry.get(&request.query.kind)?;
            let sample_size = request.sample_size.unwrap_or(inner.config.default_sample_size);
            if !(1..=MAX_SAMPLE_SIZE).contains(&sample_size) {
                return Err(invalid("sample_size", "an integer between 1 and 1000"));
            }
            let expiration = request.expiration.unwrap_or(inner.config.default_expiration);
            let expiration = time::Duration::try_from(expiration)
                .ok()
                .filter(|d| d.is_positive())
                .ok_or_else(|| invalid("expiration", "a positive duration"))?;
            let now = inner.clock.now();
            if let Some(max) = inner.config.max_resources
                && inner.store.live_count(now).await? >= max
            {
                return Err(ServerError::TooManyResources { max });
            }
            let id = ResourceId::new();
            tracing::Span::current().record("id", tracing::field::display(id));
            let (admission, slot) =
                inner
                    .owners
                    .admit(request.owner.as_deref(), id, now.checked_add(expiration), now)?;
            let params = &request.query.params;
            let limit = inner.config.query_time_limit;
            let written = match (&inner.spool, inner.config.snapshot_max_bytes) {
                (Some(spool), Some(max_bytes)) => {
                    let progress = Arc::new(QueryProgress::new(
                        usize::try_from(sample_size).unwrap_or(usize::MAX),
                    ));
                    let (start, started) = QueryStart::channel();
                    let write = snapshot::write(
                        spool.clone(),
                        snapshot::SnapshotQuery {
                            executor: Arc::clone(executor),
                            params: params.clone(),
                            start,
                        },
                        id,
                        max_bytes,
                        Arc::clone(&progress),
                        SnapshotCharge {
                            slot,
                            meter: inner.owners.meter(id),
                        },
                    );
                    let mut writer = AbortOnDrop(Some(tokio::spawn(time_limited(limit, write))));
                    let waited = match writer.0.as_mut() {
                        Some(task) => pending::wait(task, started, inner.config.pending_after).await,
                        None => None,
                    };
                    match waited {
                        Some(written) => written?,
                        None => {
                            let Some(task) = writer.0.take() else {
                                return Err(ServerError::ResourceNotFound);
                            };
                            // Columns given or known up front stay; inferred ones are inferred again
                            // from the final sample.
                            let known = request.columns.take().or_else(|| executor.columns(params));
                            let fixed_columns = known.is_some();
                            let sample = progress.sample();
                            let columns = known.unwrap_or_else(|| infer_columns(&sample));
                            let mut record = ResourceRecord {
                                total_count: progress.rows(),
                                consistency: Consistency::Snapshot,
                                status: ResourceStatus::Pending,
                                lease_expires_at: Some(self.lease_from_now()),
                                ..new_record(id, request, columns, sample, now, expiration)
                            };
                            self.cut_sample(&mut record);
                            self.go_pending(record.clone(), task, progress, fixed_columns)
                                .await?;
                            admission.keep();
                            return Ok(DualResponse::from_record(
                                record,
                                &inner.config.uri_scheme,
                                &inner.config.base_url,
                            ));
                        }
                    }
                }
                _ => None,
            };
            let (consistency, total_count, sample) = match written {
                Some(written) => (Consistency::Snapshot, written.rows, written.sample),
                None => {
                    let (total_count, sample) = self.count_and_sample(executor, params, sample_size).await?;
                    (Consistency::Live, total_count, sample)
                }
            };
            let columns = request
                .columns
                .take()
                .or_else(|| executor.columns(params))
                .unwrap_or_else(|| infer_columns(&sample));
            let mut record = ResourceRecord {
                total_count,
                consistency,
                ..new_record(id, request, columns, sample, now, expiration)
            };
            self.cut_sample(&mut record);
            if let Err(error) = inner.store.save(&record).await {
                if consistency == Consistency::Snapshot {
                    self.delete_snapshot(id).await;
                }
                return Err(error.into());
            }
            admission.keep();
            tracing::debug!(total_count, %consistency, "resource created");
            Ok(DualResponse::from_record(
                record,
                &inner.config.uri_scheme,
                &inner.config.base_url,
            ))
        }
        .instrument(span)
        .await
    }

    /// The sample as a tool result carries it: at most `sample_size` rows (already), cut to the whole
    /// rows that keep the whole tool result of `record` (text blocks and `structuredContent`, in its
    /// largest rendering) within `max_sample_bytes`. Columns inferred from the sample are inferred
    /// from the rows before the cut.
    pub(crate) fn cut_sample(&self, record: &mut ResourceRecord) {
        let inner = self.inner();
        let max_bytes = inner.config.max_sample_bytes;
        let response =
            DualResponse::from_record(record.clone(), &inner.config.uri_scheme, &inner.config.base_url);
        let kept = response.sample_rows_within(max_bytes);
        let fetched = record.sample.len();
        if kept < fetched {
            record.sample = record.sample[..kept].into();
            tracing::debug!(
                fetched,
                kept,
                max_sample_bytes = max_bytes,
                "sample cut to whole rows within the tool result's byte limit"
            );
        }
    }

    /// Counts and samples the query of `record` as a live resource is, under the time limit: for a
    /// pending query whose result passed the snapshot cap.
    pub(crate) async fn live_outcome(&self, record: &ResourceRecord) -> Result<(u64, Vec<Row>), ServerError> {
        let executor = self.inner().registry.get(&record.query.kind)?;
        let sample_size = self
            .inner()
            .config
            .default_sample_size
            .max(record.sample.len() as u64);
        self.count_and_sample(executor, &record.query.params, sample_size)
            .await
    }

    /// Runs `count` and the fetch of the first `sample_size` rows concurrently, under the time limit.
    async fn count_and_sample(
        &self,
        executor: &Arc<dyn QueryExecutor>,
        params: &Value,
        sample_size: u64,
    ) -> Result<(u64, Vec<Row>), ServerError> {
        time_limited(self.inner().config.query_time_limit, async {
            let (count, sample) = tokio::join!(
                executor.count(params),
                executor.fetch(params, 0, sample_size, None)
            );
            Ok((
                count.map_err(ServerError::count_failed)?,
                sample.map_err(ServerError::query_failed)?,
            ))
        })
        .await
    }
}

/// Runs `future` under the query time limit: past it, the future is dropped (and with it the
/// executor's work) and the result is `QUERY_TIMEOUT`.
pub(crate) async fn time_limited<T>(
    limit: std::time::Duration,
    future: impl Future<Output = Result<T, ServerError>>,
) -> Result<T, ServerError> {
    let _running = crate::metrics::query_running();
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or(Err(ServerError::QueryTimeout { limit }))
}

/// A new record of `request`'s query, created at `now`: ready, live, not yet read, with no rows
/// counted; the caller sets what differs.
fn new_record(
    id: ResourceId,
    request: CreateResponse,
    columns: Vec<Column>,
    sample: Vec<Row>,
    now: OffsetDateTime,
    expiration: time::Duration,
) -> ResourceRecord {
    ResourceRecord {
        id,
        name: request.name.unwrap_or_else(|| DEFAULT_RESOURCE_NAME.to_owned()),
        query: request.query,
        columns,
        total_count: 0,
        sample: sample.into(),
        created_at: now,
        expires_at: now.checked_add(expiration),
        access_count: 0,
        last_accessed_at: None,
        owner: request.owner,
        metadata: request.metadata,
        consistency: Consistency::Live,
        status: ResourceStatus::Ready,
        lease_expires_at: None,
        failure: None,
    }
}

fn invalid(field: &'static str, expected: &'static str) -> ServerError {
    dual_core::page::RequestError::WrongType { field, expected }.into()
}
