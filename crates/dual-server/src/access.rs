//! Authorization, the first step of every operation on a resource: the live record of an id when
//! the caller may see it (and, for reads, the access counted in the same store call), and exactly
//! what an unknown id gets when not. A pending or spooling record whose lease lapsed is failed here.

use std::sync::Arc;

use dual_core::{
    ResourceId, ResourceRecord,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use dual_store::{Access, Lookup};

use crate::inner::Inner;
use crate::{Caller, ServerError};

/// The one authorization check of an operation that counts no access: the live record of `id`
/// when `caller` may see it, and exactly what an unknown id gets (`RESOURCE_NOT_FOUND`) when not.
/// Every operation on a resource starts here or at [`accessed`].
pub(crate) async fn authorized(
    inner: &Inner,
    id: ResourceId,
    caller: &Caller,
) -> Result<ResourceRecord, ServerError> {
    let now = inner.clock.now();
    let record = found(inner.store.get(id, now).await?)?;
    if caller.may_see(&record) {
        if record.lease_lapsed_at(now) {
            return Ok(inner.interrupted(record).await);
        }
        Ok(record)
    } else {
        tracing::debug!(%id, "caller may not see the resource: answered as not found");
        Err(ServerError::ResourceNotFound)
    }
}

/// The authorization check of a read and its count, in one store round trip: the store counts
/// the access only when `caller` may see the record ([`Caller::viewer`]), and a record it may
/// not see is answered exactly like an unknown id (`RESOURCE_NOT_FOUND`), its count untouched. A
/// running record whose lease lapsed is failed as [`authorized`] fails it. The record is the
/// store's, shared (a memory store's read copies nothing).
pub(crate) async fn accessed(
    inner: &Inner,
    id: ResourceId,
    caller: &Caller,
) -> Result<Arc<ResourceRecord>, ServerError> {
    let now = inner.clock.now();
    match inner.store.record_access(id, caller.viewer(), now).await? {
        Access::Counted(record) if record.lease_lapsed_at(now) => {
            Ok(Arc::new(inner.interrupted(Arc::unwrap_or_clone(record)).await))
        }
        Access::Counted(record) => Ok(record),
        Access::NotVisible => {
            tracing::debug!(%id, "caller may not see the resource: answered as not found");
            Err(ServerError::ResourceNotFound)
        }
        Access::Expired => Err(ServerError::ResourceExpired),
        Access::Missing => Err(ServerError::ResourceNotFound),
    }
}

/// A resource's result can be read only when it is ready: `NOT_READY` while pending,
/// `RESOURCE_FAILED` once failed.
pub(crate) fn readable(record: &ResourceRecord) -> Result<(), ServerError> {
    match (record.status, &record.failure) {
        (ResourceStatus::Ready, _) => Ok(()),
        (ResourceStatus::Pending, _) => Err(ServerError::NotReady {
            rows: record.total_count,
        }),
        (_, Some(failure)) => Err(ServerError::ResourceFailed {
            failure: failure.clone(),
        }),
        (_, None) => Err(ServerError::ResourceFailed {
            failure: QueryFailure::new(FailureCode::QueryExecutionFailed, "the query failed"),
        }),
    }
}

/// A link's grant reads and does nothing else: what it may not do is answered as an unknown id.
pub(crate) fn refuse_grant(caller: &Caller) -> Result<(), ServerError> {
    if caller.is_grant() {
        return Err(ServerError::ResourceNotFound);
    }
    Ok(())
}

/// The record a store lookup found, or the error an operation answers.
pub(crate) fn found(lookup: Lookup) -> Result<ResourceRecord, ServerError> {
    match lookup {
        Lookup::Found(record) => Ok(record),
        Lookup::Expired => Err(ServerError::ResourceExpired),
        Lookup::Missing => Err(ServerError::ResourceNotFound),
    }
}
