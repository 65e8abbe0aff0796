//! What a store that promises it does once closed: refuse every call with [`StoreError::Closed`].
//! Not part of [`run`](super::run): the trait lets a closed store answer otherwise.

use time::{Duration, OffsetDateTime};

use super::support::record;
use dual_store::{ResourceStore, StoreError};

/// Closes `store`, then checks that every operation fails with [`StoreError::Closed`] and that
/// closing again succeeds.
///
/// # Panics
/// When a call after `close` answers anything but `Err(Closed)`, or `close` fails.
pub async fn refuses_calls_once_closed(store: &dyn ResourceStore) {
    let now = OffsetDateTime::now_utc();
    let r = record("closed", now, Some(now + Duration::minutes(1)));
    store.close().await.expect("close");
    let closed = |result: Result<(), StoreError>, op: &str| match result {
        Err(StoreError::Closed) => {}
        other => panic!("{op} after close: expected Err(Closed), got {other:?}"),
    };
    closed(store.save(&r).await, "save");
    closed(store.get(r.id, now).await.map(drop), "get");
    closed(
        store
            .record_access(r.id, dual_store::Viewer::Anonymous, now)
            .await
            .map(drop),
        "record_access",
    );
    closed(store.pin(r.id, now).await.map(drop), "pin");
    closed(store.update_query(&r).await.map(drop), "update_query");
    closed(store.delete(r.id).await.map(drop), "delete");
    closed(store.find_expired(now, 10).await.map(drop), "find_expired");
    closed(store.purge_expired(now).await.map(drop), "purge_expired");
    closed(store.live_count(now).await.map(drop), "live_count");
    store.close().await.expect("closing again");
}
