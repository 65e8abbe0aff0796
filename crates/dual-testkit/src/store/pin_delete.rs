//! Cases: `pin` and `delete`.

use dual_core::ResourceId;
use time::Duration;

use super::support::{
    OrPanic, access_found, base_now, expect_get, expect_lookups, expect_none_expired, found, get_found,
    record, saved_record,
};
use dual_store::{Lookup, ResourceStore};

/// Pinning removes the expiry of a live record and returns it pinned, counts no access, is idempotent,
/// and the record then outlives its old expiry by any margin and is never purged. Expired and unknown
/// records cannot be pinned.
pub async fn pin_removes_expiry(store: &dyn ResourceStore) {
    let now = base_now();
    let old_expiry = now + Duration::minutes(5);
    let saved = saved_record(store, "pinned", now, Some(old_expiry)).await;
    let mut want = saved.clone();
    want.expires_at = None;
    let pinned = found(
        store.pin(saved.id, now).await.or_panic("pin"),
        "pin of a live record",
    );
    assert_eq!(
        pinned, want,
        "pin returns the record with expires_at None and nothing else changed"
    );
    let again = found(
        store
            .pin(saved.id, now + Duration::minutes(1))
            .await
            .or_panic("pin"),
        "pin again",
    );
    assert_eq!(again, want, "pin is idempotent");

    let far = now + Duration::days(365 * 100);
    for when in [old_expiry, old_expiry + Duration::microseconds(1), far] {
        let got = get_found(store, saved.id, when, "pinned record after old expiry").await;
        assert_eq!(got, want, "pinned record at {when}");
    }
    expect_none_expired(store, far, "find_expired").await;
    assert_eq!(
        store.purge_expired(far).await.or_panic("purge_expired"),
        0,
        "purge must skip pinned"
    );
    let accessed = access_found(store, saved.id, far, "access").await;
    assert_eq!(accessed.access_count, 1, "a pinned record still counts accesses");
    assert_eq!(
        accessed.expires_at, None,
        "record_access keeps a pinned record pinned"
    );

    let expired = saved_record(store, "expired", now, Some(now + Duration::minutes(1))).await;
    let late = now + Duration::minutes(2);
    expect_lookups(
        store,
        expired.id,
        late,
        &Lookup::Expired,
        "pin an expired record: still expired",
    )
    .await;
    let early = get_found(store, expired.id, now, "failed pin left the record").await;
    assert_eq!(early, expired, "a refused pin changes nothing");
    assert_eq!(
        store.pin(ResourceId::new(), now).await.or_panic("pin"),
        Lookup::Missing,
        "pin unknown id"
    );
}

/// Deleting returns `true` once and `false` after; a deleted record is `Missing` everywhere, and expired
/// and pinned records can be deleted too. Other records are untouched.
pub async fn delete_removes(store: &dyn ResourceStore) {
    let now = base_now();
    let live = record("live", now, Some(now + Duration::minutes(10)));
    let expired = record("expired", now, Some(now + Duration::minutes(1)));
    let pinned = record("pinned", now, None);
    let bystander = record("bystander", now, Some(now + Duration::minutes(2)));
    for r in [&live, &expired, &pinned, &bystander] {
        store.save(r).await.or_panic("save");
    }
    let later = now + Duration::minutes(5);
    expect_get(store, expired.id, later, &Lookup::Expired, "before delete").await;
    for (what, id) in [("live", live.id), ("expired", expired.id), ("pinned", pinned.id)] {
        assert!(
            store.delete(id).await.or_panic("delete"),
            "first delete of the {what} record"
        );
        assert!(
            !store.delete(id).await.or_panic("delete"),
            "second delete of the {what} record"
        );
        for when in [now, later] {
            expect_lookups(
                store,
                id,
                when,
                &Lookup::Missing,
                &format!("the deleted {what} record"),
            )
            .await;
        }
    }
    let untouched = get_found(store, bystander.id, now, "bystander after deletes").await;
    assert_eq!(untouched, bystander, "deletes must not touch other records");
    // Only the bystander remains in the expiry index.
    let expired_ids = store.find_expired(later, 10).await.or_panic("find_expired");
    assert_eq!(
        expired_ids,
        vec![bystander.id],
        "deleted records must leave the expiry index"
    );
    assert_eq!(
        store.purge_expired(later).await.or_panic("purge_expired"),
        1,
        "purge after deletes"
    );
}
