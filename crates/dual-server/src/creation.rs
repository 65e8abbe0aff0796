//! `create_response`: run the query, keep the sample and the count, store the resource — answering as
//! soon as the sample and the exact count are known, or at `pending_after` (docs/DESIGN.md §8).

use std::sync::Arc;

use dual_core::{
    Column, DualResponse, ResourceId, ResourceRecord, Row, column::infer_columns, consistency::Consistency,
    mcp::ResponseProfile, status::ResourceStatus,
};
use time::OffsetDateTime;

use crate::config::MAX_SAMPLE_SIZE;
use crate::inner::Inner;
use crate::owners::SnapshotCharge;
use crate::run::{Answer, Run, RunContext};
use crate::sample::fit_response;
use crate::scheduler::WorkClass;
use crate::snapshot::SnapshotQuery;
use crate::{CreateResponse, ServerError, live};

/// Name of a resource created without one.
pub const DEFAULT_RESOURCE_NAME: &str = "Query Results";

/// `create_response` ([`DualResponseServer::create_response`](crate::DualResponseServer::create_response)), inside its span.
pub(crate) async fn create(
    inner: &Arc<Inner>,
    mut request: CreateResponse,
) -> Result<DualResponse, ServerError> {
    // The kind `refine` reads another result's rows: only `refine`, which authorized the caller on
    // that result, runs it.
    if request.query.kind == crate::REFINE_KIND && !request.refinement {
        return Err(ServerError::UnknownQueryKind(request.query.kind));
    }
    let executor = Arc::clone(inner.registry.get(&request.query.kind)?);
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
    // Never past `expires_by` (a refinement lives no longer than its parent).
    let expiration = match request.expires_by {
        Some(by) if by <= now => return Err(ServerError::ResourceExpired),
        Some(by) => expiration.min(by - now),
        None => expiration,
    };
    if let Some(max) = inner.config.max_resources
        && inner.store.live_count(now).await? >= max
    {
        return Err(ServerError::TooManyResources { max });
    }
    let owner: crate::scheduler::Owner = request.owner.as_deref().map(Arc::from);
    let snapshots = inner.spool.is_some() && inner.config.snapshot_max_bytes.is_some();
    // The background place of the snapshot this call will announce, reserved before anything runs:
    // the only moment the scheduler refuses.
    let place = snapshots
        .then(|| inner.scheduler.reserve(owner.clone()))
        .transpose()?;
    let id = ResourceId::new();
    tracing::Span::current().record("id", tracing::field::display(id));
    let (admission, slot) =
        inner
            .owners
            .admit(request.owner.as_deref(), id, now.checked_add(expiration), now)?;
    // Columns given or declared (up front, or with the query's start signal) stay; others are
    // inferred from the sample.
    let mut known = request
        .columns
        .take()
        .or_else(|| executor.columns(&request.query.params));
    let limit = inner.config.query_time_limit;
    let mut run = match (&inner.spool, inner.config.snapshot_max_bytes, place) {
        (Some(spool), Some(max_bytes), Some(place)) => {
            let (answered, told) = tokio::sync::oneshot::channel();
            let query = SnapshotQuery {
                executor: Arc::clone(&executor),
                params: request.query.params.clone(),
                spool: spool.clone(),
                id,
                max_bytes,
                sample_size: usize::try_from(sample_size).unwrap_or(usize::MAX),
                profile: inner.config.column_profile,
                slots: place.slots(),
                answered: told,
            };
            let charge = SnapshotCharge {
                slot,
                meter: inner.owners.meter(id),
            };
            Some(Run::start(query, charge, limit, place, answered))
        }
        _ => None,
    };
    let answer = match run.as_mut() {
        Some(run) => Some(run.answer(inner.config.pending_after).await),
        None => None,
    };
    if known.is_none() {
        known = run.as_ref().and_then(Run::declared_columns);
    }
    let fixed_columns = known.is_some();
    let carried = match &answer {
        Some(Answer::Ended(Ok(Some(written)))) => written.profile.clone(),
        _ => None,
    };
    let new = |request, sample: Vec<Row>, total_count, consistency| {
        let columns = known.clone().unwrap_or_else(|| infer_columns(&sample));
        ResourceRecord {
            total_count,
            consistency,
            ..new_record(id, request, columns, sample, now, expiration)
        }
    };
    let mut record = match answer {
        Some(Answer::Ended(Ok(Some(written)))) => {
            new(request, written.sample, written.rows, Consistency::Snapshot)
        }
        Some(Answer::Ended(Err(error))) => return Err(error),
        Some(Answer::Counted {
            total,
            sample,
            spooled,
        }) => ResourceRecord {
            spooled_rows: Some(spooled),
            lease_expires_at: Some(inner.lease_from_now()),
            ..new(request, sample, total, Consistency::Snapshot)
        },
        Some(Answer::Pending { rows, sample }) => ResourceRecord {
            status: ResourceStatus::Pending,
            lease_expires_at: Some(inner.lease_from_now()),
            ..new(request, sample, rows, Consistency::Snapshot)
        },
        // No snapshots, or a result over the snapshot cap: served live.
        None | Some(Answer::Ended(Ok(None))) => {
            // The caller waits: foreground work.
            let slot = inner.scheduler.slot(WorkClass::Foreground, &owner).await;
            let (total, sample) =
                live::count_and_sample(&executor, &request.query.params, sample_size, limit).await?;
            drop(slot);
            new(request, sample, total, Consistency::Live)
        }
    };
    let profile = match (carried, record.consistency) {
        (Some(profile), _) => ResponseProfile::Here(profile),
        (None, Consistency::Snapshot) if inner.config.column_profile => ResponseProfile::Later,
        (None, _) => ResponseProfile::None,
    };
    let response = fit_response(&inner.config, record.clone(), profile);
    record.sample = Arc::clone(&response.sample);
    if let Err(error) = inner.store.save(&record).await {
        // Dropping the run stops its query and removes what it stored.
        drop(run);
        if record.consistency == Consistency::Snapshot {
            inner.delete_snapshot(id).await;
        }
        return Err(error.into());
    }
    admission.keep();
    if let Some(run) = run
        && record.is_running()
    {
        run.hand_over(
            record.clone(),
            RunContext {
                inner: Arc::clone(inner),
                fixed_columns,
            },
        );
        tracing::info!(status = %record.status, spooled_rows = record.spooled_rows, "answered while the query runs");
    }
    tracing::debug!(total_count = record.total_count, consistency = %record.consistency, "resource created");
    Ok(response)
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
        // A name is display text, often made from the model's SQL: stored with its control
        // characters escaped, so every surface (REST metadata, resources/list, logs) shows it clean.
        name: request.name.map_or_else(
            || DEFAULT_RESOURCE_NAME.to_owned(),
            |name| dual_core::escape::display_safe(&name).into_owned(),
        ),
        query: request.query,
        columns,
        total_count: 0,
        spooled_rows: None,
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
