//! Case: `update_query`, how a pending query's progress and outcome reach the record.

use std::sync::Arc;

use dual_core::{
    Column, ColumnType, ResourceId,
    consistency::Consistency,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use serde_json::json;
use time::Duration;

use super::support::{OrPanic, base_now, found, get_found, record, with_micros};
use dual_store::ResourceStore;

/// `update_query` overwrites exactly the query's fields (status, count, columns, sample,
/// consistency, lease, failure), keeps the access count, last access, pin and every other field,
/// works on an expired record, and neither creates a missing record nor fails for one.
pub async fn update_query_touches_only_the_query(store: &dyn ResourceStore) {
    let now = base_now();
    let mut saved = record("pending", now, Some(now + Duration::minutes(5)));
    saved.status = ResourceStatus::Pending;
    saved.total_count = 0;
    saved.sample = Vec::new().into();
    saved.consistency = Consistency::Snapshot;
    saved.lease_expires_at = Some(with_micros(now + Duration::seconds(15), 250_000));
    store.save(&saved).await.or_panic("save");
    let got = get_found(store, saved.id, now, "pending record").await;
    assert_eq!(got, saved, "a pending record round-trips with its lease");

    store
        .record_access(saved.id, dual_store::Viewer::Anonymous, now)
        .await
        .or_panic("record_access");
    store.pin(saved.id, now).await.or_panic("pin");

    // Progress: the rows so far and a renewed lease.
    let mut update = saved.clone();
    update.name = "must not be written".to_owned();
    update.access_count = 999;
    update.total_count = 12_345;
    update.lease_expires_at = Some(with_micros(now + Duration::seconds(16), 1));
    assert!(
        store.update_query(&update).await.or_panic("update_query"),
        "the record is there"
    );
    let got = get_found(store, saved.id, now, "after progress").await;
    assert_eq!(got.total_count, 12_345);
    assert_eq!(got.lease_expires_at, update.lease_expires_at);
    assert_eq!(
        (got.access_count, got.name.as_str()),
        (1, "pending"),
        "access count and name kept"
    );
    assert_eq!(got.expires_at, None, "the pin is kept");
    assert_eq!(got.status, ResourceStatus::Pending);

    // Answered at the first sample: ready with the exact total while rows are still spooled.
    update.status = ResourceStatus::Ready;
    update.total_count = 80_000;
    update.spooled_rows = Some(4_096);
    assert!(store.update_query(&update).await.or_panic("update_query"));
    let got = get_found(store, saved.id, now, "while spooling").await;
    assert_eq!(
        (got.status, got.total_count, got.spooled_rows),
        (ResourceStatus::Ready, 80_000, Some(4_096)),
        "spooled rows are written with the query's fields"
    );
    assert!(got.is_spooling(), "a ready record with spooled rows is spooling");
    update.spooled_rows = None;

    // The end: ready, with the final count, columns and sample; the lease cleared.
    update.status = ResourceStatus::Ready;
    update.total_count = 70_000;
    update.columns = vec![
        Column::new("n", ColumnType::Integer),
        Column::new("ü", ColumnType::String),
    ];
    update.sample = vec![json!({"n": 1, "ü": "☃"}).as_object().cloned().unwrap_or_default()].into();
    update.lease_expires_at = None;
    update.consistency = Consistency::Live;
    assert!(store.update_query(&update).await.or_panic("update_query"));
    let got = get_found(store, saved.id, now, "after ready").await;
    let mut want = saved.clone();
    want.status = ResourceStatus::Ready;
    want.total_count = 70_000;
    want.columns = update.columns.clone();
    want.sample = Arc::clone(&update.sample);
    want.lease_expires_at = None;
    want.consistency = Consistency::Live;
    want.access_count = 1;
    want.last_accessed_at = Some(now);
    want.expires_at = None;
    assert_eq!(got, want, "ready: every query field written, nothing else");

    // A failure, on a record already expired: still written (the sweep removes it later).
    let mut expired = record(
        "expired",
        now - Duration::minutes(10),
        Some(now - Duration::minutes(1)),
    );
    expired.status = ResourceStatus::Pending;
    store.save(&expired).await.or_panic("save");
    expired.status = ResourceStatus::Failed;
    expired.failure = Some(QueryFailure::new(
        FailureCode::QueryTimeout,
        "ran past 300 s — «x»",
    ));
    assert!(
        store
            .update_query(&expired)
            .await
            .or_panic("update_query of an expired record")
    );
    let got = found(
        store
            .get(expired.id, now - Duration::minutes(5))
            .await
            .or_panic("get"),
        "the failed record before its expiry",
    );
    assert_eq!(
        (got.status, got.failure),
        (ResourceStatus::Failed, expired.failure.clone())
    );

    let mut missing = record("missing", now, None);
    missing.id = ResourceId::new();
    assert!(
        !store
            .update_query(&missing)
            .await
            .or_panic("update_query of a missing record"),
        "a missing record is reported"
    );
    assert!(
        store.get(missing.id, now).await.or_panic("get").found().is_none(),
        "update_query never creates a record"
    );
}
