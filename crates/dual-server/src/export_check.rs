//! What an export would answer, without running it: the checks behind `HEAD /{id}/data`
//! ([`DualResponseServer::check_export`](crate::DualResponseServer::check_export)).

use dual_core::{ResourceId, ResourceRecord, Sort, page::validate_sort, range::RowRange};

use crate::access::{authorized, readable};
use crate::inner::Inner;
use crate::source::Source;
use crate::{Caller, ServerError};

/// The checks of an export, in its order: authorization, expiry, status, sort field, range, and for
/// a live resource an executor registered for its kind.
pub(crate) async fn check_export(
    inner: &Inner,
    id: ResourceId,
    caller: &Caller,
    sort: Option<&Sort>,
    range: RowRange,
) -> Result<ResourceRecord, ServerError> {
    let record = authorized(inner, id, caller).await?;
    readable(&record)?;
    if let Some(sort) = sort {
        validate_sort(sort, &record.columns)?;
    }
    range.check(record.total_count)?;
    if !Source::of(inner, &record).is_snapshot() {
        inner.registry.get(&record.query.kind)?;
    }
    Ok(record)
}
