//! Cases: `find_expired` and `purge_expired`.

use std::collections::HashSet;

use dual_core::{ResourceId, ResourceRecord};
use time::{Duration, OffsetDateTime};

use super::support::{
    OrPanic, access_found, base_now, expect_get, expect_none_expired, found, get_found, record,
};
use dual_store::{Lookup, ResourceStore};

/// How many records [`many_records_mixed_expiry`] saves.
pub const MANY_RECORDS: usize = 1_000;

/// `find_expired` returns only records expired at `now` (`expires_at <= now`), earliest expiry first,
/// at most `limit` of them, never pinned or live ones, and deletes nothing.
pub async fn find_expired_order_and_limit(store: &dyn ResourceStore) {
    let now = base_now();
    expect_none_expired(store, now, "empty store").await;
    // Five expiring records saved out of order, two of them sharing an instant.
    let minutes = [4, 1, 5, 2, 2];
    let expiring: Vec<ResourceRecord> = minutes
        .iter()
        .map(|m| record("expiring", now, Some(now + Duration::minutes(*m))))
        .collect();
    let live = record("live", now, Some(now + Duration::minutes(60)));
    let pinned = record("saved pinned", now, None);
    let pinned_later = record("pinned after save", now, Some(now + Duration::minutes(3)));
    for r in expiring.iter().chain([&live, &pinned, &pinned_later]) {
        store.save(r).await.or_panic("save");
    }
    found(store.pin(pinned_later.id, now).await.or_panic("pin"), "pin");

    let at = now + Duration::minutes(10);
    let got = store.find_expired(at, 100).await.or_panic("find_expired");
    let ids = |idx: &[usize]| idx.iter().map(|i| expiring[*i].id).collect::<HashSet<_>>();
    assert_eq!(
        got.len(),
        5,
        "find_expired returns exactly the five expired records, got {got:?}"
    );
    assert_eq!(got[0], expiring[1].id, "earliest expiry first");
    assert_eq!(
        got[1..3].iter().copied().collect::<HashSet<_>>(),
        ids(&[3, 4]),
        "the tie comes next"
    );
    assert_eq!(
        got[3..],
        [expiring[0].id, expiring[2].id],
        "then the later expiries, in order"
    );

    assert_eq!(
        store.find_expired(at, 1).await.or_panic("find_expired"),
        got[..1],
        "limit 1"
    );
    let three = store.find_expired(at, 3).await.or_panic("find_expired");
    assert_eq!(three.len(), 3, "limit 3");
    assert_eq!(three[0], got[0], "limit 3 keeps the order");
    assert_eq!(
        three[1..].iter().copied().collect::<HashSet<_>>(),
        ids(&[3, 4]),
        "limit 3"
    );
    assert!(
        store
            .find_expired(at, 0)
            .await
            .or_panic("find_expired")
            .is_empty(),
        "limit 0"
    );

    // The boundary is inclusive: at exactly +2 min the two records expiring then are included.
    let at_two = store
        .find_expired(now + Duration::minutes(2), 100)
        .await
        .or_panic("find_expired");
    assert_eq!(at_two.len(), 3, "expires_at == now counts as expired: {at_two:?}");
    let before = now + Duration::minutes(2) - Duration::microseconds(1);
    assert_eq!(
        store.find_expired(before, 100).await.or_panic("find_expired"),
        got[..1],
        "1 µs before"
    );

    // Nothing was deleted.
    for r in &expiring {
        expect_get(store, r.id, at, &Lookup::Expired, "find_expired deletes nothing").await;
    }
}

/// `purge_expired` deletes exactly the expired records, returns their count, leaves live and pinned records
/// as they were, and a second purge at the same instant finds nothing.
pub async fn purge_expired_exact(store: &dyn ResourceStore) {
    let now = base_now();
    assert_eq!(
        store.purge_expired(now).await.or_panic("purge_expired"),
        0,
        "purge of an empty store"
    );
    let expired: Vec<_> = (1..=4)
        .map(|m| record("expired", now, Some(now + Duration::minutes(m))))
        .collect();
    let boundary = record(
        "expires exactly at the purge instant",
        now,
        Some(now + Duration::minutes(10)),
    );
    let live = record(
        "live",
        now,
        Some(now + Duration::minutes(10) + Duration::microseconds(1)),
    );
    let pinned = record("pinned", now, None);
    let pinned_later = record("pinned later", now, Some(now + Duration::minutes(2)));
    for r in expired.iter().chain([&boundary, &live, &pinned, &pinned_later]) {
        store.save(r).await.or_panic("save");
    }
    found(store.pin(pinned_later.id, now).await.or_panic("pin"), "pin");
    access_found(store, live.id, now, "access").await;

    let at = now + Duration::minutes(10);
    assert_eq!(
        store.purge_expired(at).await.or_panic("purge_expired"),
        5,
        "4 expired + 1 at the boundary"
    );
    for r in expired.iter().chain([&boundary]) {
        expect_get(store, r.id, now, &Lookup::Missing, "purged record").await;
    }
    let live_after = get_found(store, live.id, at, "live record after purge").await;
    assert_eq!(
        live_after.access_count, 1,
        "purge must leave live records as they were"
    );
    assert_eq!(
        live_after.expires_at, live.expires_at,
        "purge must leave live records as they were"
    );
    for r in [&pinned, &pinned_later] {
        let got = get_found(store, r.id, at, "pinned record after purge").await;
        assert_eq!(got.expires_at, None, "pinned record after purge");
    }
    assert_eq!(
        store.purge_expired(at).await.or_panic("purge_expired"),
        0,
        "second purge"
    );
    expect_none_expired(store, at, "after purge").await;
}

