//! Case: `live_count`.

use dual_core::ResourceRecord;
use time::{Duration, OffsetDateTime};

use super::support::{OrPanic, base_now, found, record};
use dual_store::ResourceStore;

/// `live_count` counts the records not expired at `now`, pinned ones included: a record stops counting
/// at exactly its `expires_at`, a pinned one never does, a record saved again counts once (also when
/// the save moved it between pinned and expiring), a delete stops a record counting, and a purge changes
/// nothing at the instant it purged at.
pub async fn live_count_counts_live_records(store: &dyn ResourceStore) {
    let now = base_now();
    let t = now + Duration::minutes(10);
    let far = now + Duration::days(365 * 100);
    let count = |at: OffsetDateTime| async move { store.live_count(at).await.or_panic("live_count") };
    assert_eq!(count(now).await, 0, "empty store");
    assert_eq!(count(far).await, 0, "empty store, far in the future");

    // Live at `t`: one expiring later, one saved pinned, one saved expiring at `t` then saved again pinned.
    let later = record("expires later", now, Some(t + Duration::minutes(50)));
    let pinned = record("saved pinned", now, None);
    let mut unexpiring = record("expiring, then saved pinned", now, Some(t));
    // Expired at `t`: three saved so, and one saved pinned then saved again expiring at `t`.
    let expiring: Vec<ResourceRecord> = (0..3).map(|_| record("expires at t", now, Some(t))).collect();
    let mut expiring_again = record("pinned, then saved expiring", now, None);
    for r in [&later, &pinned, &unexpiring, &expiring_again]
        .into_iter()
        .chain(&expiring)
    {
        store.save(r).await.or_panic("save");
    }
    unexpiring.expires_at = None;
    expiring_again.expires_at = Some(t);
    for r in [&unexpiring, &expiring_again, &later, &pinned, &expiring[0]] {
        store.save(r).await.or_panic("save again");
    }
    assert_eq!(count(now).await, 7, "7 records, all live, some saved twice");
    assert_eq!(
        count(t - Duration::nanoseconds(1)).await,
        7,
        "1 ns before 4 of them expire"
    );
    assert_eq!(
        count(t).await,
        3,
        "a record stops counting at exactly its expires_at"
    );
    assert_eq!(count(t + Duration::microseconds(1)).await, 3, "1 µs after");
    assert_eq!(
        count(far).await,
        2,
        "only the pinned records count far in the future"
    );

    found(store.pin(expiring[1].id, now).await.or_panic("pin"), "pin");
    assert_eq!(count(now).await, 7, "pinning a live record keeps the count");
    assert_eq!(
        count(t).await,
        4,
        "a record pinned before its expiry still counts after it"
    );
    assert_eq!(count(far).await, 3, "pinned records count forever");

    assert!(
        store.delete(later.id).await.or_panic("delete"),
        "delete a live record"
    );
    assert_eq!(count(now).await, 6, "a deleted record stops counting");
    assert_eq!(count(t).await, 3, "a deleted record stops counting");
    assert!(
        store.delete(pinned.id).await.or_panic("delete"),
        "delete a pinned record"
    );
    assert_eq!(count(now).await, 5, "a deleted pinned record stops counting");
    assert_eq!(count(far).await, 2, "a deleted pinned record stops counting");
    assert!(
        store.delete(expiring[2].id).await.or_panic("delete"),
        "delete a record expiring at t"
    );
    assert_eq!(count(now).await, 4, "a deleted record stops counting");
    assert_eq!(
        count(t).await,
        2,
        "deleting an expired record does not change the count at t"
    );
    assert!(
        !store.delete(expiring[2].id).await.or_panic("delete"),
        "delete it again"
    );
    assert_eq!(count(now).await, 4, "a second delete changes nothing");

    assert_eq!(
        store.purge_expired(t).await.or_panic("purge_expired"),
        2,
        "the two records still expiring at t are purged"
    );
    assert_eq!(count(t).await, 2, "a purge does not change the live count");
    assert_eq!(
        count(now).await,
        2,
        "purged records no longer count, even before their expiry"
    );
    assert_eq!(count(far).await, 2, "the two pinned records remain");
}
