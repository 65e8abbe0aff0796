//! The Redis store against a real Redis (`DUAL_TEST_REDIS_URL`, feature `services`), in one test
//! binary: `suite.rs` runs the store conformance suite, `outage.rs` the outages through a proxy, and
//! this file what the store does beyond the suite: its data layout, native TTLs, the expiry index and
//! the pinned set, the query state `update_query` writes, key-prefix isolation, sub-microsecond
//! expiry, and its errors. `support.rs` holds the per-test key namespace and the fixtures;
//! `../no_server.rs` has the tests that need no server.
#![cfg(feature = "services")]

mod outage;
mod suite;
mod support;

use std::time::Duration as StdDuration;

use dual_core::{
    ResourceId,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use dual_store::{Access, Lookup, ResourceStore, Viewer};
use dual_store_redis::RedisStore;

use redis::AsyncCommands;
use support::{Namespace, record};
use time::{Duration, OffsetDateTime};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn save_sets_a_ttl_of_time_left_plus_grace_and_pin_persists() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store_with_grace(StdDuration::from_secs(600)).await;
    let now = OffsetDateTime::now_utc();
    let fifteen_minutes = record(now, Some(now + Duration::minutes(15)));
    let (store, mut raw, saved, key) = namespace.save(store, fifteen_minutes).await?;

    let ttl: i64 = raw.pttl(&key).await?;
    let want = (15 * 60 + 600) * 1_000;
    assert!(
        (want - 5_000..=want).contains(&ttl),
        "PTTL {ttl} ms, want about {want} ms"
    );
    let index = format!("{}expiry", store.key_prefix());
    let score: Option<i64> = raw.zscore(&index, saved.id.to_string()).await?;
    assert_eq!(
        score,
        Some((saved.expires_at.map_or(0, |t| t.unix_timestamp_nanos()) / 1_000) as i64)
    );

    let Lookup::Found(pinned) = store.pin(saved.id, now).await? else {
        panic!("pin of a live record");
    };
    assert_eq!(pinned.expires_at, None);
    assert_eq!(raw.pttl::<_, i64>(&key).await?, -1, "a pinned record has no TTL");
    let score: Option<i64> = raw.zscore(&index, saved.id.to_string()).await?;
    assert_eq!(score, None, "a pinned record leaves the expiry index");
    Ok(())
}

#[tokio::test]
async fn the_pinned_set_follows_saves_pins_and_deletes() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store().await;
    let mut raw = namespace.raw().await;
    let now = OffsetDateTime::now_utc();
    let mut saved = record(now, None);
    store.save(&saved).await?;
    assert_eq!(
        membership(&mut raw, &store, saved.id).await?,
        (true, false),
        "saved pinned"
    );
    saved.expires_at = Some(now + Duration::minutes(5));
    store.save(&saved).await?;
    assert_eq!(
        membership(&mut raw, &store, saved.id).await?,
        (false, true),
        "saved again with an expiry"
    );
    let Lookup::Found(_) = store.pin(saved.id, now).await? else {
        panic!("pin of a live record");
    };
    assert_eq!(
        membership(&mut raw, &store, saved.id).await?,
        (true, false),
        "pinned"
    );
    assert_eq!(store.purge_expired(now + Duration::days(1)).await?, 0);
    assert!(store.find_expired(now + Duration::days(1), 10).await?.is_empty());
    assert_eq!(
        membership(&mut raw, &store, saved.id).await?,
        (true, false),
        "purges leave pinned ids alone"
    );
    assert_eq!(store.live_count(now + Duration::days(1)).await?, 1);
    assert!(store.delete(saved.id).await?);
    assert_eq!(
        membership(&mut raw, &store, saved.id).await?,
        (false, false),
        "deleted"
    );
    assert_eq!(store.live_count(now).await?, 0);
    let left: usize = raw.scard(format!("{}pinned", store.key_prefix())).await?;
    assert_eq!(left, 0);
    Ok(())
}

/// Whether `id` is in the pinned set and whether it is in the expiry index.
async fn membership(
    raw: &mut redis::aio::MultiplexedConnection,
    store: &RedisStore,
    id: ResourceId,
) -> redis::RedisResult<(bool, bool)> {
    let pinned: bool = raw
        .sismember(format!("{}pinned", store.key_prefix()), id.to_string())
        .await?;
    let score: Option<i64> = raw
        .zscore(format!("{}expiry", store.key_prefix()), id.to_string())
        .await?;
    Ok((pinned, score.is_some()))
}

