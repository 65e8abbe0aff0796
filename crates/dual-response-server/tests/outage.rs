//! Store outages seen from the outside: a `dual-response serve` process reaches Redis or PostgreSQL
//! through a TCP proxy in the test, which cuts and restores it (the shared services are never stopped).
//! While cut, REST answers 503 `storage_error` with `retryable: true` and the `query` tool an error
//! result, both in bounded time; after the restore the same process recovers by itself; and
//! dual-client's retries ride through a short outage.
//!
//! Needs the services of `DUAL_TEST_REDIS_URL` / `DUAL_TEST_POSTGRES_URL` (feature `services`); fails
//! (never skips) without them.
#![cfg(feature = "services")]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_client::{ClientError, DualResponseClient, FetchOptions, ParsedDualResponse};
use dual_core::error::ErrorCode;
use dual_testkit::proxy::{Mode, Proxy};
use dual_testkit::wait::done_within;
use support::{
    Backend, Instance, LIMIT, Namespace, SQL, TempDb, create_via_mcp, query, rest_client, text_of, within,
};
use tokio::time::timeout;

/// The server's store operation timeout in these tests (`--store-timeout-ms`).
const STORE_TIMEOUT_MS: &str = "500";
/// How long a failing REST or MCP call may take while the store is cut.
const FAIL_WITHIN: Duration = Duration::from_secs(5);
/// How long the server may take to recover after the restore.
const RECOVER_WITHIN: Duration = Duration::from_secs(20);

struct Setup {
    // Field order is drop order: the process dies before the namespace is cleaned up.
    instance: Instance,
    proxy: Arc<Proxy>,
    _db: TempDb,
    _namespace: Namespace,
}

async fn setup(backend: Backend) -> Setup {
    let namespace = Namespace::new(backend).await;
    let db = TempDb::new();
    let proxy = Proxy::start(backend.upstream()).await.expect("the proxy starts");
    let instance = Instance::start(
        &db.path(),
        &backend.url_through(proxy.addr()),
        namespace.prefix(),
        &["--store-timeout-ms", STORE_TIMEOUT_MS],
    )
    .await;
    Setup {
        instance,
        proxy: Arc::new(proxy),
        _db: db,
        _namespace: namespace,
    }
}

/// Asserts `call` fails within [`FAIL_WITHIN`] with 503 `storage_error`, `retryable: true`.
async fn assert_storage_error<T: std::fmt::Debug>(
    what: &str,
    call: impl Future<Output = Result<T, ClientError>>,
) {
    let started = Instant::now();
    let outcome = timeout(FAIL_WITHIN, call).await;
    let Ok(outcome) = outcome else {
        panic!("{what}: no answer within {FAIL_WITHIN:?} while the store is cut");
    };
    let error = outcome.expect_err("the store is cut");
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503), "{what}: {error}");
    let body = error.server_error().expect("a JSON error body");
    assert_eq!(body.error, ErrorCode::StorageError, "{what}: {body:?}");
    assert!(body.retryable, "{what}: {body:?}");
    assert!(error.is_retryable(), "{what}: {error}");
    done_within(what, started, FAIL_WITHIN);
}

