//! Several `dual-response serve` processes sharing one Redis or PostgreSQL store: a resource created through
//! instance A's MCP endpoint is served, pinned and deleted through instance B's REST API, outlives A,
//! and a pinned one survives a restart of every instance.
//!
//! Needs the services of `DUAL_TEST_REDIS_URL` / `DUAL_TEST_POSTGRES_URL` (feature `services`); fails
//! (never skips) without them.
#![cfg(feature = "services")]

mod support;

use dual_client::{DualResponseClient, FetchAllOptions, FetchOptions};
use support::{Backend, Instance, LIMIT, Namespace, TempDb, create_via_mcp, id_of, rest_client, within};

/// Rows of [`support::SQL`] on the small dataset.
const ROWS: u64 = dual_response_server::ipeds::dataset::DatasetSize::SMALL.institutions as u64;

async fn start_pair(db: &TempDb, backend: Backend, namespace: &Namespace) -> (Instance, Instance) {
    let (url, path) = (backend.url(), db.path());
    tokio::join!(
        Instance::start(&path, &url, namespace.prefix(), &[]),
        Instance::start(&path, &url, namespace.prefix(), &[]),
    )
}

/// The resource `id` through `client`'s base URL.
fn handle(client: &DualResponseClient, id: &str) -> dual_client::ParsedDualResponse {
    client
        .resource(&format!("resource://{id}"))
        .expect("a resource handle")
}

async fn shared_between_instances(backend: Backend) {
    let namespace = Namespace::new(backend).await;
    let db = TempDb::new();
    let (a, b) = start_pair(&db, backend, &namespace).await;
    assert_ne!(a.addr(), b.addr());
    let via_a = rest_client(&a);
    let via_b = rest_client(&b);

    // Created through A's MCP endpoint, resolved against B's REST API.
    let created = create_via_mcp(&a, &via_b).await;
    assert!(
        created.resource_url().starts_with(&b.rest_url()),
        "{}",
        created.resource_url()
    );
    assert_eq!(created.total_count(), Some(ROWS));
    let id = id_of(&created);

    // Fetched through B: a page, and every row through the streamed export (/data).
    let page = created
        .fetch(FetchOptions::new().offset(5).limit(10))
        .await
        .expect("a page through B");
    assert_eq!((page.total_count, page.returned_count), (ROWS, 10));
    let all = created
        .fetch_all(FetchAllOptions::new())
        .await
        .expect("the export through B");
    assert_eq!(all.len() as u64, ROWS);
    assert_eq!(&all[..created.sample().len()], created.sample());
    assert_eq!(page.data, all[5..15]);
    let metadata = created.metadata().await.expect("metadata through B");
    assert!(metadata.access_count >= 2, "{metadata:?}");
    assert!(metadata.expires_at.is_some());

    // Pinned through B: A sees the pin.
    let mut pinned = created.clone();
    assert!(pinned.pin().await.expect("pin through B").expires_at.is_none());
    let seen_by_a = handle(&via_a, &id).metadata().await.expect("metadata through A");
    assert_eq!(seen_by_a.expires_at, None, "{seen_by_a:?}");
    assert!(seen_by_a.access_count >= metadata.access_count, "{seen_by_a:?}");

    // Deleted through B: gone for both.
    created.delete().await.expect("delete through B");
    for client in [&via_b, &via_a] {
        let error = handle(client, &id)
            .fetch(FetchOptions::new())
            .await
            .expect_err("deleted");
        assert!(error.is_not_found(), "{error}");
    }

    // A second resource created on A, then A killed: B still serves it, A is really gone.
    let survivor = create_via_mcp(&a, &via_b).await;
    let survivor_id = id_of(&survivor);
    a.kill().await;
    let gone = handle(&via_a, &survivor_id)
        .metadata()
        .await
        .expect_err("A is dead");
    assert!(gone.is_connect(), "{gone}");
    let page = handle(&via_b, &survivor_id)
        .fetch(FetchOptions::new().limit(7))
        .await
        .expect("B serves what A created");
    assert_eq!(page.data, survivor.sample()[..7]);

    // A pinned resource (created on B this time, pinned on B) outlives a restart of every instance.
    let mut keep = create_via_mcp(&b, &via_b).await;
    keep.pin().await.expect("pin");
    let keep_id = id_of(&keep);
    let expected = keep.fetch_all(FetchAllOptions::new()).await.expect("rows");
    b.kill().await;

    let (a2, b2) = start_pair(&db, backend, &namespace).await;
    for instance in [&a2, &b2] {
        let client = rest_client(instance);
        let restored = handle(&client, &keep_id);
        let metadata = restored
            .metadata()
            .await
            .expect("the pinned resource after a restart");
        assert_eq!(metadata.expires_at, None);
        assert_eq!(metadata.total_count, ROWS);
        let rows = restored
            .fetch_all(FetchAllOptions::new().batch_size(64))
            .await
            .expect("its rows after a restart");
        assert_eq!(rows, expected);
    }
    // Unpinned but unexpired resources are shared state too.
    let page = handle(&rest_client(&a2), &survivor_id)
        .fetch(FetchOptions::new().limit(3))
        .await
        .expect("an unpinned resource after a restart");
    assert_eq!(page.returned_count, 3);
    a2.kill().await;
    b2.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_instances_share_resources_and_survive_restarts() {
    within(LIMIT, shared_between_instances(Backend::Redis)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_instances_share_resources_and_survive_restarts() {
    within(LIMIT, shared_between_instances(Backend::Postgres)).await;
}
