//! Cases: `get` and `record_access`, unknown ids and the expiry boundary.

use dual_core::ResourceId;
use time::Duration;

use super::support::{
    OrPanic, access_found, base_now, expect_get, expect_lookups, found, get_found, record, saved_record,
    with_micros,
};
use dual_store::{Access, Lookup, ResourceStore, Viewer};

/// An id never saved is `Missing` for every lookup, in an empty store and beside other records, and
/// deleting it reports `false`.
pub async fn unknown_id_is_missing(store: &dyn ResourceStore) {
    let now = base_now();
    let unknown = ResourceId::new();
    expect_get(store, unknown, now, &Lookup::Missing, "get, empty store").await;
    let other = saved_record(store, "other", now, Some(now + Duration::minutes(5))).await;
    expect_lookups(store, unknown, now, &Lookup::Missing, "an unknown id").await;
    assert!(
        !store.delete(unknown).await.or_panic("delete"),
        "delete of an unknown id"
    );
    let other_now = get_found(store, other.id, now, "the other record").await;
    assert_eq!(
        other_now, other,
        "lookups of an unknown id must not touch other records"
    );
}

/// A record is served strictly before `expires_at` and never at or after it (the suite passes whole
/// microseconds as `now`).
pub async fn expiry_boundary(store: &dyn ResourceStore) {
    let now = base_now();
    let at = with_micros(now + Duration::minutes(10), 500_000);
    let saved = saved_record(store, "boundary", now, Some(at)).await;
    let before = at - Duration::microseconds(1);
    for (when, want_found) in [
        (now, true),
        (before, true),
        (at, false),
        (at + Duration::microseconds(1), false),
        (at + Duration::days(3650), false),
    ] {
        let lookup = store.get(saved.id, when).await.or_panic("get");
        let offset = when - at;
        if want_found {
            assert_eq!(
                found(lookup, "get before expires_at"),
                saved,
                "get {offset} from expires_at"
            );
        } else {
            assert_eq!(
                lookup,
                Lookup::Expired,
                "get {offset} from expires_at (expires_at <= now is expired)"
            );
        }
    }
    let access = access_found(store, saved.id, before, "access").await;
    assert_eq!(
        access.access_count, 1,
        "record_access 1 µs before expires_at counts"
    );
    expect_lookups(store, saved.id, at, &Lookup::Expired, "at expires_at").await;
}

/// An expired record is never `Found` by `get`, `record_access` or `pin`, and those calls leave it
/// untouched: no access counted, not pinned.
pub async fn expired_is_never_found(store: &dyn ResourceStore) {
    let now = base_now();
    let saved = saved_record(store, "expires", now, Some(now + Duration::minutes(1))).await;
    let later = now + Duration::minutes(2);
    for _ in 0..3 {
        expect_lookups(store, saved.id, later, &Lookup::Expired, "an expired record").await;
    }
    let untouched = get_found(store, saved.id, now, "expired record, read early").await;
    assert_eq!(
        untouched, saved,
        "calls on an expired record must not count accesses or pin it"
    );
    expect_get(store, saved.id, later, &Lookup::Expired, "still expired").await;
}

/// `record_access` adds one to `access_count` starting from the saved value, sets `last_accessed_at` to
/// `now`, changes nothing else, and returns what `get` then returns. `get` counts nothing.
pub async fn record_access_counts(store: &dyn ResourceStore) {
    let now = base_now();
    let mut saved = record("counted", now, Some(now + Duration::minutes(15)));
    saved.access_count = 5;
    saved.last_accessed_at = Some(with_micros(now - Duration::hours(1), 250));
    store.save(&saved).await.or_panic("save");
    let mut want = saved.clone();
    for step in 1..=3_i64 {
        let when = with_micros(now + Duration::seconds(step), 777);
        let got = access_found(store, saved.id, when, "access").await;
        want.access_count += 1;
        want.last_accessed_at = Some(when);
        assert_eq!(got, want, "record_access #{step} returns the updated record");
        let read = get_found(store, saved.id, when, "get after access").await;
        assert_eq!(
            read, want,
            "get after record_access #{step} (and get itself counts nothing)"
        );
    }
    let missing = store
        .record_access(ResourceId::new(), Viewer::Anonymous, now)
        .await
        .or_panic("record_access");
    assert_eq!(missing, Access::Missing, "record_access of an unknown id");
}