/// Polls `probe` until it succeeds or [`RECOVER_WITHIN`] passes.
async fn eventually<F, Fut, T, E>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    let started = Instant::now();
    loop {
        let last = match timeout(FAIL_WITHIN, probe()).await {
            Ok(Ok(value)) => return value,
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer".to_owned(),
        };
        assert!(
            started.elapsed() < RECOVER_WITHIN,
            "{what}: no recovery within {RECOVER_WITHIN:?}; last: {last}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// REST and MCP fail cleanly while the store is cut (`mode`), and recover by themselves.
async fn fails_cleanly_and_recovers(backend: Backend, mode: Mode) {
    let mut setup = setup(backend).await;
    let client = rest_client(&setup.instance);
    let created = create_via_mcp(&setup.instance, &client).await;
    created
        .fetch(FetchOptions::new().limit(5))
        .await
        .expect("healthy");
    let mcp = support::mcp(&setup.instance).await;

    setup.proxy.set(mode);
    assert_storage_error("metadata", created.metadata()).await;
    assert_storage_error("page", created.fetch(FetchOptions::new().limit(5))).await;
    let mut pin = created.clone();
    assert_storage_error("pin", pin.pin()).await;
    assert_storage_error("delete", created.delete()).await;

    let started = Instant::now();
    let result = query(&mcp, SQL).await;
    done_within("tools/call", started, FAIL_WITHIN);
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = text_of(&result);
    assert!(text.contains("storage unavailable"), "{text}");
    assert!(!text.contains("127.0.0.1"), "no store address leaks: {text}");
    assert!(setup.instance.is_running(), "{}", setup.instance.log());

    setup.proxy.set(Mode::Open);
    let metadata = eventually("REST", || created.metadata()).await;
    assert!(metadata.expires_at.is_some());
    let recovered = eventually("MCP", || async {
        let result = query(&mcp, SQL).await;
        match result.is_error {
            Some(false) => Ok(result),
            _ => Err(text_of(&result)),
        }
    })
    .await;
    let parsed = dual_rmcp::client::parse_call_tool_result(&recovered, &client).expect("a dual response");
    let page = parsed
        .fetch(FetchOptions::new().limit(3))
        .await
        .expect("the new resource");
    assert_eq!(page.returned_count, 3);
    assert!(setup.instance.is_running(), "{}", setup.instance.log());
    let log = setup.instance.log();
    assert!(!log.contains("panicked"), "{log}");
    let _ = mcp.cancel().await;
}

/// A client with retries rides through a ~1 s outage without the caller seeing it.
async fn client_retries_ride_through(backend: Backend) {
    let mut setup = setup(backend).await;
    let created = create_via_mcp(&setup.instance, &rest_client(&setup.instance)).await;
    let patient = DualResponseClient::builder()
        .base_url(setup.instance.rest_url())
        .max_retries(20)
        .retry_backoff(Duration::from_millis(100), Duration::from_millis(500))
        .timeout(Duration::from_secs(5))
        .build()
        .expect("a client");
    let resource: ParsedDualResponse = patient
        .resource(created.resource_uri().expect("a resource URI"))
        .expect("a handle");

    for call in ["metadata", "page"] {
        setup.proxy.set(Mode::Refuse);
        // The outage is real: a call without retries fails.
        assert_storage_error("no retries", created.metadata()).await;
        let proxy = Arc::clone(&setup.proxy);
        let restore = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            proxy.set(Mode::Open);
        });
        let started = Instant::now();
        match call {
            "metadata" => {
                let metadata = resource.metadata().await.expect("retries ride through");
                assert_eq!(metadata.total_count, created.total_count().unwrap_or_default());
            }
            _ => {
                let page = resource
                    .fetch(FetchOptions::new().offset(2).limit(4))
                    .await
                    .expect("retries ride through");
                assert_eq!(page.data, created.sample()[2..6]);
            }
        }
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(900),
            "{call}: answered in {waited:?}, before the restore"
        );
        restore.await.expect("the restore task");
    }
    assert!(setup.instance.is_running(), "{}", setup.instance.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_refused_fails_cleanly_and_recovers() {
    within(LIMIT, fails_cleanly_and_recovers(Backend::Redis, Mode::Refuse)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_blackholed_fails_cleanly_and_recovers() {
    within(LIMIT, fails_cleanly_and_recovers(Backend::Redis, Mode::Blackhole)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_refused_fails_cleanly_and_recovers() {
    within(LIMIT, fails_cleanly_and_recovers(Backend::Postgres, Mode::Refuse)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_blackholed_fails_cleanly_and_recovers() {
    within(
        LIMIT,
        fails_cleanly_and_recovers(Backend::Postgres, Mode::Blackhole),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_client_retries_ride_through_an_outage() {
    within(LIMIT, client_retries_ride_through(Backend::Redis)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_client_retries_ride_through_an_outage() {
    within(LIMIT, client_retries_ride_through(Backend::Postgres)).await;
}
