//! Outages: the store reaches Redis through a proxy the test cuts and restores. While cut, every call
//! fails with `StoreError::Unavailable` within a bound and nothing panics; after the restore the same
//! store works again by itself. Needs Redis (feature `services`).
#![cfg(feature = "services")]

mod support;

use std::sync::Arc;
use std::time::Duration as StdDuration;

use dual_store_redis::RedisStore;
use dual_testkit::proxy::{Mode, Proxy};
use dual_testkit::store::outage::{self, Bounds};
use support::{Namespace, REDIS};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The store's operation timeout in these tests.
const TIMEOUT: StdDuration = StdDuration::from_millis(400);
/// A failing call may take the timeout plus scheduling slack on a busy machine; the store may take a
/// while to come back after a restore.
const BOUNDS: Bounds = Bounds {
    fail_within: StdDuration::from_secs(3),
    recover_within: StdDuration::from_secs(15),
};

async fn store_through(
    namespace: &Namespace,
    proxy: &Proxy,
) -> Result<RedisStore, Box<dyn std::error::Error>> {
    Ok(RedisStore::builder(REDIS.url_through(proxy.addr())?)
        .key_prefix(namespace.prefix())
        .operation_timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .connect()
        .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_fail_fast_and_recover() -> TestResult {
    let namespace = Namespace::new();
    let proxy = Proxy::start(REDIS.addr()?).await?;
    let store = store_through(&namespace, &proxy).await?;
    outage::outage_and_recovery(&proxy, &store, Mode::Refuse, BOUNDS).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_network_times_out_and_recovers() -> TestResult {
    let namespace = Namespace::new();
    let proxy = Proxy::start(REDIS.addr()?).await?;
    let store = store_through(&namespace, &proxy).await?;
    outage::outage_and_recovery(&proxy, &store, Mode::Blackhole, BOUNDS).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_during_an_outage_all_fail_in_bounded_time() -> TestResult {
    let namespace = Namespace::new();
    let proxy = Proxy::start(REDIS.addr()?).await?;
    let store = store_through(&namespace, &proxy).await?;
    outage::concurrent_calls_during_an_outage(&proxy, Arc::new(store), BOUNDS).await;
    Ok(())
}
