//! Outage checks for shared stores: the store reaches its service through a [`Proxy`] the test cuts and
//! restores. While cut, every call fails with [`StoreError::Unavailable`] within a bound and nothing
//! panics or hangs; after the restore the same store works again by itself.
//!
//! A backend's test builds its store against [`Proxy::addr`] with short timeouts and calls
//! [`outage_and_recovery`] for each [`Mode`] and [`concurrent_calls_during_an_outage`]. [`run`] does
//! that for a store of a [`Service`], and [`outage_tests!`](crate::outage_tests) writes the three
//! tests:
//!
//! ```text
//! // tests/outage.rs of a backend, with tokio as a dev-dependency:
//! use dual_testkit::services::REDIS;
//! use dual_testkit::store::outage::{self, Outage};
//!
//! async fn check(which: Outage) {
//!     outage::run(REDIS, which, |url| {
//!         RedisStore::builder(url)
//!             .operation_timeout(outage::TIMEOUT)
//!             .connect_timeout(outage::TIMEOUT)
//!             .connect()
//!     })
//!     .await;
//! }
//!
//! dual_testkit::outage_tests!(check);
//! ```

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use dual_core::ResourceRecord;
use time::{Duration, OffsetDateTime};

use super::support::record;
use crate::proxy::{Mode, Proxy};
use crate::services::Service;
use crate::wait::done_within;
use dual_store::{Access, Lookup, ResourceStore, StoreError, Viewer};

/// How long the checks allow: a failing call must fail within `fail_within` (the store's timeout plus
/// scheduling slack), and the store must serve again within `recover_within` of the restore.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Longest time one failing call may take.
    pub fail_within: StdDuration,
    /// Longest time the store may take to come back after a restore.
    pub recover_within: StdDuration,
}

/// The operation and connect timeout a store under [`run`] should be built with.
pub const TIMEOUT: StdDuration = StdDuration::from_millis(400);

/// The bounds [`run`] checks a store built with [`TIMEOUT`] against: a failing call may take the
/// timeout plus scheduling slack on a busy machine; the store may take a while to come back after a
/// restore.
pub const BOUNDS: Bounds = Bounds {
    fail_within: StdDuration::from_secs(3),
    recover_within: StdDuration::from_secs(15),
};

/// One of the outages [`run`] simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outage {
    /// Connections are refused: [`outage_and_recovery`] with [`Mode::Refuse`].
    Refused,
    /// The network goes silent: [`outage_and_recovery`] with [`Mode::Blackhole`].
    Silent,
    /// 32 calls at once into a silent network: [`concurrent_calls_during_an_outage`].
    Concurrent,
}

/// Starts a [`Proxy`] to `service`, connects a store through it with `connect` (given the service's
/// URL with the proxy's address; build the store with [`TIMEOUT`]), and puts it through `outage`
/// within [`BOUNDS`].
///
/// # Panics
/// When the service is unreachable (with how to start it), when `connect` fails, or when the store
/// misbehaves.
pub async fn run<S, E, F, Fut>(service: Service, outage: Outage, connect: F)
where
    S: ResourceStore + 'static,
    E: Display,
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<S, E>>,
{
    let target = service.addr().unwrap_or_else(|e| service.unreachable(e));
    let proxy = Proxy::start(target)
        .await
        .unwrap_or_else(|e| panic!("cannot start a proxy to {target}: {e}"));
    let url = service
        .url_through(proxy.addr())
        .unwrap_or_else(|e| service.unreachable(e));
    let store = connect(url).await.unwrap_or_else(|e| service.unreachable(e));
    match outage {
        Outage::Refused => outage_and_recovery(&proxy, &store, Mode::Refuse, BOUNDS).await,
        Outage::Silent => outage_and_recovery(&proxy, &store, Mode::Blackhole, BOUNDS).await,
        Outage::Concurrent => concurrent_calls_during_an_outage(&proxy, Arc::new(store), BOUNDS).await,
    }
}

/// The three outage tests of a shared store, each a multi-thread `#[tokio::test]` that calls
/// `$check(outage).await` for one [`Outage`](crate::store::outage::Outage):
/// `refused_connections_fail_fast_and_recover`, `a_silent_network_times_out_and_recovers` and
/// `concurrent_calls_during_an_outage_all_fail_in_bounded_time`. `$check` usually calls
/// [`run`](crate::store::outage::run); the calling crate needs tokio (features `macros`,
/// `rt-multi-thread`) as a dev-dependency.
#[macro_export]
macro_rules! outage_tests {
    ($check:path) => {
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn refused_connections_fail_fast_and_recover() {
            $check($crate::store::outage::Outage::Refused).await;
        }

        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_silent_network_times_out_and_recovers() {
            $check($crate::store::outage::Outage::Silent).await;
        }

        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn concurrent_calls_during_an_outage_all_fail_in_bounded_time() {
            $check($crate::store::outage::Outage::Concurrent).await;
        }
    };
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
            Box::pin(async move { store.record_access(id, Viewer::Anonymous, now).await.map(drop) }),
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
            matches!(result, Err(StoreError::Unavailable { .. })),
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
        .record_access(saved.id, Viewer::Anonymous, now)
        .await
        .expect("read before the outage");
    assert!(
        matches!(before, Access::Counted(_)),
        "the record is live before the outage"
    );

    proxy.set(mode);
    assert_unavailable(store, &saved, now, bounds).await;
    // Still failing, not hanging, on a second round.
    assert_unavailable(store, &saved, now, bounds).await;

    proxy.set(Mode::Open);
    recovers(store, &saved, now, bounds).await;
    let after = store
        .record_access(saved.id, Viewer::Anonymous, now)
        .await
        .expect("read after the outage");
    let Access::Counted(after) = after else {
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
            tokio::spawn(async move { store.record_access(saved.id, Viewer::Anonymous, now).await })
        })
        .collect();
    for call in calls {
        let result = call.await.expect("task");
        assert!(
            matches!(result, Err(StoreError::Unavailable { .. })),
            "{result:?}"
        );
    }
    done_within("32 concurrent calls", started, bounds.fail_within);

    proxy.set(Mode::Open);
    recovers(store.as_ref(), &saved, now, bounds).await;
    store.delete(saved.id).await.expect("delete after the outage");
}
