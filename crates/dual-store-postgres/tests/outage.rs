//! Outages: the store reaches PostgreSQL through a proxy the test cuts and restores. While cut, every call
//! fails with `StoreError::Unavailable` within a bound and nothing panics; after the restore the same
//! store works again by itself.

mod support;

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration as StdDuration, Instant};

use dual_core::ResourceRecord;
use dual_store::suite::proxy::{Mode, Proxy};
use dual_store::{Lookup, ResourceStore, StoreError};
use dual_store_postgres::PostgresStore;
use support::{Namespace, record};
use time::{Duration, OffsetDateTime};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The store's operation timeout in these tests.
const TIMEOUT: StdDuration = StdDuration::from_millis(400);
/// How long a failing call may take: the timeout plus scheduling slack on a busy machine.
const FAIL_WITHIN: StdDuration = StdDuration::from_secs(3);
/// How long the store may take to come back after a restore.
const RECOVER_WITHIN: StdDuration = StdDuration::from_secs(15);

/// The service's address and the test URL with its authority replaced by `{proxy}` (the URL form
/// of `DUAL_TEST_POSTGRES_URL` is needed here, not the key-value form).
fn upstream() -> Result<(SocketAddr, String), Box<dyn std::error::Error>> {
    let url = support::postgres_url();
    let (scheme, rest) = url
        .split_once("://")
        .ok_or("DUAL_TEST_POSTGRES_URL is not a URL")?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (userinfo, host_port) = match rest[..end].rsplit_once('@') {
        Some((userinfo, host_port)) => (format!("{userinfo}@"), host_port),
        None => (String::new(), &rest[..end]),
    };
    let host_port = if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:5432")
    };
    let addr = host_port
        .to_socket_addrs()?
        .next()
        .ok_or("DUAL_TEST_POSTGRES_URL does not resolve")?;
    Ok((addr, format!("{scheme}://{userinfo}{{proxy}}{}", &rest[end..])))
}

async fn store_through(
    namespace: &Namespace,
    proxy: &Proxy,
    template: &str,
) -> Result<PostgresStore, Box<dyn std::error::Error>> {
    Ok(namespace
        .builder_at(template.replace("{proxy}", &proxy.addr().to_string()))
        .pool_size(4)
        .operation_timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .connect()
        .await?)
}

/// One store call, its answer reduced to success or the error.
type Call<'a> = std::pin::Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;

/// Every kind of call fails as `Unavailable`, each within [`FAIL_WITHIN`].
async fn assert_unavailable(store: &PostgresStore, saved: &ResourceRecord, now: OffsetDateTime) {
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
        assert!(took < FAIL_WITHIN, "{name} took {took:?} to fail");
    }
}

/// Retries `get` until it succeeds; the retry backoff is a client's policy, not a wait for time.
async fn recovers(store: &PostgresStore, saved: &ResourceRecord, now: OffsetDateTime) -> Result<(), String> {
    let started = Instant::now();
    let mut last = None;
    while started.elapsed() < RECOVER_WITHIN {
        match store.get(saved.id, now).await {
            Ok(Lookup::Found(got)) if got.id == saved.id => return Ok(()),
            other => last = Some(format!("{other:?}")),
        }
        tokio::time::sleep(StdDuration::from_millis(50)).await;
    }
    Err(format!(
        "the store did not recover within {RECOVER_WITHIN:?}; last answer {last:?}"
    ))
}

async fn outage_and_recovery(mode: Mode) -> TestResult {
    let namespace = Namespace::new();
    let (addr, template) = upstream()?;
    let proxy = Proxy::start(addr).await?;
    let store = store_through(&namespace, &proxy, &template).await?;
    let now = OffsetDateTime::now_utc();
    let saved = record(now, Some(now + Duration::minutes(15)));
    store.save(&saved).await?;
    assert!(matches!(
        store.record_access(saved.id, now).await?,
        Lookup::Found(_)
    ));

    proxy.set(mode);
    assert_unavailable(&store, &saved, now).await;
    // Still failing, not hanging, on a second round.
    assert_unavailable(&store, &saved, now).await;

    proxy.set(Mode::Open);
    recovers(&store, &saved, now).await?;
    let Lookup::Found(after) = store.record_access(saved.id, now).await? else {
        panic!("the record survived the outage");
    };
    assert!(
        after.access_count >= 2,
        "accesses before the outage still count: {}",
        after.access_count
    );
    assert!(store.delete(saved.id).await?);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_fail_fast_and_recover() -> TestResult {
    outage_and_recovery(Mode::Refuse).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_network_times_out_and_recovers() -> TestResult {
    outage_and_recovery(Mode::Blackhole).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_during_an_outage_all_fail_in_bounded_time() -> TestResult {
    let namespace = Namespace::new();
    let (addr, template) = upstream()?;
    let proxy = Proxy::start(addr).await?;
    let store = store_through(&namespace, &proxy, &template).await?;
    let now = OffsetDateTime::now_utc();
    let saved = record(now, Some(now + Duration::minutes(15)));
    store.save(&saved).await?;

    proxy.set(Mode::Blackhole);
    let started = Instant::now();
    let calls: Vec<_> = (0..32)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.record_access(saved.id, now).await })
        })
        .collect();
    for call in calls {
        let result = call.await?;
        assert!(matches!(result, Err(StoreError::Unavailable(_))), "{result:?}");
    }
    assert!(
        started.elapsed() < FAIL_WITHIN,
        "32 concurrent calls took {:?}",
        started.elapsed()
    );

    proxy.set(Mode::Open);
    recovers(&store, &saved, now).await?;
    Ok(())
}
