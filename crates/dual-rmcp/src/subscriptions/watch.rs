//! What a subscription watches: the state of each subscribed result, read from the store (so a
//! change made on any instance is seen), and which of them changed since the last look.

use dual_core::ResourceId;
use dual_core::status::ResourceStatus;
use dual_server::{Caller, DualResponseServer, ServerError};

/// The state of a result as a subscriber is told of it: a change of state is one
/// `notifications/resources/updated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// The query runs.
    Pending,
    /// The result can be read while its snapshot is still being written (its profile is not
    /// complete yet).
    Spooling,
    /// The result can be read, every row stored (its profile complete).
    Ready,
    /// The query failed (or its instance stopped).
    Failed,
    /// Deleted or expired: the last notification; the subscription ends.
    Gone,
}

/// One subscribed result.
#[derive(Debug, Clone)]
pub(super) struct Watched {
    pub(super) uri: String,
    pub(super) id: ResourceId,
    /// Who subscribed: the result is read as that caller.
    pub(super) caller: Caller,
    pub(super) seen: Seen,
}

/// The state of `id` for `caller` now; `None` when it cannot be told (a store outage: try again).
pub(super) async fn look(server: &DualResponseServer, caller: &Caller, id: ResourceId) -> Option<Seen> {
    match server.get_resource(id, caller).await {
        Ok(record) => Some(match record.status {
            ResourceStatus::Pending => Seen::Pending,
            ResourceStatus::Failed => Seen::Failed,
            _ if record.is_spooling() => Seen::Spooling,
            _ => Seen::Ready,
        }),
        Err(ServerError::ResourceNotFound | ServerError::ResourceExpired) => Some(Seen::Gone),
        Err(error) => {
            tracing::debug!(%id, error = %dual_core::escape::log_error(&error), "subscription: state not read");
            None
        }
    }
}