#[tokio::test]
async fn an_already_expired_record_is_kept_for_the_grace_window() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store_with_grace(StdDuration::from_secs(60)).await;
    let now = OffsetDateTime::now_utc();
    let expired = record(now - Duration::hours(3), Some(now - Duration::hours(2)));
    let (store, mut raw, saved, key) = namespace.save(store, expired).await?;
    let ttl: i64 = raw.pttl(&key).await?;
    assert!(
        (55_000..=60_000).contains(&ttl),
        "PTTL {ttl} ms: the grace window alone"
    );
    assert_eq!(store.get(saved.id, now).await?, Lookup::Expired);
    Ok(())
}

#[tokio::test]
async fn records_redis_dropped_are_missing_and_leave_the_index() -> TestResult {
    let namespace = Namespace::new();
    let now = OffsetDateTime::now_utc();
    let (store, mut raw, dropped, key) = namespace
        .saved(record(now, Some(now + Duration::minutes(1))))
        .await?;
    let kept = record(now, Some(now + Duration::minutes(2)));
    store.save(&kept).await?;
    // What Redis does by itself once the grace window has passed.
    let _: usize = raw.del(&key).await?;

    let later = now + Duration::minutes(5);
    assert_eq!(store.get(dropped.id, later).await?, Lookup::Missing);
    assert_eq!(store.find_expired(later, 10).await?, vec![kept.id]);
    let index = format!("{}expiry", store.key_prefix());
    assert_eq!(store.live_count(later).await?, 0, "nothing is live at `later`");
    let left: usize = raw.zcard(&index).await?;
    assert_eq!(left, 1, "find_expired removed the dangling index entry");
    assert_eq!(
        store.purge_expired(later).await?,
        1,
        "only the record still stored counts"
    );
    let left: usize = raw.zcard(&index).await?;
    assert_eq!(left, 0);
    Ok(())
}

#[tokio::test]
async fn expiry_is_exact_to_the_nanosecond() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store().await;
    let now = OffsetDateTime::now_utc();
    let at = now.replace_nanosecond(123_456_789)? + Duration::minutes(10);
    let saved = record(now, Some(at));
    store.save(&saved).await?;
    let just_before = at - Duration::nanoseconds(1);
    let Lookup::Found(got) = store.get(saved.id, just_before).await? else {
        panic!("1 ns before expires_at the record is live");
    };
    assert_eq!(got, saved, "timestamps round-trip to the nanosecond");
    assert!(matches!(
        store
            .record_access(saved.id, Viewer::Anonymous, just_before)
            .await?,
        Access::Counted(_)
    ));
    assert_eq!(
        store.record_access(saved.id, Viewer::Anonymous, at).await?,
        Access::Expired
    );
    assert_eq!(
        store.live_count(just_before).await?,
        1,
        "live_count 1 ns before, in the same microsecond"
    );
    assert_eq!(store.live_count(at).await?, 0, "live_count at expires_at");
    assert!(store.find_expired(just_before, usize::MAX).await?.is_empty());
    assert_eq!(
        store.purge_expired(just_before).await?,
        0,
        "same microsecond, 1 ns early"
    );
    assert_eq!(store.find_expired(at, usize::MAX).await?, vec![saved.id]);
    assert_eq!(store.purge_expired(at).await?, 1);
    Ok(())
}

#[tokio::test]
async fn purges_in_batches() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.builder().purge_batch(3).connect().await?;
    dual_testkit::store::purges_in_batches(&store, OffsetDateTime::now_utc()).await;
    Ok(())
}

#[tokio::test]
async fn prefixes_isolate_stores() -> TestResult {
    let namespace = Namespace::new();
    let first = namespace.store().await;
    let second = namespace.store().await;
    let now = OffsetDateTime::now_utc();
    let saved = record(now, Some(now + Duration::minutes(1)));
    first.save(&saved).await?;
    assert_eq!(second.get(saved.id, now).await?, Lookup::Missing);
    assert_eq!(second.purge_expired(now + Duration::hours(1)).await?, 0);
    assert!(!second.delete(saved.id).await?);
    assert_eq!(second.live_count(now).await?, 0);
    assert_eq!(first.live_count(now).await?, 1);
    assert_eq!(
        first.get(saved.id, now + Duration::hours(1)).await?,
        Lookup::Expired
    );
    Ok(())
}

