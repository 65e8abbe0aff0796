//! Cases: records come back exactly as saved, and `save` replaces.

use dual_core::ResourceRecord;
use time::Duration;

use super::support::{
    OrPanic, base_now, expect_get, expect_none_expired, get_found, minimal_record, record, rich_record,
    saved_record,
};
use dual_store::{Lookup, ResourceStore};

/// Compares a record read back with the one saved, field by field and then as serialized JSON text (which
/// also checks the key order of `sample` rows, `query.params` and `metadata`).
#[track_caller]
fn assert_same(got: &ResourceRecord, want: &ResourceRecord, what: &str) {
    assert_eq!(got.id, want.id, "{what}: id");
    assert_eq!(got.name, want.name, "{what}: name");
    assert_eq!(got.query, want.query, "{what}: query");
    assert_eq!(got.columns, want.columns, "{what}: columns");
    assert_eq!(got.total_count, want.total_count, "{what}: total_count");
    assert_eq!(got.sample, want.sample, "{what}: sample rows");
    assert_eq!(
        got.created_at, want.created_at,
        "{what}: created_at (keep at least microseconds)"
    );
    assert_eq!(
        got.expires_at, want.expires_at,
        "{what}: expires_at (keep at least microseconds)"
    );
    assert_eq!(got.access_count, want.access_count, "{what}: access_count");
    assert_eq!(
        got.last_accessed_at, want.last_accessed_at,
        "{what}: last_accessed_at"
    );
    assert_eq!(got.owner, want.owner, "{what}: owner");
    assert_eq!(got.metadata, want.metadata, "{what}: metadata");
    assert_eq!(got.consistency, want.consistency, "{what}: consistency");
    let text = |r: &ResourceRecord| serde_json::to_string(r).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(
        text(got),
        text(want),
        "{what}: serialized record differs (JSON object keys must keep their order)"
    );
}

/// Every field of a record survives `save` then `get`: unicode text, nested JSON in its key order, every
/// JSON type including integers beyond `f64` precision, every column type, owner present or absent,
/// timestamps to the microsecond, metadata of any JSON type, consistency `snapshot` and `live`.
pub async fn round_trip_every_field(store: &dyn ResourceStore) {
    let now = base_now();
    let rich = rich_record(now);
    let minimal = minimal_record(now);
    let mut odd = record("odd metadata", now, Some(now + Duration::minutes(5)));
    odd.query.params = serde_json::json!([3, 2, 1]);
    odd.metadata = serde_json::json!("just a string");
    odd.owner = Some(String::new());
    odd.consistency = dual_core::consistency::Consistency::Snapshot;
    for (what, saved) in [
        ("rich record", &rich),
        ("minimal record", &minimal),
        ("odd record", &odd),
    ] {
        store.save(saved).await.or_panic("save");
        let got = get_found(store, saved.id, now, what).await;
        assert_same(&got, saved, what);
    }
    // Reading twice changes nothing: `get` does not count an access.
    let again = get_found(store, rich.id, now, "rich record read again").await;
    assert_same(&again, &rich, "rich record read again");
}

/// `save` of an existing id replaces the whole record, expiry included: the old expiry no longer
/// applies and no longer shows in `find_expired` or `purge_expired`.
pub async fn save_replaces(store: &dyn ResourceStore) {
    let now = base_now();
    let first = saved_record(store, "first", now, Some(now + Duration::minutes(1))).await;
    store
        .record_access(first.id, dual_store::Viewer::Anonymous, now)
        .await
        .or_panic("record_access");

    let mut second = rich_record(now);
    second.id = first.id;
    second.expires_at = Some(now + Duration::minutes(60));
    store.save(&second).await.or_panic("save (replace)");
    let later = now + Duration::minutes(2);
    let got = get_found(store, first.id, later, "replaced record after old expiry").await;
    assert_same(&got, &second, "replaced record");
    expect_none_expired(
        store,
        later,
        "the replaced record's old expiry must not stay in the expiry index",
    )
    .await;
    assert_eq!(
        store.purge_expired(later).await.or_panic("purge_expired"),
        0,
        "purge after replace"
    );

    // Replacing with a pinned version removes the expiry; replacing a pinned one adds it back.
    let mut pinned = second.clone();
    pinned.expires_at = None;
    store.save(&pinned).await.or_panic("save (pinned)");
    let far = now + Duration::days(365);
    let got = get_found(store, first.id, far, "record replaced by a pinned one").await;
    assert_same(&got, &pinned, "record replaced by a pinned one");
    expect_none_expired(store, far, "pinned by replace").await;

    let mut expiring = pinned.clone();
    expiring.expires_at = Some(now + Duration::minutes(3));
    store.save(&expiring).await.or_panic("save (expiring again)");
    expect_get(store, first.id, far, &Lookup::Expired, "re-expiring replace").await;
    assert_eq!(
        store.find_expired(far, 10).await.or_panic("find_expired"),
        vec![first.id]
    );
    assert_eq!(
        store.purge_expired(far).await.or_panic("purge_expired"),
        1,
        "purge of replaced record"
    );
    expect_get(store, first.id, now, &Lookup::Missing, "purged record").await;
}