/// For a store that purges in batches smaller than ten (a backend's own option, `purge_batch(3)` say):
/// ten records expiring within ten seconds of `now` are all found and purged a minute later, each
/// counted once across the batches, and a record live for an hour is kept. `now` is the backend's
/// clock at its resolution. Not part of [`run`](super::run): the batch size is the backend's builder's.
///
/// # Panics
/// When a call fails or the store purges otherwise.
pub async fn purges_in_batches(store: &dyn ResourceStore, now: OffsetDateTime) {
    for i in 0..10 {
        let expiring = record("expiring", now, Some(now + Duration::seconds(i)));
        store.save(&expiring).await.or_panic("save");
    }
    let live = record("live", now, Some(now + Duration::hours(1)));
    store.save(&live).await.or_panic("save");
    let later = now + Duration::minutes(1);
    let expired = store
        .find_expired(later, usize::MAX)
        .await
        .or_panic("find_expired");
    assert_eq!(expired.len(), 10, "find_expired before the purge");
    assert_eq!(store.purge_expired(later).await.or_panic("purge_expired"), 10);
    get_found(store, live.id, now, "the live record after the purge").await;
}

/// [`MANY_RECORDS`] records of four kinds, saved in shuffled order: expired at the check, live at the
/// check, saved pinned, and pinned after saving. `find_expired` lists the expired ones in expiry order,
/// `purge_expired` removes exactly them, then the live ones once they expire, and `live_count` counts
/// the other kinds before and after each purge.
pub async fn many_records_mixed_expiry(store: &dyn ResourceStore) {
    let now = base_now();
    let first_check = now + Duration::minutes(10);
    let second_check = now + Duration::minutes(40);
    let mut records = Vec::with_capacity(MANY_RECORDS);
    for i in 0..MANY_RECORDS {
        // Distinct expiry instants, scattered relative to the save order.
        let spread = Duration::microseconds(((i * 7_919) % MANY_RECORDS) as i64);
        let expires_at = match i % 4 {
            0 => Some(now + Duration::minutes(1) + spread),
            1 => Some(now + Duration::minutes(30) + spread),
            2 => None,
            _ => Some(now + Duration::minutes(2) + spread),
        };
        records.push(record(&format!("record {i}"), now, expires_at));
    }
    for r in &records {
        store.save(r).await.or_panic("save");
    }
    for r in records.iter().skip(3).step_by(4) {
        found(store.pin(r.id, now).await.or_panic("pin"), "pin");
    }
    let kind = |k: usize| records.iter().skip(k).step_by(4).collect::<Vec<_>>();
    let quarter = MANY_RECORDS / 4;

    let mut expired = kind(0);
    expired.sort_by_key(|r| r.expires_at);
    let want: Vec<ResourceId> = expired.iter().map(|r| r.id).collect();
    let all = store
        .find_expired(first_check, MANY_RECORDS * 2)
        .await
        .or_panic("find_expired");
    assert_eq!(
        all, want,
        "find_expired lists exactly the expired quarter, earliest first"
    );
    let some = store
        .find_expired(first_check, 100)
        .await
        .or_panic("find_expired");
    assert_eq!(some, want[..100], "find_expired with limit 100");

    let live_count = |at| async move { store.live_count(at).await.or_panic("live_count") };
    assert_eq!(live_count(now).await, MANY_RECORDS as u64, "live_count, all live");
    assert_eq!(
        live_count(first_check).await,
        3 * quarter as u64,
        "live_count before the first purge"
    );
    let purged = store.purge_expired(first_check).await.or_panic("purge_expired");
    assert_eq!(
        purged, quarter as u64,
        "first purge removes exactly the expired quarter"
    );
    assert_eq!(
        live_count(first_check).await,
        3 * quarter as u64,
        "live_count after the first purge"
    );
    assert_eq!(
        store.purge_expired(first_check).await.or_panic("purge_expired"),
        0,
        "repeat purge"
    );
    check_kinds(store, &records, first_check, [false, true, true, true]).await;

    let purged = store.purge_expired(second_check).await.or_panic("purge_expired");
    assert_eq!(
        purged, quarter as u64,
        "second purge removes the records that expired since"
    );
    check_kinds(store, &records, second_check, [false, false, true, true]).await;
    assert_eq!(
        live_count(second_check).await,
        2 * quarter as u64,
        "live_count after the second purge: the pinned half"
    );
    let far = now + Duration::days(36_500);
    expect_none_expired(store, far, "only pinned remain").await;
}

async fn check_kinds(
    store: &dyn ResourceStore,
    records: &[ResourceRecord],
    at: OffsetDateTime,
    alive: [bool; 4],
) {
    for (i, r) in records.iter().enumerate() {
        let lookup = store.get(r.id, at).await.or_panic("get");
        if alive[i % 4] {
            let got = found(lookup, "a record that must survive the purge");
            assert_eq!(got.name, r.name, "record {i}");
        } else {
            assert_eq!(
                lookup,
                Lookup::Missing,
                "record {i} (kind {}) must be purged",
                i % 4
            );
        }
    }
}