#[tokio::test]
async fn a_corrupt_record_is_reported_not_served() -> TestResult {
    let namespace = Namespace::new();
    let (store, mut raw, saved, key) = namespace.saved_pinned().await?;
    let _: usize = raw.hset(&key, "rec", "{not json").await?;
    dual_testkit::store::reported_not_served(&store, saved.id, saved.created_at, "record JSON").await;
    Ok(())
}

#[tokio::test]
async fn update_query_writes_only_the_query_field_and_keeps_the_ttl() -> TestResult {
    let namespace = Namespace::new();
    let now = OffsetDateTime::now_utc();
    let mut pending = record(now, Some(now + Duration::minutes(15)));
    pending.status = ResourceStatus::Pending;
    pending.lease_expires_at = Some(now + Duration::seconds(15));
    let (store, mut raw, saved, key) = namespace.saved(pending).await?;
    let rec_before: String = raw.hget(&key, "rec").await?;
    let ttl_before: i64 = raw.pttl(&key).await?;
    let has_query: bool = raw.hexists(&key, "q").await?;
    assert!(!has_query, "a save writes no query field");

    let mut update = saved.clone();
    update.status = ResourceStatus::Failed;
    update.total_count = 9_007_199_254_740_993;
    update.lease_expires_at = None;
    update.failure = Some(QueryFailure::new(FailureCode::QueryTimeout, "«x» 🎓"));
    let sample = serde_json::json!({
        "z": u64::MAX, "a": i64::MIN, "m": 6.022_140_76e23_f64, "b": 0.1_f64, "k": {"y": [1, null], "x": "ü"},
    });
    update.sample = vec![sample.as_object().cloned().unwrap_or_default()].into();
    assert!(store.update_query(&update).await?);
    let ttl_after: i64 = raw.pttl(&key).await?;
    assert!(
        (ttl_before - 5_000..=ttl_before).contains(&ttl_after),
        "PTTL {ttl_after} ms after update_query, {ttl_before} ms before: the TTL is kept"
    );
    let rec_after: String = raw.hget(&key, "rec").await?;
    assert_eq!(rec_after, rec_before, "the saved JSON is left byte for byte");
    let query: String = raw.hget(&key, "q").await?;
    assert!(query.contains(r#""total_count":9007199254740993"#), "{query}");

    // Every read path applies the query field: get, and the scripts of record_access and pin.
    let Lookup::Found(got) = store.get(saved.id, now).await? else {
        panic!("get after update_query");
    };
    assert_eq!(got, update);
    assert_eq!(
        serde_json::to_string(&got.sample)?,
        serde_json::to_string(&update.sample)?,
        "big integers, floats and key order are kept"
    );
    let Access::Counted(accessed) = store.record_access(saved.id, Viewer::Anonymous, now).await? else {
        panic!("record_access after update_query");
    };
    assert_eq!(
        (accessed.status, accessed.total_count),
        (ResourceStatus::Failed, update.total_count)
    );
    assert_eq!(accessed.failure, update.failure);
    let Lookup::Found(pinned) = store.pin(saved.id, now).await? else {
        panic!("pin after update_query");
    };
    assert_eq!(
        (pinned.status, pinned.failure),
        (ResourceStatus::Failed, update.failure.clone())
    );
    assert_eq!(pinned.access_count, 1);

    update.status = ResourceStatus::Ready;
    update.failure = None;
    assert!(store.update_query(&update).await?);
    assert_eq!(
        raw.pttl::<_, i64>(&key).await?,
        -1,
        "a pinned record stays without TTL"
    );

    // A save replaces the whole record: the query field goes with the rest.
    store.save(&saved).await?;
    let has_query: bool = raw.hexists(&key, "q").await?;
    assert!(!has_query, "a save drops the query field of an earlier update");
    let Lookup::Found(got) = store.get(saved.id, now).await? else {
        panic!("get after the second save");
    };
    assert_eq!(got, saved);

    let missing = record(now, None);
    assert!(!store.update_query(&missing).await?);
    let exists: bool = raw
        .exists(format!("{}r:{}", store.key_prefix(), missing.id))
        .await?;
    assert!(!exists, "update_query of a missing record writes no key");
    Ok(())
}

#[tokio::test]
async fn a_corrupt_query_field_is_reported_not_served() -> TestResult {
    let namespace = Namespace::new();
    let now = OffsetDateTime::now_utc();
    let five_minutes = record(now, Some(now + Duration::minutes(5)));
    let (store, mut raw, saved, key) = namespace.saved(five_minutes).await?;
    assert!(store.update_query(&saved).await?);
    let query: String = raw.hget(&key, "q").await?;
    let unknown = query.replace(r#""status":"ready""#, r#""status":"done""#);
    assert_ne!(unknown, query, "{query}");
    for corrupt in [unknown.as_str(), "{not json", r#"{"status":"ready"}"#] {
        let _: usize = raw.hset(&key, "q", corrupt).await?;
        dual_testkit::store::reported_not_served(&store, saved.id, now, "query state JSON").await;
    }
    Ok(())
}

#[tokio::test]
async fn a_record_saved_before_statuses_reads_as_ready() -> TestResult {
    let namespace = Namespace::new();
    let (store, mut raw, saved, key) = namespace.saved_pinned().await?;
    // The JSON an earlier release wrote: no status, lease or failure.
    let mut old = serde_json::to_value(&saved)?;
    if let Some(fields) = old.as_object_mut() {
        for field in ["status", "lease_expires_at", "failure"] {
            assert!(fields.remove(field).is_some(), "{field} is written");
        }
    }
    let _: usize = raw.hset(&key, "rec", serde_json::to_string(&old)?).await?;
    let Lookup::Found(got) = store.get(saved.id, saved.created_at).await? else {
        panic!("an old record is served");
    };
    assert_eq!(got, saved, "read as ready, without lease or failure");
    Ok(())
}

#[tokio::test]
async fn a_stores_debug_output_names_its_prefix() {
    let namespace = Namespace::new();
    let store = namespace.store().await;
    dual_testkit::store::connect::debug_shows(&store, store.key_prefix());
}

#[tokio::test]
async fn record_access_reads_the_owner_of_a_record_saved_before_the_owner_field() -> TestResult {
    let namespace = Namespace::new();
    let now = OffsetDateTime::now_utc();
    let mut owned = record(now, Some(now + Duration::minutes(15)));
    owned.owner = Some("tenant-a".to_owned());
    let (store, mut raw, saved, key) = namespace.saved(owned).await?;
    let owner: Option<String> = raw.hget(&key, "o").await?;
    assert_eq!(
        owner.as_deref(),
        Some("=tenant-a"),
        "a save writes the owner field"
    );
    // As an earlier release saved it: the owner only inside the JSON.
    let _: usize = raw.hdel(&key, "o").await?;
    for viewer in [
        Viewer::Anonymous,
        Viewer::Owner("tenant-b"),
        Viewer::Owner("tenant"),
    ] {
        assert_eq!(
            store.record_access(saved.id, viewer, now).await?,
            Access::NotVisible,
            "{viewer:?}"
        );
    }
    let Access::Counted(seen) = store
        .record_access(saved.id, Viewer::Owner("tenant-a"), now)
        .await?
    else {
        panic!("the owner sees an older record");
    };
    assert_eq!(seen.access_count, 1, "only the owner's access counted");
    let unowned = record(now, Some(now + Duration::minutes(15)));
    let (store, mut raw, saved, key) = namespace.save(store, unowned).await?;
    let _: usize = raw.hdel(&key, "o").await?;
    assert!(matches!(
        store.record_access(saved.id, Viewer::Anonymous, now).await?,
        Access::Counted(_)
    ));
    // An older record whose JSON cannot be read is reported, not served or counted.
    let _: usize = raw.hset(&key, "rec", "{not json").await?;
    match store.record_access(saved.id, Viewer::Anonymous, now).await {
        Err(dual_store::StoreError::Corrupt { message, .. }) => {
            assert!(message.contains("owner"), "{message}")
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    Ok(())
}
