//! Expiry, the sweeper and shutdown, under paused tokio time.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::PageRequest;
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor, ServerErrorCode};
use dual_store::{Clock, MemoryStore};
use serde_json::json;

fn server(store: MemoryStore) -> DualResponseServer {
    server_sweeping_every(store, Duration::from_secs(60))
}

fn server_sweeping_every(store: MemoryStore, interval: Duration) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .store(store)
        .clock(Clock::tokio())
        .cleanup_interval(interval)
        .shared_executor("institutions", common::shared() as Arc<dyn QueryExecutor>)
        .build()
        .expect("valid configuration")
}

async fn create(server: &DualResponseServer, expiration: Duration) -> dual_core::ResourceId {
    server
        .create_response(CreateResponse::new("institutions", json!({"n": 20})).expiration(expiration))
        .await
        .expect("created")
        .id
}

/// Advances the paused clock by `by`, then lets the sweeper's task run.
async fn advance(by: Duration) {
    tokio::time::advance(by).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn expired_resources_are_never_served_even_before_a_sweep() {
    let anyone = Caller::anonymous();
    let store = MemoryStore::new();
    let server = server_sweeping_every(store.clone(), Duration::from_secs(3600));
    let id = create(&server, Duration::from_secs(15 * 60)).await;
    tokio::time::advance(Duration::from_secs(15 * 60 - 1)).await;
    assert!(
        server
            .fetch_page(id, &anyone, &PageRequest::default())
            .await
            .is_ok(),
        "live one second before expiry"
    );
    tokio::time::advance(Duration::from_secs(1)).await;
    // The sweeper runs hourly and has not removed it yet: the store still holds the record.
    assert_eq!(store.len(), 1);
    for code in [
        common::error_code(server.get_resource(id, &anyone).await, "expired"),
        common::error_code(
            server.fetch_page(id, &anyone, &PageRequest::default()).await,
            "expired",
        ),
        common::error_code(server.metadata(id, &anyone).await, "expired"),
        common::error_code(server.pin_resource(id, &anyone).await, "expired"),
        common::error_code(server.stream_rows(id, &anyone, None).await, "expired"),
    ] {
        assert_eq!(code, ServerErrorCode::ResourceExpired);
    }
}

#[tokio::test(start_paused = true)]
async fn pinned_survives_and_the_sweeper_removes_the_rest() {
    let anyone = Caller::anonymous();
    let store = MemoryStore::new();
    let server = server(store.clone());
    let doomed = create(&server, Duration::from_secs(30)).await;
    let pinned = create(&server, Duration::from_secs(30)).await;
    let later = create(&server, Duration::from_secs(3600)).await;
    server.pin_resource(pinned, &anyone).await.expect("pinned");
    assert_eq!(store.len(), 3);

    // Past the first expiry and past one sweep interval: the sweeper ran by itself.
    advance(Duration::from_secs(61)).await;
    assert_eq!(store.len(), 2, "the sweeper removed the expired resource");
    assert_eq!(
        common::error_code(server.get_resource(doomed, &anyone).await, "gone"),
        ServerErrorCode::ResourceNotFound
    );
    assert!(server.get_resource(pinned, &anyone).await.is_ok());
    assert!(server.get_resource(later, &anyone).await.is_ok());

    advance(Duration::from_secs(24 * 3600)).await;
    assert_eq!(store.len(), 1);
    assert!(
        server.get_resource(pinned, &anyone).await.is_ok(),
        "pinned resources never expire"
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_stops_the_sweeper_and_closes_the_store() {
    let store = MemoryStore::new();
    let server = server(store.clone());
    let id = create(&server, Duration::from_secs(30)).await;
    let anyone = Caller::anonymous();
    assert!(server.is_sweeping());
    server.shutdown().await.expect("shut down");
    assert!(!server.is_sweeping());
    server.shutdown().await.expect("idempotent");
    let err = server
        .get_resource(id, &anyone)
        .await
        .map(|_| ())
        .expect_err("closed");
    assert_eq!(err.code(), ServerErrorCode::StorageError);
    tokio::time::advance(Duration::from_secs(600)).await;
}

#[tokio::test(start_paused = true)]
async fn dropping_the_server_stops_the_sweeper() {
    let store = MemoryStore::new();
    let server = server(store.clone());
    create(&server, Duration::from_secs(30)).await;
    drop(server);
    advance(Duration::from_secs(120)).await;
    assert_eq!(
        store.len(),
        1,
        "no sweep ran after the drop guard stopped the task"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_accesses_are_counted_exactly() {
    let server = server(MemoryStore::new());
    let id = create(&server, Duration::from_secs(600)).await;
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(async move {
                for _ in 0..10 {
                    server
                        .fetch_page(
                            id,
                            &dual_server::Caller::anonymous(),
                            &PageRequest {
                                offset: None,
                                limit: Some(1),
                                sort: None,
                            },
                        )
                        .await
                        .expect("page");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    assert_eq!(
        server
            .get_resource(id, &dual_server::Caller::anonymous())
            .await
            .expect("live")
            .access_count,
        640
    );
}
