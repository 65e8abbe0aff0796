//! What a store does with a record it cannot decode: reports it, never serves it.

use dual_core::ResourceId;
use time::OffsetDateTime;

use dual_store::{ResourceStore, StoreError, Viewer};

/// `get` and `record_access` of `id` (a record the test has corrupted behind the store's back) both
/// fail with [`StoreError::Corrupt`] whose message contains `naming` (the field or column at fault).
///
/// # Panics
/// When either call answers anything else, or the message does not name `naming`.
pub async fn reported_not_served(
    store: &dyn ResourceStore,
    id: ResourceId,
    now: OffsetDateTime,
    naming: &str,
) {
    for (op, result) in [
        ("get", store.get(id, now).await.map(drop)),
        (
            "record_access",
            store.record_access(id, Viewer::Grant(id), now).await.map(drop),
        ),
    ] {
        match result {
            Err(StoreError::Corrupt { message, .. }) => {
                assert!(
                    message.contains(naming),
                    "{op}: `{message}` does not name {naming}"
                );
            }
            other => panic!("{op} of a corrupt record ({naming}): expected Corrupt, got {other:?}"),
        }
    }
}
