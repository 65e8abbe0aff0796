//! What the Redis store does without a Redis server: configuration errors, an unreachable server,
//! and `Debug` output without the password. Needs nothing but the toolchain.

use std::time::{Duration as StdDuration, Instant};

use dual_store::StoreError;
use dual_store_redis::{ConnectError, RedisStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn bad_configuration_is_rejected_before_connecting() {
    for builder in [
        RedisStore::builder("redis://127.0.0.1:6379").key_prefix(""),
        RedisStore::builder("redis://127.0.0.1:6379").operation_timeout(StdDuration::ZERO),
        RedisStore::builder("redis://127.0.0.1:6379").purge_batch(0),
        RedisStore::builder("http://:hunter2@127.0.0.1:6379"),
    ] {
        match builder.connect().await {
            Err(ConnectError::Config(message)) => assert!(!message.contains("hunter2"), "{message}"),
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn an_unreachable_server_fails_fast_as_unavailable() -> TestResult {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let started = Instant::now();
    let result = RedisStore::builder(format!("redis://127.0.0.1:{port}"))
        .operation_timeout(StdDuration::from_millis(500))
        .connect_timeout(StdDuration::from_millis(200))
        .connect()
        .await;
    assert!(
        matches!(result, Err(ConnectError::Store(StoreError::Unavailable(_)))),
        "{result:?}"
    );
    assert!(
        started.elapsed() < StdDuration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    Ok(())
}

#[test]
fn debug_output_hides_the_password() {
    let builder = RedisStore::builder("redis://user:hunter2@127.0.0.1:6379/0");
    let text = format!("{builder:?}");
    assert!(
        !text.contains("hunter2") && text.contains("user:***@127.0.0.1"),
        "{text}"
    );
}
