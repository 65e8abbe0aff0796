//! Outage checks for shared stores: the store reaches its service through a [`Proxy`] the test cuts and
//! restores. While cut, every call fails with [`StoreError::Unavailable`] within a bound and nothing
//! panics or hangs; after the restore the same store works again by itself.
//!
//! A backend's test builds its store against [`Proxy::addr`] with short timeouts and calls
//! [`outage_and_recovery`] for each [`Mode`] and [`concurrent_calls_during_an_outage`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use dual_core::ResourceRecord;
use time::{Duration, OffsetDateTime};

use super::support::record;
use crate::proxy::{Mode, Proxy};
use dual_store::{Lookup, ResourceStore, StoreError};

/// How long the checks allow: a failing call must fail within `fail_within` (the store's timeout plus
/// scheduling slack), and the store must serve again within `recover_within` of the restore.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Longest time one failing call may take.
    pub fail_within: StdDuration,
    /// Longest time the store may take to come back after a restore.
    pub recover_within: StdDuration,
}

type Call<'a> = Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;

/// Every kind of call fails as `Unavailable`, each within `bounds.fail_within`.
async fn assert_unavailable(
    store: &dyn ResourceStore,
    saved: &ResourceRecord,
    now: OffsetDateTime,
    bounds: Bounds,
) {
    let id = saved.id;
    let calls: [(&str, Call<'_>); 7] = [
        ("save", Box::pin(store.save(saved))),
        ("get", Box::pin(async move { store.get(id, now).await.map(drop) })),
        (
            "record_access",
            Box::pin(async move { store.record_access(id, now).await.map(drop) }),
        ),
        ("pin", Box::pin(async move { store.pin(id, now).await.map(drop) })),
        (
            "delete",
            Box::pin(async move { store.delete(id).await.map(drop) }),
        ),
        (
            "find_expired",
            Box::pin(async move { store.find_expired(now, 10).await.map(drop) }),
        ),
        (
            "purge_expired",
            Box::pin(async move { store.purge_expired(now).await.map(drop) }),
        ),
    ];
    for (name, call) in calls {
        let started = Instant::now();
        let result = call.await;
        let took = started.elapsed();
        assert!(
            matches!(result, Err(StoreError::Unavailable(_))),
            "{name} during the outage: {result:?}"
        );
        assert!(took < bounds.fail_within, "{name} took {took:?} to fail");
    }
}

/// Retries `get` until it succeeds; the pause between tries is a client's retry policy, not a wait for time.
async fn recovers(store: &dyn ResourceStore, saved: &ResourceRecord, now: OffsetDateTime, bounds: Bounds) {
    let started = Instant::now();
    let mut last = None;
    while started.elapsed() < bounds.recover_within {
        match store.get(saved.id, now).await {
            Ok(Lookup::Found(got)) if got.id == saved.id => return,
            other => last = Some(format!("{other:?}")),
        }
        tokio::time::sleep(StdDuration::from_millis(50)).await;
    }
    panic!(
        "the store did not recover within {:?}; last answer {last:?}",
        bounds.recover_within
    );
}

/// Saves and reads a record, cuts the proxy in `mode`, checks two rounds of every call fail cleanly,
/// restores it, and checks the same store serves the record again with its earlier access counted.
///
/// # Panics
/// When the store misbehaves, naming the call.
pub async fn outage_and_recovery(proxy: &Proxy, store: &dyn ResourceStore, mode: Mode, bounds: Bounds) {
    let now = OffsetDateTime::now_utc();
    let saved = record("outage", now, Some(now + Duration::minutes(15)));
    store.save(&saved).await.expect("save before the outage");
    let before = store
        .record_access(saved.id, now)
        .await
        .expect("read before the outage");
    assert!(
        matches!(before, Lookup::Found(_)),
        "the record is live before the outage"
    );

    proxy.set(mode);
    assert_unavailable(store, &saved, now, bounds).await;
    // Still failing, not hanging, on a second round.
    assert_unavailable(store, &saved, now, bounds).await;

    proxy.set(Mode::Open);
    recovers(store, &saved, now, bounds).await;
    let after = store
        .record_access(saved.id, now)
        .await
        .expect("read after the outage");
    let Lookup::Found(after) = after else {
        panic!("the record did not survive the outage: {after:?}");
    };
    assert!(
        after.access_count >= 2,
        "accesses before the outage still count: {}",
        after.access_count
    );
    assert!(store.delete(saved.id).await.expect("delete after the outage"));
}

/// 32 concurrent `record_access` calls into a silent network all fail as `Unavailable` within
/// `bounds.fail_within` together, and the store recovers after the restore.
///
/// # Panics
/// When the store misbehaves.
pub async fn concurrent_calls_during_an_outage(proxy: &Proxy, store: Arc<dyn ResourceStore>, bounds: Bounds) {
    let now = OffsetDateTime::now_utc();
    let saved = record("outage-concurrent", now, Some(now + Duration::minutes(15)));
    store.save(&saved).await.expect("save before the outage");

    proxy.set(Mode::Blackhole);
    let started = Instant::now();
    let calls: Vec<_> = (0..32)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.record_access(saved.id, now).await })
        })
        .collect();
    for call in calls {
        let result = call.await.expect("task");
        assert!(matches!(result, Err(StoreError::Unavailable(_))), "{result:?}");
    }
    assert!(
        started.elapsed() < bounds.fail_within,
        "32 concurrent calls took {:?}",
        started.elapsed()
    );

    proxy.set(Mode::Open);
    recovers(store.as_ref(), &saved, now, bounds).await;
    store.delete(saved.id).await.expect("delete after the outage");
}
