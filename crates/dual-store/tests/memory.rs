//! `MemoryStore` beyond the conformance suite: `len`/`is_empty`, `close`, shared clones, purges that
//! span several lock batches.

use dual_core::ResourceRecord;
use dual_store::{Access, Lookup, MemoryStore, ResourceStore, StoreError, Viewer};
use time::{Duration, OffsetDateTime};

fn record(now: OffsetDateTime, expires_at: Option<OffsetDateTime>) -> ResourceRecord {
    dual_testkit::store::record("r", now, expires_at)
}

#[tokio::test]
async fn len_counts_records_until_purged() -> Result<(), StoreError> {
    let store = MemoryStore::new();
    let now = OffsetDateTime::now_utc();
    assert!(store.is_empty());
    assert_eq!(store.len(), 0);
    let expiring = record(now, Some(now + Duration::minutes(1)));
    let pinned = record(now, None);
    store.save(&expiring).await?;
    store.save(&pinned).await?;
    store.save(&expiring).await?;
    assert_eq!(store.len(), 2, "saving the same id again replaces");
    assert!(!store.is_empty());
    let later = now + Duration::minutes(2);
    assert_eq!(store.get(expiring.id, later).await?, Lookup::Expired);
    assert_eq!(store.len(), 2, "an expired record is held until purged");
    assert_eq!(store.purge_expired(later).await?, 1);
    assert_eq!(store.len(), 1);
    assert!(store.delete(pinned.id).await?);
    assert!(store.is_empty());
    Ok(())
}

#[tokio::test]
async fn clones_share_one_store() -> Result<(), StoreError> {
    let store = MemoryStore::new();
    let clone = store.clone();
    let now = OffsetDateTime::now_utc();
    let r = record(now, None);
    clone.save(&r).await?;
    assert_eq!(store.get(r.id, now).await?, Lookup::Found(r.clone()));
    store.close().await?;
    assert!(
        matches!(clone.get(r.id, now).await, Err(StoreError::Closed)),
        "closing one handle closes all"
    );
    Ok(())
}

#[tokio::test]
async fn every_operation_fails_after_close() -> Result<(), StoreError> {
    let store = MemoryStore::new();
    let now = OffsetDateTime::now_utc();
    let r = record(now, Some(now + Duration::minutes(1)));
    store.save(&r).await?;
    // Closes, checks that every operation answers `Closed`, and closes again.
    dual_testkit::store::refuses_calls_once_closed(&store).await;
    assert!(store.is_empty(), "close drops every record");
    assert!(
        !StoreError::Closed.is_retryable(),
        "a closed store does not come back"
    );
    Ok(())
}

/// A purge removes expired records in lock-sized batches; counts at and around batch boundaries (1,024)
/// must still be exact, and nothing live may go.
#[tokio::test]
async fn purges_spanning_several_batches_are_exact() -> Result<(), StoreError> {
    for expired in [1_023_usize, 1_024, 1_025, 2_048, 3_001] {
        let store = MemoryStore::new();
        let now = OffsetDateTime::now_utc();
        for i in 0..expired {
            let at = now + Duration::seconds(1) + Duration::microseconds(i as i64);
            store.save(&record(now, Some(at))).await?;
        }
        let live = record(now, Some(now + Duration::hours(1)));
        store.save(&live).await?;
        store.save(&record(now, None)).await?;
        let at = now + Duration::minutes(1);
        assert_eq!(store.live_count(at).await?, 2, "live before purging {expired}");
        assert_eq!(
            store.purge_expired(at).await?,
            expired as u64,
            "purge of {expired}"
        );
        assert_eq!(
            store.len(),
            2,
            "only the live and pinned records remain after purging {expired}"
        );
        assert_eq!(store.live_count(at).await?, 2, "live after purging {expired}");
        assert_eq!(store.live_count(now).await?, 2, "purged records no longer count");
        assert!(matches!(store.get(live.id, at).await?, Lookup::Found(_)));
        assert_eq!(store.purge_expired(at).await?, 0);
    }
    Ok(())
}

#[tokio::test]
async fn works_as_a_trait_object() -> Result<(), StoreError> {
    let store: std::sync::Arc<dyn ResourceStore> = std::sync::Arc::new(MemoryStore::new());
    let now = OffsetDateTime::now_utc();
    let r = record(now, Some(now + Duration::minutes(1)));
    store.save(&r).await?;
    let Access::Counted(seen) = store.record_access(r.id, Viewer::Anonymous, now).await? else {
        panic!("a live record is found");
    };
    assert_eq!(seen.access_count, 1);
    Ok(())
}
